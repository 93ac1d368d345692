// SPDX-License-Identifier: BSD-3-Clause
/*
 * large_transfer.c -- writes and reads of several MiB, and of the largest
 * region this test registers (LARGE_MIB, 128 MiB: the VM has room for it
 * on both sides), at aligned and odd offsets, each checked byte for byte
 * on the other side: the target after the write and a flush, the client
 * after reading back what the target wrote in its place.
 */

#include <string.h>

#include "common.h"

#define LARGE_MIB 128
#define LARGE	  ((size_t)LARGE_MIB << 20)

struct round {
	size_t offset;
	size_t len;
	unsigned seed;
};

static const struct round rounds[] = {
	{ 0, (size_t)4 << 20, 11 },
	{ 4097, ((size_t)32 << 20) - 3, 12 },
	{ 0, LARGE, 13 },
};
#define NROUNDS (sizeof(rounds) / sizeof(rounds[0]))

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *dst = t_alloc(LARGE);
	struct rpma_mr_local *mr = t_mr_reg(peer, dst, LARGE,
					    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct t_pdata out = { .len = 0 };
	t_pdata_add_mr(&out, mr);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &out);

	for (unsigned r = 0; r < NROUNDS; r++) {
		const struct round *x = &rounds[r];
		/* the bytes around the range, which the write must leave alone */
		const size_t end = x->offset + x->len;
		const int before = x->offset ? dst[x->offset - 1] : -1;
		const int after = end < LARGE ? dst[end] : -1;
		t_waiting("the client's write");
		t_await('W');
		long long t0 = t_now_ms();
		T_PATTERN(dst + x->offset, x->len, 0, x->seed);
		if (before >= 0)
			T_EQ(dst[x->offset - 1], before);
		if (after >= 0)
			T_EQ(dst[end], after);
		t_fill(dst + x->offset, x->len, x->seed + 100);
		t_log("round %u: %zu bytes checked and refilled in %lld ms", r, x->len,
		      t_now_ms() - t0);
		t_signal('V');
	}

	t_close(&conn, false);
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *src = t_alloc(LARGE);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, src, LARGE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t dst_size = 0;
	T_OK(rpma_mr_remote_get_size(dst, &dst_size));
	T_EQ(dst_size, LARGE);
	struct rpma_cq *cq = t_cq(conn);

	for (unsigned r = 0; r < NROUNDS; r++) {
		const struct round *x = &rounds[r];
		t_fill(src + x->offset, x->len, x->seed);
		long long t0 = t_now_ms();
		T_OK(rpma_write(conn, dst, x->offset, mr, x->offset, x->len,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(3 * r)));
		T_CMPL(cq, T_CTX(3 * r), RPMA_OP_WRITE, NULL);
		T_OK(rpma_flush(conn, dst, x->offset, x->len, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(3 * r + 1)));
		T_CMPL(cq, T_CTX(3 * r + 1), RPMA_OP_FLUSH, NULL);
		long long t1 = t_now_ms();
		t_signal('W');
		t_await('V');

		memset(src + x->offset, 0, x->len);
		long long t2 = t_now_ms();
		T_OK(rpma_read(conn, mr, x->offset, dst, x->offset, x->len,
			       RPMA_F_COMPLETION_ALWAYS, T_CTX(3 * r + 2)));
		T_CMPL(cq, T_CTX(3 * r + 2), RPMA_OP_READ, NULL);
		long long t3 = t_now_ms();
		T_PATTERN(src + x->offset, x->len, 0, x->seed + 100);
		t_log("round %u: %zu bytes written in %lld ms, read in %lld ms", r, x->len, t1 - t0,
		      t3 - t2);
	}

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("reliability_large_transfer", 202);
	t_set_deadline(110);
	return t_run(server, client);
}
