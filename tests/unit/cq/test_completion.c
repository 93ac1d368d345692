/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_completion.c -- the completion extension: rpma_cq_get_completion,
 * rpma_cq_get_completions, rpma_cq_wait_completion
 */

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

#define RADDR 0x7f0000200000ULL
#define RLEN  4096
#define RKEY  0x5151U

static char lbuf[256];
static struct rpma_conn *conn;
static struct rdma_cm_id *id;
static struct rpma_cq *cq;
static struct ibv_cq *icq;
static struct rpma_mr_local *mr;
static struct rpma_mr_remote *rmr;

static int cmpl_setup(void **state)
{
	fx_setup(state);
	conn = fx_conn_active(NULL, &id);
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	icq = id->qp->send_cq;
	mr = fx_mr(lbuf, sizeof(lbuf), RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC);
	rmr = fx_mr_remote(RADDR, RLEN, RKEY,
			   RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			       RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			       RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	return 0;
}

static int cmpl_teardown(void **state)
{
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

static void push_wc(struct ibv_cq *where, uint64_t wr_id, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc = fx_wc(wr_id, opcode, IBV_WC_SUCCESS);
	fake_verbs_push_wc(where, &wc);
}

/* the wr_id of the latest posted send work request */
static uint64_t last_posted_wr_id(void)
{
	unsigned n = fake_verbs_sends();
	assert_true(n > 0);
	return fake_verbs_send(n - 1)->wr.wr_id;
}

static struct rpma_completion poisoned(void)
{
	struct rpma_completion c;
	memset(&c, 0x5a, sizeof(c));
	return c;
}

/* rpma_cq_get_completion: arguments */

static void get__null_cq(void **state)
{
	(void)state;
	struct rpma_completion c = poisoned(), p = poisoned();
	FX_INVAL(rpma_cq_get_completion(NULL, &c));
	assert_memory_equal(&c, &p, sizeof(c));
}

static void get__null_cmpl(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_get_completion(cq, NULL));
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

/* translation of every opcode */

static void expect_op(enum ibv_wc_opcode opcode, enum rpma_op op)
{
	int ctx = 0;
	push_wc(icq, (uintptr_t)&ctx, opcode);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op, op);
	assert_int_equal(c.op_status, IBV_WC_SUCCESS);
	assert_int_equal(c.flags & IBV_WC_WITH_IMM, 0);
}

static void get__read(void **state)
{
	(void)state;
	expect_op(IBV_WC_RDMA_READ, RPMA_OP_READ);
}

static void get__write(void **state)
{
	(void)state;
	expect_op(IBV_WC_RDMA_WRITE, RPMA_OP_WRITE);
}

static void get__send(void **state)
{
	(void)state;
	expect_op(IBV_WC_SEND, RPMA_OP_SEND);
}

static void get__recv(void **state)
{
	(void)state;
	expect_op(IBV_WC_RECV, RPMA_OP_RECV);
}

static void get__recv_rdma_with_imm(void **state)
{
	(void)state;
	expect_op(IBV_WC_RECV_RDMA_WITH_IMM, RPMA_OP_RECV_RDMA_WITH_IMM);
}

static void get__atomic_write(void **state)
{
	(void)state;
#ifdef HAVE_IBV_WC_ATOMIC_WRITE
	expect_op(IBV_WC_ATOMIC_WRITE, RPMA_OP_WRITE);
#else
	skip(); /* this rdma-core has no IBV_WC_ATOMIC_WRITE */
#endif
}

static void get__emulated_atomic_write(void **state)
{
	(void)state;
	static const char v[8] = "abcdefg";
	int ctx = 0;
	assert_int_equal(rpma_atomic_write(conn, rmr, 0, v, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_WRITE);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op, RPMA_OP_WRITE);
}

static void get__flush(void **state)
{
	(void)state;
	int ctx = 0;
	assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	/* the work request is named by a slot of the library's, not by the context */
	assert_true(last_posted_wr_id() != (uintptr_t)&ctx);
	/* the read that carries the flush reports its own length: not shown */
	struct ibv_wc wc = fx_wc(last_posted_wr_id(), IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	wc.byte_len = 8;
	fake_verbs_push_wc(icq, &wc);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op_status, IBV_WC_SUCCESS);
	assert_int_equal(c.byte_len, 0);
}

static void get__flush_persistent(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	assert_int_equal(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
	int ctx = 0;
	assert_int_equal(
	    rpma_flush(conn, rmr, 8, 8, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, &ctx),
	    0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_ptr_equal(c.op_context, &ctx);
}

static void get__read_then_flush(void **state)
{
	(void)state;
	int rctx = 0, fctx = 0;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, f, &rctx), 0);
	uint64_t r = last_posted_wr_id();
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, &fctx), 0);
	uint64_t fl = last_posted_wr_id();
	push_wc(icq, r, IBV_WC_RDMA_READ);
	push_wc(icq, fl, IBV_WC_RDMA_READ);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_READ);
	assert_ptr_equal(c.op_context, &rctx);
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_ptr_equal(c.op_context, &fctx);
}

