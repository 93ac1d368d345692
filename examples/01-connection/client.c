/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 01-connection: connect with a greeting, read the answer's
 *
 * usage: client <addr> <port> [greeting]
 *
 * The client sends its greeting as the private data of its connection
 * request, prints the private data the server accepted it with, and
 * disconnects.
 */

#include <errno.h>
#include <stdio.h>

#include "common.h"

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s <addr> <port> [greeting]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *greeting = argc == 4 ? argv[3] : "Hello, server!";

	if (strlen(greeting) >= PDATA_STR_MAX) {
		fprintf(stderr, "client: the greeting must be shorter than %d bytes\n",
			PDATA_STR_MAX);
		return 2;
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	/* the RDMA device that reaches addr */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		report("client", "rpma_utils_get_ibv_context", ret);
		return 1;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "rpma_peer_new", ret);
		return 1;
	}

	/* the request resolves the address and route and creates the queues */
	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		report("client", "rpma_conn_req_new", ret);
		goto out_peer;
	}
	struct rpma_conn_private_data pdata = { (void *)greeting, (uint8_t)(strlen(greeting) + 1) };

	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret == RPMA_E_PROVIDER && rpma_err_get_provider_error() == ECONNREFUSED) {
		/* iWARP connects over TCP: a refusal can come this early */
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			strerror(ECONNREFUSED));
		goto out_peer;
	}
	if (ret) {
		report("client", "rpma_conn_req_connect", ret);
		goto out_peer;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		report("client", "rpma_conn_next_event", ret);
		goto out_conn;
	}
	if (event != RPMA_CONN_ESTABLISHED) {
		/* REJECTED: nobody listens there; UNREACHABLE: no route */
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("client: connected to %s:%s\n", addr, port);

	/* what the server accepted the connection with */
	struct rpma_conn_private_data server_pdata;

	ret = rpma_conn_get_private_data(conn, &server_pdata);
	if (ret) {
		report("client", "rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	print_pdata("client", "the server says", &server_pdata);
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret) {
		report("client", "rpma_conn_disconnect", ret);
		status = 1;
	} else {
		/* the disconnection is complete when CLOSED comes */
		ret = rpma_conn_next_event(conn, &event);
		if (ret) {
			report("client", "rpma_conn_next_event", ret);
			status = 1;
		} else if (event != RPMA_CONN_CLOSED) {
			fprintf(stderr, "client: unexpected event: %s\n",
				rpma_utils_conn_event_2str(event));
			status = 1;
		} else {
			printf("client: disconnected\n");
		}
	}
out_conn:
	ret = rpma_conn_delete(&conn);
	if (ret) {
		report("client", "rpma_conn_delete", ret);
		status = 1;
	}
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret) {
		report("client", "rpma_peer_delete", ret);
		status = 1;
	}
	return status;
}
