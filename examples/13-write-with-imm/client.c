/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 13-write-with-imm: write, and tell the server where
 *
 * usage: client <addr> <port> [word...]
 *
 * The client writes three pieces of text (the words given, or its own)
 * at different offsets of the server's region with rpma_write_with_imm().
 * Each write's immediate value holds its offset and length, which the
 * server learns from the receive the write consumes on its side.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 3 + WRITES) {
		fprintf(stderr, "usage: %s <addr> <port> [%d words]\n", argv[0], WRITES);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *words[WRITES] = { "first", "second", "third" };
	/* far apart in the region, and out of order, to show that the server follows */
	const size_t offsets[WRITES] = { 1024, 64, 2048 };

	for (int i = 0; argc > 3 && i < WRITES; i++)
		words[i] = argv[3 + i];
	for (int i = 0; i < WRITES; i++) {
		if (strlen(words[i]) > 512) {
			fprintf(stderr, "client: a word of 512 bytes at most\n");
			return 2;
		}
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

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		report("client", "rpma_utils_get_ibv_context", ret);
		return 1;
	}
	if (!has_immediate_data("client", ibv_ctx))
		return 1;
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "rpma_peer_new", ret);
		return 1;
	}
	/* the words at the offsets they will have on the server */
	char *src = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);

	if (!src) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(src, 0, REGION_SIZE);
	for (int i = 0; i < WRITES; i++)
		memcpy(src + offsets[i], words[i], strlen(words[i]));
	ret = rpma_mr_reg(peer, src, REGION_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr);
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
	struct rpma_conn_private_data pdata;
	size_t remote_size = 0;

	ret = rpma_conn_get_private_data(conn, &pdata);
	const struct server_pdata *pd = pdata.ptr;

	if (ret || !pd || pdata.len < sizeof(*pd) || pdata.len < sizeof(*pd) + pd->mr_desc_size ||
	    rpma_mr_remote_from_descriptor(pd->mr_desc, pd->mr_desc_size, &dst_mr) ||
	    rpma_mr_remote_get_size(dst_mr, &remote_size) || remote_size < REGION_SIZE) {
		fprintf(stderr, "client: the server did not describe a usable region\n");
		goto out_disconnect;
	}
	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("client", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}

	for (int i = 0; i < WRITES; i++) {
		size_t len = strlen(words[i]);

		ret = rpma_write_with_imm(conn, dst_mr, offsets[i], src_mr, offsets[i], len,
					  RPMA_F_COMPLETION_ALWAYS, IMM_OF(offsets[i], len),
					  &offsets[i]);
		if (ret) {
			report("client", "rpma_write_with_imm", ret);
			goto out_disconnect;
		}
	}
	for (int i = 0; i < WRITES; i++) {
		struct rpma_completion cmpl;

		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret) {
			report("client", "rpma_cq_wait_completion", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_WRITE) {
			fprintf(stderr, "client: a write failed: %s\n",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		const size_t *off = cmpl.op_context;

		printf("client: wrote \"%s\" at offset %zu\n", src + *off, *off);
	}
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
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
out_mr:
	ret = rpma_mr_dereg(&src_mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_free:
	free(src);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("client", "rpma_peer_delete", ret);
	return status;
}
