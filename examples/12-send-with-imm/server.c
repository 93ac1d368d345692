/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 12-send-with-imm: receive messages that carry immediate data
 *
 * usage: server <addr> <port>
 *
 * The server posts MESSAGES receives before accepting the connection and
 * prints each message as it completes: its length and, when the
 * completion has IBV_WC_WITH_IMM in its flags, the 32-bit immediate value
 * (already in host byte order in struct rpma_completion).
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
	struct rpma_cq *cq = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (ret) {
		report("server", "rpma_utils_get_ibv_context", ret);
		return 1;
	}
	if (!has_immediate_data("server", ibv_ctx))
		return 1;
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "rpma_peer_new", ret);
		return 1;
	}
	char *bufs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), MESSAGES * MSG_SIZE);

	if (!bufs) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(bufs, 0, MESSAGES * MSG_SIZE);
	ret = rpma_mr_reg(peer, bufs, MESSAGES * MSG_SIZE, RPMA_MR_USAGE_RECV, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_mr;
	}
	printf("server: listening on %s:%s\n", addr, port);
	fflush(stdout);
	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	/* a receive per message; each one's op_context is its buffer */
	for (int i = 0; i < MESSAGES; i++) {
		ret = rpma_conn_req_recv(req, mr, i * MSG_SIZE, MSG_SIZE, bufs + i * MSG_SIZE);
		if (ret) {
			report("server", "rpma_conn_req_recv", ret);
			rpma_conn_req_delete(&req);
			goto out_ep;
		}
	}
	ret = rpma_conn_req_connect(&req, NULL, &conn);
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
	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("server", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}
	printf("server: client connected\n");
	fflush(stdout);

	for (int i = 0; i < MESSAGES; i++) {
		struct rpma_completion cmpl;

		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret) {
			report("server", "rpma_cq_wait_completion", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_RECV) {
			fprintf(stderr, "server: a receive failed: %s\n",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		char *msg = cmpl.op_context;
		int len = cmpl.byte_len < MSG_SIZE ? (int)cmpl.byte_len : MSG_SIZE;

		if (cmpl.flags & IBV_WC_WITH_IMM)
			printf("server: message %d: %u bytes \"%.*s\", immediate data 0x%08x\n",
			       i + 1, cmpl.byte_len, len, msg, cmpl.imm);
		else
			printf("server: message %d: %u bytes \"%.*s\", no immediate data\n", i + 1,
			       cmpl.byte_len, len, msg);
	}

	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_disconnect;
	}
	printf("server: client disconnected\n");
	status = 0;

out_disconnect:
	rpma_conn_disconnect(conn);
out_conn:
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
	free(bufs);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("server", "rpma_peer_delete", ret);
	return status;
}
