// SPDX-License-Identifier: BSD-3-Clause
/*
 * threads_one_conn.c -- several threads post writes, reads and flushes on
 * one real connection while one thread takes every completion, as
 * librpma(7) allows: each completion must carry the operation its poster
 * asked for (a flush is a read on the wire, told apart by the library) and
 * the context it gave; every write lands where it was meant to, and every
 * read brings back the target's bytes.
 *
 * Order: an RC send queue completes in order on RoCE, but siw completes a
 * write as soon as it is sent while a read before it waits for its
 * response; reads complete in order among themselves everywhere, and that
 * is all the library relies on. So each poster's writes must complete in
 * its order, and its reads and flushes in theirs.
 */

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <string.h>

#include "common.h"

#define POSTERS	 4
#define OPS_EACH 600
#define SQ_SIZE	 64
#define CHUNK	 64
/* the target's region: what each poster writes, then what they read */
#define WRITE_AREA ((size_t)POSTERS * OPS_EACH * CHUNK)
#define READ_AREA  ((size_t)OPS_EACH * CHUNK)
#define READ_SEED  77

enum kind { K_WRITE, K_READ, K_FLUSH, K_N };
static const enum rpma_op expected_op[K_N] = { RPMA_OP_WRITE, RPMA_OP_READ, RPMA_OP_FLUSH };

static uintptr_t context_of(unsigned poster, unsigned seq, enum kind k)
{
	return ((uintptr_t)(poster + 1) << 40) | ((uintptr_t)seq << 8) | (uintptr_t)k;
}

static unsigned write_seed(unsigned poster, unsigned seq)
{
	return 1000 + poster * OPS_EACH + seq;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(WRITE_AREA + READ_AREA);
	t_fill(buf + WRITE_AREA, READ_AREA, READ_SEED);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, WRITE_AREA + READ_AREA,
					    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct t_pdata out = { .len = 0 };
	t_pdata_add_mr(&out, mr);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &out);

	t_waiting("the posters to finish");
	t_await('D');
	/* every write where its poster meant it, whole */
	for (unsigned p = 0; p < POSTERS; p++)
		for (unsigned seq = 0; seq < OPS_EACH; seq++) {
			const size_t off = ((size_t)p * OPS_EACH + seq) * CHUNK;
			if (seq % K_N == K_WRITE)
				T_PATTERN(buf + off, CHUNK, 0, write_seed(p, seq));
			else
				T_BYTES(buf + off, CHUNK, 0);
		}
	T_PATTERN(buf + WRITE_AREA, READ_AREA, 0, READ_SEED);

	t_close(&conn, false);
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

static struct {
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *dst;
	unsigned char *local;
	sem_t credits; /* free send queue entries */
	atomic_int failed;
} ctx;

