/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 07-messages-srq-many-clients: one SRQ for several clients
 *
 * usage: server <addr> <port> [clients]
 *
 * The server accepts the given number of clients (2 by default), all with
 * the one shared receive queue, plays ping-pong with each of them and
 * ends when all have stopped and disconnected. However many clients there
 * are, the receives posted are those of the SRQ: that is what an SRQ is
 * for.
 *
 * A message arrives on the SRQ's receive completion queue without saying
 * which connection brought it. The verbs completion does:
 * rpma_cq_get_wc() returns struct ibv_wc, whose qp_num matches the
 * connection's rpma_conn_get_qp_num(). The server takes completions with
 * rpma_cq_get_wc() and, when there are none, sleeps in rpma_cq_wait().
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ping-pong.h" /* examples/common: the messages, and the client */

#define MAX_CLIENTS 8
#define RECV_SLOTS  16 /* receives kept posted on the SRQ, for all clients */

struct client {
	struct rpma_conn *conn;
	uint32_t qp_num;
	int pongs;
	bool stopped;
};

/* the client whose connection has the queue pair qp_num */
static struct client *client_of(struct client *clients, int n, uint32_t qp_num)
{
	for (int i = 0; i < n; i++)
		if (clients[i].qp_num == qp_num)
			return &clients[i];
	return NULL;
}

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> [clients]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	int nclients = argc == 4 ? atoi(argv[3]) : 2;

	if (nclients < 1 || nclients > MAX_CLIENTS) {
		fprintf(stderr, "server: 1 to %d clients\n", MAX_CLIENTS);
		return 2;
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_srq_cfg *srq_cfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *conn_cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_cq *rcq = NULL;
	struct client clients[MAX_CLIENTS];
	int accepted = 0;

	memset(clients, 0, sizeof(clients));
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

	/* RECV_SLOTS messages to receive into, then one to send from per client */
	size_t region_size = (RECV_SLOTS + MAX_CLIENTS) * sizeof(struct msg);
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
	for (int i = 0; i < RECV_SLOTS; i++) {
		ret = rpma_srq_recv(srq, mr, i * sizeof(struct msg), sizeof(struct msg), &msgs[i]);
		if (ret) {
			report("server", "rpma_srq_recv", ret);
			goto out_srq;
		}
	}
	ret = rpma_conn_cfg_new(&conn_cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_srq(conn_cfg, srq);
	if (ret) {
		report("server", "configuring the connections", ret);
		goto out_srq;
	}

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_srq;
	}
	printf("server: listening on %s:%s for %d clients, %d receives posted on the SRQ\n", addr,
	       port, nclients, RECV_SLOTS);
	fflush(stdout);

	/*
	 * Accept them all first. A client that connected early may already be
	 * sending: its pings wait in the SRQ's buffers meanwhile.
	 */
	for (accepted = 0; accepted < nclients;) {
		struct rpma_conn_req *req = NULL;
		struct client *c = &clients[accepted];
		enum rpma_conn_event event;

		ret = rpma_ep_next_conn_req(ep, conn_cfg, &req);
		if (ret) {
			report("server", "rpma_ep_next_conn_req", ret);
			goto out_conns;
		}
		ret = rpma_conn_req_connect(&req, NULL, &c->conn);
		if (ret) {
			report("server", "rpma_conn_req_connect", ret);
			goto out_conns;
		}
		accepted++;
		ret = rpma_conn_next_event(c->conn, &event);
		if (ret || event != RPMA_CONN_ESTABLISHED) {
			fprintf(stderr, "server: a connection was not established: %s\n",
				ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
			goto out_conns;
		}
		ret = rpma_conn_get_qp_num(c->conn, &c->qp_num);
		if (ret) {
			report("server", "rpma_conn_get_qp_num", ret);
			goto out_conns;
		}
		printf("server: client %d connected (queue pair %u)\n", accepted, c->qp_num);
		fflush(stdout);
	}

	int stopped = 0;

	while (stopped < nclients) {
		struct ibv_wc wc[RECV_SLOTS];
		int got = 0;

		/*
		 * Take what the receive CQ holds; when it is empty, sleep until
		 * it signals (rpma_cq_wait() re-arms it, so anything that comes
		 * after the last poll wakes us up).
		 */
		ret = rpma_cq_get_wc(rcq, RECV_SLOTS, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			ret = rpma_cq_wait(rcq);
			if (ret) {
				report("server", "rpma_cq_wait", ret);
				goto out_conns;
			}
			continue;
		}
		if (ret) {
			report("server", "rpma_cq_get_wc", ret);
			goto out_conns;
		}
		for (int i = 0; i < got; i++) {
			struct msg *in = (struct msg *)(uintptr_t)wc[i].wr_id;
			struct client *c = client_of(clients, accepted, wc[i].qp_num);

			if (wc[i].status != IBV_WC_SUCCESS || !c ||
			    wc[i].byte_len != sizeof(struct msg)) {
				fprintf(stderr, "server: a bad receive: %s\n",
					ibv_wc_status_str(wc[i].status));
				goto out_conns;
			}
			struct msg copy = *in;

			copy.name[MSG_NAME_MAX - 1] = '\0';
			ret = rpma_srq_recv(srq, mr, (size_t)(in - msgs) * sizeof(struct msg),
					    sizeof(struct msg), in);
			if (ret) {
				report("server", "rpma_srq_recv", ret);
				goto out_conns;
			}
			if (copy.op == MSG_STOP) {
				printf("server: %s (queue pair %u) stopped after %d pongs\n",
				       copy.name, c->qp_num, c->pongs);
				c->stopped = true;
				stopped++;
				continue;
			}
			printf("server: %s (queue pair %u), round %u: ping %llu\n", copy.name,
			       c->qp_num, copy.round, (unsigned long long)copy.value);

			/* the answer goes back on the connection the ping came from */
			size_t out_off = (RECV_SLOTS + (size_t)(c - clients)) * sizeof(struct msg);
			struct msg *out = (struct msg *)((char *)msgs + out_off);
			struct rpma_cq *cq;
			struct rpma_completion cmpl;

			out->op = MSG_PONG;
			out->round = copy.round;
			out->value = copy.value + 1;
			ret = rpma_send(c->conn, mr, out_off, sizeof(struct msg),
					RPMA_F_COMPLETION_ALWAYS, out);
			if (ret) {
				report("server", "rpma_send", ret);
				goto out_conns;
			}
			ret = rpma_conn_get_cq(c->conn, &cq);
			if (!ret)
				ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
			if (ret || cmpl.op_status != IBV_WC_SUCCESS) {
				fprintf(stderr, "server: a pong was not sent\n");
				goto out_conns;
			}
			c->pongs++;
		}
	}
	printf("server: all %d clients stopped\n", nclients);

	status = 0;
	for (int i = 0; i < accepted; i++) {
		enum rpma_conn_event event;

		ret = rpma_conn_next_event(clients[i].conn, &event);
		if (ret || event != RPMA_CONN_CLOSED) {
			fprintf(stderr, "server: client %d's connection ended with: %s\n", i + 1,
				ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
			status = 1;
		}
	}
	if (status == 0)
		printf("server: all %d clients disconnected\n", nclients);

out_conns:
	for (int i = 0; i < accepted; i++) {
		rpma_conn_disconnect(clients[i].conn);
		ret = rpma_conn_delete(&clients[i].conn);
		if (ret)
			report("server", "rpma_conn_delete", ret);
	}
	ret = rpma_ep_shutdown(&ep);
	if (ret)
		report("server", "rpma_ep_shutdown", ret);
out_srq:
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
