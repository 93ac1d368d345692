// SPDX-License-Identifier: BSD-3-Clause
/*
 * error_bad_rkey.c -- a write through a descriptor whose rkey was tampered
 * with fails, the server's memory stays untouched, and the connection is
 * broken afterwards. What each transport really does:
 * - RoCE (rxe): the write completes with its op_context and
 *   IBV_WC_REM_ACCESS_ERR; the queue pairs enter the error state, so a
 *   write posted after it and the server's posted receive complete with
 *   IBV_WC_WR_FLUSH_ERR; rdma_cm reports nothing until the disconnect.
 * - iWARP (siw): a write completes once it is sent (successfully), the
 *   target answers with a TERMINATE, and both sides see RPMA_CONN_CLOSED
 *   without anyone disconnecting; a read posted behind the write comes
 *   back with its op_context and an error, when it comes back at all.
 *   Linux 6.12's siw sometimes takes the TERMINATE before it completes
 *   the write, which then completes with IBV_WC_LOC_QP_OP_ERR.
 */

#include <string.h>

#include "common.h"

#define SIZE 4096

static const char *event_str(enum rpma_conn_event ev)
{
	return ev == RPMA_CONN_UNDEFINED ? "none" : rpma_utils_conn_event_2str(ev);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_recv(conn, mr, SIZE - 64, 64, T_CTX(50)));
	t_signal('R');

	t_await('E');
	T_BYTES(buf, SIZE, 0);

	/* the broken connection flushes the posted receive */
	struct rpma_completion c;
	if (!t_try_cmpl(cq, &c, 5000))
		T_FAIL("the posted receive was not flushed");
	t_log("the posted receive completed: %s", ibv_wc_status_str(c.op_status));
	T_PTR_EQ(c.op_context, T_CTX(50));
	T_EQ(c.op_status, IBV_WC_WR_FLUSH_ERR);

	enum rpma_conn_event ev = t_next_event_timeout(conn, t_is_siw() ? T_WAIT_MS : 500);
	t_log("connection event after the error: %s", event_str(ev));
	t_signal('C');
	if (t_is_siw()) {
		T_EQ(ev, RPMA_CONN_CLOSED);
	} else {
		T_EQ(ev, RPMA_CONN_UNDEFINED);
		t_expect_event(conn, RPMA_CONN_CLOSED);
	}
	T_OK(rpma_conn_disconnect(conn));
	T_OK(rpma_conn_delete(&conn));

	T_BYTES(buf, SIZE, 0);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 29);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	size_t len = 0;
	const unsigned char *desc = t_pdata_item(&pd, 0, &len);
	unsigned char bad_desc[255];
	memcpy(bad_desc, desc, len);
	/* rkey: bytes 16..19, little-endian; change the key and the index */
	bad_desc[16] ^= 0x5a;
	bad_desc[18] ^= 0x3c;
	struct rpma_mr_remote *bad = NULL;
	T_OK(rpma_mr_remote_from_descriptor(bad_desc, len, &bad));
	struct rpma_mr_remote *good = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	t_await('R');

	T_OK(rpma_write(conn, bad, 0, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	if (t_is_siw())
		T_OK(rpma_read(conn, mr, 0, good, 0, 64, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	struct rpma_completion c;
	t_next_cmpl(cq, &c);
	t_log("the write with a bad rkey completed: %s (%d)", ibv_wc_status_str(c.op_status),
	      (int)c.op_status);
	T_PTR_EQ(c.op_context, T_CTX(1));
	if (t_is_siw()) {
		if (c.op_status != IBV_WC_LOC_QP_OP_ERR)
			T_EQ(c.op_status, IBV_WC_SUCCESS);
		t_expect_terminated(conn, cq, T_CTX(2));
	} else {
		T_EQ(c.op_status, IBV_WC_REM_ACCESS_ERR);
	}
	t_signal('E');

	if (!t_is_siw()) {
		/* a good write after that does not reach the server */
		T_OK(rpma_write(conn, good, 0, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
		t_next_cmpl(cq, &c);
		T_PTR_EQ(c.op_context, T_CTX(3));
		T_EQ(c.op_status, IBV_WC_WR_FLUSH_ERR);
	}
	T_NO_CMPL(cq, 100);

	t_await('C');
	if (t_is_siw()) {
		T_OK(rpma_conn_disconnect(conn));
	} else {
		enum rpma_conn_event ev = t_next_event_timeout(conn, 100);
		t_log("connection event after the error: %s", event_str(ev));
		T_EQ(ev, RPMA_CONN_UNDEFINED);
		T_OK(rpma_conn_disconnect(conn));
		t_expect_event(conn, RPMA_CONN_CLOSED);
	}
	T_OK(rpma_conn_delete(&conn));

	T_OK(rpma_mr_remote_delete(&bad));
	T_OK(rpma_mr_remote_delete(&good));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("error_bad_rkey", 25);
	return t_run(server, client);
}
