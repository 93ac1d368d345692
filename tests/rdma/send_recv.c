// SPDX-License-Identifier: BSD-3-Clause
/*
 * send_recv.c -- messages of several sizes land in the posted receives in
 * order, each completion with its own context and the exact byte_len; then
 * a reply travels the other way
 */

#include "common.h"

#define SLOT  256
#define NMSG  4
#define REPLY 33

static const size_t sizes[NMSG] = { 1, 100, SLOT, 17 };
static const size_t offsets[NMSG] = { 0, 3, 200, 1000 };

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(NMSG * SLOT);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, NMSG * SLOT, RPMA_MR_USAGE_RECV);
	unsigned char *sbuf = t_alloc(REPLY);
	t_fill(sbuf, REPLY, 99);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, REPLY, RPMA_MR_USAGE_SEND);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);

	for (int i = 0; i < NMSG; i++)
		T_OK(rpma_recv(conn, rmr, (size_t)i * SLOT, SLOT, T_CTX(100 + i)));
	t_signal('R');

	for (int i = 0; i < NMSG; i++) {
		struct rpma_completion c;
		T_CMPL(cq, T_CTX(100 + i), RPMA_OP_RECV, &c);
		T_EQ(c.byte_len, sizes[i]);
		T_ASSERT(!(c.flags & IBV_WC_WITH_IMM));
		const unsigned char *slot = rbuf + (size_t)i * SLOT;
		T_PATTERN(slot, sizes[i], offsets[i], 13);
		T_BYTES(slot + sizes[i], SLOT - sizes[i], 0);
	}
	T_NO_CMPL(cq, 50);

	t_await('S');
	T_OK(rpma_send(conn, smr, 0, REPLY, RPMA_F_COMPLETION_ALWAYS, T_CTX(200)));
	T_CMPL(cq, T_CTX(200), RPMA_OP_SEND, NULL);
	/*
	 * The receiver's completion can come before its acknowledgement
	 * leaves: the client disconnects only when the send has completed here.
	 */
	t_signal('D');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(2048);
	t_fill(sbuf, 2048, 13);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, 2048, RPMA_MR_USAGE_SEND);
	unsigned char *rbuf = t_alloc(SLOT);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, SLOT, RPMA_MR_USAGE_RECV);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_recv(conn, rmr, 10, SLOT - 10, T_CTX(50)));

	t_await('R');
	for (int i = 0; i < NMSG; i++)
		T_OK(
		    rpma_send(conn, smr, offsets[i], sizes[i], RPMA_F_COMPLETION_ALWAYS, T_CTX(i)));
	for (int i = 0; i < NMSG; i++)
		T_CMPL(cq, T_CTX(i), RPMA_OP_SEND, NULL);
	t_signal('S');

	struct rpma_completion c;
	T_CMPL(cq, T_CTX(50), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, REPLY);
	T_BYTES(rbuf, 10, 0);
	T_PATTERN(rbuf + 10, REPLY, 0, 99);
	T_BYTES(rbuf + 10 + REPLY, SLOT - 10 - REPLY, 0);
	t_await('D');

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("send_recv", 13);
	return t_run(server, client);
}
