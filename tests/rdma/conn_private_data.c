// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_private_data.c -- private data travels both ways: 56 bytes from the
 * client (the most RoCE carries on connect), 196 bytes from the server (the
 * most on accept); both compared byte for byte on the other side
 */

#include <string.h>

#include "common.h"

#define CLIENT_LEN 56
#define SERVER_LEN 196

static void expect_pdata(const struct rpma_conn_private_data *pd, size_t len, unsigned seed)
{
	T_ASSERT(pd->ptr != NULL);
	/* RoCE pads private data to its maximum; iWARP delivers it exactly */
	T_ASSERT(pd->len >= len);
	T_PATTERN(pd->ptr, len, 0, seed);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_ep *ep = t_listen(peer);

	struct rpma_conn_req *req = t_next_req(ep, NULL);
	struct rpma_conn_private_data pd = { NULL, 0 };
	T_OK(rpma_conn_req_get_private_data(req, &pd));
	expect_pdata(&pd, CLIENT_LEN, 5);

	unsigned char mine[SERVER_LEN];
	t_fill(mine, sizeof(mine), 55);
	struct rpma_conn_private_data out = { mine, SERVER_LEN };
	struct rpma_conn *conn = NULL;
	T_OK(rpma_conn_req_connect(&req, &out, &conn));
	/* the library keeps its own copy */
	memset(mine, 0, sizeof(mine));
	t_expect_event(conn, RPMA_CONN_ESTABLISHED);

	/* on the passive side the connection keeps the client's bytes */
	struct rpma_conn_private_data cpd = { NULL, 0 };
	T_OK(rpma_conn_get_private_data(conn, &cpd));
	expect_pdata(&cpd, CLIENT_LEN, 5);

	t_close(&conn, false);
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn_req *req = t_client_req(peer, NULL);

	unsigned char mine[CLIENT_LEN];
	t_fill(mine, sizeof(mine), 5);
	struct rpma_conn_private_data out = { mine, CLIENT_LEN };
	struct rpma_conn *conn = NULL;
	T_OK(rpma_conn_req_connect(&req, &out, &conn));
	memset(mine, 0, sizeof(mine));
	t_expect_event(conn, RPMA_CONN_ESTABLISHED);

	struct rpma_conn_private_data pd = { NULL, 0 };
	T_OK(rpma_conn_get_private_data(conn, &pd));
	expect_pdata(&pd, SERVER_LEN, 55);
	t_log("private data lengths seen by the client: %u", pd.len);

	t_close(&conn, true);
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("conn_private_data", 5);
	return t_run(server, client);
}