static void get__flush_then_read(void **state)
{
	(void)state;
	int rctx = 0, fctx = 0;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, &fctx), 0);
	uint64_t fl = last_posted_wr_id();
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, f, &rctx), 0);
	uint64_t r = last_posted_wr_id();
	push_wc(icq, fl, IBV_WC_RDMA_READ);
	push_wc(icq, r, IBV_WC_RDMA_READ);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_ptr_equal(c.op_context, &fctx);
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_READ);
	assert_ptr_equal(c.op_context, &rctx);
}

static void get__unsignaled_flush_then_read(void **state)
{
	(void)state;
	int rctx = 0, fctx = 0;
	/* an unsignaled flush that succeeds never completes */
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ON_ERROR, &fctx),
			 0);
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &rctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_READ);
	assert_ptr_equal(c.op_context, &rctx);
}

static void get__failed_post_is_forgotten(void **state)
{
	(void)state;
	int rctx = 0, fctx = 0;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	/* a flush that could not be posted will never complete */
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, &fctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, f, &rctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_READ);
	assert_ptr_equal(c.op_context, &rctx);
}

static void get__mixed_apis_stay_in_step(void **state)
{
	(void)state;
	int fctx = 0, rctx = 0;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	/* a flush collected through the 1.x API, then a read through the extension */
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, &fctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, f, &rctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, (uintptr_t)&fctx);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &rctx);
	assert_int_equal(c.op, RPMA_OP_READ);
}

/*
 * Threads posting reads and flushes at once on one connection: each
 * completion must still report the kind of the operation behind it.
 * Contexts encode the kind: even addresses are reads, odd ones flushes.
 */
#define CONCURRENT_OPS_PER_THREAD 8

static char kinds[2 * CONCURRENT_OPS_PER_THREAD * 2];

static void *post_mixed(void *arg)
{
	const int first = *(const int *)arg;
	for (int i = 0; i < CONCURRENT_OPS_PER_THREAD; i++) {
		const int slot = first + 2 * i;
		void *ctx = &kinds[2 * slot + (i % 2)];
		const int ret =
		    i % 2 ? rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				       RPMA_F_COMPLETION_ALWAYS, ctx)
			  : rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, ctx);
		if (ret)
			return (void *)1;
	}
	return NULL;
}

static void get__concurrent_posters_keep_kinds(void **state)
{
	(void)state;
	unsigned replayed = 0;
	for (int round = 0; round < 1000; round++) {
		pthread_t t[2];
		int first[2] = { 0, 1 };
		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&t[i], NULL, post_mixed, &first[i]), 0);
		for (int i = 0; i < 2; i++) {
			void *failed = NULL;
			assert_int_equal(pthread_join(t[i], &failed), 0);
			assert_null(failed);
		}
		/* the send queue completes in the order the posts reached it */
		for (; replayed < fake_verbs_sends(); replayed++)
			push_wc(icq, fake_verbs_send(replayed)->wr.wr_id, IBV_WC_RDMA_READ);
		for (int n = 0; n < 2 * CONCURRENT_OPS_PER_THREAD; n++) {
			struct rpma_completion c = poisoned();
			assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
			const int is_flush = (int)(((char *)c.op_context - kinds) % 2);
			assert_int_equal(c.op, is_flush ? RPMA_OP_FLUSH : RPMA_OP_READ);
		}
		assert_int_equal(rpma_cq_get_completion(cq, &(struct rpma_completion){ 0 }),
				 RPMA_E_NO_COMPLETION);
	}
}

