/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ping-pong-client.c -- the ping-pong client: examples 05 to 09 build it
 *                       as their `client`
 *
 * usage: client <addr> <port> [rounds [name]]
 *
 * For each round the client posts a receive for the answer, sends a ping
 * carrying a value and waits for both completions, its send's and the
 * receive's, in whatever order they come; the answer must carry the value
 * plus one, which the next ping sends back. A stop message ends the game.
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ping-pong.h"

/* op_contexts: which of the two operations completed */
static int send_ctx, recv_ctx;

/* waits until both the send and the receive of one round completed */
static int wait_round(struct rpma_cq *cq, bool with_recv)
{
	bool sent = false, received = !with_recv;
	struct rpma_completion cmpl;

	while (!sent || !received) {
		int ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);

		if (ret) {
			report("client", "rpma_cq_wait_completion", ret);
			return -1;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			fprintf(stderr, "client: the %s failed: %s\n",
				cmpl.op_context == &send_ctx ? "send" : "receive",
				ibv_wc_status_str(cmpl.op_status));
			return -1;
		}
		if (cmpl.op_context == &send_ctx)
			sent = true;
		else if (cmpl.op_context == &recv_ctx && cmpl.byte_len == sizeof(struct msg))
			received = true;
		else
			return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s <addr> <port> [rounds [name]]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	int rounds = argc >= 4 ? atoi(argv[3]) : 3;
	const char *name = argc == 5 ? argv[4] : "client";

	if (rounds < 1 || strlen(name) >= MSG_NAME_MAX) {
		fprintf(stderr, "client: rounds must be 1 or more, the name shorter than %d\n",
			MSG_NAME_MAX);
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
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "rpma_peer_new", ret);
		return 1;
	}

	/* one region, two messages: [0] is sent, [1] receives */
	struct msg *msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * sizeof(struct msg));

	if (!msgs) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(msgs, 0, 2 * sizeof(struct msg));
	ret = rpma_mr_reg(peer, msgs, 2 * sizeof(struct msg),
			  RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}
	struct msg *out = &msgs[0], *in = &msgs[1];

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
	printf("client %s: connected to %s:%s\n", name, addr, port);

	uint64_t value = (uint64_t)getpid() * 1000;

	strcpy(out->name, name);
	for (int round = 1; round <= rounds; round++) {
		/* the receive first: the answer may come before the send completes */
		ret = rpma_recv(conn, mr, sizeof(struct msg), sizeof(struct msg), &recv_ctx);
		if (ret) {
			report("client", "rpma_recv", ret);
			goto out_disconnect;
		}
		out->op = MSG_PING;
		out->round = (uint32_t)round;
		out->value = value;
		ret =
		    rpma_send(conn, mr, 0, sizeof(struct msg), RPMA_F_COMPLETION_ALWAYS, &send_ctx);
		if (ret) {
			report("client", "rpma_send", ret);
			goto out_disconnect;
		}
		if (wait_round(cq, true))
			goto out_disconnect;
		if (in->op != MSG_PONG || in->round != out->round || in->value != value + 1) {
			fprintf(stderr, "client %s: round %d: a wrong answer (op %u, value %llu)\n",
				name, round, in->op, (unsigned long long)in->value);
			goto out_disconnect;
		}
		printf("client %s: round %d: ping %llu, pong %llu\n", name, round,
		       (unsigned long long)value, (unsigned long long)in->value);
		value = in->value;
	}

	/* the last message needs no answer */
	out->op = MSG_STOP;
	ret = rpma_send(conn, mr, 0, sizeof(struct msg), RPMA_F_COMPLETION_ALWAYS, &send_ctx);
	if (ret) {
		report("client", "rpma_send", ret);
		goto out_disconnect;
	}
	if (wait_round(cq, false))
		goto out_disconnect;
	printf("client %s: %d rounds played\n", name, rounds);
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
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_free:
	free(msgs);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("client", "rpma_peer_delete", ret);
	return status;
}
