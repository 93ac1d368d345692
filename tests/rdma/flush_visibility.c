// SPDX-License-Identifier: BSD-3-Clause
/*
 * flush_visibility.c -- an unsignaled write followed by a signaled
 * RPMA_FLUSH_TYPE_VISIBILITY flush: the flush is the only completion, it
 * reports RPMA_OP_FLUSH with its context, and after it the server sees the
 * data
 */

#include "common.h"

#define SIZE (16 * 1024)
#define OFF  1024
#define LEN  4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	for (unsigned round = 0; round < 3; round++) {
		t_await('F');
		T_BYTES(buf, OFF, 0);
		T_PATTERN(buf + OFF, LEN, round * 100, 10 + round);
		T_BYTES(buf + OFF + LEN, SIZE - OFF - LEN, 0);
		t_signal('V');
	}

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(LEN + 1000);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, LEN + 1000, RPMA_MR_USAGE_WRITE_SRC);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	int flush_type = 0;
	T_OK(rpma_mr_remote_get_flush_type(dst, &flush_type));
	T_ASSERT(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	T_ASSERT(!(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT));

	for (unsigned round = 0; round < 3; round++) {
		/* the same remote range, new contents every round */
		t_fill(buf, LEN + 1000, 10 + round);
		T_OK(rpma_write(conn, dst, OFF, src, round * 100, LEN, RPMA_F_COMPLETION_ON_ERROR,
				T_CTX(100 + round)));
		T_OK(rpma_flush(conn, dst, OFF, LEN, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(round)));
		T_CMPL(cq, T_CTX(round), RPMA_OP_FLUSH, NULL);
		T_NO_CMPL(cq, 50);
		t_signal('F');
		t_await('V');
	}

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("flush_visibility", 10);
	return t_run(server, client);
}
