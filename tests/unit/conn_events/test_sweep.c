/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sweep.c -- what the library completes itself when a connection's
 * peer is gone: exactly the signaled flushes still in flight, every one of
 * them wherever its slot is, and only once the device has had its drain
 * time; never a flush that was refused or not posted, which holds nothing
 *
 * (A flush that was never posted but kept its slot would be completed by
 * the sweep as if it had been.)
 */

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

#define RADDR 0x7f0000300000ULL
#define RLEN  65536
#define RKEY  0x5eedU
#define LLEN  4096

/* a wait that has nothing to wait for any more ends well before this */
#define WAIT_LIMIT_MS 5000
/* well within the library's drain time (250 ms), and far longer than the calls take */
#define WITHIN_DRAIN_MS 100

static char lbuf[LLEN];

static struct rpma_conn *conn;
static struct rdma_cm_id *id;
static struct rpma_cq *cq;
static struct rpma_mr_local *mr;
static struct rpma_mr_remote *rmr;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int sweep_setup(void **state)
{
	fx_setup(state);
	conn = fx_conn_active(NULL, &id);
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	mr = fx_mr(lbuf, LLEN, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_RECV);
	rmr = fx_mr_remote(RADDR, RLEN, RKEY,
			   RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			       RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	return 0;
}

static int sweep_teardown(void **state)
{
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

static int flush(const void *op_context)
{
	return rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			  op_context);
}

static struct rpma_batch_op write_op(size_t remote_offset, size_t len)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_WRITE;
	op.flags = RPMA_F_COMPLETION_ON_ERROR;
	op.local = mr;
	op.remote = rmr;
	op.remote_offset = remote_offset;
	op.len = len;
	return op;
}

static struct rpma_batch_op flush_op(const void *op_context)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_FLUSH;
	op.flags = RPMA_F_COMPLETION_ALWAYS;
	op.op_context = op_context;
	op.remote = rmr;
	op.len = 64;
	op.flush_type = RPMA_FLUSH_TYPE_VISIBILITY;
	return op;
}

/* the peer goes; the connection learns it and its event is the application's */
static void peer_gone(void)
{
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	bool up = true;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);
}

static void expect_closed(void)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_CLOSED);
}

/* the device completes the flush posted as send number index, with status */
static void device_completes(unsigned index, enum ibv_wc_status status)
{
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = fake_verbs_send(index)->wr.wr_id;
	wc.status = status;
	wc.opcode = IBV_WC_RDMA_READ;
	wc.qp_num = id->qp->qp_num;
	fake_verbs_push_wc(id->qp->send_cq, &wc);
}

/* the wait of a connection whose peer is gone ends, with nothing more */
static void expect_nothing_more(void)
{
	const long long start = now_ms();
	struct rpma_completion cmpl;
	memset(&cmpl, 0, sizeof(cmpl));
	int ret = rpma_cq_wait_completion(cq, &cmpl, -1);
	if (ret == 0)
		fail_msg("a completion nothing was posted for: op %d, status %d, op_context %p",
			 (int)cmpl.op, (int)cmpl.op_status, cmpl.op_context);
	assert_int_equal(ret, RPMA_E_NO_COMPLETION);
	assert_true(now_ms() - start < WAIT_LIMIT_MS);
}

/*
 * Every slot a connection has is in flight when its peer goes: each flush
 * is completed once, with IBV_WC_WR_FLUSH_ERR, the last slot's as well
 */
static void every_slot_swept(void **state)
{
	(void)state;
	static int ctx[1024];
	int n = 0;
	for (;;) {
		assert_true(n < 1024);
		int ret = flush(&ctx[n]);
		if (ret == RPMA_E_NOMEM)
			break; /* every slot is in flight */
		assert_int_equal(ret, 0);
		n++;
	}
	assert_true(n > 1);
	peer_gone();

	static bool seen[1024];
	memset(seen, 0, sizeof(seen));
	struct rpma_completion cmpl;
	for (int i = 0; i < n; i++) {
		assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), 0);
		assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
		assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
		int k = (int)((int *)cmpl.op_context - ctx);
		assert_true(k >= 0 && k < n);
		assert_false(seen[k]);
		seen[k] = true;
	}
	expect_nothing_more();
	expect_closed();
}

