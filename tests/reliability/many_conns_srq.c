// SPDX-License-Identifier: BSD-3-Clause
/*
 * many_conns_srq.c -- 64 connections at once: the server's all share one
 * SRQ, whose receive CQ and its one completion channel take every message;
 * the client's each have a shared completion channel for their two CQs and
 * wait with rpma_conn_wait. Every connection sends its messages, and the
 * server checks each: whole, received once, from the queue pair of the
 * connection that its bytes say sent it.
 *
 * The client's connections only send; they share a small SRQ of their own
 * instead of having a receive queue each. siw on Linux 6.1 maps at most 144
 * pages of queues into a process (its mmap keys stop at SIW_UOBJ_MAX_KEY):
 * with a receive queue each, a connection takes three and 64 of them do not
 * fit.
 */

#include <string.h>

#include <infiniband/verbs.h>

#include "common.h"

#define NCONN 64
#define NMSG  4
#define SLOT  64

static unsigned seed_of(unsigned k, unsigned m)
{
	return k * 16 + m + 1;
}

/* a message: the connection, the message's number, then a pattern */
static void message(unsigned char *buf, unsigned k, unsigned m)
{
	t_fill(buf, SLOT, seed_of(k, m));
	buf[0] = (unsigned char)k;
	buf[1] = (unsigned char)m;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(NCONN * NMSG * SLOT);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, NCONN * NMSG * SLOT, RPMA_MR_USAGE_RECV);

	struct rpma_srq_cfg *scfg = NULL;
	T_OK(rpma_srq_cfg_new(&scfg));
	T_OK(rpma_srq_cfg_set_rq_size(scfg, NCONN * NMSG));
	T_OK(rpma_srq_cfg_set_rcq_size(scfg, NCONN * NMSG));
	struct rpma_srq *srq = NULL;
	T_OK(rpma_srq_new(peer, scfg, &srq));
	T_OK(rpma_srq_cfg_delete(&scfg));
	struct rpma_cq *srcq = NULL;
	T_OK(rpma_srq_get_rcq(srq, &srcq));
	T_ASSERT(srcq != NULL);
	for (unsigned s = 0; s < NCONN * NMSG; s++)
		T_OK(rpma_srq_recv(srq, rmr, (size_t)s * SLOT, SLOT, T_CTX(s)));

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_srq(cfg, srq));

	struct rpma_ep *ep = t_listen(peer);
	static struct rpma_conn *conns[NCONN];
	uint32_t qp[NCONN];
	for (unsigned i = 0; i < NCONN; i++) {
		struct rpma_conn_req *req = t_next_req(ep, cfg);
		struct rpma_conn_private_data pd = { NULL, 0 };
		T_OK(rpma_conn_req_get_private_data(req, &pd));
		size_t len = 0;
		const unsigned char *k = t_pdata_item(&pd, 0, &len);
		T_EQ(len, 1);
		T_ASSERT(*k < NCONN && conns[*k] == NULL);
		conns[*k] = t_accept_req(&req, NULL);
		T_OK(rpma_conn_get_qp_num(conns[*k], &qp[*k]));
	}

	/* every message through the one channel of the SRQ's CQ */
	static bool seen[NCONN][NMSG];
	unsigned got = 0;
	t_waiting("the messages on the shared RQ's CQ");
	while (got < NCONN * NMSG) {
		struct ibv_wc wc[16];
		int n = 0;
		int ret = rpma_cq_get_wc(srcq, 16, wc, &n);
		if (ret == RPMA_E_NO_COMPLETION) {
			T_OK(rpma_cq_wait(srcq));
			continue;
		}
		T_OK(ret);
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				T_FAIL("receive failed: %s", ibv_wc_status_str(wc[i].status));
			T_EQ(wc[i].opcode, IBV_WC_RECV);
			T_EQ(wc[i].byte_len, SLOT);
			const uintptr_t s = (uintptr_t)wc[i].wr_id - (uintptr_t)T_CTX(0);
			T_ASSERT(s < NCONN * NMSG);
			const unsigned char *msg = rbuf + s * SLOT;
			const unsigned k = msg[0], m = msg[1];
			T_ASSERT(k < NCONN && m < NMSG);
			if (seen[k][m])
				T_FAIL("message %u of connection %u received twice", m, k);
			seen[k][m] = true;
			/* from the connection that says it sent it */
			T_EQ(wc[i].qp_num, qp[k]);
			unsigned char expected[SLOT];
			message(expected, k, m);
			if (memcmp(msg, expected, SLOT) != 0)
				T_FAIL("message %u of connection %u damaged", m, k);
			got++;
		}
	}
	/* and nothing on the connections' own CQs */
	for (unsigned k = 0; k < NCONN; k++)
		T_NO_CMPL(t_cq(conns[k]), 0);
	t_signal('D');

	for (unsigned k = 0; k < NCONN; k++)
		t_close(&conns[k], false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_srq_delete(&srq));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(NCONN * NMSG * SLOT);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, NCONN * NMSG * SLOT, RPMA_MR_USAGE_SEND);

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_compl_channel(cfg, true));
	/* no CQ of its own: a shared channel and an SRQ's CQ do not go together */
	struct rpma_srq_cfg *scfg = NULL;
	T_OK(rpma_srq_cfg_new(&scfg));
	T_OK(rpma_srq_cfg_set_rq_size(scfg, 1));
	T_OK(rpma_srq_cfg_set_rcq_size(scfg, 0));
	struct rpma_srq *srq = NULL;
	T_OK(rpma_srq_new(peer, scfg, &srq));
	T_OK(rpma_srq_cfg_delete(&scfg));
	T_OK(rpma_conn_cfg_set_srq(cfg, srq));

	static struct rpma_conn *conns[NCONN];
	for (unsigned k = 0; k < NCONN; k++) {
		struct t_pdata out = { .len = 0 };
		unsigned char kk = (unsigned char)k;
		t_pdata_add(&out, &kk, 1);
		conns[k] = t_connect(peer, cfg, &out);
	}

	/* the messages, every connection in turn */
	for (unsigned m = 0; m < NMSG; m++) {
		for (unsigned k = 0; k < NCONN; k++) {
			const size_t off = ((size_t)k * NMSG + m) * SLOT;
			message(sbuf + off, k, m);
			T_OK(rpma_send(conns[k], smr, off, SLOT, RPMA_F_COMPLETION_ALWAYS,
				       T_CTX(k * NMSG + m)));
		}
	}
	/* their completions, through each connection's shared channel */
	for (unsigned k = 0; k < NCONN; k++) {
		struct rpma_cq *cq = t_cq(conns[k]);
		unsigned next = 0;
		t_waiting("the send completions (rpma_conn_wait)");
		while (next < NMSG) {
			struct rpma_completion c;
			int ret = rpma_cq_get_completion(cq, &c);
			if (ret == RPMA_E_NO_COMPLETION) {
				struct rpma_cq *fired = NULL;
				bool is_rcq = true;
				T_OK(rpma_conn_wait(conns[k], 0, &fired, &is_rcq));
				T_PTR_EQ(fired, cq);
				T_ASSERT(!is_rcq);
				continue;
			}
			T_OK(ret);
			T_EQ(c.op_status, IBV_WC_SUCCESS);
			T_EQ(c.op, RPMA_OP_SEND);
			T_PTR_EQ(c.op_context, T_CTX(k * NMSG + next));
			next++;
		}
	}
	t_await('D');

	for (unsigned k = 0; k < NCONN; k++)
		t_close(&conns[k], true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_srq_delete(&srq));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("reliability_many_conns_srq", 201);
	t_set_deadline(110);
	return t_run(server, client);
}
