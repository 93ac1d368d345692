// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_round_trip.c -- GPSPM through the library: a target that does not
 * declare direct write to PMem offers GPSPM for its region in the versioned
 * descriptors; the client's persistent flush then goes as a request that
 * the target's CPU serves with the region's persist function (libpmem2's
 * for the device DAX, recorded), and completes as RPMA_OP_FLUSH only after
 * the target persisted exactly the flushed range
 */

#include "common.h"

#define SIZE 8192
#define OFF  512
#define LEN  2048

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
	/* as a target without native flush sends it: GPSPM is tested here */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	/* the requests are served while the target polls its CQ */
	t_serve_until(conn, 'F');
	T_EQ(t_persist_log.calls, 1);
	T_EQ(t_persist_log.offset, OFF);
	T_EQ(t_persist_log.len, LEN);
	T_PATTERN(region + OFF, LEN, 0, 5);
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
	t_fill(buf, LEN, 5);
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
	bool direct = true;
	T_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	T_EQ(direct, false);

	/* before the target's offer is applied, nothing can persist */
	enum rpma_flush_method method = RPMA_FLUSH_METHOD_NATIVE;
	T_RET(rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &method),
	      RPMA_E_NOSUPP);
	T_EQ(method, RPMA_FLUSH_METHOD_NONE);
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	T_OK(rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &method));
	T_EQ(method, RPMA_FLUSH_METHOD_GPSPM);

	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_write(conn, dst, OFF, src, 0, LEN, RPMA_F_COMPLETION_ON_ERROR, NULL));
	T_OK(rpma_flush(conn, dst, OFF, LEN, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(2)));
	struct rpma_completion cmpl;
	T_CMPL(cq, T_CTX(2), RPMA_OP_FLUSH, &cmpl);
	T_EQ(cmpl.byte_len, 0);
	/* the request's own send and the answer's receive are the library's */
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
	t_init("gpspm_round_trip", 35);
	return t_run(server, client);
}
