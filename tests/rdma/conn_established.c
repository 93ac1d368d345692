// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_established.c -- a connection is established, then the client
 * disconnects and both sides see RPMA_CONN_CLOSED; a second endpoint on
 * the same address and port is refused (EADDRINUSE)
 */

#include <errno.h>

#include "common.h"

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_ep *ep = t_listen(peer);

	int fd = -1;
	T_OK(rpma_ep_get_fd(ep, &fd));
	T_ASSERT(fd >= 0);
	struct rpma_ep *again = NULL;
	T_RET(rpma_ep_listen(peer, t_env.addr, t_env.port, &again), RPMA_E_PROVIDER);
	T_EQ(rpma_err_get_provider_error(), EADDRINUSE);
	T_PTR_EQ(again, NULL);

	struct rpma_conn *conn = t_accept(ep, NULL, NULL);

	uint32_t qp_num = 0;
	T_OK(rpma_conn_get_qp_num(conn, &qp_num));
	T_ASSERT(qp_num != 0);
	/* without rcq_size there is no separate receive CQ */
	struct rpma_cq *rcq = (struct rpma_cq *)&rcq;
	T_OK(rpma_conn_get_rcq(conn, &rcq));
	T_PTR_EQ(rcq, NULL);
	(void)t_cq(conn);

	t_signal('E');
	t_close(&conn, false);

	T_OK(rpma_ep_shutdown(&ep));
	T_PTR_EQ(ep, NULL);
	T_OK(rpma_peer_delete(&peer));
	T_PTR_EQ(peer, NULL);
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);

	uint32_t qp_num = 0;
	T_OK(rpma_conn_get_qp_num(conn, &qp_num));
	T_ASSERT(qp_num != 0);
	int fd = -1;
	T_OK(rpma_conn_get_event_fd(conn, &fd));
	T_ASSERT(fd >= 0);

	/* both sides are established before anyone disconnects */
	t_await('E');
	t_close(&conn, true);

	/* deleting twice is harmless */
	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("conn_established", 1);
	return t_run(server, client);
}