/*
 * Right after the peer went, the device may still flush what is posted:
 * the library completes nothing itself until the drain time is over, and
 * what the device completes meanwhile comes as the device said
 */
static void drain_time_first(void **state)
{
	(void)state;
	static int a, b;
	assert_int_equal(flush(&a), 0);
	assert_int_equal(flush(&b), 0);
	const unsigned first = fake_verbs_sends() - 2;

	const long long down = now_ms();
	peer_gone();
	struct rpma_completion cmpl;
	int ret = rpma_cq_get_completion(cq, &cmpl);
	if (now_ms() - down < WITHIN_DRAIN_MS) {
		/* (a test held up longer than the drain time cannot tell) */
		if (ret == 0)
			fail_msg("completed %s right after the peer went, before the device had "
				 "its drain time",
				 cmpl.op_context == &a ? "a" : "b");
		assert_int_equal(ret, RPMA_E_NO_COMPLETION);
	}

	/* the device flushes the first one in the error state: its completion */
	device_completes(first, IBV_WC_WR_FLUSH_ERR);
	if (ret == RPMA_E_NO_COMPLETION) {
		assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
		assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
		assert_ptr_equal(cmpl.op_context, &a);
		assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
	}

	/* the second one the device never completes: the library does, once */
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), 0);
	assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
	assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
	if (ret == RPMA_E_NO_COMPLETION)
		assert_ptr_equal(cmpl.op_context, &b);
	expect_nothing_more();
	expect_closed();
}

/* a batch element is refused: the flushes before it hold nothing */
static void refused_batch_holds_nothing(void **state)
{
	(void)state;
	static int ctx[4];
	struct rpma_batch_op ops[5] = { flush_op(&ctx[0]), write_op(0, 64), flush_op(&ctx[1]),
					flush_op(&ctx[2]), write_op(RLEN - 8, 64) };
	int failed = -1;
	assert_int_equal(rpma_post_batch(conn, ops, 5, &failed), RPMA_E_INVAL);
	assert_int_equal(failed, 4);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
	peer_gone();
	expect_nothing_more();
	expect_closed();
}

/* the provider posts a batch in part: the flushes it did not post hold nothing */
static void unposted_batch_elements_hold_nothing(void **state)
{
	(void)state;
	static int ctx[4];
	struct rpma_batch_op ops[5] = { write_op(0, 64), flush_op(&ctx[0]), write_op(64, 64),
					flush_op(&ctx[1]), flush_op(&ctx[2]) };
	fake_verbs_fail_send_at(2, ENOSPC);
	int failed = -1;
	assert_int_equal(rpma_post_batch(conn, ops, 5, &failed), RPMA_E_PROVIDER);
	assert_int_equal(failed, 2);
	assert_int_equal(fake_verbs_sends(), 2);

	/* the posted flush completes as itself */
	device_completes(1, IBV_WC_SUCCESS);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
	assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
	assert_ptr_equal(cmpl.op_context, &ctx[0]);
	assert_int_equal(cmpl.op_status, IBV_WC_SUCCESS);

	peer_gone();
	expect_nothing_more();
	expect_closed();
}

/* a flush whose post failed holds nothing either */
static void failed_flush_holds_nothing(void **state)
{
	(void)state;
	static int ctx;
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	assert_int_equal(flush(&ctx), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	peer_gone();
	expect_nothing_more();
	expect_closed();
}

/*
 * A provider that fails a post with -1 and no errno: the application is
 * told EIO, never EPERM (1), whichever call posted
 */
static void post_minus_one_is_eio(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, 0);
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, NULL),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);

	struct rpma_batch_op ops[2] = { write_op(0, 64), flush_op(NULL) };
	fake_verbs_fail(FAKE_POST_SEND, 1, 0);
	assert_int_equal(rpma_post_batch(conn, ops, 2, NULL), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);

	fake_verbs_fail(FAKE_POST_RECV, 1, 0);
	assert_int_equal(rpma_recv(conn, mr, 0, 64, NULL), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	assert_int_equal(fake_verbs_sends(), 0);
}

