// SPDX-License-Identifier: BSD-3-Clause
/*
 * recv_too_small.c -- a message longer than the posted receive fails: the
 * receive completes with its context and an error (rxe: local QP operation
 * error, siw: local length error), the sender learns it on RoCE (remote
 * operation error) while on iWARP its send completed when it was sent (or,
 * when the receiver's TERMINATE came first, with a local QP operation
 * error), and the receive buffer's neighbourhood is not overrun
 */

#include <string.h>

#include "common.h"

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(64);
	memset(rbuf, 0x11, 64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_recv(conn, rmr, 8, 8, T_CTX(10)));
	t_signal('R');

	struct rpma_completion c;
	t_next_cmpl(cq, &c);
	t_log("the receive completed: %s (%d)", ibv_wc_status_str(c.op_status), (int)c.op_status);
	T_PTR_EQ(c.op_context, T_CTX(10));
	T_ASSERT(c.op_status != IBV_WC_SUCCESS);
	T_EQ(c.op_status, t_is_siw() ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_QP_OP_ERR);
	T_BYTES(rbuf, 8, 0x11);
	T_BYTES(rbuf + 16, 48, 0x11);
	t_signal('E');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(64);
	t_fill(sbuf, 64, 36);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, 64, RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	t_await('R');
	T_OK(rpma_send(conn, smr, 0, 64, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	struct rpma_completion c;
	t_next_cmpl(cq, &c);
	t_log("the send completed: %s (%d)", ibv_wc_status_str(c.op_status), (int)c.op_status);
	T_PTR_EQ(c.op_context, T_CTX(1));
	if (t_is_siw()) {
		/*
		 * siw completes a send once TCP has taken all of it, but the
		 * receiver's TERMINATE can flush the queue first: then the send
		 * is still the one in progress, and completes with a local QP
		 * operation error
		 */
		T_ASSERT(c.op_status == IBV_WC_SUCCESS || c.op_status == IBV_WC_LOC_QP_OP_ERR);
	} else {
		T_EQ(c.op_status, IBV_WC_REM_OP_ERR);
	}
	t_await('E');

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("recv_too_small", 32);
	return t_run(server, client);
}
