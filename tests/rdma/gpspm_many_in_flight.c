// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_many_in_flight.c -- GPSPM flow control: the client keeps as many
 * flushes in flight as the target announced (its receive queue), gets
 * RPMA_E_AGAIN beyond, and every flush completes once, in order, with its
 * own op_context; unsignaled flushes complete silently; rounds of writes
 * and flushes land whole on the target's persistent memory
 */

#include "common.h"

#define DEPTH  4
#define ROUNDS 64
#define CHUNK  512
#define SIZE   (ROUNDS * CHUNK)

static struct rpma_conn_cfg *gpspm_cfg(uint32_t rq_size)
{
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	T_OK(rpma_conn_cfg_set_rq_size(cfg, rq_size));
	/* room for the writes and flushes the client keeps in flight */
	T_OK(rpma_conn_cfg_set_sq_size(cfg, 4 * DEPTH + 8));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, 4 * DEPTH + 8));
	return cfg;
}

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
	/* the target takes DEPTH requests at a time */
	struct rpma_conn_cfg *cfg = gpspm_cfg(DEPTH);

	struct t_pdata pd = { .len = 0 };
	/* as a target without native flush sends it: GPSPM is tested here */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	t_serve_until(conn, 'F');
	T_EQ(t_persist_log.calls, ROUNDS + DEPTH);
	for (int r = 0; r < ROUNDS; r++)
		T_PATTERN(region + r * CHUNK, CHUNK, 0, 100 + r);
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
	unsigned char *buf = t_alloc(SIZE);
	for (int r = 0; r < ROUNDS; r++)
		t_fill(buf + r * CHUNK, CHUNK, 100 + r);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC);
	/* the client could take more answers than the target takes requests */
	struct rpma_conn_cfg *cfg = gpspm_cfg(4 * DEPTH);

	struct rpma_conn *conn = t_connect(peer, cfg, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t len = 0;
	const void *desc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_completion cmpl;

	/* exactly DEPTH flushes fit; the next one has to wait */
	for (int i = 0; i < DEPTH; i++)
		T_OK(rpma_flush(conn, dst, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(1000 + i)));
	T_RET(rpma_flush(conn, dst, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			 T_CTX(999)),
	      RPMA_E_AGAIN);
	for (int i = 0; i < DEPTH; i++)
		T_CMPL(cq, T_CTX(1000 + i), RPMA_OP_FLUSH, &cmpl);

	/*
	 * A stream: a write and a flush per round, DEPTH flushes in flight,
	 * every other one unsignaled; the signaled ones complete in order.
	 */
	int posted = 0, written = 0, next_signaled = 0, in_flight = 0;
	while (posted < ROUNDS || in_flight > 0) {
		if (posted < ROUNDS) {
			const int flags =
			    posted % 2 ? RPMA_F_COMPLETION_ON_ERROR : RPMA_F_COMPLETION_ALWAYS;
			if (written == posted) {
				T_OK(rpma_write(conn, dst, (size_t)posted * CHUNK, src,
						(size_t)posted * CHUNK, CHUNK,
						RPMA_F_COMPLETION_ON_ERROR, NULL));
				written++;
			}
			int ret = rpma_flush(conn, dst, (size_t)posted * CHUNK, CHUNK,
					     RPMA_FLUSH_TYPE_PERSISTENT, flags, T_CTX(posted));
			if (ret == 0) {
				posted++;
				if (flags == RPMA_F_COMPLETION_ALWAYS)
					in_flight++;
				continue;
			}
			T_RET(ret, RPMA_E_AGAIN);
		}
		if (in_flight == 0) {
			/* only unsignaled flushes in flight: polling takes their answers */
			T_ASSERT(!t_try_cmpl(cq, &cmpl, 5));
			continue;
		}
		t_next_cmpl(cq, &cmpl);
		T_EQ(cmpl.op_status, IBV_WC_SUCCESS);
		T_EQ(cmpl.op, RPMA_OP_FLUSH);
		T_PTR_EQ(cmpl.op_context, T_CTX(next_signaled));
		next_signaled += 2;
		in_flight--;
	}
	T_NO_CMPL(cq, 50);
	t_signal('F');
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
	t_init("gpspm_many_in_flight", 36);
	return t_run(server, client);
}