/* rpma_cq_get_wc of up to per_take completions: 0 and what it took, or its error */
static int take(int per_take, struct ibv_wc *wc, int *got)
{
	*got = 1;
	return rpma_cq_get_wc(cq, per_take, wc, per_take > 1 ? got : NULL);
}

static void sweep_after_failed_completion(int per_take)
{
	static int a, b, c;
	struct rpma_batch_op ops[2] = { write_op(0, 64), flush_op(&a) };
	assert_int_equal(rpma_post_batch(conn, ops, 2, 0), 0);
	assert_int_equal(flush(&b), 0);
	assert_int_equal(flush(&c), 0);
	const unsigned write_index = fake_verbs_sends() - 4;

	/* the write fails, as operations of the application complete */
	struct ibv_wc failed;
	memset(&failed, 0, sizeof(failed));
	failed.wr_id = fake_verbs_send(write_index)->wr.wr_id;
	failed.status = IBV_WC_RETRY_EXC_ERR;
	failed.qp_num = id->qp->qp_num;
	const long long at = now_ms();
	fake_verbs_push_wc(id->qp->send_cq, &failed);
	/* the device flushes the first flush; the other two it never completes */
	device_completes(write_index + 1, IBV_WC_WR_FLUSH_ERR);

	/* the write's failure and a's flush, in one take or in two */
	struct ibv_wc wc[4];
	int got = 0, seen = 0;
	while (seen < 2) {
		assert_int_equal(take(per_take, wc, &got), 0);
		for (int i = 0; i < got; i++, seen++) {
			if (seen == 0) {
				assert_int_equal(wc[i].status, IBV_WC_RETRY_EXC_ERR);
				assert_int_equal(wc[i].wr_id, 0);
			} else {
				assert_int_equal(wc[i].status, IBV_WC_WR_FLUSH_ERR);
				assert_ptr_equal((void *)(uintptr_t)wc[i].wr_id, &a);
			}
		}
	}
	assert_int_equal(seen, 2);
	int ret = take(per_take, wc, &got);
	if (now_ms() - at < WITHIN_DRAIN_MS)
		assert_int_equal(ret, RPMA_E_NO_COMPLETION);

	/* polling on, never reading an event: b and c come back, once each */
	bool seen_b = false, seen_c = false;
	const long long limit = now_ms() + WAIT_LIMIT_MS;
	while (!seen_b || !seen_c) {
		ret = take(per_take, wc, &got);
		if (ret == RPMA_E_NO_COMPLETION) {
			assert_true(now_ms() < limit);
			continue;
		}
		assert_int_equal(ret, 0);
		for (int i = 0; i < got; i++) {
			assert_int_equal(wc[i].status, IBV_WC_WR_FLUSH_ERR);
			assert_int_equal(wc[i].opcode, IBV_WC_RDMA_READ);
			if (wc[i].wr_id == (uintptr_t)&b) {
				assert_false(seen_b);
				seen_b = true;
			} else {
				assert_ptr_equal((void *)(uintptr_t)wc[i].wr_id, &c);
				assert_false(seen_c);
				seen_c = true;
			}
		}
	}
	assert_true(now_ms() - at >= 250);
	assert_int_equal(take(1, wc, &got), RPMA_E_NO_COMPLETION);
	/* and through the general path too */
	assert_int_equal(take(4, wc, &got), RPMA_E_NO_COMPLETION);
}

/*
 * A program written for librpma 1.x that only polls rpma_cq_get_wc reads no
 * connection event, and a peer that vanished sends none. The transport
 * gives up on the oldest operation (IBV_WC_RETRY_EXC_ERR) and the queue
 * pair enters the error state, where some devices (siw) leave the rest
 * posted for good: after the drain time, counted from that failed
 * completion, the polls complete each flush still in flight, once.
 */
static void polls_sweep_after_failed_completion(void **state)
{
	(void)state;
	sweep_after_failed_completion(1);
}

/* the same, for a program that takes several completions at a time */
static void polls_of_several_sweep_after_failed_completion(void **state)
{
	(void)state;
	sweep_after_failed_completion(4);
}

