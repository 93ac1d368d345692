/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 02-send-recv: send one message, receive the reply
 *
 * usage: client <addr> <port> [message]
 *
 * The client posts a receive for the reply before connecting, sends its
 * message and collects two completions -- its send and the reply's
 * receive -- in whatever order they come.
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librpma.h>

#define MSG_SIZE 1024
#define WAIT_MS 30000
#define DEFAULT_MESSAGE "Hello from the rpma-ng 02-send-recv client"

static int recv_ctx, send_ctx;

static void report(const char *call, int ret)
{
	fprintf(stderr, "client: %s failed: %s\n", call, rpma_err_2str(ret));
}

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s <addr> <port> [message]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *message = argc == 4 ? argv[3] : DEFAULT_MESSAGE;
	size_t len = strlen(message) + 1;

	if (len > MSG_SIZE) {
		fprintf(stderr, "client: the message is longer than %d bytes\n", MSG_SIZE - 1);
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
	struct rpma_completion cmpl;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		report("rpma_utils_get_ibv_context", ret);
		return 1;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("rpma_peer_new", ret);
		return 1;
	}

	/* the message in the first half of the buffer, the reply lands in the second */
	char *buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * MSG_SIZE);

	if (!buf) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(buf, 0, 2 * MSG_SIZE);
	memcpy(buf, message, len);
	ret = rpma_mr_reg(peer, buf, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr);
	if (ret) {
		report("rpma_mr_reg", ret);
		goto out_free;
	}

	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		report("rpma_conn_req_new", ret);
		goto out_mr;
	}
	ret = rpma_conn_req_recv(req, mr, MSG_SIZE, MSG_SIZE, &recv_ctx);
	if (ret) {
		report("rpma_conn_req_recv", ret);
		rpma_conn_req_delete(&req);
		goto out_mr;
	}
	ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		report("rpma_conn_req_connect", ret);
		goto out_mr;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: could not connect to %s:%s (%s)\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("client: connected to %s:%s\n", addr, port);

	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("rpma_conn_get_cq", ret);
		goto out_disconnect;
	}
	ret = rpma_send(conn, mr, 0, len, RPMA_F_COMPLETION_ALWAYS, &send_ctx);
	if (ret) {
		report("rpma_send", ret);
		goto out_disconnect;
	}
	printf("client: sent \"%s\"\n", message);

	bool sent = false, received = false;

	while (!sent || !received) {
		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret) {
			report("rpma_cq_wait_completion", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			fprintf(stderr, "client: %s failed: %s\n",
				cmpl.op_context == &send_ctx ? "the send" : "the receive",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		if (cmpl.op == RPMA_OP_SEND && cmpl.op_context == &send_ctx) {
			sent = true;
		} else if (cmpl.op == RPMA_OP_RECV && cmpl.op_context == &recv_ctx) {
			size_t n = cmpl.byte_len < MSG_SIZE ? cmpl.byte_len : MSG_SIZE - 1;

			buf[MSG_SIZE + n] = '\0';
			printf("client: received %u bytes: \"%s\"\n", cmpl.byte_len, buf + MSG_SIZE);
			received = true;
		} else {
			fprintf(stderr, "client: unexpected completion (op %d)\n", (int)cmpl.op);
			goto out_disconnect;
		}
	}
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret) {
		report("rpma_conn_disconnect", ret);
	} else {
		ret = rpma_conn_next_event(conn, &event);
		if (ret)
			report("rpma_conn_next_event", ret);
		else if (event != RPMA_CONN_CLOSED)
			fprintf(stderr, "client: unexpected event: %s\n",
				rpma_utils_conn_event_2str(event));
	}
out_conn:
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("rpma_conn_delete", ret);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("rpma_mr_dereg", ret);
out_free:
	free(buf);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("rpma_peer_delete", ret);
	return status;
}
