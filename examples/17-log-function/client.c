/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 17-log-function: errors, and the library's word on them
 *
 * usage: client <addr> <port> [message]
 *
 * An RPMA_E_* code says that a call failed; the library's log says why.
 * With its own log function installed (common.h), the client makes two
 * mistakes and shows what the library logs about each:
 *   1. rpma_mr_reg() with no usage: RPMA_E_INVAL;
 *   2. a persistent flush of a region that the server registered for
 *      visibility flushes only: RPMA_E_NOSUPP.
 * Then it writes its message and flushes it to visibility, as it should.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> [message]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *message = argc == 4 ? argv[3] : "logged and written";

	if (strlen(message) >= REGION_SIZE) {
		fprintf(stderr, "client: the message is too long\n");
		return 2;
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = install_log_function("client");
	if (ret) {
		report("client", "installing the log function", ret);
		return 1;
	}
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "opening the device", ret);
		return 1;
	}
	char *src = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);

	if (!src) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(src, 0, REGION_SIZE);
	strcpy(src, message);

	/* 1. a registration for nothing */
	ret = rpma_mr_reg(peer, src, REGION_SIZE, 0, &src_mr);
	printf("client: 1. rpma_mr_reg() with no usage: %s\n", rpma_err_2str(ret));
	if (ret != RPMA_E_INVAL)
		goto out_mr;

	ret = rpma_mr_reg(peer, src, REGION_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}
	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		report("client", "connecting", ret);
		goto out_mr;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	struct rpma_conn_private_data pdata;
	size_t size = 0;

	ret = rpma_conn_get_private_data(conn, &pdata);
	const struct server_pdata *pd = pdata.ptr;

	if (ret || !pd || pdata.len < sizeof(*pd) || pdata.len < sizeof(*pd) + pd->mr_desc_size ||
	    rpma_mr_remote_from_descriptor(pd->mr_desc, pd->mr_desc_size, &dst_mr) ||
	    rpma_mr_remote_get_size(dst_mr, &size) || size < REGION_SIZE ||
	    rpma_conn_get_cq(conn, &cq)) {
		fprintf(stderr, "client: the server did not describe a usable region\n");
		goto out_disconnect;
	}
	size_t len = strlen(message) + 1;

	ret = rpma_write(conn, dst_mr, 0, src_mr, 0, len, RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret) {
		report("client", "rpma_write", ret);
		goto out_disconnect;
	}

	/* 2. a flush deeper than the region allows: refused before it is posted */
	static int flush_ctx;

	ret = rpma_flush(conn, dst_mr, 0, len, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			 &flush_ctx);
	printf("client: 2. a persistent flush: %s\n", rpma_err_2str(ret));
	if (ret != RPMA_E_NOSUPP)
		goto out_disconnect;

	/* what the region allows */
	struct rpma_completion cmpl;

	ret = rpma_flush(conn, dst_mr, 0, len, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			 &flush_ctx);
	if (!ret)
		ret = rpma_cq_wait_completion(cq, &cmpl, 10000);
	if (ret || cmpl.op_status != IBV_WC_SUCCESS || cmpl.op_context != &flush_ctx) {
		fprintf(stderr, "client: the write or its flush failed\n");
		goto out_disconnect;
	}
	printf("client: wrote \"%s\" and flushed it to visibility\n", message);
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret || (ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete\n");
		status = 1;
	}
out_conn:
	if (dst_mr)
		rpma_mr_remote_delete(&dst_mr);
	rpma_conn_delete(&conn);
out_mr:
	rpma_mr_dereg(&src_mr);
out_free:
	free(src);
out_peer:
	rpma_peer_delete(&peer);
	rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION);
	return status;
}
