// SPDX-License-Identifier: BSD-3-Clause
/*
 * write.c -- rpma_write puts the client's bytes at the given remote offset
 * and nowhere else; the server checks them after a visibility flush
 */

#include "common.h"

#define SIZE	(64 * 1024)
#define DST_OFF 5003
#define SRC_OFF 100
#define LEN	3000

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

	t_await('W');
	T_BYTES(buf, DST_OFF, 0);
	T_PATTERN(buf + DST_OFF, LEN, SRC_OFF, 7);
	T_BYTES(buf + DST_OFF + LEN, SIZE - DST_OFF - LEN, 0);
	t_signal('V');

	t_await('W');
	T_PATTERN(buf, SIZE, 0, 7);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 7);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	T_OK(rpma_write(conn, dst, DST_OFF, src, SRC_OFF, LEN, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_WRITE, NULL);
	T_OK(rpma_flush(conn, dst, DST_OFF, LEN, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_FLUSH, NULL);
	t_signal('W');
	t_await('V');

	/* the whole region at once */
	T_OK(rpma_write(conn, dst, 0, src, 0, SIZE, RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
	T_CMPL(cq, T_CTX(3), RPMA_OP_WRITE, NULL);
	T_OK(rpma_flush(conn, dst, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(4)));
	T_CMPL(cq, T_CTX(4), RPMA_OP_FLUSH, NULL);
	t_signal('W');
	t_await('V');
	T_NO_CMPL(cq, 100);

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("write", 7);
	return t_run(server, client);
}
