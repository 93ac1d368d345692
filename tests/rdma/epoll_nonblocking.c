// SPDX-License-Identifier: BSD-3-Clause
/*
 * epoll_nonblocking.c -- the endpoint's, the connection's and the CQ's file
 * descriptors, made O_NONBLOCK and watched with epoll, become readable
 * exactly when there is something to take; once drained the calls return
 * RPMA_E_NO_EVENT / RPMA_E_NO_COMPLETION instead of blocking
 */

#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common.h"

enum { TAG_EP = 1, TAG_CONN, TAG_CQ };

static void nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);
	T_ASSERT(flags >= 0);
	T_ASSERT(fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
}

static void watch(int epfd, int fd, uint32_t tag)
{
	nonblock(fd);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
	T_ASSERT(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0);
}

/* exactly the descriptor with this tag becomes readable */
static void wait_for(int epfd, uint32_t tag)
{
	struct epoll_event ev[4];
	int n;
	t_waiting("epoll_wait");
	do {
		n = epoll_wait(epfd, ev, 4, T_WAIT_MS);
	} while (n < 0 && errno == EINTR);
	if (n == 0)
		T_FAIL("no descriptor became readable, expected tag %u", tag);
	T_EQ(n, 1);
	T_EQ(ev[0].data.u32, tag);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	int epfd = epoll_create1(0);
	T_ASSERT(epfd >= 0);

	struct rpma_ep *ep = NULL;
	T_OK(rpma_ep_listen(peer, t_env.addr, t_env.port, &ep));
	int fd = -1;
	T_OK(rpma_ep_get_fd(ep, &fd));
	watch(epfd, fd, TAG_EP);
	struct rpma_conn_req *req = NULL;
	T_RET(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_NO_EVENT);
	T_PTR_EQ(req, NULL);
	t_signal('L');

	wait_for(epfd, TAG_EP);
	T_OK(rpma_ep_next_conn_req(ep, NULL, &req));
	T_ASSERT(req != NULL);
	struct rpma_conn_req *none = NULL;
	T_RET(rpma_ep_next_conn_req(ep, NULL, &none), RPMA_E_NO_EVENT);

	struct rpma_conn *conn = NULL;
	T_OK(rpma_conn_req_connect(&req, NULL, &conn));
	T_OK(rpma_conn_get_event_fd(conn, &fd));
	watch(epfd, fd, TAG_CONN);
	wait_for(epfd, TAG_CONN);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	T_OK(rpma_conn_next_event(conn, &ev));
	T_EQ(ev, RPMA_CONN_ESTABLISHED);
	T_RET(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);

	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_cq_get_fd(cq, &fd));
	watch(epfd, fd, TAG_CQ);
	/* nothing happened yet: no event on the CQ's channel */
	T_RET(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);

	T_OK(rpma_recv(conn, rmr, 0, 64, T_CTX(10)));
	t_signal('R');
	wait_for(epfd, TAG_CQ);
	T_OK(rpma_cq_wait(cq));
	struct rpma_completion c;
	T_CMPL(cq, T_CTX(10), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 24);
	T_PATTERN(rbuf, 24, 0, 22);
	T_RET(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
	T_RET(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);

	/* the client disconnects */
	t_signal('D');
	wait_for(epfd, TAG_CONN);
	T_OK(rpma_conn_next_event(conn, &ev));
	T_EQ(ev, RPMA_CONN_CLOSED);
	T_RET(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);
	T_OK(rpma_conn_disconnect(conn));
	T_OK(rpma_conn_delete(&conn));

	close(epfd);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(64);
	t_fill(sbuf, 64, 22);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, 64, RPMA_MR_USAGE_SEND);
	int epfd = epoll_create1(0);
	T_ASSERT(epfd >= 0);

	struct rpma_conn_req *req = t_client_req(peer, NULL);
	struct rpma_conn *conn = NULL;
	T_OK(rpma_conn_req_connect(&req, NULL, &conn));
	int fd = -1;
	T_OK(rpma_conn_get_event_fd(conn, &fd));
	watch(epfd, fd, TAG_CONN);
	wait_for(epfd, TAG_CONN);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	T_OK(rpma_conn_next_event(conn, &ev));
	T_EQ(ev, RPMA_CONN_ESTABLISHED);
	T_RET(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);

	struct rpma_cq *cq = t_cq(conn);
	t_await('R');
	T_OK(rpma_send(conn, smr, 0, 24, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_SEND, NULL);

	t_await('D');
	T_OK(rpma_conn_disconnect(conn));
	wait_for(epfd, TAG_CONN);
	T_OK(rpma_conn_next_event(conn, &ev));
	T_EQ(ev, RPMA_CONN_CLOSED);
	T_OK(rpma_conn_delete(&conn));

	close(epfd);
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("epoll_nonblocking", 20);
	return t_run(server, client);
}
