// SPDX-License-Identifier: BSD-3-Clause
/*
 * srq.c -- three connections share one SRQ: every message lands in the SRQ's
 * receive CQ (none on the connections' own CQs) and is attributed to its
 * connection by comparing ibv_wc.qp_num with rpma_conn_get_qp_num
 */

#include <stdio.h>
#include <string.h>

#include "common.h"

#define NCONN 3
#define NMSG  3
#define SLOT  64

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(NCONN * NMSG * SLOT);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, NCONN * NMSG * SLOT, RPMA_MR_USAGE_RECV);

	struct rpma_srq_cfg *scfg = NULL;
	T_OK(rpma_srq_cfg_new(&scfg));
	uint32_t size = 0;
	T_OK(rpma_srq_cfg_get_rq_size(scfg, &size));
	T_EQ(size, 20); /* librpma 1.x's default */
	T_OK(rpma_srq_cfg_set_rq_size(scfg, 16));
	T_OK(rpma_srq_cfg_set_rcq_size(scfg, 16));
	T_OK(rpma_srq_cfg_get_rcq_size(scfg, &size));
	T_EQ(size, 16);
	struct rpma_srq *srq = NULL;
	T_OK(rpma_srq_new(peer, scfg, &srq));
	struct rpma_cq *srcq = NULL;
	T_OK(rpma_srq_get_rcq(srq, &srcq));
	T_ASSERT(srcq != NULL);

	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_srq(cfg, srq));
	struct rpma_srq *got_srq = NULL;
	T_OK(rpma_conn_cfg_get_srq(cfg, &got_srq));
	T_PTR_EQ(got_srq, srq);

	for (int s = 0; s < NCONN * NMSG; s++)
		T_OK(rpma_srq_recv(srq, rmr, (size_t)s * SLOT, SLOT, T_CTX(s)));

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conns[NCONN] = { NULL };
	uint32_t qp[NCONN];
	for (int i = 0; i < NCONN; i++) {
		struct rpma_conn_req *req = t_next_req(ep, cfg);
		struct rpma_conn_private_data pd = { NULL, 0 };
		T_OK(rpma_conn_req_get_private_data(req, &pd));
		T_ASSERT(pd.ptr != NULL && pd.len >= 1);
		int k = *(const unsigned char *)pd.ptr;
		T_ASSERT(k >= 0 && k < NCONN && conns[k] == NULL);
		conns[k] = t_accept_req(&req, NULL);
		T_OK(rpma_conn_get_qp_num(conns[k], &qp[k]));
	}
	T_ASSERT(qp[0] != qp[1] && qp[1] != qp[2] && qp[0] != qp[2]);

	int seen[NCONN][NMSG] = { { 0 } };
	int total = 0;
	long long deadline = t_now_ms() + T_WAIT_MS;
	while (total < NCONN * NMSG) {
		struct ibv_wc wc[4];
		int got = 0;
		int ret = rpma_cq_get_wc(srcq, 4, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			if (t_now_ms() > deadline)
				T_FAIL("%d of %d messages arrived", total, NCONN * NMSG);
			t_sleep_ms(1);
			continue;
		}
		T_OK(ret);
		T_ASSERT(got >= 1 && got <= 4);
		for (int i = 0; i < got; i++) {
			T_EQ(wc[i].status, IBV_WC_SUCCESS);
			T_EQ(wc[i].opcode, IBV_WC_RECV);
			uintptr_t slot = (uintptr_t)wc[i].wr_id - (uintptr_t)T_CTX(0);
			T_ASSERT(slot < NCONN * NMSG);
			const char *msg = (const char *)rbuf + slot * SLOT;
			int k = -1, m = -1;
			if (sscanf(msg, "conn %d msg %d", &k, &m) != 2)
				T_FAIL("slot %zu holds '%.*s'", (size_t)slot, SLOT, msg);
			T_EQ(wc[i].byte_len, strlen(msg) + 1);
			T_ASSERT(k >= 0 && k < NCONN && m >= 0 && m < NMSG);
			/* the QP the completion names is the connection that sent it */
			if (wc[i].qp_num != qp[k])
				T_FAIL("'%s' came with qp_num %u, connection %d has qp_num %u", msg,
				       wc[i].qp_num, k, qp[k]);
			T_EQ(seen[k][m], 0);
			seen[k][m] = 1;
			total++;
		}
	}
	struct ibv_wc one;
	T_RET(rpma_cq_get_wc(srcq, 1, &one, NULL), RPMA_E_NO_COMPLETION);
	for (int k = 0; k < NCONN; k++)
		T_NO_CMPL(t_cq(conns[k]), 20);
	t_signal('V');

	for (int k = 0; k < NCONN; k++)
		t_close(&conns[k], false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_srq_delete(&srq));
	T_PTR_EQ(srq, NULL);
	T_OK(rpma_srq_cfg_delete(&scfg));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(NCONN * NMSG * SLOT);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, NCONN * NMSG * SLOT, RPMA_MR_USAGE_SEND);

	struct rpma_conn *conns[NCONN];
	for (int k = 0; k < NCONN; k++) {
		struct t_pdata pd = { .len = 1 };
		pd.buf[0] = (unsigned char)k;
		/* raw bytes, not items: the server reads the first byte */
		struct rpma_conn_req *req = t_client_req(peer, NULL);
		conns[k] = t_connect_req(&req, &pd);
	}

	/* interleaved: message m of every connection before message m + 1 */
	for (int m = 0; m < NMSG; m++) {
		for (int k = 0; k < NCONN; k++) {
			size_t off = (size_t)(m * NCONN + k) * SLOT;
			int n = snprintf((char *)sbuf + off, SLOT, "conn %d msg %d", k, m);
			T_OK(rpma_send(conns[k], smr, off, (size_t)n + 1, RPMA_F_COMPLETION_ALWAYS,
				       T_CTX(off)));
		}
		for (int k = 0; k < NCONN; k++) {
			size_t off = (size_t)(m * NCONN + k) * SLOT;
			T_CMPL(t_cq(conns[k]), T_CTX(off), RPMA_OP_SEND, NULL);
		}
	}
	t_await('V');

	for (int k = 0; k < NCONN; k++)
		t_close(&conns[k], true);
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("srq", 18);
	return t_run(server, client);
}
