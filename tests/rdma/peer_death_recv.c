// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer_death_recv.c -- the client dies (SIGKILL) while the server waits in
 * rpma_cq_wait_completion() for a receive: the receive comes back, with an
 * error, within a bound; the wait after it ends; RPMA_CONN_CLOSED follows
 */

#include "common.h"

#include <infiniband/verbs.h>

#define LEN	 64
#define BOUND_MS 5000

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(LEN);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, LEN, RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn_req *req = t_next_req(ep, NULL);
	T_OK(rpma_conn_req_recv(req, mr, 0, LEN, T_CTX(1)));
	struct rpma_conn *conn = t_accept_req(&req, NULL);
	struct rpma_cq *cq = t_cq(conn);

	t_signal('K');
	const long long death = t_now_ms();
	struct rpma_completion cmpl;
	t_waiting("the receive, after the client died");
	T_OK(rpma_cq_wait_completion(cq, &cmpl, -1));
	const long long took = t_now_ms() - death;
	t_log("the receive came back %lld ms after the death: %s", took,
	      ibv_wc_status_str(cmpl.op_status));
	T_PTR_EQ(cmpl.op_context, T_CTX(1));
	T_ASSERT(cmpl.op_status != IBV_WC_SUCCESS);
	/* nothing else was outstanding: the next wait ends too */
	T_RET(rpma_cq_wait_completion(cq, &cmpl, -1), RPMA_E_NO_COMPLETION);
	if (took > BOUND_MS)
		T_FAIL("the death took %lld ms to show, more than %d", took, BOUND_MS);

	bool up = true;
	T_OK(rpma_conn_is_up(conn, &up));
	T_EQ(up, false);
	T_EQ(t_next_event_timeout(conn, 1000), RPMA_CONN_CLOSED);
	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	(void)conn;
	t_await('K');
	t_die();
}

int main(void)
{
	t_init("peer_death_recv", 45);
	return t_run(server, client);
}
