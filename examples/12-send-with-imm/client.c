/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 12-send-with-imm: send messages with immediate data
 *
 * usage: client <addr> <port> [message]
 *
 * The client sends three messages:
 *   1. the message with rpma_send_with_imm(), the immediate value being
 *      its length: 32 bits that travel in the packet's header, next to
 *      the payload;
 *   2. no payload at all, only an immediate value: a notification that
 *      costs the receiver no buffer space;
 *   3. the message again with rpma_send(), without immediate data.
 * Each send completes on the client's CQ; the three go out before the
 * client waits for any of them.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define NOTIFICATION 0xfeedf00du

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> [message]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *message = argc == 4 ? argv[3] : "Hello with immediate data";
	size_t len = strlen(message);

	if (len > MSG_SIZE) {
		fprintf(stderr, "client: the message is longer than %d bytes\n", MSG_SIZE);
		return 2;
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
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
	char *buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), MSG_SIZE);

	if (!buf) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memcpy(buf, message, len);
	ret = rpma_mr_reg(peer, buf, MSG_SIZE, RPMA_MR_USAGE_SEND, &mr);
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
	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("client", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}

	/* the op_contexts say which send completed */
	static const char *const what[MESSAGES] = { "the message with its length",
						    "the notification", "the plain message" };

	ret =
	    rpma_send_with_imm(conn, mr, 0, len, RPMA_F_COMPLETION_ALWAYS, (uint32_t)len, &what[0]);
	if (!ret)
		ret = rpma_send_with_imm(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NOTIFICATION,
					 &what[1]);
	if (!ret)
		ret = rpma_send(conn, mr, 0, len, RPMA_F_COMPLETION_ALWAYS, &what[2]);
	if (ret) {
		report("client", "posting the sends", ret);
		goto out_disconnect;
	}
	for (int i = 0; i < MESSAGES; i++) {
		struct rpma_completion cmpl;

		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret) {
			report("client", "rpma_cq_wait_completion", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			fprintf(stderr, "client: a send failed: %s\n",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		printf("client: sent %s\n", *(const char *const *)cmpl.op_context);
	}
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret || (ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete\n");
		status = 1;
	}
out_conn:
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
out_mr:
	ret = rpma_mr_dereg(&mr);
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
