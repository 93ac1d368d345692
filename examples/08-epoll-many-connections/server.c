/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 08-epoll-many-connections: one thread, one epoll loop, many
 *             connections
 *
 * usage: server <addr> <port> [clients]
 *
 * The ping-pong server once more, now for clients that come and go at
 * any time: it serves whoever connects and ends after the given number of
 * clients (3 by default) have come and gone. Nothing blocks. Every
 * librpma object that can make the program wait has a file descriptor:
 *   - the endpoint's (rpma_ep_get_fd()): a connection request came;
 *   - each connection's event descriptor (rpma_conn_get_event_fd()):
 *     established, closed;
 *   - each completion queue's (rpma_cq_get_fd()): completions came.
 * All are made O_NONBLOCK and watched by one epoll instance; when one is
 * readable, the call that goes with it takes what is there. Made
 * non-blocking, rpma_ep_next_conn_req() and rpma_conn_next_event() return
 * RPMA_E_NO_EVENT and rpma_cq_wait() returns RPMA_E_NO_COMPLETION instead
 * of waiting.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ping-pong.h" /* examples/common: the messages, and the client */

#define MAX_CLIENTS 8

enum fd_kind { FD_ENDPOINT, FD_CONN_EVENTS, FD_COMPLETIONS };

struct client;

/* what epoll hands back: which descriptor, and of whom */
struct watched {
	enum fd_kind kind;
	struct client *client;
};

struct client {
	struct rpma_conn *conn; /* NULL: the slot is free */
	struct rpma_cq *cq;
	int number; /* counts the clients from 1 */
	struct watched events, completions;
	struct msg *in, *out;	/* in: receives; out: sends */
	size_t in_off, out_off; /* their offsets in the region */
	bool sending;		/* out is in flight */
	bool pong_waits;	/* a pong is ready but out was busy */
	int pongs;
};

struct server {
	int epfd;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_mr_local *mr;
	struct client clients[MAX_CLIENTS];
	int connected; /* clients so far */
	int gone;      /* clients that have disconnected */
};

static int watch(int epfd, int fd, struct watched *w)
{
	int flags = fcntl(fd, F_GETFL);
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
		fprintf(stderr, "server: cannot watch fd %d: %s\n", fd, strerror(errno));
		return -1;
	}
	return 0;
}

static int post_recv(struct server *s, struct client *c)
{
	int ret = rpma_recv(c->conn, s->mr, c->in_off, sizeof(struct msg), c->in);

	if (ret)
		report("server", "rpma_recv", ret);
	return ret;
}

static int send_pong(struct server *s, struct client *c)
{
	int ret = rpma_send(c->conn, s->mr, c->out_off, sizeof(struct msg),
			    RPMA_F_COMPLETION_ALWAYS, c->out);

	if (ret) {
		report("server", "rpma_send", ret);
		return ret;
	}
	c->sending = true;
	c->pong_waits = false;
	c->pongs++;
	return 0;
}

/* a connection request: accept it into a free slot, or turn it down */
static int accept_client(struct server *s)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(s->ep, NULL, &req);

	if (ret == RPMA_E_NO_EVENT)
		return 0;
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		return -1;
	}
	struct client *c = NULL;

	for (int i = 0; i < MAX_CLIENTS && !c; i++)
		if (!s->clients[i].conn)
			c = &s->clients[i];
	if (!c) {
		printf("server: %d clients already: turning one down\n", MAX_CLIENTS);
		return rpma_conn_req_delete(&req) ? -1 : 0;
	}
	/* the first receive goes with the request, before the client can send */
	ret = rpma_conn_req_recv(req, s->mr, c->in_off, sizeof(struct msg), c->in);
	if (ret) {
		report("server", "rpma_conn_req_recv", ret);
		rpma_conn_req_delete(&req);
		return -1;
	}
	ret = rpma_conn_req_connect(&req, NULL, &c->conn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		return -1;
	}
	c->number = ++s->connected;
	c->sending = c->pong_waits = false;
	c->pongs = 0;
	int event_fd, cq_fd;

	if ((ret = rpma_conn_get_event_fd(c->conn, &event_fd)) ||
	    (ret = rpma_conn_get_cq(c->conn, &c->cq)) || (ret = rpma_cq_get_fd(c->cq, &cq_fd))) {
		report("server", "getting the connection's descriptors", ret);
		return -1;
	}
	if (watch(s->epfd, event_fd, &c->events) || watch(s->epfd, cq_fd, &c->completions))
		return -1;
	return 0;
}

/* takes every completion the client's CQ holds */
static int drain_completions(struct server *s, struct client *c)
{
	struct rpma_completion cmpl;
	int ret;

	while ((ret = rpma_cq_get_completion(c->cq, &cmpl)) == 0) {
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			fprintf(stderr, "server: client %d: the %s failed: %s\n", c->number,
				cmpl.op_context == c->out ? "send" : "receive",
				ibv_wc_status_str(cmpl.op_status));
			return -1;
		}
		if (cmpl.op_context == c->out) {
			c->sending = false;
			if (c->pong_waits && send_pong(s, c))
				return -1;
			continue;
		}
		/* a receive */
		struct msg ping = *c->in;

		ping.name[MSG_NAME_MAX - 1] = '\0';
		if (cmpl.byte_len != sizeof(struct msg)) {
			fprintf(stderr, "server: client %d: a message of %u bytes\n", c->number,
				cmpl.byte_len);
			return -1;
		}
		if (ping.op == MSG_STOP) {
			printf("server: client %d (%s) stopped after %d pongs\n", c->number,
			       ping.name, c->pongs);
			continue;
		}
		printf("server: client %d (%s), round %u: ping %llu\n", c->number, ping.name,
		       ping.round, (unsigned long long)ping.value);
		if (post_recv(s, c))
			return -1;
		/* out may still be on its way: then the pong waits for it */
		c->out->op = MSG_PONG;
		c->out->round = ping.round;
		c->out->value = ping.value + 1;
		c->pong_waits = true;
		if (!c->sending && send_pong(s, c))
			return -1;
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		report("server", "rpma_cq_get_completion", ret);
		return -1;
	}
	return 0;
}

