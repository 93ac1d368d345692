// SPDX-License-Identifier: BSD-3-Clause
/*
 * peer_death.c -- the server dies (SIGKILL) while the client streams writes
 * and persistent flushes (16 writes per flush, 4 flushes in flight) and
 * waits for the flushes' completions in one of the waiting styles (built
 * once per style, PEER_DEATH_STYLE):
 *   0  rpma_cq_wait_completion() with no time limit
 *   1  rpma_cq_wait_completion() with a time limit, again and again
 *   2  rpma_cq_get_completion() alone, asking rpma_conn_is_up() when idle
 *   3  librpma 1.x: rpma_cq_wait() and rpma_cq_get_wc()
 *   4  as 0, with the flushes carried by GPSPM: the server's library
 *      thread serves them until it dies with its process mid-request
 * The client must learn it within a bound, get every outstanding flush back
 * exactly once (a write at most once: unsignaled, it shows only if flushed
 * with an error), then read RPMA_CONN_CLOSED or RPMA_CONN_LOST and delete
 * everything.
 */

#include "common.h"

#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#ifndef PEER_DEATH_STYLE
#error "PEER_DEATH_STYLE selects the waiting style"
#endif

#define SIZE		     (1 << 20)
#define WRITE_LEN	     4096
#define WRITES_PER_FLUSH     16
#define FLUSHES_IN_FLIGHT    4
#define FLUSHES_BEFORE_DEATH 40
/* from the death to the last completion: the DREQ, the error state, the flush */
#define BOUND_MS    5000
#define MAX_FLUSHES 100000

/* the flushes are GPSPM requests that the target's CPU answers */
#define PEER_DEATH_GPSPM (PEER_DEATH_STYLE == 4)

#define FLUSH_CTX(i) ((void *)(uintptr_t)(0xF0000000u + (unsigned)(i)))
#define WRITE_CTX(i) ((void *)(uintptr_t)(0xA0000000u + (unsigned)(i)))

static const char *style_name(void)
{
	static const char *names[] = { "wait_completion", "wait_completion with a time limit",
				       "busy poll with rpma_conn_is_up",
				       "rpma_cq_wait and rpma_cq_get_wc",
				       "wait_completion, flushes by GPSPM" };
	return names[PEER_DEATH_STYLE];
}

/* the server's objects stay reachable when it dies: valgrind reports no leak of them */
static struct {
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn_cfg *cfg;
	struct rpma_ep *ep;
	struct rpma_conn *conn;
} dying;

