// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_order.c -- the ordering promises of GPSPM on a real device, against
 * a target whose CPU is slow to persist (each call of its persist function
 * takes PERSIST_MS):
 *
 * - (c) a commit word written by rpma_atomic_write right after an
 *   unsignaled persistent flush of the record it commits becomes visible
 *   on the target only once that record was persisted: a thread of the
 *   target watches the word and checks, each time it moves, that the
 *   persist function has been through every record it covers;
 * - (b) a signaled read posted after unsignaled flushes completes only
 *   once they are done: after its completion, the client reads the
 *   target's count of persisted records, which must cover every flush
 *   posted before the read.
 *
 * Unsignaled flushes, atomic writes and reads are interleaved as a log
 * writer does; RPMA_E_AGAIN (the target's receives are all taken) is met
 * by rpma_conn_wait_flush_room() and posting again.
 */

#include <pthread.h>
#include <string.h>

#include "common.h"

#define RECORDS	    400
#define RECORD_LEN  64
#define PERSIST_MS  2
#define READ_EVERY  5
#define COMMIT_OFF  0  /* the commit word: the records committed */
#define COUNT_OFF   64 /* the target's count of records persisted */
#define RECORDS_OFF 128
#define SIZE	    (RECORDS_OFF + RECORDS * RECORD_LEN)

static unsigned char *region;
static unsigned long long persisted; /* records persisted, in order */
static unsigned long long violations;
static unsigned long long moves;
static bool watching = true;

/* a slow persist: the window in which an unordered commit would show */
static void slow_persist(const void *ptr, size_t len)
{
	t_sleep_ms(PERSIST_MS);
	const size_t off = (size_t)((const unsigned char *)ptr - region);
	if (off < RECORDS_OFF || len != RECORD_LEN)
		return; /* the commit word's own flush */
	const unsigned long long record = (off - RECORDS_OFF) / RECORD_LEN;
	if (record != __atomic_load_n(&persisted, __ATOMIC_RELAXED))
		T_FAIL("record %llu persisted out of turn (expected %llu)", record,
		       __atomic_load_n(&persisted, __ATOMIC_RELAXED));
	__atomic_store_n(&persisted, record + 1, __ATOMIC_RELEASE);
	/* for the client's reads */
	__atomic_store_n((uint64_t *)(region + COUNT_OFF), record + 1, __ATOMIC_RELEASE);
}

static void *watch_commits(void *arg)
{
	(void)arg;
	const uint64_t *commit = (const uint64_t *)(region + COMMIT_OFF);
	uint64_t seen = 0;
	while (__atomic_load_n(&watching, __ATOMIC_ACQUIRE)) {
		const uint64_t now = __atomic_load_n(commit, __ATOMIC_ACQUIRE);
		if (now == seen)
			continue;
		moves++;
		const unsigned long long done = __atomic_load_n(&persisted, __ATOMIC_ACQUIRE);
		if (now > done) {
			if (violations++ < 5)
				t_log("commit word %llu visible with %llu records persisted",
				      (unsigned long long)now, done);
		}
		seen = now;
	}
	return NULL;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	region = t_alloc(SIZE);
	memset(region, 0, SIZE);
	struct rpma_mr_local *mr = t_mr_reg(peer, region, SIZE,
					    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
						RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_mr_set_persist_fn(mr, slow_persist));
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	T_OK(rpma_conn_cfg_set_rq_size(cfg, 8));

	struct t_pdata pd = { .len = 0 };
	/* GPSPM is what is tested: no native flush, whatever the devices have */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	pthread_t watcher;
	T_EQ(pthread_create(&watcher, NULL, watch_commits, NULL), 0);
	t_serve_until(conn, 'D');
	__atomic_store_n(&watching, false, __ATOMIC_RELEASE);
	T_EQ(pthread_join(watcher, NULL), 0);
	t_log("%llu records persisted, the commit word moved %llu times, %llu too early", persisted,
	      moves, violations);
	T_EQ(persisted, RECORDS);
	T_EQ(violations, 0);
	T_EQ(*(uint64_t *)(region + COMMIT_OFF), RECORDS);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

/* takes whatever completed; fails on an error */
static void take_some(struct rpma_cq *cq, void *expect, bool *got_expected)
{
	struct rpma_completion c;
	int ret = rpma_cq_wait_completion(cq, &c, 20);
	if (ret == RPMA_E_NO_COMPLETION)
		return;
	T_OK(ret);
	if (c.op_status != IBV_WC_SUCCESS)
		T_FAIL("op %s (context %p) failed: status %d", t_op_str(c.op), c.op_context,
		       c.op_status);
	if (got_expected && c.op_context == expect)
		*got_expected = true;
}

/*
 * Posts with call until the flow control lets it through: waiting for room
 * (the flushes are unsignaled, so only their answers free places)
 */
#define POST_AGAIN(conn, call)                                                                     \
	do {                                                                                       \
		int ret_;                                                                          \
		while ((ret_ = (call)) == RPMA_E_AGAIN) {                                          \
			room_waits++;                                                              \
			T_OK(rpma_conn_wait_flush_room((conn), T_WAIT_MS));                        \
		}                                                                                  \
		T_OK(ret_);                                                                        \
	} while (0)

static unsigned room_waits;

static void read_and_wait(struct rpma_conn *conn, struct rpma_cq *cq, struct rpma_mr_remote *dst,
			  struct rpma_mr_local *sink, void *ctx)
{
	T_OK(rpma_read(conn, sink, 0, dst, COUNT_OFF, 8, RPMA_F_COMPLETION_ALWAYS, ctx));
	bool done = false;
	long long deadline = t_now_ms() + T_WAIT_MS;
	while (!done) {
		if (t_now_ms() > deadline)
			T_FAIL("no completion of the read");
		take_some(cq, ctx, &done);
	}
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(RECORD_LEN);
	uint64_t *count = t_alloc(8);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, RECORD_LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_mr_local *sink = t_mr_reg(peer, count, 8, RPMA_MR_USAGE_READ_DST);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	T_OK(rpma_conn_cfg_set_rq_size(cfg, 8));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, 64));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, 64));

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
	const int quiet = RPMA_F_COMPLETION_ON_ERROR;
	unsigned checked_reads = 0;
	for (unsigned i = 0; i < RECORDS; i++) {
		t_fill(buf, RECORD_LEN, i);
		const size_t off = RECORDS_OFF + (size_t)i * RECORD_LEN;
		T_OK(rpma_write(conn, dst, off, src, 0, RECORD_LEN, quiet, NULL));
		POST_AGAIN(conn, rpma_flush(conn, dst, off, RECORD_LEN, RPMA_FLUSH_TYPE_PERSISTENT,
					    quiet, NULL));
		char word[8];
		const uint64_t committed = i + 1;
		memcpy(word, &committed, 8);
		POST_AGAIN(conn, rpma_atomic_write(conn, dst, COMMIT_OFF, word, quiet, NULL));
		if (i % READ_EVERY != READ_EVERY - 1)
			continue;
		/*
		 * A signaled read after i + 1 unsignaled flushes; once it is
		 * complete, the target has persisted all of them, which a read
		 * posted now sees.
		 */
		read_and_wait(conn, cq, dst, sink, T_CTX(1));
		read_and_wait(conn, cq, dst, sink, T_CTX(2));
		if (*count < i + 1)
			T_FAIL("a read completed after %u flushes with %llu of them persisted",
			       i + 1, (unsigned long long)*count);
		checked_reads++;
	}
	/* the last commit word's flush: the watcher sees the final value persisted */
	POST_AGAIN(conn, rpma_flush(conn, dst, COMMIT_OFF, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
	bool done = false;
	long long deadline = t_now_ms() + T_WAIT_MS;
	while (!done) {
		if (t_now_ms() > deadline)
			T_FAIL("no completion of the last flush");
		take_some(cq, T_CTX(3), &done);
	}
	t_log("%u records committed, %u reads checked, %u waits for room", RECORDS, checked_reads,
	      room_waits);
	t_signal('D');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&sink));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("gpspm_order", 52);
	t_set_deadline(180);
	return t_run(server, client);
}
