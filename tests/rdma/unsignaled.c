// SPDX-License-Identifier: BSD-3-Clause
/*
 * unsignaled.c -- operations posted with RPMA_F_COMPLETION_ON_ERROR that
 * succeed produce no completion, yet they are carried out: a signaled read
 * that follows sees the unsignaled writes, and the server receives the
 * unsignaled send
 */

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, SIZE,
					    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	unsigned char *rbuf = t_alloc(128);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 128, RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_recv(conn, rmr, 0, 64, T_CTX(10)));
	T_OK(rpma_recv(conn, rmr, 64, 64, T_CTX(11)));
	t_signal('R');

	/* receives always complete, whatever the sender asked for */
	struct rpma_completion c;
	T_CMPL(cq, T_CTX(10), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 10);
	T_PATTERN(rbuf, 10, 0, 32);
	T_CMPL(cq, T_CTX(11), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 20);
	T_PATTERN(rbuf + 64, 20, 0, 32);
	t_signal('V');

	t_close(&conn, false);
	T_PATTERN(buf, 300, 0, 32);
	T_BYTES(buf + 300, SIZE - 300, 0);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(2 * SIZE);
	t_fill(buf, SIZE, 32);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, 2 * SIZE,
		     RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *rmt = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	const int unsig = RPMA_F_COMPLETION_ON_ERROR;

	/* as in librpma 1.x: 0 is refused, any other flags without (1 << 1) is unsignaled */
	T_RET(rpma_write(conn, rmt, 0, mr, 0, 100, 0, T_CTX(9)), RPMA_E_INVAL);
	T_OK(rpma_write(conn, rmt, 0, mr, 0, 100, 1 << 2, T_CTX(9)));

	for (int i = 0; i < 3; i++)
		T_OK(rpma_write(conn, rmt, (size_t)i * 100, mr, (size_t)i * 100, 100, unsig,
				T_CTX(i)));
	T_OK(rpma_read(conn, mr, SIZE, rmt, 0, 400, RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
	T_CMPL(cq, T_CTX(3), RPMA_OP_READ, NULL);
	T_PATTERN(buf + SIZE, 300, 0, 32);
	T_BYTES(buf + SIZE + 300, 100, 0);
	T_NO_CMPL(cq, 200);

	t_await('R');
	T_OK(rpma_send(conn, mr, 0, 10, unsig, T_CTX(4)));
	T_OK(rpma_send(conn, mr, 0, 20, RPMA_F_COMPLETION_ALWAYS, T_CTX(5)));
	T_CMPL(cq, T_CTX(5), RPMA_OP_SEND, NULL);
	t_await('V');
	/* a read alone on the queue: still only its own completion */
	T_OK(rpma_read(conn, mr, SIZE, rmt, 0, 8, unsig, T_CTX(6)));
	T_OK(rpma_write(conn, rmt, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, T_CTX(7)));
	T_CMPL(cq, T_CTX(7), RPMA_OP_WRITE, NULL);
	/* an unsignaled flush does not make the next read a flush, nor the reverse */
	T_OK(rpma_flush(conn, rmt, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, unsig, T_CTX(8)));
	T_OK(rpma_read(conn, mr, SIZE, rmt, 0, 8, RPMA_F_COMPLETION_ALWAYS, T_CTX(9)));
	T_CMPL(cq, T_CTX(9), RPMA_OP_READ, NULL);
	T_OK(rpma_read(conn, mr, SIZE, rmt, 0, 8, unsig, T_CTX(10)));
	T_OK(rpma_flush(conn, rmt, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(11)));
	T_CMPL(cq, T_CTX(11), RPMA_OP_FLUSH, NULL);
	T_NO_CMPL(cq, 200);

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&rmt));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("unsignaled", 28);
	return t_run(server, client);
}
