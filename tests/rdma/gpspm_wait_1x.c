// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_wait_1x.c -- the loop of librpma 1.x, "rpma_cq_wait, then
 * rpma_cq_get_wc of one", on a GPSPM initiator over a real device
 *
 * Each round posts a signaled write and a signaled GPSPM flush behind it,
 * then waits and takes one completion at a time until both came. In every
 * other round the client sleeps before its first wait, so that the write's
 * completion, the flush request's send and the target's answer are all in
 * the CQ when it wakes: the take that hands out the write reads the other
 * two, and no event will come for the flush's completion. A wait that
 * sleeps for one anyway never returns, and the deadline fails the program.
 */

#include "common.h"

#define SIZE   4096
#define LEN    64
#define ROUNDS 40

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist;
	unsigned char *region = t_pmem_map(SIZE, &persist);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, region, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_mr_set_persist_fn(mr, persist));
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));

	struct t_pdata pd = { .len = 0 };
	/* GPSPM is what is tested: no native flush, whatever the devices have */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	t_serve_until(conn, 'D');
	T_EQ(t_persist_log.calls, ROUNDS);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(LEN);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));

	struct rpma_conn *conn = t_connect(peer, cfg, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t len = 0;
	const void *desc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	enum rpma_flush_method method = RPMA_FLUSH_METHOD_NONE;
	T_OK(rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &method));
	T_EQ(method, RPMA_FLUSH_METHOD_GPSPM);

	struct rpma_cq *cq = t_cq(conn);
	unsigned empty_takes = 0;
	for (unsigned round = 0; round < ROUNDS; round++) {
		t_fill(buf, LEN, round);
		T_OK(rpma_write(conn, dst, 0, src, 0, LEN, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
		T_OK(rpma_flush(conn, dst, 0, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
		if (round % 2)
			t_sleep_ms(20);
		/* post order: the write's completion first, then the flush's */
		unsigned seen = 0;
		while (seen < 2) {
			T_OK(rpma_cq_wait(cq));
			struct ibv_wc wc;
			int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			if (ret == RPMA_E_NO_COMPLETION) {
				empty_takes++;
				continue;
			}
			T_OK(ret);
			T_EQ(wc.status, IBV_WC_SUCCESS);
			T_EQ(wc.wr_id, (uint64_t)(uintptr_t)T_CTX(seen + 1));
			T_EQ(wc.opcode, seen == 0 ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ);
			seen++;
		}
	}
	t_log("%u rounds of a write and a flush, %u waits followed by no completion", ROUNDS,
	      empty_takes);
	t_signal('D');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("gpspm_wait_1x", 53);
	/* a wait that sleeps for an event already gone never returns */
	t_set_deadline(60);
	return t_run(server, client);
}