/*
 * Posting and polling threads at once: two threads post reads and
 * signaled flushes, a third plays the device (it completes every posted
 * work request, in posting order), two more take the completions
 * concurrently. Each completion must report the kind and the context of
 * the operation behind it, and each operation complete exactly once.
 * Contexts encode the kind: even offsets into `marks` are reads, odd ones
 * flushes.
 */
#define MT_POSTERS	  2
#define MT_OPS_PER_POSTER 4000
#define MT_TOTAL	  (MT_POSTERS * MT_OPS_PER_POSTER)
#define MT_IN_FLIGHT	  12 /* fewer than the flush slots of a default connection */

static unsigned char marks[MT_TOTAL * 2];
static unsigned mt_posted, mt_taken, mt_failures;
static unsigned mt_seen[MT_TOTAL];

static void *mt_post(void *arg)
{
	const int poster = *(const int *)arg;
	for (int i = 0; i < MT_OPS_PER_POSTER; i++) {
		/* a failure stops the pollers: stop too, rather than wait forever */
		while (__atomic_load_n(&mt_posted, __ATOMIC_ACQUIRE) -
			   __atomic_load_n(&mt_taken, __ATOMIC_ACQUIRE) >=
		       MT_IN_FLIGHT) {
			if (__atomic_load_n(&mt_failures, __ATOMIC_RELAXED))
				return NULL;
			sched_yield();
		}
		const int op = poster * MT_OPS_PER_POSTER + i;
		const bool is_flush = (i + poster) % 3 != 0;
		void *ctx = &marks[2 * op + (is_flush ? 1 : 0)];
		int ret = is_flush
			      ? rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
					   RPMA_F_COMPLETION_ALWAYS, ctx)
			      : rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, ctx);
		if (ret) {
			__atomic_add_fetch(&mt_failures, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		__atomic_add_fetch(&mt_posted, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *mt_device(void *arg)
{
	(void)arg;
	unsigned replayed = 0;
	while (replayed < MT_TOTAL && !__atomic_load_n(&mt_failures, __ATOMIC_RELAXED)) {
		if (replayed == fake_verbs_sends()) {
			sched_yield();
			continue;
		}
		push_wc(icq, fake_verbs_send(replayed)->wr.wr_id, IBV_WC_RDMA_READ);
		replayed++;
	}
	return NULL;
}

static void *mt_poll(void *arg)
{
	const bool batched = *(const int *)arg;
	while (__atomic_load_n(&mt_taken, __ATOMIC_ACQUIRE) < MT_TOTAL &&
	       !__atomic_load_n(&mt_failures, __ATOMIC_RELAXED)) {
		struct rpma_completion c[4];
		int n;
		if (batched) {
			n = rpma_cq_get_completions(cq, c, 4);
		} else {
			int ret = rpma_cq_get_completion(cq, &c[0]);
			n = ret == 0 ? 1 : ret == RPMA_E_NO_COMPLETION ? 0 : ret;
		}
		if (n < 0) {
			__atomic_add_fetch(&mt_failures, 1, __ATOMIC_RELAXED);
			break;
		}
		if (n == 0)
			sched_yield();
		for (int i = 0; i < n; i++) {
			const unsigned char *m = c[i].op_context;
			if (m < marks || m >= marks + sizeof(marks) ||
			    c[i].op_status != IBV_WC_SUCCESS ||
			    c[i].op != ((m - marks) % 2 ? RPMA_OP_FLUSH : RPMA_OP_READ)) {
				__atomic_add_fetch(&mt_failures, 1, __ATOMIC_RELAXED);
				continue;
			}
			__atomic_add_fetch(&mt_seen[(m - marks) / 2], 1, __ATOMIC_RELAXED);
		}
		__atomic_add_fetch(&mt_taken, (unsigned)n, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void get__concurrent_posters_and_pollers(void **state)
{
	(void)state;
	mt_posted = mt_taken = mt_failures = 0;
	memset(mt_seen, 0, sizeof(mt_seen));
	pthread_t posters[MT_POSTERS], device, pollers[2];
	int ids[MT_POSTERS] = { 0, 1 };
	int batched[2] = { 0, 1 };
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&pollers[i], NULL, mt_poll, &batched[i]), 0);
	assert_int_equal(pthread_create(&device, NULL, mt_device, NULL), 0);
	for (int i = 0; i < MT_POSTERS; i++)
		assert_int_equal(pthread_create(&posters[i], NULL, mt_post, &ids[i]), 0);
	for (int i = 0; i < MT_POSTERS; i++)
		assert_int_equal(pthread_join(posters[i], NULL), 0);
	assert_int_equal(pthread_join(device, NULL), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(pollers[i], NULL), 0);
	assert_int_equal(mt_failures, 0);
	assert_int_equal(mt_taken, MT_TOTAL);
	for (int op = 0; op < MT_TOTAL; op++)
		if (mt_seen[op] != 1)
			fail_msg("operation %d completed %u times", op, mt_seen[op]);
	assert_int_equal(rpma_cq_get_completion(cq, &(struct rpma_completion){ 0 }),
			 RPMA_E_NO_COMPLETION);
}

static void get__read_with_odd_context(void **state)
{
	(void)state;
	/* any op_context value comes back as it was, whatever the operation */
	void *odd = (void *)(uintptr_t)0x1235;
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, odd), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	void *flush_ctx = (void *)(uintptr_t)0x1;
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ALWAYS, flush_ctx),
			 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, odd);
	assert_int_equal(c.op, RPMA_OP_READ);
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, flush_ctx);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
}

