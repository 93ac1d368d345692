/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 17-log-function: a server that logs through its own function
 *
 * usage: server <addr> <port>
 *
 * The server installs its own log function (common.h) before anything
 * else, so that what the library has to say -- the device it found, its
 * errors and their reasons -- comes out among the program's own lines.
 * Otherwise it offers a DRAM region for the client's writes and
 * visibility flushes, and waits until the client has gone.
 */

#include <stdio.h>
#include <stdlib.h>
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
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = install_log_function("server");
	if (ret) {
		report("server", "installing the log function", ret);
		return 1;
	}
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "opening the device", ret);
		return 1;
	}
	char *region = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);

	if (!region) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(region, 0, REGION_SIZE);
	ret = rpma_mr_reg(peer, region, REGION_SIZE,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}
	union {
		struct server_pdata pd;
		uint8_t raw[PDATA_MAX];
	} pd;
	size_t desc_size;

	ret = rpma_mr_get_descriptor_size(mr, &desc_size);
	if (!ret && sizeof(pd.pd) + desc_size > sizeof(pd))
		ret = RPMA_E_NOSUPP;
	if (!ret)
		ret = rpma_mr_get_descriptor(mr, pd.pd.mr_desc);
	if (ret) {
		report("server", "describing the region", ret);
		goto out_mr;
	}
	pd.pd.mr_desc_size = (uint8_t)desc_size;
	struct rpma_conn_private_data pdata = { pd.raw, (uint8_t)(sizeof(pd.pd) + desc_size) };

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_mr;
	}
	printf("server: listening on %s:%s\n", addr, port);
	fflush(stdout);
	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret) {
		report("server", "accepting the client", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (!ret && event == RPMA_CONN_ESTABLISHED)
		ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	region[REGION_SIZE - 1] = '\0';
	printf("server: client disconnected; it wrote \"%s\"\n", region);
	status = 0;

out_conn:
	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
out_ep:
	rpma_ep_shutdown(&ep);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("server", "rpma_mr_dereg", ret);
out_free:
	free(region);
out_peer:
	rpma_peer_delete(&peer);
	/* back to the default: syslog */
	rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	return status;
}
