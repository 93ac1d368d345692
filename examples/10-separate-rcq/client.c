/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 10-separate-rcq: requests kept in flight, answers on the
 *             receive CQ
 *
 * usage: client <addr> <port> [requests]
 *
 * The client sends the given number of requests (20 by default), keeping
 * up to WINDOW of them in flight, and checks every answer. Like the
 * server, it has a separate receive CQ: the answers complete there, its
 * sends on the main CQ, and it sleeps in poll() on both CQs' descriptors.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

struct client {
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	struct rpma_cq *cq, *rcq;
	struct msg *in, *out; /* WINDOW buffers each */
	bool out_busy[WINDOW];
	uint64_t base; /* request n carries base + n */
	int total, sent, answered;
	bool stop_sent;
};

static int wait_any(struct client *c, struct rpma_cq **cq)
{
	int fds[2];
	int ret;

	if ((ret = rpma_cq_get_fd(c->cq, &fds[0])) || (ret = rpma_cq_get_fd(c->rcq, &fds[1]))) {
		report("client", "rpma_cq_get_fd", ret);
		return -1;
	}
	struct pollfd pfd[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };

	while (poll(pfd, 2, WAIT_MS) < 0)
		if (errno != EINTR)
			return -1;
	if (!(pfd[0].revents & POLLIN) && !(pfd[1].revents & POLLIN)) {
		fprintf(stderr, "client: nothing happened for %d s\n", WAIT_MS / 1000);
		return -1;
	}
	*cq = (pfd[1].revents & POLLIN) ? c->rcq : c->cq;
	ret = rpma_cq_wait(*cq);
	if (ret) {
		report("client", "rpma_cq_wait", ret);
		return -1;
	}
	return 0;
}

static int free_slot(struct client *c)
{
	for (int i = 0; i < WINDOW; i++)
		if (!c->out_busy[i])
			return i;
	return -1;
}

static bool sends_in_flight(const struct client *c)
{
	for (int i = 0; i < WINDOW; i++)
		if (c->out_busy[i])
			return true;
	return false;
}

/* sends requests while fewer than WINDOW wait for their answers; then the stop */
static int send_more(struct client *c)
{
	int slot;

	while (c->sent - c->answered < WINDOW && c->sent < c->total && (slot = free_slot(c)) >= 0) {
		c->sent++;
		c->out[slot] = (struct msg){ MSG_REQUEST, (uint32_t)c->sent, c->base + c->sent };
		int ret = rpma_send(c->conn, c->mr, (WINDOW + slot) * sizeof(struct msg),
				    sizeof(struct msg), RPMA_F_COMPLETION_ALWAYS, &c->out[slot]);
		if (ret) {
			report("client", "rpma_send", ret);
			return -1;
		}
		c->out_busy[slot] = true;
	}
	if (c->answered == c->total && !c->stop_sent && (slot = free_slot(c)) >= 0) {
		c->out[slot] = (struct msg){ MSG_STOP, 0, 0 };
		int ret = rpma_send(c->conn, c->mr, (WINDOW + slot) * sizeof(struct msg),
				    sizeof(struct msg), RPMA_F_COMPLETION_ALWAYS, &c->out[slot]);
		if (ret) {
			report("client", "rpma_send", ret);
			return -1;
		}
		c->out_busy[slot] = true;
		c->stop_sent = true;
	}
	return 0;
}