static void get__imm_host_order(void **state)
{
	(void)state;
	struct ibv_wc wc = fx_wc(7, IBV_WC_RECV, IBV_WC_SUCCESS);
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(0x11223344);
	wc.byte_len = 48;
	fake_verbs_push_wc(icq, &wc);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_RECV);
	assert_true(c.flags & IBV_WC_WITH_IMM);
	assert_int_equal(c.imm, 0x11223344);
	assert_int_equal(c.byte_len, 48);
}

static void get__recv_rdma_with_imm_value(void **state)
{
	(void)state;
	struct ibv_wc wc = fx_wc(8, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS);
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(0xa0b0c0d0);
	fake_verbs_push_wc(icq, &wc);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_RECV_RDMA_WITH_IMM);
	assert_true(c.flags & IBV_WC_WITH_IMM);
	assert_int_equal(c.imm, 0xa0b0c0d0);
}

static void get__recv_byte_len(void **state)
{
	(void)state;
	struct ibv_wc wc = fx_wc(9, IBV_WC_RECV, IBV_WC_SUCCESS);
	wc.byte_len = 4000;
	fake_verbs_push_wc(icq, &wc);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_int_equal(c.byte_len, 4000);
	assert_int_equal(c.flags & IBV_WC_WITH_IMM, 0);
}

static void get__error_status(void **state)
{
	(void)state;
	int ctx = 0;
	struct ibv_wc wc = fx_wc((uintptr_t)&ctx, (enum ibv_wc_opcode)0x5f, IBV_WC_REM_ACCESS_ERR);
	fake_verbs_push_wc(icq, &wc);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op_status, IBV_WC_REM_ACCESS_ERR);
}

/*
 * A successful completion with an opcode nothing of the library's posts
 * (a memory window's bind): handed out failed (IBV_WC_GENERAL_ERR), with
 * a warning, never as a successful read.
 */