static void server(void)
{
	dying.peer = t_peer_new();
	struct t_pdata pd = { .len = 0 };
	T_OK(rpma_peer_cfg_new(&dying.pcfg));
#if PEER_DEATH_GPSPM
	rpma_persist_fn *persist = NULL;
	unsigned char *buf = t_pmem_map(SIZE, &persist);
	dying.mr = t_mr_reg(dying.peer, buf, SIZE,
			    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_mr_set_persist_fn(dying.mr, persist));
	T_OK(rpma_conn_cfg_new(&dying.cfg));
	T_OK(rpma_conn_cfg_set_gpspm(dying.cfg, RPMA_GPSPM_THREAD));
	/* GPSPM even where the device could flush natively */
	t_pdata_add_mr_versioned_methods(&pd, dying.mr, t_mr_methods(dying.mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, dying.pcfg, dying.cfg);
#else
	unsigned char *buf = t_alloc(SIZE);
	dying.mr = t_mr_reg(dying.peer, buf, SIZE,
			    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(dying.pcfg, true));
	t_pdata_add_mr(&pd, dying.mr);
	t_pdata_add_peer_cfg(&pd, dying.pcfg);
#endif
	dying.ep = t_listen(dying.peer);
	dying.conn = t_accept(dying.ep, dying.cfg, &pd);
	t_await('K');
	t_die();
}

/* the client's bookkeeping: what is outstanding, what came back */
static unsigned char flush_state[MAX_FLUSHES]; /* 1 posted, 2 completed */
static unsigned char write_seen[MAX_FLUSHES * WRITES_PER_FLUSH];
static unsigned flushes_posted, writes_posted, flushes_ok, flushes_failed, writes_flushed;
static bool error_seen;

static void account(const void *ctx, int status, bool is_flush)
{
	uintptr_t c = (uintptr_t)ctx;
	if (is_flush) {
		T_ASSERT(c >= 0xF0000000u && c < 0xF0000000u + flushes_posted);
		unsigned i = (unsigned)(c - 0xF0000000u);
		if (flush_state[i] != 1)
			T_FAIL("flush %u came back twice (status %s)", i,
			       ibv_wc_status_str((enum ibv_wc_status)status));
		flush_state[i] = 2;
		if (status == IBV_WC_SUCCESS)
			flushes_ok++;
		else
			flushes_failed++;
	} else {
		/* only a write flushed with an error shows up */
		T_ASSERT(c >= 0xA0000000u && c < 0xA0000000u + writes_posted);
		T_ASSERT(status != IBV_WC_SUCCESS);
		unsigned i = (unsigned)(c - 0xA0000000u);
		if (write_seen[i])
			T_FAIL("write %u came back twice", i);
		write_seen[i] = 1;
		writes_flushed++;
	}
	if (status != IBV_WC_SUCCESS) {
		if (getenv("PEER_DEATH_TRACE"))
			t_log("%s %#lx: %s at %lld", is_flush ? "flush" : "write", (unsigned long)c,
			      ibv_wc_status_str((enum ibv_wc_status)status), t_now_ms());
		error_seen = true;
	}
}

static unsigned outstanding(void)
{
	return flushes_posted - flushes_ok - flushes_failed;
}

/* posts one batch (16 writes and a flush); false when posting fails */
static bool post_batch(struct rpma_conn *conn, struct rpma_mr_remote *dst,
		       struct rpma_mr_local *src)
{
	if (flushes_posted == MAX_FLUSHES)
		T_FAIL("the peer's death was never noticed");
	const unsigned f = flushes_posted;
	for (unsigned w = 0; w < WRITES_PER_FLUSH; w++) {
		const size_t off =
		    (size_t)((f * WRITES_PER_FLUSH + w) % (SIZE / WRITE_LEN)) * WRITE_LEN;
		int ret = rpma_write(conn, dst, off, src, 0, WRITE_LEN, RPMA_F_COMPLETION_ON_ERROR,
				     WRITE_CTX(writes_posted));
		/*
		 * Counted even when its post fails: siw's provider puts the
		 * work request on the queue before the doorbell fails, and
		 * flushes it later all the same.
		 */
		writes_posted++;
		if (ret) {
			t_log("a write after the death failed to post: %s", rpma_err_2str(ret));
			return false;
		}
	}
	int ret = rpma_flush(conn, dst, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT,
			     RPMA_F_COMPLETION_ALWAYS, FLUSH_CTX(f));
	if (ret) {
		t_log("a flush after the death failed to post: %s", rpma_err_2str(ret));
		return false;
	}
	flush_state[f] = 1;
	flushes_posted++;
	return true;
}

/*
 * Takes the next completion in the test's style: true and one accounted,
 * false when the style says nothing more will come.
 */
static bool next_completion(struct rpma_conn *conn, struct rpma_cq *cq)
{
	struct rpma_completion cmpl;
	memset(&cmpl, 0, sizeof(cmpl));
	int ret;
	switch (PEER_DEATH_STYLE) {
	case 0:
	case 4:
		ret = rpma_cq_wait_completion(cq, &cmpl, -1);
		break;
	case 1: {
		/* the application's own limit, far above the bound: it must not be what ends it */
		long long start = t_now_ms();
		do {
			ret = rpma_cq_wait_completion(cq, &cmpl, 30000);
		} while (ret == RPMA_E_NO_COMPLETION && t_now_ms() - start < 30000 && !error_seen &&
			 outstanding());
		break;
	}
	case 2: {
		/* after the connection is down, a quiet CQ for 500 ms means the end */
		long long quiet_since = -1;
		for (;;) {
			ret = rpma_cq_get_completion(cq, &cmpl);
			if (ret != RPMA_E_NO_COMPLETION)
				break;
			bool up = true;
			T_OK(rpma_conn_is_up(conn, &up));
			if (up)
				continue;
			if (quiet_since < 0)
				quiet_since = t_now_ms();
			else if (t_now_ms() - quiet_since > 500)
				break;
		}
		break;
	}
	default: {
		/* librpma 1.x: a flush is an RDMA read to it */
		struct ibv_wc wc;
		int got = 0;
		ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			ret = rpma_cq_wait(cq);
			if (ret)
				break;
			ret = rpma_cq_get_wc(cq, 1, &wc, &got);
			if (ret == RPMA_E_NO_COMPLETION)
				return true; /* an event with nothing behind it: wait again */
		}
		if (ret == 0) {
			uintptr_t c = (uintptr_t)wc.wr_id;
			account((void *)c, wc.status, c >= 0xF0000000u);
		}
		if (ret && ret != RPMA_E_NO_COMPLETION)
			T_FAIL("rpma_cq_get_wc: %s", rpma_err_2str(ret));
		return ret == 0;
	}
	}
	if (ret == RPMA_E_NO_COMPLETION)
		return false;
	T_OK(ret);
	account(cmpl.op_context, cmpl.op_status,
		cmpl.op == RPMA_OP_FLUSH || (uintptr_t)cmpl.op_context >= 0xF0000000u);
	return true;
}

