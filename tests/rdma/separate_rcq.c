// SPDX-License-Identifier: BSD-3-Clause
/*
 * separate_rcq.c -- with rpma_conn_cfg_set_rcq_size, receive completions
 * appear only on the receive CQ and send completions only on the main CQ;
 * a connection without it gets its receive completions on the main CQ
 */

#include "common.h"

#define MSG 48

/* the next completion on either CQ; fails telling where it went */
static void expect_on(struct rpma_cq *want, struct rpma_cq *other, const char *want_name, void *ctx,
		      enum rpma_op op, struct rpma_completion *c)
{
	long long deadline = t_now_ms() + T_WAIT_MS;
	for (;;) {
		if (rpma_cq_get_completion(want, c) == 0)
			break;
		if (rpma_cq_get_completion(other, c) == 0)
			T_FAIL(
			    "completion of context %p (%s, %s) came on the wrong CQ, expected %s",
			    c->op_context, t_op_str(c->op), ibv_wc_status_str(c->op_status),
			    want_name);
		if (t_now_ms() > deadline)
			T_FAIL("no completion on either CQ within %d ms, expected context %p on %s",
			       T_WAIT_MS, ctx, want_name);
		t_sleep_ms(1);
	}
	T_EQ(c->op_status, IBV_WC_SUCCESS);
	T_PTR_EQ(c->op_context, ctx);
	T_EQ(c->op, op);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(2 * MSG);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 2 * MSG, RPMA_MR_USAGE_RECV);
	unsigned char *sbuf = t_alloc(MSG);
	t_fill(sbuf, MSG, 17);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, MSG, RPMA_MR_USAGE_SEND);

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	uint32_t size = 1;
	T_OK(rpma_conn_cfg_get_rcq_size(cfg, &size));
	T_EQ(size, 0);
	T_OK(rpma_conn_cfg_set_cq_size(cfg, 8));
	T_OK(rpma_conn_cfg_set_rcq_size(cfg, 8));
	T_OK(rpma_conn_cfg_get_rcq_size(cfg, &size));
	T_EQ(size, 8);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, NULL);
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_cq *rcq = t_rcq(conn);
	T_ASSERT(cq != rcq);

	T_OK(rpma_recv(conn, rmr, 0, MSG, T_CTX(10)));
	T_OK(rpma_recv(conn, rmr, MSG, MSG, T_CTX(11)));
	t_signal('R');

	struct rpma_completion c;
	expect_on(rcq, cq, "the receive CQ", T_CTX(10), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, MSG);
	expect_on(rcq, cq, "the receive CQ", T_CTX(11), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 7);
	T_PATTERN(rbuf, MSG, 0, 18);
	T_PATTERN(rbuf + MSG, 7, 0, 18);
	T_NO_CMPL(cq, 100);

	t_await('S');
	T_OK(rpma_send(conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(20)));
	expect_on(cq, rcq, "the main CQ", T_CTX(20), RPMA_OP_SEND, &c);
	T_NO_CMPL(rcq, 100);
	T_NO_CMPL(cq, 10);
	/* the client disconnects only when the send has completed here */
	t_signal('D');

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
	t_fill(sbuf, MSG, 18);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, MSG, RPMA_MR_USAGE_SEND);
	unsigned char *rbuf = t_alloc(MSG);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, MSG, RPMA_MR_USAGE_RECV);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_cq *rcq = (struct rpma_cq *)&rcq;
	T_OK(rpma_conn_get_rcq(conn, &rcq));
	T_PTR_EQ(rcq, NULL);

	T_OK(rpma_recv(conn, rmr, 0, MSG, T_CTX(30)));
	t_await('R');
	T_OK(rpma_send(conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_OK(rpma_send(conn, smr, 0, 7, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_SEND, NULL);
	T_CMPL(cq, T_CTX(2), RPMA_OP_SEND, NULL);
	t_signal('S');

	/* no receive CQ here: the receive completes on the main CQ */
	struct rpma_completion c;
	T_CMPL(cq, T_CTX(30), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, MSG);
	T_PATTERN(rbuf, MSG, 0, 17);
	t_await('D');

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("separate_rcq", 16);
	return t_run(server, client);
}
