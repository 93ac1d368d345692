// SPDX-License-Identifier: BSD-3-Clause
/*
 * batch.c -- rpma_post_batch over real RDMA: rounds of 16 writes and their
 * persistent flush posted as one chain, each flush completing with its own
 * op_context, and every byte on the target afterwards; the same rounds
 * through a write template (rpma_write_template_post), by its own chain and
 * by the one a post builds on its stack; then a chain that
 * mixes a read, a write with immediate data and a send (rxe: siw has no
 * immediate data). Built twice: the flush by read-after-write (the target
 * declares direct write to PMem), and by GPSPM (BATCH_GPSPM: the target's
 * CPU persists each flushed range).
 */

#include "common.h"

#include <string.h>

#define ROUNDS		8
#define TEMPLATE_ROUNDS 8 /* after ROUNDS, through a write template */
#define ALL_ROUNDS	(ROUNDS + TEMPLATE_ROUNDS)
#define WRITES		16
#define CHUNK		1024
#define ROUND_LEN	(WRITES * CHUNK)
#define SIZE		(ALL_ROUNDS * ROUND_LEN)
#define MSG		64

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist = NULL;
	unsigned char *region = t_pmem_map(SIZE, &persist);
	struct rpma_mr_local *mr = t_mr_reg(peer, region, SIZE,
					    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	struct t_pdata pd = { .len = 0 };
#ifdef BATCH_GPSPM
	T_OK(rpma_mr_set_persist_fn(mr, persist));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	/* as a target without native flush sends it: GPSPM is tested here */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
#else
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	t_pdata_add_mr(&pd, mr);
	t_pdata_add_peer_cfg(&pd, pcfg);
#endif
	unsigned char *msg = t_alloc(MSG);
	struct rpma_mr_local *msg_mr = t_mr_reg(peer, msg, MSG, RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn_req *req = t_next_req(ep, cfg);
#ifndef BATCH_GPSPM
	T_OK(rpma_conn_req_recv(req, msg_mr, 0, MSG, T_CTX(99)));
#endif
	struct rpma_conn *conn = t_accept_req(&req, &pd);

#ifdef BATCH_GPSPM
	t_serve_until(conn, 'F');
	/* one persist call per flushed round, of exactly its range */
	T_EQ(t_persist_log.calls, ALL_ROUNDS);
	T_EQ(t_persist_log.total, SIZE);
#else
	t_await('F');
#endif
	for (int r = 0; r < ALL_ROUNDS; r++)
		T_PATTERN(region + r * ROUND_LEN, ROUND_LEN, 0, 40 + r);
	t_signal('V');

#ifndef BATCH_GPSPM
	if (!t_is_siw()) {
		/* the mixed chain: its send arrives with immediate data */
		struct rpma_completion cmpl;
		T_CMPL(t_cq(conn), T_CTX(99), RPMA_OP_RECV, &cmpl);
		T_EQ(cmpl.byte_len, MSG);
		T_EQ(cmpl.imm, 0xBA7C4);
		T_PATTERN(msg, MSG, 0, 77);
		t_signal('M');
	}
#endif
	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&msg_mr));
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

/*
 * The template's rounds, one at a time: 16 writes in one post (the
 * template's own chain), or, by read-after-write, 16 posts of one write
 * whose flushes but the last complete only on error (each on the stack's
 * chain but the last). One flush completion a round, in order.
 */
static void template_rounds(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			    struct rpma_mr_local *src)
{
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_write_template *tmpl = NULL;
	T_OK(rpma_write_template_new(conn, dst, src, RPMA_FLUSH_TYPE_PERSISTENT, &tmpl));
	for (int r = ROUNDS; r < ALL_ROUNDS; r++) {
		struct rpma_write_range w[WRITES];
		for (int i = 0; i < WRITES; i++) {
			w[i].dst_offset = (size_t)r * ROUND_LEN + (size_t)i * CHUNK;
			w[i].src_offset = w[i].dst_offset;
			w[i].len = CHUNK;
		}
#ifdef BATCH_GPSPM
		/* each flush a GPSPM request: one post keeps the requests in flight few */
		const bool one_by_one = false;
#else
		const bool one_by_one = r % 2 != 0;
#endif
		if (one_by_one) {
			for (int i = 0; i < WRITES; i++) {
				const int flags = i + 1 < WRITES ? RPMA_F_COMPLETION_ON_ERROR
								 : RPMA_F_COMPLETION_ALWAYS;
				T_OK(rpma_write_template_post(tmpl, &w[i], 1, flags, T_CTX(r)));
			}
		} else {
			T_OK(rpma_write_template_post(tmpl, w, WRITES, RPMA_F_COMPLETION_ALWAYS,
						      T_CTX(r)));
		}
		struct rpma_completion cmpl;
		T_CMPL(cq, T_CTX(r), RPMA_OP_FLUSH, &cmpl);
	}
	T_NO_CMPL(cq, 50);
	T_OK(rpma_write_template_delete(&tmpl));
	T_ASSERT(tmpl == NULL);
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	for (int r = 0; r < ALL_ROUNDS; r++)
		t_fill(buf + r * ROUND_LEN, ROUND_LEN, 40 + r);
	struct rpma_mr_local *src = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, 4 * (WRITES + 1)));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, 4 * (WRITES + 1)));
