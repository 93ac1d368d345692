// SPDX-License-Identifier: BSD-3-Clause
/*
 * shared_channel_ping_pong.c -- librpma 1.x's example 12scch, done right:
 * many rounds of a counter sent and answered over a connection whose
 * receive CQ shares the completion channel with the main CQ, each side
 * waiting with rpma_conn_wait()
 *
 * On rxe a receive completes before the responder acknowledges it, so the
 * peer's answer can arrive (and fire the receive CQ) before the send that
 * asked for it completes (and fires the main CQ). librpma's example waits
 * for the send's completion first and fails when the answer wins: the race
 * it shows now and then is in the example, not in either library. Here
 * both sides take the two completions in whichever order rpma_conn_wait()
 * reports them, and the test checks what the library owes in any order:
 * each completion once, on the CQ that rpma_conn_wait() named, with is_rcq
 * telling the truth, and every answer right. How often the answer won is
 * printed.
 */

#include <inttypes.h>

#include "common.h"

#define MSG  sizeof(uint64_t)
#define DONE UINT64_MAX

/* one side's view of its connection, the completions each round owes */
struct side {
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	unsigned sends_done, recvs_done;
};

/*
 * Waits for the next event of the shared channel and takes every completion
 * of the CQ it names; the counts of each kind go up. Every send must carry
 * send_ctx and every receive recv_ctx.
 */
static void take_next(struct side *s, const void *send_ctx, const void *recv_ctx)
{
	struct rpma_cq *which = NULL;
	bool is_rcq = false;
	t_waiting("rpma_conn_wait");
	T_OK(rpma_conn_wait(s->conn, 0, &which, &is_rcq));
	T_ASSERT(which == s->cq || which == s->rcq);
	T_EQ(is_rcq, which == s->rcq);
	struct rpma_completion c;
	int ret;
	while ((ret = rpma_cq_get_completion(which, &c)) == 0) {
		T_EQ(c.op_status, IBV_WC_SUCCESS);
		if (is_rcq) {
			T_EQ(c.op, RPMA_OP_RECV);
			T_PTR_EQ(c.op_context, recv_ctx);
			T_EQ(c.byte_len, MSG);
			s->recvs_done++;
		} else {
			T_EQ(c.op, RPMA_OP_SEND);
			T_PTR_EQ(c.op_context, send_ctx);
			s->sends_done++;
		}
	}
	T_EQ(ret, RPMA_E_NO_COMPLETION);
}

static unsigned rounds(void)
{
	/* siw's rounds take several times longer under emulation */
	return t_is_siw() ? 400 : 2000;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	uint64_t *recv = t_alloc(MSG);
	uint64_t *send = t_alloc(MSG);
	struct rpma_mr_local *rmr = t_mr_reg(peer, recv, MSG, RPMA_MR_USAGE_RECV);
	struct rpma_mr_local *smr = t_mr_reg(peer, send, MSG, RPMA_MR_USAGE_SEND);

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_rcq_size(cfg, 10));
	T_OK(rpma_conn_cfg_set_compl_channel(cfg, true));
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn_req *req = t_next_req(ep, cfg);
	/* the first receive before the client can send */
	T_OK(rpma_conn_req_recv(req, rmr, 0, MSG, T_CTX(1)));
	struct side s = { 0 };
	s.conn = t_accept_req(&req, NULL);
	s.cq = t_cq(s.conn);
	s.rcq = t_rcq(s.conn);

	for (unsigned i = 0;; i++) {
		while (s.recvs_done < i + 1)
			take_next(&s, T_CTX(2), T_CTX(1));
		const uint64_t value = *recv;
		if (value == DONE)
			break;
		T_EQ(value, 2 * (uint64_t)i);
		/* the next request may come as soon as the answer is out */
		T_OK(rpma_recv(s.conn, rmr, 0, MSG, T_CTX(1)));
		/* the previous answer's buffer is free once its send completed */
		while (s.sends_done < i)
			take_next(&s, T_CTX(2), T_CTX(1));
		*send = value + 1;
		T_OK(rpma_send(s.conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	}
	/* the last answer's send may complete after DONE arrived */
	while (s.sends_done < rounds())
		take_next(&s, T_CTX(2), T_CTX(1));
	T_EQ(s.sends_done, rounds());

	t_close(&s.conn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	uint64_t *recv = t_alloc(MSG);
	uint64_t *send = t_alloc(MSG);
	struct rpma_mr_local *rmr = t_mr_reg(peer, recv, MSG, RPMA_MR_USAGE_RECV);
	struct rpma_mr_local *smr = t_mr_reg(peer, send, MSG, RPMA_MR_USAGE_SEND);

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_rcq_size(cfg, 10));
	T_OK(rpma_conn_cfg_set_compl_channel(cfg, true));
	struct side s = { 0 };
	s.conn = t_connect(peer, cfg, NULL);
	s.cq = t_cq(s.conn);
	s.rcq = t_rcq(s.conn);

	const unsigned n = rounds();
	unsigned answer_first = 0;
	for (unsigned i = 0; i < n; i++) {
		T_OK(rpma_recv(s.conn, rmr, 0, MSG, T_CTX(3)));
		*send = 2 * (uint64_t)i;
		T_OK(rpma_send(s.conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(4)));
		bool answer_won = false;
		while (s.sends_done < i + 1 || s.recvs_done < i + 1) {
			take_next(&s, T_CTX(4), T_CTX(3));
			if (s.recvs_done == i + 1 && s.sends_done < i + 1)
				answer_won = true;
		}
		/* never one more than asked: each completion came once */
		T_EQ(s.sends_done, i + 1);
		T_EQ(s.recvs_done, i + 1);
		T_EQ(*recv, 2 * (uint64_t)i + 1);
		answer_first += answer_won;
	}
	t_log("%u of %u rounds: the answer's receive completed before the request's send",
	      answer_first, n);

	*send = DONE;
	T_OK(rpma_send(s.conn, smr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(4)));
	while (s.sends_done < n + 1)
		take_next(&s, T_CTX(4), T_CTX(3));
	t_close(&s.conn, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("shared_channel_ping_pong", 51);
	t_set_deadline(120);
	return t_run(server, client);
}
