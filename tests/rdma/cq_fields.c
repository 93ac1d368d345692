// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq_fields.c -- completions of real operations, taken both ways: through
 * rpma_cq_get_wc (wr_id, status, opcode, qp_num, byte_len, wc_flags) and
 * through rpma_cq_get_completion; an empty CQ says RPMA_E_NO_COMPLETION
 */

#include <string.h>

#include "common.h"

#define SIZE 8192
#define WOFF 4096
#define WLEN 100
#define MSG  37

static void get_one_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	long long deadline = t_now_ms() + T_WAIT_MS;
	for (;;) {
		memset(wc, 0xa5, sizeof(*wc));
		int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
		if (ret == 0)
			return;
		T_RET(ret, RPMA_E_NO_COMPLETION);
		if (t_now_ms() > deadline)
			T_FAIL("no completion within %d ms", T_WAIT_MS);
		t_sleep_ms(1);
	}
}

static void expect_empty(struct rpma_cq *cq)
{
	struct ibv_wc wc[2];
	int got = -1;
	T_RET(rpma_cq_get_wc(cq, 2, wc, &got), RPMA_E_NO_COMPLETION);
	struct rpma_completion c;
	T_RET(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, WOFF, 23);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	unsigned char *rbuf = t_alloc(64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);
	uint32_t qp_num = 0;
	T_OK(rpma_conn_get_qp_num(conn, &qp_num));
	expect_empty(cq);

	T_OK(rpma_recv(conn, rmr, 0, 64, T_CTX(10)));
	t_signal('R');

	struct ibv_wc wc;
	get_one_wc(cq, &wc);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_PTR_EQ(wc.wr_id, T_CTX(10));
	T_EQ(wc.opcode, IBV_WC_RECV);
	T_EQ(wc.byte_len, MSG);
	T_EQ(wc.qp_num, qp_num);
	T_ASSERT(!(wc.wc_flags & IBV_WC_WITH_IMM));
	T_PATTERN(rbuf, MSG, 0, 24);
	/* the write went before the send on the same connection */
	T_PATTERN(buf + WOFF, WLEN, 0, 24);
	T_BYTES(buf + WOFF + WLEN, SIZE - WOFF - WLEN, 0);
	expect_empty(cq);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(1024);
	t_fill(buf, 512, 24);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, 1024, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *rmt = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	uint32_t qp_num = 0;
	T_OK(rpma_conn_get_qp_num(conn, &qp_num));
	expect_empty(cq);

	/* invalid uses of the getters */
	struct ibv_wc wc;
	struct rpma_completion c;
	T_RET(rpma_cq_get_wc(cq, 2, &wc, NULL), RPMA_E_INVAL);
	T_RET(rpma_cq_get_wc(NULL, 1, &wc, NULL), RPMA_E_INVAL);
	T_RET(rpma_cq_get_completion(NULL, &c), RPMA_E_INVAL);
	T_RET(rpma_cq_get_completion(cq, NULL), RPMA_E_INVAL);

	T_OK(rpma_write(conn, rmt, WOFF, mr, 0, WLEN, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	get_one_wc(cq, &wc);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_PTR_EQ(wc.wr_id, T_CTX(1));
	T_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	T_EQ(wc.qp_num, qp_num);

	T_OK(rpma_read(conn, mr, 512, rmt, 1000, 200, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_READ, &c);
	T_EQ(c.flags & IBV_WC_WITH_IMM, 0);
	T_PATTERN(buf + 512, 200, 1000, 23);
	T_BYTES(buf + 712, 1024 - 712, 0);

	t_await('R');
	T_OK(rpma_send(conn, mr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
	get_one_wc(cq, &wc);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_PTR_EQ(wc.wr_id, T_CTX(3));
	T_EQ(wc.opcode, IBV_WC_SEND);
	T_EQ(wc.qp_num, qp_num);
	expect_empty(cq);
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&rmt));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("cq_fields", 21);
	return t_run(server, client);
}
