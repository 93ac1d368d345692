// SPDX-License-Identifier: BSD-3-Clause
/*
 * shared_channel.c -- with rpma_conn_cfg_set_compl_channel(true) the main CQ
 * and the receive CQ share one completion channel: rpma_conn_wait tells
 * which CQ fired (is_rcq), rpma_cq_wait refuses with RPMA_E_SHARED_CHANNEL;
 * without it rpma_conn_wait and rpma_conn_get_compl_fd are
 * RPMA_E_NOT_SHARED_CHNL
 */

#include <errno.h>
#include <poll.h>

#include "common.h"

#define MSG 32

static void wait_fd(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;
	do {
		r = poll(&pfd, 1, T_WAIT_MS);
	} while (r < 0 && errno == EINTR);
	if (r != 1)
		T_FAIL("the shared completion channel did not become readable");
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(2 * MSG);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 2 * MSG, RPMA_MR_USAGE_RECV);
	unsigned char *sbuf = t_alloc(MSG);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, MSG, RPMA_MR_USAGE_SEND);

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	bool shared = true;
	T_OK(rpma_conn_cfg_get_compl_channel(cfg, &shared));
	T_EQ(shared, false);
	T_OK(rpma_conn_cfg_set_rcq_size(cfg, 8));
	T_OK(rpma_conn_cfg_set_compl_channel(cfg, true));
	T_OK(rpma_conn_cfg_get_compl_channel(cfg, &shared));
	T_EQ(shared, true);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, NULL);
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_cq *rcq = t_rcq(conn);
	int fd = -1;
	T_OK(rpma_conn_get_compl_fd(conn, &fd));
	T_ASSERT(fd >= 0);
	T_RET(rpma_cq_wait(cq), RPMA_E_SHARED_CHANNEL);
	T_RET(rpma_cq_wait(rcq), RPMA_E_SHARED_CHANNEL);

	T_OK(rpma_recv(conn, rmr, 0, MSG, T_CTX(10)));
	T_OK(rpma_recv(conn, rmr, MSG, MSG, T_CTX(11)));
	t_signal('R');

	/* a receive: the receive CQ fired */
	wait_fd(fd);
	struct rpma_cq *which = NULL;
	bool is_rcq = false;
	T_OK(rpma_conn_wait(conn, 0, &which, &is_rcq));
	T_PTR_EQ(which, rcq);
	T_EQ(is_rcq, true);
	struct rpma_completion c;
	T_CMPL(rcq, T_CTX(10), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, MSG);
	T_PATTERN(rbuf, MSG, 0, 19);
	T_NO_CMPL(cq, 50);

	/* a send: the main CQ fired */
	T_OK(rpma_send(conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(20)));
	wait_fd(fd);
	which = NULL;
	is_rcq = true;
	T_OK(rpma_conn_wait(conn, 0, &which, &is_rcq));
	T_PTR_EQ(which, cq);
	T_EQ(is_rcq, false);
	T_CMPL(cq, T_CTX(20), RPMA_OP_SEND, NULL);
	T_NO_CMPL(rcq, 50);

	/* the receive CQ was re-armed: a second receive wakes it again */
	t_signal('A');
	wait_fd(fd);
	which = NULL;
	T_OK(rpma_conn_wait(conn, 0, &which, NULL));
	T_PTR_EQ(which, rcq);
	T_CMPL(rcq, T_CTX(11), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 3);

	t_close(&conn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(MSG);
	t_fill(sbuf, MSG, 19);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, MSG, RPMA_MR_USAGE_SEND);
	unsigned char *rbuf = t_alloc(MSG);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, MSG, RPMA_MR_USAGE_RECV);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);

	/* this connection has no shared channel */
	int fd = -1;
	T_RET(rpma_conn_get_compl_fd(conn, &fd), RPMA_E_NOT_SHARED_CHNL);
	struct rpma_cq *which = NULL;
	T_RET(rpma_conn_wait(conn, 0, &which, NULL), RPMA_E_NOT_SHARED_CHNL);

	T_OK(rpma_recv(conn, rmr, 0, MSG, T_CTX(30)));
	t_await('R');
	T_OK(rpma_send(conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_SEND, NULL);
	T_CMPL(cq, T_CTX(30), RPMA_OP_RECV, NULL);
	t_await('A');
	T_OK(rpma_send(conn, smr, 0, 3, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_SEND, NULL);

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("shared_channel", 17);
	return t_run(server, client);
}
