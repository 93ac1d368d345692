/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 10-separate-rcq: receives on a completion queue of their own
 *
 * usage: server <addr> <port>
 *
 * The server answers requests (a number; the answer is its square) that
 * the client keeps coming, several at a time. Its connection has a
 * separate receive completion queue (rpma_conn_cfg_set_rcq_size()): the
 * requests complete there (rpma_conn_get_rcq()), the answers' sends on
 * the main CQ (rpma_conn_get_cq()). Each CQ has a completion channel with
 * a descriptor of its own (rpma_cq_get_fd()); the server sleeps in poll()
 * on both and takes the completions of the one that is readable.
 *
 * An answer needs a free send buffer, freed by its send's completion: a
 * request that finds none waits in a queue until one is.
 */

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

struct server {
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	struct rpma_cq *cq, *rcq;
	struct msg *in;	 /* WINDOW receive buffers */
	struct msg *out; /* WINDOW send buffers */
	bool out_busy[WINDOW];
	struct msg waiting[WINDOW]; /* requests not answered yet, oldest first */
	int nwaiting;
	int answered;
	bool stopped;
};

/* sleeps until the CQ or the receive CQ signals; says which */
static int wait_any(struct server *s, struct rpma_cq **cq)
{
	int fds[2];
	int ret;

	if ((ret = rpma_cq_get_fd(s->cq, &fds[0])) || (ret = rpma_cq_get_fd(s->rcq, &fds[1]))) {
		report("server", "rpma_cq_get_fd", ret);
		return -1;
	}
	struct pollfd pfd[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };

	while (poll(pfd, 2, WAIT_MS) < 0)
		if (errno != EINTR)
			return -1;
	if (!(pfd[0].revents & POLLIN) && !(pfd[1].revents & POLLIN)) {
		fprintf(stderr, "server: nothing happened for %d s\n", WAIT_MS / 1000);
		return -1;
	}
	*cq = (pfd[1].revents & POLLIN) ? s->rcq : s->cq;
	/* acknowledge the event and re-arm the CQ: the next one wakes poll() */
	ret = rpma_cq_wait(*cq);
	if (ret) {
		report("server", "rpma_cq_wait", ret);
		return -1;
	}
	return 0;
}

static bool sends_in_flight(const struct server *s)
{
	for (int i = 0; i < WINDOW; i++)
		if (s->out_busy[i])
			return true;
	return false;
}

/* answers the waiting requests while there are free send buffers */
static int answer_waiting(struct server *s)
{
	for (int slot = 0; slot < WINDOW && s->nwaiting > 0; slot++) {
		if (s->out_busy[slot])
			continue;
		struct msg *req = &s->waiting[0];

		s->out[slot].op = MSG_ANSWER;
		s->out[slot].seq = req->seq;
		s->out[slot].value = req->value * req->value;
		int ret = rpma_send(s->conn, s->mr, (WINDOW + slot) * sizeof(struct msg),
				    sizeof(struct msg), RPMA_F_COMPLETION_ALWAYS, &s->out[slot]);
		if (ret) {
			report("server", "rpma_send", ret);
			return -1;
		}
		s->out_busy[slot] = true;
		s->answered++;
		memmove(&s->waiting[0], &s->waiting[1], --s->nwaiting * sizeof(struct msg));
	}
	return 0;
}

/* takes every completion of cq */
static int drain(struct server *s, struct rpma_cq *cq)
{
	struct rpma_completion cmpls[WINDOW];
	int n;

	/* several completions with one poll of the CQ */
	while ((n = rpma_cq_get_completions(cq, cmpls, WINDOW)) > 0) {
		for (int i = 0; i < n; i++) {
			struct rpma_completion *c = &cmpls[i];

			if (c->op_status != IBV_WC_SUCCESS) {
				fprintf(stderr, "server: an operation failed: %s\n",
					ibv_wc_status_str(c->op_status));
				return -1;
			}
			if (c->op == RPMA_OP_SEND) {
				s->out_busy[(struct msg *)c->op_context - s->out] = false;
				continue;
			}
			/* RPMA_OP_RECV: only the receive CQ has them */
			struct msg *in = c->op_context;
			struct msg req = *in;

			if (cq != s->rcq || c->byte_len != sizeof(struct msg)) {
				fprintf(stderr, "server: a receive where none should be\n");
				return -1;
			}
			if (rpma_recv(s->conn, s->mr, (size_t)(in - s->in) * sizeof(struct msg),
				      sizeof(struct msg), in)) {
				fprintf(stderr, "server: rpma_recv failed\n");
				return -1;
			}
			if (req.op == MSG_STOP) {
				s->stopped = true;
			} else if (s->nwaiting == WINDOW) {
				fprintf(stderr, "server: more than %d requests in flight\n",
					WINDOW);
				return -1;
			} else {
				s->waiting[s->nwaiting++] = req;
			}
		}
		if (answer_waiting(s))
			return -1;
	}
	if (n < 0) {
		report("server", "rpma_cq_get_completions", n);
		return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];

	static struct server s;
	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "opening the device", ret);
		return 1;
	}
	struct msg *msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 4096);

	if (!msgs) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(msgs, 0, 2 * WINDOW * sizeof(struct msg));
	s.in = msgs;
	s.out = msgs + WINDOW;
	ret = rpma_mr_reg(peer, msgs, 2 * WINDOW * sizeof(struct msg),
			  RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &s.mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}
	ret = make_conn_cfg(&cfg, false);
	if (ret) {
		report("server", "configuring the connection", ret);
		goto out_mr;
	}

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_cfg;
	}
	printf("server: listening on %s:%s\n", addr, port);
	fflush(stdout);
	ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	/* every receive buffer posted before the client can send */
	for (int i = 0; i < WINDOW; i++) {
		ret = rpma_conn_req_recv(req, s.mr, i * sizeof(struct msg), sizeof(struct msg),
					 &s.in[i]);
		if (ret) {
			report("server", "rpma_conn_req_recv", ret);
			rpma_conn_req_delete(&req);
			goto out_ep;
		}
	}
	ret = rpma_conn_req_connect(&req, NULL, &s.conn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(s.conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: the connection was not established: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	if ((ret = rpma_conn_get_cq(s.conn, &s.cq)) || (ret = rpma_conn_get_rcq(s.conn, &s.rcq))) {
		report("server", "getting the CQs", ret);
		goto out_disconnect;
	}
	printf("server: client connected; sends complete on one CQ, receives on another\n");
	fflush(stdout);

	/* until the stop came and every answer's send has completed */
	while (!s.stopped || s.nwaiting > 0 || sends_in_flight(&s)) {
		struct rpma_cq *cq;

		if (wait_any(&s, &cq) || drain(&s, cq))
			goto out_disconnect;
	}
	printf("server: answered %d requests\n", s.answered);

	/* everything is answered and taken: this side closes the connection */
	ret = rpma_conn_disconnect(s.conn);
	if (ret) {
		report("server", "rpma_conn_disconnect", ret);
		goto out_conn;
	}
	ret = rpma_conn_next_event(s.conn, &event);
	if (ret || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: closed the connection\n");
	status = 0;
	goto out_conn;

out_disconnect:
	rpma_conn_disconnect(s.conn);
out_conn:
	ret = rpma_conn_delete(&s.conn);
	if (ret)
		report("server", "rpma_conn_delete", ret);
out_ep:
	ret = rpma_ep_shutdown(&ep);
	if (ret)
		report("server", "rpma_ep_shutdown", ret);
out_cfg:
	rpma_conn_cfg_delete(&cfg);
out_mr:
	ret = rpma_mr_dereg(&s.mr);
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
