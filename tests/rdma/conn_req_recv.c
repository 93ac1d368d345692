// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_req_recv.c -- receives posted with rpma_conn_req_recv before the
 * connection exists (on both sides) take the first message sent right after
 * RPMA_CONN_ESTABLISHED: on RoCE with no other synchronization, on iWARP
 * once both sides are established (see common.h) and with the client's
 * message first: MPA (RFC 5044) lets the responder send only after the
 * initiator's first message, and siw's client fails to connect, now and
 * then, when the server's message comes first
 */

#include "common.h"

#define MSG 40

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(2 * MSG);
	t_fill(buf + MSG, MSG, 21);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, 2 * MSG, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn_req *req = t_next_req(ep, NULL);
	T_RET(rpma_conn_req_recv(NULL, mr, 0, MSG, T_CTX(9)), RPMA_E_INVAL);
	T_OK(rpma_conn_req_recv(req, mr, 0, MSG, T_CTX(10)));
	struct rpma_conn *conn = t_accept_req(&req, NULL);
	struct rpma_cq *cq = t_cq(conn);

	if (t_is_siw()) {
		struct rpma_completion c;
		T_CMPL(cq, T_CTX(10), RPMA_OP_RECV, &c);
		T_EQ(c.byte_len, 29);
		T_OK(rpma_send(conn, mr, MSG, 11, RPMA_F_COMPLETION_ALWAYS, T_CTX(11)));
		T_CMPL(cq, T_CTX(11), RPMA_OP_SEND, NULL);
	} else {
		T_OK(rpma_send(conn, mr, MSG, 11, RPMA_F_COMPLETION_ALWAYS, T_CTX(11)));
		t_expect_send_and_recv(cq, T_CTX(11), T_CTX(10), 29);
	}
	T_NO_CMPL(cq, 50);
	T_PATTERN(buf, 29, 0, 20);
	T_BYTES(buf + 29, MSG - 29, 0);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(2 * MSG);
	t_fill(buf + MSG, MSG, 20);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, 2 * MSG, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND);

	struct rpma_conn_req *req = t_client_req(peer, NULL);
	T_OK(rpma_conn_req_recv(req, mr, 0, MSG, T_CTX(20)));
	struct rpma_conn *conn = NULL;
	if (t_is_siw()) {
		conn = t_connect_req(&req, NULL);
	} else {
		T_OK(rpma_conn_req_connect(&req, NULL, &conn));
		t_expect_event(conn, RPMA_CONN_ESTABLISHED);
	}
	struct rpma_cq *cq = t_cq(conn);

	T_OK(rpma_send(conn, mr, MSG, 29, RPMA_F_COMPLETION_ALWAYS, T_CTX(21)));
	t_expect_send_and_recv(cq, T_CTX(21), T_CTX(20), 11);
	T_NO_CMPL(cq, 50);
	T_PATTERN(buf, 11, 0, 21);
	T_BYTES(buf + 11, MSG - 11, 0);
	if (!t_is_siw())
		t_await('A');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("conn_req_recv", 19);
	return t_run(server, client);
}
