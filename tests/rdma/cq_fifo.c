// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq_fifo.c -- eight signaled operations of different kinds posted back to
 * back complete in posting order, each with its own context and kind. On
 * iWARP (siw) a write or a send completes when it has been sent and a read
 * when its response arrives, so there the order holds among the writes and
 * sends, and among the reads.
 */

#include "common.h"

#define SIZE 8192
#define HALF 4096
#define NOPS 8

static const enum rpma_op ops[NOPS] = {
	RPMA_OP_WRITE, RPMA_OP_READ, RPMA_OP_WRITE, RPMA_OP_READ,
	RPMA_OP_WRITE, RPMA_OP_SEND, RPMA_OP_WRITE, RPMA_OP_READ,
};

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, HALF, 27);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	unsigned char *rbuf = t_alloc(64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_recv(conn, rmr, 0, 64, T_CTX(100)));
	t_signal('R');

	struct rpma_completion c;
	T_CMPL(cq, T_CTX(100), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 32);
	/* the send was posted after the first three writes */
	T_PATTERN(buf + HALF, 3 * 64, 0, 28);
	t_await('D');
	T_PATTERN(buf + HALF, 4 * 64, 0, 28);
	T_BYTES(buf + HALF + 4 * 64, HALF - 4 * 64, 0);
	T_PATTERN(buf, HALF, 0, 27);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, HALF, 28);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *rmt = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	t_await('R');

	const int f = RPMA_F_COMPLETION_ALWAYS;
	size_t w = 0, r = 0;
	for (int i = 0; i < NOPS; i++) {
		switch (ops[i]) {
		case RPMA_OP_WRITE:
			T_OK(rpma_write(conn, rmt, HALF + w * 64, mr, w * 64, 64, f, T_CTX(i)));
			w++;
			break;
		case RPMA_OP_READ:
			T_OK(rpma_read(conn, mr, HALF + r * 512, rmt, r * 512, 512, f, T_CTX(i)));
			r++;
			break;
		default:
			T_OK(rpma_send(conn, mr, 0, 32, f, T_CTX(i)));
			break;
		}
	}
	if (t_is_siw()) {
		int next_read = 0, next_other = 0;
		for (int n = 0; n < NOPS; n++) {
			struct rpma_completion c;
			t_next_cmpl(cq, &c);
			T_EQ(c.op_status, IBV_WC_SUCCESS);
			uintptr_t i = (uintptr_t)c.op_context - (uintptr_t)T_CTX(0);
			T_ASSERT(i < NOPS);
			T_EQ(c.op, ops[i]);
			int *next = ops[i] == RPMA_OP_READ ? &next_read : &next_other;
			while (*next < NOPS &&
			       (ops[*next] == RPMA_OP_READ) != (ops[i] == RPMA_OP_READ))
				(*next)++;
			if ((int)i != *next)
				T_FAIL("completion of op %zu came before that of op %d", (size_t)i,
				       *next);
			(*next)++;
		}
	} else {
		for (int i = 0; i < NOPS; i++)
			T_CMPL(cq, T_CTX(i), ops[i], NULL);
	}
	T_NO_CMPL(cq, 50);
	T_PATTERN(buf + HALF, r * 512, 0, 27);
	T_BYTES(buf + HALF + r * 512, HALF - r * 512, 0);
	t_signal('D');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&rmt));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("cq_fifo", 24);
	return t_run(server, client);
}
