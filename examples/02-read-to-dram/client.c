/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 02-read-to-dram: read the server's text into local DRAM
 *
 * usage: client <addr> <port>
 *
 * The client connects, turns the descriptor in the server's private data
 * into a remote region, reads the text with rpma_read() into a local
 * region registered as a read destination, waits for the read's
 * completion and prints what it read.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define WAIT_MS 10000

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
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

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

	char *buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), TEXT_SIZE);

	if (!buf) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(buf, 0, TEXT_SIZE);
	/* READ_DST: the destination of this side's reads */
	ret = rpma_mr_reg(peer, buf, TEXT_SIZE, RPMA_MR_USAGE_READ_DST, &dst_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}

	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		report("client", "rpma_conn_req_new", ret);
		goto out_mr;
	}
	ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		report("client", "rpma_conn_req_connect", ret);
		goto out_mr;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("client: connected to %s:%s\n", addr, port);

	/* the server's region, from the private data; every length is checked */
	struct rpma_conn_private_data pdata;

	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		report("client", "rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	const struct server_pdata *pd = pdata.ptr;

	if (!pd || pdata.len < sizeof(*pd) || pdata.len < sizeof(*pd) + pd->mr_desc_size ||
	    pd->text_len == 0) {
		fprintf(stderr, "client: the server's private data is not what it should be\n");
		goto out_disconnect;
	}
	ret = rpma_mr_remote_from_descriptor(pd->mr_desc, pd->mr_desc_size, &src_mr);
	if (ret) {
		report("client", "rpma_mr_remote_from_descriptor", ret);
		goto out_disconnect;
	}
	size_t remote_size;

	ret = rpma_mr_remote_get_size(src_mr, &remote_size);
	if (ret) {
		report("client", "rpma_mr_remote_get_size", ret);
		goto out_disconnect;
	}
	if (remote_size < pd->text_len) {
		fprintf(stderr, "client: the remote region is too small (%zu bytes)\n",
			remote_size);
		goto out_disconnect;
	}

	/* one read; its completion says the bytes are in buf */
	static int read_ctx;

	ret = rpma_read(conn, dst_mr, 0, src_mr, 0, pd->text_len, RPMA_F_COMPLETION_ALWAYS,
			&read_ctx);
	if (ret) {
		report("client", "rpma_read", ret);
		goto out_disconnect;
	}
	struct rpma_cq *cq;
	struct rpma_completion cmpl;

	ret = rpma_conn_get_cq(conn, &cq);
	if (!ret)
		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
	if (ret) {
		report("client", "waiting for the read", ret);
		goto out_disconnect;
	}
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_READ ||
	    cmpl.op_context != &read_ctx) {
		fprintf(stderr, "client: the read failed: %s\n", ibv_wc_status_str(cmpl.op_status));
		goto out_disconnect;
	}
	buf[TEXT_SIZE - 1] = '\0';
	printf("client: read %u bytes from the server's DRAM: \"%s\"\n", pd->text_len, buf);
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret) {
		report("client", "rpma_conn_disconnect", ret);
		status = 1;
	} else if ((ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		status = 1;
	}
out_conn:
	if (src_mr)
		rpma_mr_remote_delete(&src_mr);
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
out_mr:
	ret = rpma_mr_dereg(&dst_mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_free:
	free(buf);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("client", "rpma_peer_delete", ret);
	return status;
}
