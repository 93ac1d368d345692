/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 05-messages-ping-pong: answer each ping with a pong
 *
 * usage: server <addr> <port>
 *
 * The server posts its first receive before it accepts the connection
 * (rpma_conn_req_recv()), so the client's first ping always finds a
 * buffer. For each ping it posts the next receive, then answers with the
 * ping's value plus one. Sends and receives complete on the connection's
 * one completion queue, taken with rpma_cq_wait_completion(). A stop
 * message ends the game; the server then waits for the client to
 * disconnect.
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ping-pong.h" /* examples/common: the messages, and the client */

static int send_ctx, recv_ctx;

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
	struct rpma_completion cmpl;
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

	/* [0] receives, [1] is sent */
	struct msg *msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * sizeof(struct msg));

	if (!msgs) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(msgs, 0, 2 * sizeof(struct msg));
	ret = rpma_mr_reg(peer, msgs, 2 * sizeof(struct msg),
			  RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}
	struct msg *in = &msgs[0], *out = &msgs[1];

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
	/* the first receive, before the connection exists */
	ret = rpma_conn_req_recv(req, mr, 0, sizeof(struct msg), &recv_ctx);
	if (ret) {
		report("server", "rpma_conn_req_recv", ret);
		rpma_conn_req_delete(&req);
		goto out_ep;
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

	/* out is busy from its send until the send's completion */
	bool sending = false;
	int pongs = 0;

	for (;;) {
		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret) {
			report("server", "rpma_cq_wait_completion", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			fprintf(stderr, "server: the %s failed: %s\n",
				cmpl.op_context == &send_ctx ? "send" : "receive",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		if (cmpl.op_context == &send_ctx) {
			sending = false;
			continue;
		}
		if (cmpl.byte_len != sizeof(struct msg)) {
			fprintf(stderr, "server: a message of %u bytes\n", cmpl.byte_len);
			goto out_disconnect;
		}
		in->name[MSG_NAME_MAX - 1] = '\0';
		if (in->op == MSG_STOP)
			break;
		if (in->op != MSG_PING) {
			fprintf(stderr, "server: an unknown message (op %u)\n", in->op);
			goto out_disconnect;
		}
		uint64_t value = in->value;
		uint32_t round = in->round;

		printf("server: %s, round %u: ping %llu\n", in->name, round,
		       (unsigned long long)value);
		/* in can take the next ping as soon as its content is copied */
		ret = rpma_recv(conn, mr, 0, sizeof(struct msg), &recv_ctx);
		if (ret) {
			report("server", "rpma_recv", ret);
			goto out_disconnect;
		}
		/* the previous pong must be gone before out is written again */
		while (sending) {
			ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
			if (ret || cmpl.op_status != IBV_WC_SUCCESS ||
			    cmpl.op_context != &send_ctx) {
				fprintf(stderr, "server: the previous pong did not complete\n");
				goto out_disconnect;
			}
			sending = false;
		}
		out->op = MSG_PONG;
		out->round = round;
		out->value = value + 1;
		ret = rpma_send(conn, mr, sizeof(struct msg), sizeof(struct msg),
				RPMA_F_COMPLETION_ALWAYS, &send_ctx);
		if (ret) {
			report("server", "rpma_send", ret);
			goto out_disconnect;
		}
		sending = true;
		pongs++;
	}
	printf("server: %s stopped after %d pongs\n", in->name, pongs);

	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_disconnect;
	}
	printf("server: client disconnected\n");
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret)
		report("server", "rpma_conn_disconnect", ret);
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
	free(msgs);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("server", "rpma_peer_delete", ret);
	return status;
}
