/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 03-read-to-pmem: offer a text for the client to keep in its pmem
 *
 * usage: server <addr> <port> [text]
 *
 * The server puts its text in DRAM, registers it as the source of remote
 * reads and accepts one connection with the region's descriptor as private
 * data. The client reads the text with one-sided RDMA reads: the server's
 * CPU takes no part in them. The server waits until the client has gone.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s <addr> <port> [text]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *text = argc == 4 ? argv[3] : "The server's text, read by RDMA.";

	if (strlen(text) >= TEXT_SIZE) {
		fprintf(stderr, "server: the text must be shorter than %d bytes\n", TEXT_SIZE);
		return 2;
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

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

	/* registered memory is pinned: whole pages are the natural unit */
	char *buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), TEXT_SIZE);

	if (!buf) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(buf, 0, TEXT_SIZE);
	strcpy(buf, text);
	/* READ_SRC: remote peers may read it, nothing else */
	ret = rpma_mr_reg(peer, buf, TEXT_SIZE, RPMA_MR_USAGE_READ_SRC, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}

	/* the private data: the text's length and the region's descriptor */
	union {
		struct server_pdata pd;
		uint8_t raw[PDATA_MAX];
	} buf_pd;
	size_t desc_size;

	ret = rpma_mr_get_descriptor_size(mr, &desc_size);
	if (ret) {
		report("server", "rpma_mr_get_descriptor_size", ret);
		goto out_mr;
	}
	if (sizeof(buf_pd.pd) + desc_size > sizeof(buf_pd)) {
		fprintf(stderr, "server: a descriptor of %zu bytes does not fit\n", desc_size);
		goto out_mr;
	}
	buf_pd.pd.text_len = (uint8_t)(strlen(text) + 1);
	buf_pd.pd.mr_desc_size = (uint8_t)desc_size;
	ret = rpma_mr_get_descriptor(mr, buf_pd.pd.mr_desc);
	if (ret) {
		report("server", "rpma_mr_get_descriptor", ret);
		goto out_mr;
	}
	struct rpma_conn_private_data pdata = { buf_pd.raw,
						(uint8_t)(sizeof(buf_pd.pd) + desc_size) };

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_mr;
	}
	printf("server: listening on %s:%s\n", addr, port);
	printf("server: offering %u bytes to read: \"%s\"\n", buf_pd.pd.text_len, buf);
	fflush(stdout);

	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: the connection was not established: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: client connected\n");
	fflush(stdout);

	/* the reads need nothing from this side: wait for the end */
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
	printf("server: client disconnected\n");
	status = 0;

out_conn:
	ret = rpma_conn_disconnect(conn);
	if (ret)
		report("server", "rpma_conn_disconnect", ret);
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("server", "rpma_conn_delete", ret);
out_ep:
	ret = rpma_ep_shutdown(&ep);
	if (ret)
		report("server", "rpma_ep_shutdown", ret);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("server", "rpma_mr_dereg", ret);
out_free:
	free(buf);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("server", "rpma_peer_delete", ret);
	return status;
}