#ifdef BATCH_GPSPM
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
#endif
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
#ifdef BATCH_GPSPM
	T_EQ(method, RPMA_FLUSH_METHOD_GPSPM);
#else
	T_EQ(method, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
#endif
	struct rpma_cq *cq = t_cq(conn);

	/* two rounds in flight at a time, each one chain of 16 writes and a flush */
	int posted = 0, completed = 0;
	while (completed < ROUNDS) {
		while (posted < ROUNDS && posted - completed < 2) {
			struct rpma_batch_op ops[WRITES + 1];
			memset(ops, 0, sizeof(ops));
			for (int w = 0; w < WRITES; w++) {
				ops[w].op = RPMA_OP_WRITE;
				ops[w].flags = RPMA_F_COMPLETION_ON_ERROR;
				ops[w].local = src;
				ops[w].local_offset =
				    (size_t)posted * ROUND_LEN + (size_t)w * CHUNK;
				ops[w].remote = dst;
				ops[w].remote_offset = ops[w].local_offset;
				ops[w].len = CHUNK;
			}
			ops[WRITES].op = RPMA_OP_FLUSH;
			ops[WRITES].flags = RPMA_F_COMPLETION_ALWAYS;
			ops[WRITES].op_context = T_CTX(posted);
			ops[WRITES].remote = dst;
			ops[WRITES].remote_offset = (size_t)posted * ROUND_LEN;
			ops[WRITES].len = ROUND_LEN;
			ops[WRITES].flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
			int failed = 12345;
			T_OK(rpma_post_batch(conn, ops, WRITES + 1, &failed));
			T_EQ(failed, -1);
			posted++;
		}
		/* in order, each with its own context */
		struct rpma_completion cmpl;
		T_CMPL(cq, T_CTX(completed), RPMA_OP_FLUSH, &cmpl);
		completed++;
	}
	T_NO_CMPL(cq, 50);
	template_rounds(conn, dst, src);
	t_signal('F');
	t_await('V');

#ifndef BATCH_GPSPM
	if (!t_is_siw()) {
		/* a read back, a write with immediate data and a send, in one chain */
		unsigned char *msg = buf; /* the first round's bytes go back out */
		struct rpma_batch_op ops[3];
		memset(ops, 0, sizeof(ops));
		ops[0].op = RPMA_OP_READ;
		ops[0].flags = RPMA_F_COMPLETION_ALWAYS;
		ops[0].op_context = T_CTX(200);
		ops[0].local = src;
		ops[0].local_offset = SIZE - CHUNK;
		ops[0].remote = dst;
		ops[0].remote_offset = 0;
		ops[0].len = CHUNK;
		t_fill(msg, MSG, 77);
		ops[1].op = RPMA_OP_SEND;
		ops[1].flags = RPMA_F_COMPLETION_ALWAYS;
		ops[1].op_context = T_CTX(201);
		ops[1].local = src;
		ops[1].len = MSG;
		ops[1].with_imm = true;
		ops[1].imm = 0xBA7C4;
		T_OK(rpma_post_batch(conn, ops, 2, NULL));
		struct rpma_completion cmpl;
		T_CMPL(cq, T_CTX(200), RPMA_OP_READ, &cmpl);
		T_PATTERN(buf + SIZE - CHUNK, CHUNK, 0, 40);
		T_CMPL(cq, T_CTX(201), RPMA_OP_SEND, &cmpl);
		t_await('M');
	}
#endif
	t_close(&conn, true);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
#ifdef BATCH_GPSPM
	t_init("batch_gpspm", 47);
#else
	t_init("batch", 46);
#endif
	return t_run(server, client);
}
