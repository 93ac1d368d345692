// SPDX-License-Identifier: BSD-3-Clause
/*
 * error_out_of_range.c -- a range past the end of a remote region is refused
 * with RPMA_E_INVAL before anything is posted; a descriptor whose length was
 * enlarged lets a write past the registered end reach the wire, where it
 * fails, and the server's memory beyond the region stays untouched.
 * On RoCE the write completes even though it was unsignaled
 * (RPMA_F_COMPLETION_ON_ERROR), with its op_context and a remote access
 * error, and so does an unsignaled write posted after it (flushed). On
 * iWARP a read behind it fails and the connection closes (see
 * error_bad_rkey.c).
 */

#include <string.h>

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	/* twice the registered size: the second half must stay untouched */
	unsigned char *buf = t_alloc(2 * SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	t_await('W');
	T_BYTES(buf, SIZE - 64, 0);
	T_PATTERN(buf + SIZE - 64, 64, 0, 30);
	t_signal('V');

	t_await('E');
	T_BYTES(buf, SIZE - 64, 0);
	T_PATTERN(buf + SIZE - 64, 64, 0, 30);
	T_BYTES(buf + SIZE, SIZE, 0);

	enum rpma_conn_event ev = t_next_event_timeout(conn, t_is_siw() ? T_WAIT_MS : 500);
	t_signal('C');
	if (t_is_siw()) {
		T_EQ(ev, RPMA_CONN_CLOSED);
	} else {
		T_EQ(ev, RPMA_CONN_UNDEFINED);
		t_expect_event(conn, RPMA_CONN_CLOSED);
	}
	T_OK(rpma_conn_disconnect(conn));
	T_OK(rpma_conn_delete(&conn));

	T_BYTES(buf + SIZE, SIZE, 0);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 30);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *good = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	const int f = RPMA_F_COMPLETION_ALWAYS;

	/* refused locally */
	T_RET(rpma_write(conn, good, SIZE - 8, mr, 0, 64, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_write(conn, good, SIZE, mr, 0, 1, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_write(conn, good, (size_t)-1, mr, 0, 2, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_read(conn, mr, 0, good, SIZE - 8, 64, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_flush(conn, good, SIZE - 8, 64, RPMA_FLUSH_TYPE_VISIBILITY, f, T_CTX(9)),
	      RPMA_E_INVAL);
	/* the local side is checked too */
	T_RET(rpma_write(conn, good, 0, mr, SIZE - 8, 64, f, T_CTX(9)), RPMA_E_INVAL);
	T_NO_CMPL(cq, 100);

	/* the connection is intact: the last 64 bytes of the region */
	T_OK(rpma_write(conn, good, SIZE - 64, mr, 0, 64, f, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_WRITE, NULL);
	T_OK(rpma_flush(conn, good, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, f, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_FLUSH, NULL);
	t_signal('W');
	t_await('V');

	/* the length field (bytes 8..15, little-endian) doubled */
	size_t len = 0;
	const unsigned char *desc = t_pdata_item(&pd, 0, &len);
	unsigned char big_desc[255];
	memcpy(big_desc, desc, len);
	uint64_t rlen = 0;
	for (int i = 7; i >= 0; i--)
		rlen = rlen << 8 | big_desc[8 + i];
	T_EQ(rlen, SIZE);
	rlen *= 2;
	for (int i = 0; i < 8; i++)
		big_desc[8 + i] = (unsigned char)(rlen >> (8 * i));
	struct rpma_mr_remote *big = NULL;
	T_OK(rpma_mr_remote_from_descriptor(big_desc, len, &big));
	size_t big_size = 0;
	T_OK(rpma_mr_remote_get_size(big, &big_size));
	T_EQ(big_size, 2 * SIZE);

	/* unsignaled, yet its failure completes */
	T_OK(rpma_write(conn, big, SIZE, mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, T_CTX(3)));
	if (t_is_siw()) {
		/* iWARP completes a write when it is sent: a read reports the failure */
		T_OK(rpma_read(conn, mr, 0, big, SIZE, 8, f, T_CTX(4)));
	}
	struct rpma_completion c;
	if (t_is_siw()) {
		t_expect_terminated_after_write(conn, cq, T_CTX(4), T_CTX(3));
	} else {
		t_next_cmpl(cq, &c);
		T_PTR_EQ(c.op_context, T_CTX(3));
		T_EQ(c.op_status, IBV_WC_REM_ACCESS_ERR);
		T_NO_CMPL(cq, 100);
	}
	t_signal('E');

	if (!t_is_siw()) {
		/* an unsignaled write after the failure is flushed, and says so */
		T_OK(rpma_write(conn, good, 0, mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, T_CTX(5)));
		t_next_cmpl(cq, &c);
		T_PTR_EQ(c.op_context, T_CTX(5));
		T_EQ(c.op_status, IBV_WC_WR_FLUSH_ERR);
	}

	t_await('C');
	if (t_is_siw()) {
		T_OK(rpma_conn_disconnect(conn));
	} else {
		T_EQ(t_next_event_timeout(conn, 100), RPMA_CONN_UNDEFINED);
		T_OK(rpma_conn_disconnect(conn));
		t_expect_event(conn, RPMA_CONN_CLOSED);
	}
	T_OK(rpma_conn_delete(&conn));

	T_OK(rpma_mr_remote_delete(&big));
	T_OK(rpma_mr_remote_delete(&good));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("error_out_of_range", 26);
	return t_run(server, client);
}
