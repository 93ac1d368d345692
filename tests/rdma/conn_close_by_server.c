// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_close_by_server.c -- the server disconnects first: both sides see
 * RPMA_CONN_CLOSED, and the client's delete after that is clean
 */

#include "common.h"

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, NULL);

	t_await('E');
	t_close(&conn, true);
	/* the client saw its RPMA_CONN_CLOSED */
	t_await('C');

	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	t_signal('E');

	t_expect_event(conn, RPMA_CONN_CLOSED);
	t_signal('C');
	T_OK(rpma_conn_disconnect(conn));
	T_OK(rpma_conn_delete(&conn));
	T_PTR_EQ(conn, NULL);
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("conn_close_by_server", 2);
	return t_run(server, client);
}