static void get__unexpected_opcode(void **state)
{
	(void)state;
	int ctx = 0;
	unsigned warnings = fx_log_count(RPMA_LOG_LEVEL_WARNING);
	push_wc(icq, (uintptr_t)&ctx, IBV_WC_BIND_MW);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op_status, IBV_WC_GENERAL_ERR);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_WARNING) > warnings);
}

static void get__flush_error_status(void **state)
{
	(void)state;
	int ctx = 0;
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	struct ibv_wc wc =
	    fx_wc(last_posted_wr_id(), (enum ibv_wc_opcode)0x5f, IBV_WC_WR_FLUSH_ERR);
	fake_verbs_push_wc(icq, &wc);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op_status, IBV_WC_WR_FLUSH_ERR);
	/* an unsignaled flush that failed is still a flush */
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_int_equal(c.byte_len, 0);

	/* and through the 1.x call, the read that librpma 1.x carried it with */
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	wc = fx_wc(last_posted_wr_id(), (enum ibv_wc_opcode)0x5f, IBV_WC_REM_ACCESS_ERR);
	fake_verbs_push_wc(icq, &wc);
	/* siw completes a failed read twice: once is what the application sees */
	fake_verbs_push_wc(icq, &wc);
	struct ibv_wc out[2];
	int n = 0;
	assert_int_equal(rpma_cq_get_wc(cq, 2, out, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0].wr_id, (uintptr_t)&ctx);
	assert_int_equal(out[0].opcode, IBV_WC_RDMA_READ);
	assert_int_equal(out[0].status, IBV_WC_REM_ACCESS_ERR);
}

static void get__fifo_and_gone(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	push_wc(icq, 2, IBV_WC_RDMA_WRITE);
	push_wc(icq, 3, IBV_WC_SEND);
	struct rpma_completion c = poisoned();
	for (uintptr_t i = 1; i <= 3; i++) {
		assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
		assert_ptr_equal(c.op_context, (void *)i);
		assert_int_equal(fake_verbs_wcs_queued(icq), 3 - i);
	}
	assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
}

static void get__empty(void **state)
{
	(void)state;
	struct rpma_completion c = poisoned(), p = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
	assert_memory_equal(&c, &p, sizeof(c));
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), 1);
	assert_int_equal(fake_verbs_calls(FAKE_GET_CQ_EVENT), 0);
}

static void get__poll_fails(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EFAULT);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_PROVIDER);
	/* ibv_poll_cq() sets no errno: the provider error is what it returned */
	assert_int_equal(rpma_err_get_provider_error(), -EFAULT);
	assert_non_null(strstr(fx_log_last(), "ibv_poll_cq"));
	assert_non_null(strstr(fx_log_last(), "returned -14"));
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, (void *)1);
}

/*
 * A provider that fails with -1, errno untouched (0 here): the failure is
 * reported as such, not as an errno made up from -1 (EPERM).
 */
static void get__poll_fails_without_errno(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	fake_verbs_fail(FAKE_POLL_CQ, 1, 0);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), -1);
	assert_non_null(strstr(fx_log_last(), "ibv_poll_cq"));
	assert_non_null(strstr(fx_log_last(), "returned -1"));
	assert_null(strstr(fx_log_last(), "not permitted"));
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
}

static void get__rcq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rdma_cm_id *rid = NULL;
	struct rpma_conn *c2 = fx_conn_active(cfg, &rid);
	struct rpma_cq *rcq = NULL, *main_cq = NULL;
	assert_int_equal(rpma_conn_get_rcq(c2, &rcq), 0);
	assert_int_equal(rpma_conn_get_cq(c2, &main_cq), 0);
	push_wc(rid->qp->recv_cq, 44, IBV_WC_RECV);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_get_completion(main_cq, &c), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_get_completion(rcq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_RECV);
	assert_ptr_equal(c.op_context, (void *)44);
	fx_conn_delete(&c2);
	fx_cfg_delete(&cfg);
}

