// SPDX-License-Identifier: BSD-3-Clause
/*
 * write_with_imm.c -- rpma_write_with_imm places the data and consumes one
 * posted receive on the server, which completes as RPMA_OP_RECV_RDMA_WITH_IMM
 * with the immediate value in host byte order and the written length
 */

#include "common.h"

#define SIZE	8192
#define DST_OFF 256
#define LEN	777
#define IMM	0xDEADBEEFu

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST);
	unsigned char *rbuf = t_alloc(64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);

	T_OK(rpma_recv(conn, rmr, 0, 64, T_CTX(10)));
	t_signal('R');

	struct rpma_completion c;
	T_CMPL(cq, T_CTX(10), RPMA_OP_RECV_RDMA_WITH_IMM, &c);
	T_ASSERT(c.flags & IBV_WC_WITH_IMM);
	T_EQ(c.imm, IMM);
	T_EQ(c.byte_len, LEN);
	/* the data is there when the receive completes */
	T_BYTES(buf, DST_OFF, 0);
	T_PATTERN(buf + DST_OFF, LEN, 0, 8);
	T_BYTES(buf + DST_OFF + LEN, SIZE - DST_OFF - LEN, 0);
	/* the receive buffer is not written by a write with immediate data */
	T_BYTES(rbuf, 64, 0);
	T_NO_CMPL(cq, 100);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(LEN);
	t_fill(buf, LEN, 8);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, LEN, RPMA_MR_USAGE_WRITE_SRC);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	t_await('R');
	T_OK(rpma_write_with_imm(conn, dst, DST_OFF, src, 0, LEN, RPMA_F_COMPLETION_ALWAYS, IMM,
				 T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_WRITE, NULL);
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("write_with_imm", 8);
	if (t_is_siw())
		t_skip("siw (iWARP) has no immediate data");
	return t_run(server, client);
}
