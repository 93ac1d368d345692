// SPDX-License-Identifier: BSD-3-Clause
/*
 * read.c -- rpma_read copies the server's bytes, from the given remote
 * offset to the given local offset, and nothing around them
 */

#include "common.h"

#define SIZE  (64 * 1024)
#define GUARD 64

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 6);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_READ_SRC);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	t_close(&conn, false);

	/* reads do not change the source */
	T_PATTERN(buf, SIZE, 0, 6);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE + 2 * GUARD);
	struct rpma_mr_local *dst = t_mr_reg(peer, buf, SIZE + 2 * GUARD, RPMA_MR_USAGE_READ_DST);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *src = t_pdata_mr(&pd, 0);
	size_t rsize = 0;
	T_OK(rpma_mr_remote_get_size(src, &rsize));
	T_EQ(rsize, SIZE);

	struct rpma_cq *cq = t_cq(conn);

	/* a part, from the middle, to an odd local offset */
	T_OK(rpma_read(conn, dst, GUARD + 3, src, 4096 + 7, 1000, RPMA_F_COMPLETION_ALWAYS,
		       T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_READ, NULL);
	T_PATTERN(buf + GUARD + 3, 1000, 4096 + 7, 6);
	T_BYTES(buf, GUARD + 3, 0);
	T_BYTES(buf + GUARD + 3 + 1000, SIZE + GUARD - 3 - 1000, 0);

	/* the whole region */
	T_OK(rpma_read(conn, dst, GUARD, src, 0, SIZE, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_READ, NULL);
	T_PATTERN(buf + GUARD, SIZE, 0, 6);
	T_BYTES(buf, GUARD, 0);
	T_BYTES(buf + GUARD + SIZE, GUARD, 0);
	T_NO_CMPL(cq, 100);

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&src));
	T_PTR_EQ(src, NULL);
	T_OK(rpma_mr_dereg(&dst));
	T_PTR_EQ(dst, NULL);
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("read", 6);
	return t_run(server, client);
}