/* rpma_cq_get_completions */

static void get_many__null_cq(void **state)
{
	(void)state;
	struct rpma_completion c[2];
	FX_INVAL(rpma_cq_get_completions(NULL, c, 2));
}

static void get_many__null_cmpls(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_get_completions(cq, NULL, 2));
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void get_many__bad_max(void **state)
{
	(void)state;
	struct rpma_completion c[2];
	push_wc(icq, 1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_get_completions(cq, c, 0));
	FX_INVAL(rpma_cq_get_completions(cq, c, -5));
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void get_many__fewer_than_asked(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	push_wc(icq, 2, IBV_WC_RDMA_WRITE);
	push_wc(icq, 3, IBV_WC_RECV);
	struct rpma_completion c[8];
	assert_int_equal(rpma_cq_get_completions(cq, c, 8), 3);
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), 1);
	assert_ptr_equal(c[0].op_context, (void *)1);
	assert_int_equal(c[0].op, RPMA_OP_SEND);
	assert_ptr_equal(c[1].op_context, (void *)2);
	assert_int_equal(c[1].op, RPMA_OP_WRITE);
	assert_ptr_equal(c[2].op_context, (void *)3);
	assert_int_equal(c[2].op, RPMA_OP_RECV);
	assert_int_equal(fake_verbs_wcs_queued(icq), 0);
}

static void get_many__exactly_max(void **state)
{
	(void)state;
	for (uintptr_t i = 1; i <= 5; i++)
		push_wc(icq, i, IBV_WC_SEND);
	struct rpma_completion c[3];
	memset(c, 0, sizeof(c));
	assert_int_equal(rpma_cq_get_completions(cq, c, 2), 2);
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), 1);
	assert_ptr_equal(c[0].op_context, (void *)1);
	assert_ptr_equal(c[1].op_context, (void *)2);
	assert_null(c[2].op_context); /* not written past max_cmpls */
	assert_int_equal(fake_verbs_wcs_queued(icq), 3);
	assert_int_equal(rpma_cq_get_completions(cq, c, 3), 3);
	assert_ptr_equal(c[2].op_context, (void *)5);
}

static void get_many__empty(void **state)
{
	(void)state;
	struct rpma_completion c[4];
	assert_int_equal(rpma_cq_get_completions(cq, c, 4), 0);
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), 1);
}

static void get_many__poll_fails(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	struct rpma_completion c[4];
	assert_int_equal(rpma_cq_get_completions(cq, c, 4), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), -EIO);
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void get_many__translated(void **state)
{
	(void)state;
	int rctx = 0, fctx = 0;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, f, &rctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, &fctx), 0);
	push_wc(icq, last_posted_wr_id(), IBV_WC_RDMA_READ);
	struct ibv_wc wc = fx_wc(3, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS);
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(99);
	fake_verbs_push_wc(icq, &wc);
	struct ibv_wc bad = fx_wc(4, IBV_WC_SEND, IBV_WC_RETRY_EXC_ERR);
	fake_verbs_push_wc(icq, &bad);

	struct rpma_completion c[4];
	assert_int_equal(rpma_cq_get_completions(cq, c, 4), 4);
	assert_int_equal(c[0].op, RPMA_OP_READ);
	assert_ptr_equal(c[0].op_context, &rctx);
	assert_int_equal(c[1].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[1].op_context, &fctx);
	assert_int_equal(c[2].op, RPMA_OP_RECV_RDMA_WITH_IMM);
	assert_int_equal(c[2].imm, 99);
	assert_int_equal(c[3].op_status, IBV_WC_RETRY_EXC_ERR);
	assert_ptr_equal(c[3].op_context, (void *)4);
}

static void get_many__more_than_a_batch(void **state)
{
	(void)state;
	enum { N = 100 };
	for (uintptr_t i = 1; i <= N; i++)
		push_wc(icq, i, IBV_WC_SEND);
	struct rpma_completion c[N];
	assert_int_equal(rpma_cq_get_completions(cq, c, N), N);
	for (uintptr_t i = 1; i <= N; i++)
		assert_ptr_equal(c[i - 1].op_context, (void *)i);
	assert_int_equal(fake_verbs_wcs_queued(icq), 0);
	assert_int_equal(rpma_cq_get_completions(cq, c, N), 0);
}

