// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_thread.c -- a target that serves GPSPM from the library's thread
 * (RPMA_GPSPM_THREAD): the server's process does not poll at all, yet the
 * client's persistent flushes complete; the connection carries nothing
 * else, so the server's own posts and CQ calls on it are refused
 */

#include "common.h"

#define SIZE   4096
#define ROUNDS 32
#define CHUNK  64

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist;
	unsigned char *region = t_pmem_map(SIZE, &persist);
	struct rpma_mr_local *mr = t_mr_reg(peer, region, SIZE,
					    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_mr_set_persist_fn(mr, persist));
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD));

	struct t_pdata pd = { .len = 0 };
	/* as a target without native flush sends it: GPSPM is tested here */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	/* the thread owns the CQ and the queue */
	struct rpma_cq *cq = NULL;
	T_OK(rpma_conn_get_cq(conn, &cq));
	struct rpma_completion cmpl;
	T_RET(rpma_cq_get_completion(cq, &cmpl), RPMA_E_INVAL);
	T_RET(rpma_cq_wait_completion(cq, &cmpl, 0), RPMA_E_INVAL);
	int fd = -1;
	T_RET(rpma_cq_get_fd(cq, &fd), RPMA_E_INVAL);
	T_RET(rpma_send(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);

	/* nothing but a pipe read here: the flushes are served elsewhere */
	t_await('F');
	T_EQ(t_persist_log.calls, ROUNDS);
	for (int r = 0; r < ROUNDS; r++)
		T_PATTERN(region + r * CHUNK, CHUNK, 0, 40 + r);
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
	struct rpma_mr_local *src = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC);
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
	struct rpma_cq *cq = t_cq(conn);

	for (int r = 0; r < ROUNDS; r++) {
		t_fill(buf + r * CHUNK, CHUNK, 40 + r);
		T_OK(rpma_write(conn, dst, (size_t)r * CHUNK, src, (size_t)r * CHUNK, CHUNK,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		T_OK(rpma_flush(conn, dst, (size_t)r * CHUNK, CHUNK, RPMA_FLUSH_TYPE_PERSISTENT,
				RPMA_F_COMPLETION_ALWAYS, T_CTX(r)));
		struct rpma_completion cmpl;
		/* the blocking wait: the answer wakes it like any completion */
		T_OK(rpma_cq_wait_completion(cq, &cmpl, T_WAIT_MS));
		T_EQ(cmpl.op_status, IBV_WC_SUCCESS);
		T_EQ(cmpl.op, RPMA_OP_FLUSH);
		T_PTR_EQ(cmpl.op_context, T_CTX(r));
	}
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
	t_init("gpspm_thread", 37);
	return t_run(server, client);
}
