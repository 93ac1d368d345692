// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq_batch.c -- rpma_cq_get_completions takes at most the number asked for,
 * in posting order, returns how many it stored, and 0 on an empty CQ
 */

#include <string.h>

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	t_close(&conn, false);
	/* 13 writes of 64 bytes each, the last one wins nowhere: no overlap */
	T_PATTERN(buf, 13 * 64, 0, 25);

	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

/*
 * Take n completions, asking for at most max each time; they must come in
 * the order of contexts first .. first + n - 1. Returns how many calls
 * returned exactly max.
 */
static int take(struct rpma_cq *cq, int n, int max, int first)
{
	struct rpma_completion c[16];
	int taken = 0, full = 0;
	long long deadline = t_now_ms() + T_WAIT_MS;
	while (taken < n) {
		memset(c, 0xa5, sizeof(c));
		int got = rpma_cq_get_completions(cq, c, max);
		if (got < 0)
			T_OK(got);
		T_ASSERT(got <= max);
		if (got == max)
			full++;
		T_ASSERT(taken + got <= n);
		for (int i = 0; i < got; i++) {
			T_EQ(c[i].op_status, IBV_WC_SUCCESS);
			T_PTR_EQ(c[i].op_context, T_CTX(first + taken + i));
			T_EQ(c[i].op, RPMA_OP_WRITE);
		}
		taken += got;
		if (got == 0) {
			if (t_now_ms() > deadline)
				T_FAIL("%d of %d completions arrived", taken, n);
			t_sleep_ms(1);
		}
	}
	return full;
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 25);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	struct rpma_completion c[16];
	T_EQ(rpma_cq_get_completions(cq, c, 16), 0);
	T_EQ(rpma_cq_get_completions(NULL, c, 16), RPMA_E_INVAL);
	T_EQ(rpma_cq_get_completions(cq, NULL, 16), RPMA_E_INVAL);
	T_EQ(rpma_cq_get_completions(cq, c, -1), RPMA_E_INVAL);

	/* 5 completions taken 3 at most at a time: 3, then 2 */
	for (int i = 0; i < 5; i++)
		T_OK(rpma_write(conn, dst, (size_t)i * 64, src, (size_t)i * 64, 64,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(i)));
	t_sleep_ms(300);
	int full = take(cq, 5, 3, 0);
	if (full != 1)
		T_FAIL("%d calls returned 3 completions, expected one (the CQ held 5)", full);
	T_EQ(rpma_cq_get_completions(cq, c, 16), 0);

	/* 8 completions, asking for up to 16 */
	for (int i = 5; i < 13; i++)
		T_OK(rpma_write(conn, dst, (size_t)i * 64, src, (size_t)i * 64, 64,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(i)));
	t_sleep_ms(300);
	T_EQ(take(cq, 8, 16, 5), 0);
	T_EQ(rpma_cq_get_completions(cq, c, 16), 0);
	T_EQ(rpma_cq_get_completions(cq, c, 1), 0);

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("cq_batch", 22);
	return t_run(server, client);
}