/* rpma_cq_wait_completion */

static void wait__null_cq(void **state)
{
	(void)state;
	struct rpma_completion c;
	FX_INVAL(rpma_cq_wait_completion(NULL, &c, 0));
}

static void wait__null_cmpl(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_wait_completion(cq, NULL, 0));
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void wait__queued_no_wait(void **state)
{
	(void)state;
	push_wc(icq, 77, IBV_WC_RDMA_WRITE);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_wait_completion(cq, &c, -1), 0);
	assert_ptr_equal(c.op_context, (void *)77);
	assert_int_equal(c.op, RPMA_OP_WRITE);
	assert_int_equal(fake_verbs_calls(FAKE_GET_CQ_EVENT), 0);
}

static long long elapsed_ms(const struct timespec *from)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - from->tv_sec) * 1000LL + (now.tv_nsec - from->tv_nsec) / 1000000;
}

static void wait__timeout(void **state)
{
	(void)state;
	struct rpma_completion c = poisoned(), p = poisoned();
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	assert_int_equal(rpma_cq_wait_completion(cq, &c, 100), RPMA_E_NO_COMPLETION);
	long long took = elapsed_ms(&start);
	assert_true(took >= 90);
	assert_true(took < 5000);
	assert_memory_equal(&c, &p, sizeof(c));
}

static void wait__zero_timeout(void **state)
{
	(void)state;
	struct rpma_completion c = poisoned();
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	assert_int_equal(rpma_cq_wait_completion(cq, &c, 0), RPMA_E_NO_COMPLETION);
	assert_true(elapsed_ms(&start) < 1000);
}

static void wait__spurious_wakeup(void **state)
{
	(void)state;
	/* an event with nothing in the CQ: acknowledged, re-armed, waited on */
	fake_verbs_push_cq_event(icq->channel, icq);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_wait_completion(cq, &c, 50), RPMA_E_NO_COMPLETION);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
	assert_true(fake_verbs_cq_armed(icq));
	assert_int_equal(fake_verbs_cq_events_queued(icq->channel), 0);
}

static void wait__event_then_completion(void **state)
{
	(void)state;
	/* the completion arrives with its event */
	push_wc(icq, 5, IBV_WC_SEND);
	fake_verbs_push_cq_event(icq->channel, icq);
	struct rpma_completion c = poisoned();
	assert_int_equal(rpma_cq_wait_completion(cq, &c, 1000), 0);
	assert_ptr_equal(c.op_context, (void *)5);
	assert_int_equal(c.op, RPMA_OP_SEND);
	/* the event is still pending: it was not needed */
	assert_int_equal(fake_verbs_cq_events_queued(icq->channel), 1);
	/* and a later wait consumes it as a spurious wake-up */
	assert_int_equal(rpma_cq_wait_completion(cq, &c, 20), RPMA_E_NO_COMPLETION);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
}

struct waiter {
	int timeout_ms;
	int ret;
	struct rpma_completion cmpl;
};

static void *waiter_run(void *arg)
{
	struct waiter *w = arg;
	w->ret = rpma_cq_wait_completion(cq, &w->cmpl, w->timeout_ms);
	return NULL;
}

/* Starts a waiter, lets it block, then delivers one completion and its event. */
static void deliver_while_waiting(struct waiter *w, uint64_t wr_id)
{
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, waiter_run, w), 0);
	/* let the waiter find the CQ empty and block on the channel */
	for (int i = 0; i < 100 && fake_verbs_calls(FAKE_POLL_CQ) < 1; i++)
		usleep(1000);
	usleep(100000);
	push_wc(icq, wr_id, IBV_WC_RDMA_WRITE);
	fake_verbs_push_cq_event(icq->channel, icq);
	assert_int_equal(pthread_join(t, NULL), 0);
}