/*
 * The slots are handed out round robin: once the table has wrapped, the
 * flushes in flight sit at its end and at its start. The sweep completes
 * them in post order all the same, as the send queue would have.
 */
static void swept_in_post_order_after_wrap(void **state)
{
	(void)state;
	static int done, ctx[4];
	/* find the table's size: every slot in flight, then all of them completed */
	int slots = 0;
	for (;; slots++) {
		assert_true(slots < 1024);
		int ret = flush(&done);
		if (ret == RPMA_E_NOMEM)
			break;
		assert_int_equal(ret, 0);
	}
	const unsigned first = fake_verbs_sends() - (unsigned)slots;
	struct rpma_completion cmpl;
	for (int i = 0; i < slots; i++) {
		device_completes(first + (unsigned)i, IBV_WC_SUCCESS);
		assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
	}
	/* two more, so that the next four are the last two slots and the first two */
	for (int i = 0; i < slots - 2; i++) {
		assert_int_equal(flush(&done), 0);
		device_completes(fake_verbs_sends() - 1, IBV_WC_SUCCESS);
		assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(flush(&ctx[i]), 0);
	peer_gone();
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), 0);
		assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
		assert_ptr_equal(cmpl.op_context, &ctx[i]);
	}
	expect_nothing_more();
	expect_closed();
}

/* rpma_cq_wait in a thread of its own, so that a test can tell it blocks */
static int waited;
static int wait_done;

static void *wait_run(void *arg)
{
	(void)arg;
	waited = rpma_cq_wait(cq);
	__atomic_store_n(&wait_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The same peer gone, for a program that sleeps in rpma_cq_wait: no
 * connection event comes, and the device sends no completion of what its
 * queue pair holds in the error state. The wait ends at the failure's
 * drain time, and the take after it completes the flush still in flight.
 */
static void wait_ends_after_failed_completion(void **state)
{
	(void)state;
	static int a;
	struct rpma_batch_op ops[2] = { write_op(0, 64), flush_op(&a) };
	assert_int_equal(rpma_post_batch(conn, ops, 2, 0), 0);
	const unsigned write_index = fake_verbs_sends() - 2;
	struct ibv_wc failed;
	memset(&failed, 0, sizeof(failed));
	failed.wr_id = fake_verbs_send(write_index)->wr.wr_id;
	failed.status = IBV_WC_RETRY_EXC_ERR;
	failed.qp_num = id->qp->qp_num;
	const long long at = now_ms();
	fake_verbs_push_wc(id->qp->send_cq, &failed);
	fake_verbs_push_cq_event(id->qp->send_cq->channel, id->qp->send_cq);
	assert_int_equal(rpma_cq_wait(cq), 0);
	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.status, IBV_WC_RETRY_EXC_ERR);

	pthread_t t;
	wait_done = 0;
	assert_int_equal(pthread_create(&t, NULL, wait_run, NULL), 0);
	while (!__atomic_load_n(&wait_done, __ATOMIC_ACQUIRE) && now_ms() - at < 2000) {
		struct timespec ts = { 0, 2000000L };
		nanosleep(&ts, NULL);
	}
	const bool blocked = !__atomic_load_n(&wait_done, __ATOMIC_ACQUIRE);
	if (blocked)
		fake_verbs_push_cq_event(id->qp->send_cq->channel, id->qp->send_cq);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (blocked)
		fail_msg("rpma_cq_wait still blocked 2 s after the failed completion");
	assert_int_equal(waited, 0);
	assert_true(now_ms() - at >= 250);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.status, IBV_WC_WR_FLUSH_ERR);
	assert_ptr_equal((void *)(uintptr_t)wc.wr_id, &a);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), RPMA_E_NO_COMPLETION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, sweep_setup, sweep_teardown)
		T(every_slot_swept),
		T(drain_time_first),
		T(refused_batch_holds_nothing),
		T(unposted_batch_elements_hold_nothing),
		T(failed_flush_holds_nothing),
		T(post_minus_one_is_eio),
		T(polls_sweep_after_failed_completion),
		T(polls_of_several_sweep_after_failed_completion),
		T(wait_ends_after_failed_completion),
		T(swept_in_post_order_after_wrap),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("sweep", tests, NULL, NULL);
}
