// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq_wait.c -- the librpma 1.x way: rpma_cq_wait blocks until the CQ's
 * channel fires, then rpma_cq_get_wc drains what is there; the separate
 * receive CQ has its own channel and is woken only by receives
 */

#include <errno.h>
#include <poll.h>

#include "common.h"

#define MSG 24

/* the fd must not be readable for a while: nothing to wake up for */
static void expect_quiet(struct rpma_cq *cq, int ms)
{
	int fd = -1;
	T_OK(rpma_cq_get_fd(cq, &fd));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	T_EQ(poll(&pfd, 1, ms), 0);
}

static void drain_one(struct rpma_cq *cq, void *ctx, enum ibv_wc_opcode opcode, uint32_t len)
{
	struct ibv_wc wc[4];
	int got = 0;
	T_OK(rpma_cq_get_wc(cq, 4, wc, &got));
	T_EQ(got, 1);
	T_EQ(wc[0].status, IBV_WC_SUCCESS);
	T_PTR_EQ(wc[0].wr_id, ctx);
	T_EQ(wc[0].opcode, opcode);
	if (opcode == IBV_WC_RECV)
		T_EQ(wc[0].byte_len, len);
	T_RET(rpma_cq_get_wc(cq, 4, wc, &got), RPMA_E_NO_COMPLETION);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(2 * MSG);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, 2 * MSG, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_rcq_size(cfg, 4));

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, NULL);
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_cq *rcq = t_rcq(conn);
	int fd = -1, rfd = -1;
	T_OK(rpma_cq_get_fd(cq, &fd));
	T_OK(rpma_cq_get_fd(rcq, &rfd));
	T_ASSERT(fd != rfd);

	T_OK(rpma_recv(conn, mr, 0, MSG, T_CTX(10)));
	t_signal('R');
	t_waiting("rpma_cq_wait on the receive CQ");
	T_OK(rpma_cq_wait(rcq));
	drain_one(rcq, T_CTX(10), IBV_WC_RECV, MSG);
	T_PATTERN(buf, MSG, 0, 37);
	expect_quiet(cq, 100);

	T_OK(rpma_send(conn, mr, MSG, 5, RPMA_F_COMPLETION_ALWAYS, T_CTX(20)));
	t_waiting("rpma_cq_wait on the main CQ");
	T_OK(rpma_cq_wait(cq));
	drain_one(cq, T_CTX(20), IBV_WC_SEND, 0);
	expect_quiet(rcq, 100);
	/* the client disconnects only when the send has completed here */
	t_signal('D');

	t_close(&conn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(2 * MSG);
	t_fill(buf, MSG, 37);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, 2 * MSG, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_recv(conn, mr, MSG, MSG, T_CTX(30)));
	t_await('R');
	/* the server is asleep in rpma_cq_wait */
	t_sleep_ms(300);
	T_OK(rpma_send(conn, mr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));

	/* a send and a receive on one CQ: wait until both are there */
	bool sent = false, received = false;
	while (!sent || !received) {
		t_waiting("rpma_cq_wait on the client's CQ");
		T_OK(rpma_cq_wait(cq));
		struct ibv_wc wc[4];
		int got = 0;
		int ret;
		while ((ret = rpma_cq_get_wc(cq, 4, wc, &got)) == 0) {
			for (int i = 0; i < got; i++) {
				T_EQ(wc[i].status, IBV_WC_SUCCESS);
				if (wc[i].wr_id == (uintptr_t)T_CTX(1)) {
					T_EQ(wc[i].opcode, IBV_WC_SEND);
					sent = true;
				} else {
					T_PTR_EQ(wc[i].wr_id, T_CTX(30));
					T_EQ(wc[i].opcode, IBV_WC_RECV);
					T_EQ(wc[i].byte_len, 5);
					received = true;
				}
			}
		}
		T_RET(ret, RPMA_E_NO_COMPLETION);
	}
	t_await('D');

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("cq_wait", 34);
	return t_run(server, client);
}
