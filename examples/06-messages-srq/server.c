/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 06-messages-srq: the ping-pong server on a shared receive queue
 *
 * usage: server <addr> <port>
 *
 * The same game as 05-messages-ping-pong, but the server's receives are
 * posted to a shared receive queue (SRQ) instead of the connection's own:
 * rpma_srq_new() makes it with a receive completion queue of its own,
 * rpma_srq_recv() posts to it -- before any client has connected -- and a
 * connection configuration with rpma_conn_cfg_set_srq() makes the
 * connection take its messages from it. Receives complete on the SRQ's
 * completion queue (rpma_srq_get_rcq()), sends on the connection's.
 * 07-messages-srq-many-clients shares the one SRQ among several clients.
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ping-pong.h" /* examples/common: the messages, and the client */

#define RECV_SLOTS 4 /* receives kept posted on the SRQ */

static int send_ctx;

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
	struct rpma_srq_cfg *srq_cfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *conn_cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *rcq = NULL, *cq = NULL;
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

	/* RECV_SLOTS messages to receive into, and one to send from */
	size_t region_size = (RECV_SLOTS + 1) * sizeof(struct msg);
	struct msg *msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 4096);

	if (!msgs) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(msgs, 0, region_size);
	ret = rpma_mr_reg(peer, msgs, region_size, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}
	struct msg *out = &msgs[RECV_SLOTS];

	/* the SRQ and its receive CQ, sized for the receives kept posted */
	ret = rpma_srq_cfg_new(&srq_cfg);
	if (!ret)
		ret = rpma_srq_cfg_set_rq_size(srq_cfg, RECV_SLOTS);
	if (!ret)
		ret = rpma_srq_cfg_set_rcq_size(srq_cfg, RECV_SLOTS);
	if (!ret)
		ret = rpma_srq_new(peer, srq_cfg, &srq);
	if (!ret)
		ret = rpma_srq_get_rcq(srq, &rcq);
	if (ret) {
		report("server", "creating the shared receive queue", ret);
		goto out_srq;
	}
	/* each receive's op_context is its slot */
	for (int i = 0; i < RECV_SLOTS; i++) {
		ret = rpma_srq_recv(srq, mr, i * sizeof(struct msg), sizeof(struct msg), &msgs[i]);
		if (ret) {
			report("server", "rpma_srq_recv", ret);
			goto out_srq;
		}
	}
	/* connections made with this configuration receive through the SRQ */
	ret = rpma_conn_cfg_new(&conn_cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_srq(conn_cfg, srq);
	if (ret) {
		report("server", "configuring the connection", ret);
		goto out_srq;
	}

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_srq;
	}
	printf("server: listening on %s:%s, %d receives posted on the SRQ\n", addr, port,
	       RECV_SLOTS);
	fflush(stdout);

	ret = rpma_ep_next_conn_req(ep, conn_cfg, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
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

	int pongs = 0;

	for (;;) {
		/* a message, on the SRQ's receive CQ */
		ret = rpma_cq_wait_completion(rcq, &cmpl, WAIT_MS);
		if (ret) {
			report("server", "rpma_cq_wait_completion(rcq)", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.byte_len != sizeof(struct msg)) {
			fprintf(stderr, "server: a receive failed: %s\n",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		struct msg *in = cmpl.op_context;
		struct msg copy = *in;

		copy.name[MSG_NAME_MAX - 1] = '\0';
		/* the slot is free again: back to the SRQ */
		ret = rpma_srq_recv(srq, mr, (size_t)(in - msgs) * sizeof(struct msg),
				    sizeof(struct msg), in);
		if (ret) {
			report("server", "rpma_srq_recv", ret);
			goto out_disconnect;
		}
		if (copy.op == MSG_STOP) {
			printf("server: %s stopped after %d pongs\n", copy.name, pongs);
			break;
		}
		printf("server: %s, round %u: ping %llu (SRQ slot %d)\n", copy.name, copy.round,
		       (unsigned long long)copy.value, (int)(in - msgs));
		out->op = MSG_PONG;
		out->round = copy.round;
		out->value = copy.value + 1;
		ret = rpma_send(conn, mr, RECV_SLOTS * sizeof(struct msg), sizeof(struct msg),
				RPMA_F_COMPLETION_ALWAYS, &send_ctx);
		if (ret) {
			report("server", "rpma_send", ret);
			goto out_disconnect;
		}
		/* the send, on the connection's CQ; out is reused after it */
		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret || cmpl.op_status != IBV_WC_SUCCESS || cmpl.op_context != &send_ctx) {
			fprintf(stderr, "server: the pong was not sent\n");
			goto out_disconnect;
		}
		pongs++;
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
out_srq:
	/* the SRQ outlives every connection that used it */
	rpma_conn_cfg_delete(&conn_cfg);
	ret = rpma_srq_delete(&srq);
	if (ret)
		report("server", "rpma_srq_delete", ret);
	rpma_srq_cfg_delete(&srq_cfg);
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