/* the CQ's descriptor is readable: acknowledge the event, then take everything */
static int on_completions(struct server *s, struct client *c)
{
	int ret = rpma_cq_wait(c->cq);

	if (ret && ret != RPMA_E_NO_COMPLETION) {
		report("server", "rpma_cq_wait", ret);
		return -1;
	}
	return drain_completions(s, c);
}

static void drop_client(struct server *s, struct client *c)
{
	/* deleting the connection closes its descriptors: epoll forgets them */
	rpma_conn_disconnect(c->conn);
	int ret = rpma_conn_delete(&c->conn);

	if (ret)
		report("server", "rpma_conn_delete", ret);
	s->gone++;
}

static int on_conn_event(struct server *s, struct client *c)
{
	enum rpma_conn_event event;
	int ret = rpma_conn_next_event(c->conn, &event);

	if (ret == RPMA_E_NO_EVENT)
		return 0;
	if (ret) {
		report("server", "rpma_conn_next_event", ret);
		return -1;
	}
	switch (event) {
	case RPMA_CONN_ESTABLISHED:
		printf("server: client %d connected\n", c->number);
		return 0;
	case RPMA_CONN_CLOSED:
		/* what came before the close is still in the CQ */
		ret = drain_completions(s, c);
		printf("server: client %d disconnected\n", c->number);
		drop_client(s, c);
		return ret;
	default:
		fprintf(stderr, "server: client %d: %s\n", c->number,
			rpma_utils_conn_event_2str(event));
		drop_client(s, c);
		return -1;
	}
}

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> [clients]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	int expected = argc == 4 ? atoi(argv[3]) : 3;

	if (expected < 1) {
		fprintf(stderr, "server: at least one client\n");
		return 2;
	}

	static struct server s;
	struct ibv_context *ibv_ctx = NULL;
	struct watched listener = { FD_ENDPOINT, NULL };
	int status = 1;
	int ret;

	s.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s.epfd < 0) {
		perror("server: epoll_create1");
		return 1;
	}
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &s.peer);
	if (ret) {
		report("server", "opening the device", ret);
		return 1;
	}

	/* two messages per client slot: the receive and the send */
	size_t region_size = 2 * MAX_CLIENTS * sizeof(struct msg);
	struct msg *msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 4096);

	if (!msgs) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(msgs, 0, region_size);
	ret =
	    rpma_mr_reg(s.peer, msgs, region_size, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &s.mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &s.clients[i];

		c->events = (struct watched){ FD_CONN_EVENTS, c };
		c->completions = (struct watched){ FD_COMPLETIONS, c };
		c->in = &msgs[2 * i];
		c->out = &msgs[2 * i + 1];
		c->in_off = 2 * i * sizeof(struct msg);
		c->out_off = c->in_off + sizeof(struct msg);
	}

	ret = rpma_ep_listen(s.peer, addr, port, &s.ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_mr;
	}
	int ep_fd;

	ret = rpma_ep_get_fd(s.ep, &ep_fd);
	if (ret) {
		report("server", "rpma_ep_get_fd", ret);
		goto out_ep;
	}
	if (watch(s.epfd, ep_fd, &listener))
		goto out_ep;
	printf("server: listening on %s:%s until %d clients have come and gone\n", addr, port,
	       expected);
	fflush(stdout);

	while (s.gone < expected) {
		struct epoll_event events[16];
		int n = epoll_wait(s.epfd, events, 16, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("server: epoll_wait");
			goto out_clients;
		}
		for (int i = 0; i < n; i++) {
			struct watched *w = events[i].data.ptr;

			/* a connection dropped earlier in this round has no descriptors */
			if (w->client && !w->client->conn)
				continue;
			switch (w->kind) {
			case FD_ENDPOINT:
				ret = accept_client(&s);
				break;
			case FD_CONN_EVENTS:
				ret = on_conn_event(&s, w->client);
				break;
			case FD_COMPLETIONS:
				ret = on_completions(&s, w->client);
				break;
			}
			if (ret)
				goto out_clients;
		}
		fflush(stdout);
	}
	printf("server: %d clients served\n", s.gone);
	status = 0;

out_clients:
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s.clients[i].conn)
			drop_client(&s, &s.clients[i]);
out_ep:
	ret = rpma_ep_shutdown(&s.ep);
	if (ret)
		report("server", "rpma_ep_shutdown", ret);
out_mr:
	ret = rpma_mr_dereg(&s.mr);
	if (ret)
		report("server", "rpma_mr_dereg", ret);
out_free:
	free(msgs);
out_peer:
	ret = rpma_peer_delete(&s.peer);
	if (ret)
		report("server", "rpma_peer_delete", ret);
	close(s.epfd);
	return status;
}