static void client(void)
{
	t_log("waiting style: %s", style_name());
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(WRITE_LEN);
	t_fill(buf, WRITE_LEN, 3);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, WRITE_LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, (WRITES_PER_FLUSH + 1) * FLUSHES_IN_FLIGHT + 8));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, (WRITES_PER_FLUSH + 1) * FLUSHES_IN_FLIGHT + 8));
#if PEER_DEATH_GPSPM
	/* the client's side of GPSPM: its answers arrive in the library's receives */
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
	T_EQ(method,
	     PEER_DEATH_GPSPM ? RPMA_FLUSH_METHOD_GPSPM : RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	struct rpma_cq *cq = t_cq(conn);

	bool may_post = true;
	long long death = -1;
	t_waiting("completions while the server dies");
	for (;;) {
		while (may_post && !error_seen && outstanding() < FLUSHES_IN_FLIGHT)
			may_post = post_batch(conn, dst, src);
		if (death < 0 && flushes_ok >= FLUSHES_BEFORE_DEATH) {
			T_ASSERT(!error_seen);
			t_signal('K');
			death = t_now_ms();
		}
		if (!next_completion(conn, cq))
			break;
		if (error_seen)
			may_post = false;
	}
	const long long took = t_now_ms() - death;
	t_log("after the death: %lld ms to the last completion; %u flushes before it, %u "
	      "failed, %u writes flushed with errors",
	      took, flushes_ok, flushes_failed, writes_flushed);
	T_ASSERT(death >= 0);
	T_ASSERT(error_seen);
	if (outstanding())
		T_FAIL("%u flushes never came back", outstanding());
	/* under valgrind (RPMA_TEST_SLOW) everything takes longer: the bound too */
	const int bound = getenv("RPMA_TEST_SLOW") ? 10 * BOUND_MS : BOUND_MS;
	if (took > bound)
		T_FAIL("the death took %lld ms to show, more than %d", took, bound);

	bool up = true;
	T_OK(rpma_conn_is_up(conn, &up));
	T_EQ(up, false);
	/* the library took the event on the way, the application still gets it */
	enum rpma_conn_event ev = t_next_event_timeout(conn, 1000);
	if (ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST)
		T_FAIL("connection event %s, expected the connection closed or lost",
		       ev == RPMA_CONN_UNDEFINED ? "none" : rpma_utils_conn_event_2str(ev));

	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	static const char *names[] = { "peer_death_wait", "peer_death_wait_timeout",
				       "peer_death_busy_poll", "peer_death_wait_1x",
				       "gpspm_target_death" };
	/* 45 to 48 went to other tests before the GPSPM style came */
	t_init(names[PEER_DEATH_STYLE], PEER_DEATH_GPSPM ? 49 : 41 + PEER_DEATH_STYLE);
	return t_run(server, client);
}
