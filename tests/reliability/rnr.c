// SPDX-License-Identifier: BSD-3-Clause
/*
 * rnr.c -- a message sent before the receiver posted a buffer for it. The
 * library asks rdma_cm for the most RNR retries (7: without limit), so on
 * RoCE the sender retries until the buffer is posted, as rpma_send(3)
 * says: the message arrives whole and the send completes, only later.
 * iWARP has no such retry: the send completes once the message is on its
 * way, and the receiver, finding no buffer for it, terminates the
 * connection, which both sides see closed, as rpma_send(3) says too.
 */

#include <string.h>

#include "common.h"

#define LATE_MS 600
#define MSG	"sent before any receive was posted"

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	char *rbuf = t_alloc(64);
	struct rpma_mr_local *mr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = t_listen(peer);
	/* no receive posted */
	struct rpma_conn *conn = t_accept(ep, NULL, NULL);

	t_waiting("the client's send");
	t_await('S');
	t_sleep_ms(LATE_MS);
	if (t_is_siw()) {
		/* the message found no buffer: the connection is gone */
		enum rpma_conn_event ev = t_next_event_timeout(conn, T_WAIT_MS);
		t_log("the receiver: %s", rpma_utils_conn_event_2str(ev));
		T_EQ(ev, RPMA_CONN_CLOSED);
		t_signal('C');
	} else {
		T_OK(rpma_recv(conn, mr, 0, 64, T_CTX(1)));
		struct rpma_completion c;
		T_CMPL(t_cq(conn), T_CTX(1), RPMA_OP_RECV, &c);
		T_EQ(c.byte_len, sizeof(MSG));
		T_ASSERT(memcmp(rbuf, MSG, sizeof(MSG)) == 0);
		t_signal('C');
		t_expect_event(conn, RPMA_CONN_CLOSED);
	}
	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	char *sbuf = t_alloc(64);
	memcpy(sbuf, MSG, sizeof(MSG));
	struct rpma_mr_local *mr = t_mr_reg(peer, sbuf, 64, RPMA_MR_USAGE_SEND);
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);

	long long start = t_now_ms();
	T_OK(rpma_send(conn, mr, 0, sizeof(MSG), RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	t_signal('S');
	struct rpma_completion c;
	t_next_cmpl(cq, &c);
	long long took = t_now_ms() - start;
	T_PTR_EQ(c.op_context, T_CTX(2));
	t_log("the send completed after %lld ms with %s", took, ibv_wc_status_str(c.op_status));
	if (t_is_siw()) {
		t_await('C');
		enum rpma_conn_event ev = t_next_event_timeout(conn, T_WAIT_MS);
		t_log("the sender: %s", rpma_utils_conn_event_2str(ev));
		T_EQ(ev, RPMA_CONN_CLOSED);
	} else {
		T_EQ(c.op_status, IBV_WC_SUCCESS);
		T_EQ(c.op, RPMA_OP_SEND);
		/* retried until the receiver was ready, not before */
		T_ASSERT(took >= LATE_MS - 50);
		t_await('C');
		T_OK(rpma_conn_disconnect(conn));
		t_expect_event(conn, RPMA_CONN_CLOSED);
	}
	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("reliability_rnr", 204);
	return t_run(server, client);
}