static void wait__blocks_until_completion(void **state)
{
	(void)state;
	struct waiter w = { .timeout_ms = -1, .ret = 12345 };
	deliver_while_waiting(&w, 0xbeef);
	assert_int_equal(w.ret, 0);
	assert_ptr_equal(w.cmpl.op_context, (void *)0xbeef);
	assert_int_equal(w.cmpl.op, RPMA_OP_WRITE);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
	assert_true(fake_verbs_cq_armed(icq));
}

static void wait__spurious_then_completion(void **state)
{
	(void)state;
	fake_verbs_push_cq_event(icq->channel, icq);
	struct waiter w = { .timeout_ms = 5000, .ret = 12345 };
	deliver_while_waiting(&w, 0xf00d);
	assert_int_equal(w.ret, 0);
	assert_ptr_equal(w.cmpl.op_context, (void *)0xf00d);
	assert_int_equal(fake_verbs_cq_acks(icq), 2);
}

static void wait__shared_channel(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *sid = NULL;
	struct rpma_conn *shared = fx_conn_active(cfg, &sid);
	struct rpma_cq *scq = NULL;
	assert_int_equal(rpma_conn_get_cq(shared, &scq), 0);
	struct rpma_completion c;
	FX_REFUSED(RPMA_E_SHARED_CHANNEL, rpma_cq_wait_completion(scq, &c, 0));
	fx_conn_delete(&shared);
	fx_cfg_delete(&cfg);
}

static void wait__poll_fails(void **state)
{
	(void)state;
	push_wc(icq, 1, IBV_WC_SEND);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	struct rpma_completion c;
	assert_int_equal(rpma_cq_wait_completion(cq, &c, 100), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), -EIO);
}

static void wait__rearm_fails(void **state)
{
	(void)state;
	fake_verbs_push_cq_event(icq->channel, icq);
	fake_verbs_fail(FAKE_REQ_NOTIFY_CQ, 1, EIO);
	struct rpma_completion c;
	int ret = rpma_cq_wait_completion(cq, &c, 50);
	assert_int_equal(ret, RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, cmpl_setup, cmpl_teardown)
		T(get__null_cq),
		T(get__null_cmpl),
		T(get__read),
		T(get__write),
		T(get__send),
		T(get__recv),
		T(get__recv_rdma_with_imm),
		T(get__atomic_write),
		T(get__emulated_atomic_write),
		T(get__flush),
		T(get__flush_persistent),
		T(get__read_then_flush),
		T(get__flush_then_read),
		T(get__unsignaled_flush_then_read),
		T(get__failed_post_is_forgotten),
		T(get__mixed_apis_stay_in_step),
		T(get__concurrent_posters_keep_kinds),
		T(get__concurrent_posters_and_pollers),
		T(get__read_with_odd_context),
		T(get__imm_host_order),
		T(get__recv_rdma_with_imm_value),
		T(get__recv_byte_len),
		T(get__error_status),
		T(get__unexpected_opcode),
		T(get__flush_error_status),
		T(get__fifo_and_gone),
		T(get__empty),
		T(get__poll_fails),
		T(get__poll_fails_without_errno),
		T(get__rcq),
		T(get_many__null_cq),
		T(get_many__null_cmpls),
		T(get_many__bad_max),
		T(get_many__fewer_than_asked),
		T(get_many__exactly_max),
		T(get_many__empty),
		T(get_many__poll_fails),
		T(get_many__translated),
		T(get_many__more_than_a_batch),
		T(wait__null_cq),
		T(wait__null_cmpl),
		T(wait__queued_no_wait),
		T(wait__timeout),
		T(wait__zero_timeout),
		T(wait__spurious_wakeup),
		T(wait__event_then_completion),
		T(wait__blocks_until_completion),
		T(wait__spurious_then_completion),
		T(wait__shared_channel),
		T(wait__poll_fails),
		T(wait__rearm_fails),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("completion", tests, NULL, NULL);
}