static void *poster(void *arg)
{
	const unsigned me = (unsigned)(uintptr_t)arg;
	for (unsigned seq = 0; seq < OPS_EACH; seq++) {
		const enum kind k = (enum kind)(seq % K_N);
		const size_t off = ((size_t)me * OPS_EACH + seq) * CHUNK;
		void *c = (void *)context_of(me, seq, k);
		while (sem_wait(&ctx.credits) != 0)
			;
		if (atomic_load(&ctx.failed))
			return NULL;
		int ret = -1;
		switch (k) {
		case K_WRITE:
			t_fill(ctx.local + off, CHUNK, write_seed(me, seq));
			ret = rpma_write(ctx.conn, ctx.dst, off, ctx.mr, off, CHUNK,
					 RPMA_F_COMPLETION_ALWAYS, c);
			break;
		case K_READ:
			/* the target's read area, at the poster's own place */
			ret = rpma_read(ctx.conn, ctx.mr, off, ctx.dst, WRITE_AREA + seq * CHUNK,
					CHUNK, RPMA_F_COMPLETION_ALWAYS, c);
			break;
		case K_FLUSH:
			ret = rpma_flush(ctx.conn, ctx.dst, off - CHUNK, CHUNK,
					 RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS, c);
			break;
		case K_N:
			break;
		}
		if (ret != 0) {
			t_log("poster %u, operation %u: %s", me, seq, rpma_err_2str(ret));
			atomic_store(&ctx.failed, 1);
			return NULL;
		}
	}
	return NULL;
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	ctx.local = t_alloc(WRITE_AREA);
	ctx.mr =
	    t_mr_reg(peer, ctx.local, WRITE_AREA, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, SQ_SIZE));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, SQ_SIZE));
	ctx.conn = t_connect(peer, cfg, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(ctx.conn, &pd);
	ctx.dst = t_pdata_mr(&pd, 0);
	T_OK(sem_init(&ctx.credits, 0, SQ_SIZE));
	struct rpma_cq *cq = t_cq(ctx.conn);

	pthread_t threads[POSTERS];
	for (unsigned i = 0; i < POSTERS; i++)
		T_EQ(pthread_create(&threads[i], NULL, poster, (void *)(uintptr_t)i), 0);

	/* this thread takes every completion */
	/* the last completed write, and read or flush, of each poster, + 1 */
	unsigned after[POSTERS][2] = { { 0 } }, counts[K_N] = { 0 };
	unsigned done = 0;
	t_waiting("the posters' completions");
	long long deadline = t_now_ms() + T_WAIT_MS;
	while (done < POSTERS * OPS_EACH) {
		if (atomic_load(&ctx.failed))
			T_FAIL("a poster failed");
		struct rpma_completion c[16];
		int n = rpma_cq_get_completions(cq, c, 16);
		T_ASSERT(n >= 0);
		if (n == 0) {
			if (t_now_ms() > deadline)
				T_FAIL("%u of %u completions, then none for %d ms", done,
				       POSTERS * OPS_EACH, T_WAIT_MS);
			continue;
		}
		deadline = t_now_ms() + T_WAIT_MS;
		for (int i = 0; i < n; i++) {
			const uintptr_t x = (uintptr_t)c[i].op_context;
			const unsigned who = (unsigned)(x >> 40) - 1;
			const unsigned seq = (unsigned)(x >> 8) & 0xffffffffU;
			const enum kind k = (enum kind)(x & 0xff);
			if (c[i].op_status != IBV_WC_SUCCESS)
				T_FAIL("operation %u of poster %u failed: %s", seq, who,
				       ibv_wc_status_str(c[i].op_status));
			T_ASSERT(who < POSTERS && k < K_N);
			const int reads = k != K_WRITE;
			if (seq + 1 <= after[who][reads])
				T_FAIL("poster %u: operation %u completed after operation %u", who,
				       seq, after[who][reads] - 1);
			after[who][reads] = seq + 1;
			if (c[i].op != expected_op[k])
				T_FAIL("poster %u, operation %u: completed as %s, posted as %s",
				       who, seq, t_op_str(c[i].op), t_op_str(expected_op[k]));
			if (k == K_READ)
				T_PATTERN(ctx.local + ((size_t)who * OPS_EACH + seq) * CHUNK, CHUNK,
					  (size_t)seq * CHUNK, READ_SEED);
			counts[k]++;
			done++;
			sem_post(&ctx.credits);
		}
	}
	for (unsigned i = 0; i < POSTERS; i++)
		T_EQ(pthread_join(threads[i], NULL), 0);
	struct rpma_completion none;
	T_RET(rpma_cq_get_completion(cq, &none), RPMA_E_NO_COMPLETION);
	t_log("%u writes, %u reads, %u flushes from %d threads, each attributed right",
	      counts[K_WRITE], counts[K_READ], counts[K_FLUSH], POSTERS);
	t_signal('D');

	t_close(&ctx.conn, true);
	sem_destroy(&ctx.credits);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_remote_delete(&ctx.dst));
	T_OK(rpma_mr_dereg(&ctx.mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("reliability_threads_one_conn", 203);
	t_set_deadline(110);
	return t_run(server, client);
}
