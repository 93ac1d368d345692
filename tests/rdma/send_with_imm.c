// SPDX-License-Identifier: BSD-3-Clause
/*
 * send_with_imm.c -- rpma_send_with_imm delivers the immediate value in host
 * byte order with IBV_WC_WITH_IMM, for a 0-byte and a 20-byte message; a
 * plain send that follows carries no immediate flag
 */

#include "common.h"

#define SLOT 64
#define IMM0 0x01020304u
#define IMM1 0xFFFFFFFEu

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *rbuf = t_alloc(3 * SLOT);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 3 * SLOT, RPMA_MR_USAGE_RECV);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	for (int i = 0; i < 3; i++)
		T_OK(rpma_recv(conn, rmr, (size_t)i * SLOT, SLOT, T_CTX(10 + i)));
	t_signal('R');

	struct rpma_completion c;
	T_CMPL(cq, T_CTX(10), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 0);
	T_ASSERT(c.flags & IBV_WC_WITH_IMM);
	T_EQ(c.imm, IMM0);
	T_BYTES(rbuf, SLOT, 0);

	T_CMPL(cq, T_CTX(11), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 20);
	T_ASSERT(c.flags & IBV_WC_WITH_IMM);
	T_EQ(c.imm, IMM1);
	T_PATTERN(rbuf + SLOT, 20, 0, 14);
	T_BYTES(rbuf + SLOT + 20, SLOT - 20, 0);

	T_CMPL(cq, T_CTX(12), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 5);
	T_ASSERT(!(c.flags & IBV_WC_WITH_IMM));
	T_PATTERN(rbuf + 2 * SLOT, 5, 0, 14);
	T_NO_CMPL(cq, 50);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *sbuf = t_alloc(SLOT);
	t_fill(sbuf, SLOT, 14);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, SLOT, RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_cq *cq = t_cq(conn);
	t_await('R');

	const int f = RPMA_F_COMPLETION_ALWAYS;
	T_OK(rpma_send_with_imm(conn, NULL, 0, 0, f, IMM0, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_SEND, NULL);
	T_OK(rpma_send_with_imm(conn, smr, 0, 20, f, IMM1, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_SEND, NULL);
	T_OK(rpma_send(conn, smr, 0, 5, f, T_CTX(3)));
	T_CMPL(cq, T_CTX(3), RPMA_OP_SEND, NULL);
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("send_with_imm", 14);
	if (t_is_siw())
		t_skip("siw (iWARP) has no immediate data");
	return t_run(server, client);
}
