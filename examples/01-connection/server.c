/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 01-connection: accept one connection, trading greetings
 *
 * usage: server <addr> <port>
 *
 * The server listens, takes one connection request, prints the private
 * data the client sent with it, accepts it with a greeting of its own as
 * private data, and waits until the client disconnects.
 */

#include <stdio.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	/* the RDMA device that serves addr, and a protection domain on it */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (ret) {
		report("server", "rpma_utils_get_ibv_context", ret);
		return 1;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "rpma_peer_new", ret);
		return 1;
	}

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_peer;
	}
	printf("server: listening on %s:%s\n", addr, port);
	fflush(stdout);

	/* a connection request: nothing is accepted yet */
	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	struct rpma_conn_private_data client_pdata;

	ret = rpma_conn_req_get_private_data(req, &client_pdata);
	if (ret) {
		report("server", "rpma_conn_req_get_private_data", ret);
		rpma_conn_req_delete(&req); /* rejects the request */
		goto out_ep;
	}
	print_pdata("server", "the client says", &client_pdata);

	/* accept, with a greeting; rpma_conn_req_connect() consumes req */
	char greeting[PDATA_STR_MAX];

	snprintf(greeting, sizeof(greeting), "Hello, client! (server pid %d)", (int)getpid());
	struct rpma_conn_private_data pdata = { greeting, (uint8_t)(strlen(greeting) + 1) };

	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		report("server", "rpma_conn_next_event", ret);
		goto out_conn;
	}
	if (event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: the connection was not established: %s\n",
			rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: connection established\n");
	fflush(stdout);

	/* the client decides when the connection ends */
	ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		report("server", "rpma_conn_next_event", ret);
		goto out_conn;
	}
	if (event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: the client disconnected\n");
	status = 0;

out_conn:
	ret = rpma_conn_disconnect(conn);
	if (ret)
		report("server", "rpma_conn_disconnect", ret);
	ret = rpma_conn_delete(&conn);
	if (ret) {
		report("server", "rpma_conn_delete", ret);
		status = 1;
	}
out_ep:
	ret = rpma_ep_shutdown(&ep);
	if (ret) {
		report("server", "rpma_ep_shutdown", ret);
		status = 1;
	}
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret) {
		report("server", "rpma_peer_delete", ret);
		status = 1;
	}
	return status;
}