static int drain(struct client *c, struct rpma_cq *cq)
{
	struct rpma_completion cmpl;
	int ret;

	while ((ret = rpma_cq_get_completion(cq, &cmpl)) == 0) {
		/*
		 * The stop goes once every answer is in, and the server closes
		 * the connection once it has the stop: what is still posted then
		 * completes flushed -- the receives, and on siw the stop's own
		 * send, whose message the server took. A flushed completion's
		 * opcode is not to be trusted (verbs leave it undefined), so any
		 * flushed one after the stop is the end, not a failure.
		 */
		if (c->stop_sent && cmpl.op_status == IBV_WC_WR_FLUSH_ERR)
			continue;
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			fprintf(stderr, "client: an operation failed: %s\n",
				ibv_wc_status_str(cmpl.op_status));
			return -1;
		}
		if (cmpl.op == RPMA_OP_SEND) {
			c->out_busy[(struct msg *)cmpl.op_context - c->out] = false;
			continue;
		}
		struct msg *in = cmpl.op_context;
		struct msg answer = *in;
		uint64_t asked = c->base + answer.seq;

		if (cq != c->rcq || answer.op != MSG_ANSWER || answer.value != asked * asked) {
			fprintf(stderr, "client: a wrong answer to request %u\n", answer.seq);
			return -1;
		}
		c->answered++;
		if (c->answered % 5 == 0 || c->answered == c->total)
			printf("client: %d answers so far, the last: %llu squared is %llu\n",
			       c->answered, (unsigned long long)asked,
			       (unsigned long long)answer.value);
		ret = rpma_recv(c->conn, c->mr, (size_t)(in - c->in) * sizeof(struct msg),
				sizeof(struct msg), in);
		if (ret) {
			report("client", "rpma_recv", ret);
			return -1;
		}
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		report("client", "rpma_cq_get_completion", ret);
		return -1;
	}
	return send_more(c);
}

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> [requests]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];

	static struct client c;
	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	c.total = argc == 4 ? atoi(argv[3]) : 20;
	c.base = (uint64_t)getpid() % 1000;
	if (c.total < 1) {
		fprintf(stderr, "client: at least one request\n");
		return 2;
	}
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "opening the device", ret);
		return 1;
	}
	struct msg *msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 4096);

	if (!msgs) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(msgs, 0, 2 * WINDOW * sizeof(struct msg));
	c.in = msgs;
	c.out = msgs + WINDOW;
	ret = rpma_mr_reg(peer, msgs, 2 * WINDOW * sizeof(struct msg),
			  RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &c.mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}
	ret = make_conn_cfg(&cfg, false);
	if (!ret)
		ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
	if (ret) {
		report("client", "rpma_conn_req_new", ret);
		goto out_cfg;
	}
	for (int i = 0; i < WINDOW; i++) {
		ret = rpma_conn_req_recv(req, c.mr, i * sizeof(struct msg), sizeof(struct msg),
					 &c.in[i]);
		if (ret) {
			report("client", "rpma_conn_req_recv", ret);
			rpma_conn_req_delete(&req);
			goto out_cfg;
		}
	}
	ret = rpma_conn_req_connect(&req, NULL, &c.conn);
	if (ret) {
		report("client", "rpma_conn_req_connect", ret);
		goto out_cfg;
	}
	ret = rpma_conn_next_event(c.conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	if ((ret = rpma_conn_get_cq(c.conn, &c.cq)) || (ret = rpma_conn_get_rcq(c.conn, &c.rcq))) {
		report("client", "getting the CQs", ret);
		goto out_disconnect;
	}
	printf("client: connected; %d requests, up to %d in flight\n", c.total, WINDOW);

	if (send_more(&c))
		goto out_disconnect;
	/* until the stop is sent and every send has completed */
	while (!c.stop_sent || sends_in_flight(&c)) {
		struct rpma_cq *cq;

		if (wait_any(&c, &cq) || drain(&c, cq))
			goto out_disconnect;
	}
	printf("client: all %d answers right\n", c.answered);

	/*
	 * The server closes the connection once its last answer's send has
	 * completed. Closing it here, right after the stop, could flush that
	 * send on the server's side before its completion was taken.
	 */
	ret = rpma_conn_next_event(c.conn, &event);
	if (ret || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the connection ended with: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_disconnect;
	}
	printf("client: the server closed the connection\n");
	status = 0;
	goto out_conn;

out_disconnect:
	ret = rpma_conn_disconnect(c.conn);
	if (ret || (ret = rpma_conn_next_event(c.conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete\n");
		status = 1;
	}
out_conn:
	ret = rpma_conn_delete(&c.conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
out_cfg:
	rpma_conn_cfg_delete(&cfg);
	ret = rpma_mr_dereg(&c.mr);
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
