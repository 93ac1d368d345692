/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_dead_peer.c -- a connection whose peer is gone: waits for completions
 * end, the QP goes to the error state, rpma_conn_is_up() says so, and the
 * events the library took on the way still reach rpma_conn_next_event()
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>

#include "fake_extra.h"
#include "fixture.h"

static long long elapsed_ms(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000LL + (now.tv_nsec - since->tv_nsec) / 1000000;
}

static void expect_next_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, expected);
}

/* rpma_conn_is_up */

static void is_up__null_conn(void **state)
{
	(void)state;
	bool up = true;
	FX_INVAL(rpma_conn_is_up(NULL, &up));
	assert_true(up);
}

static void is_up__null_is_up(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_is_up(conn, NULL));
	fx_conn_delete(&conn);
}

static void is_up__live(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	bool up = false;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_true(up);
	assert_false(fake_verbs_qp_in_error(id->qp));
	assert_int_equal(fake_verbs_calls(FAKE_MODIFY_QP_TO_ERROR), 0);
	fx_conn_delete(&conn);
}

static void check_down_after(enum rdma_cm_event_type type, enum rpma_conn_event expected)
{
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	int fd = -1;
	assert_int_equal(rpma_conn_get_event_fd(conn, &fd), 0);
	fake_verbs_push_cm_event(fx_conn_channel(id), type, id, NULL, 0);

	bool up = true;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);
	/* everything still posted completes, flushed */
	assert_true(fake_verbs_qp_in_error(id->qp));

	/* the event was taken, not lost: the fd still says so, and it comes next */
	assert_true(fx_fd_readable(fd));
	expect_next_event(conn, expected);
	assert_false(fx_fd_readable(fd));

	/* down for good, and the QP is moved once */
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);
	assert_int_equal(fake_verbs_calls(FAKE_MODIFY_QP_TO_ERROR), 1);
	fx_conn_delete(&conn);
}

static void is_up__disconnected(void **state)
{
	(void)state;
	check_down_after(RDMA_CM_EVENT_DISCONNECTED, RPMA_CONN_CLOSED);
}

static void is_up__device_removal(void **state)
{
	(void)state;
	check_down_after(RDMA_CM_EVENT_DEVICE_REMOVAL, RPMA_CONN_LOST);
}

static void is_up__connect_error(void **state)
{
	(void)state;
	check_down_after(RDMA_CM_EVENT_CONNECT_ERROR, RPMA_CONN_LOST);
}

/* a peer that cannot be reached any more (no answer to the path's probes) */
static void is_up__unreachable(void **state)
{
	(void)state;
	check_down_after(RDMA_CM_EVENT_UNREACHABLE, RPMA_CONN_UNREACHABLE);
}

static void is_up__rejected(void **state)
{
	(void)state;
	check_down_after(RDMA_CM_EVENT_REJECTED, RPMA_CONN_REJECTED);
}

static void is_up__established_keeps_private_data(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	static const char answer[] = "the server's words";
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_ESTABLISHED, id, answer,
				 sizeof(answer));
	bool up = false;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_true(up);
	assert_false(fake_verbs_qp_in_error(id->qp));

	expect_next_event(conn, RPMA_CONN_ESTABLISHED);
	struct rpma_conn_private_data pdata;
	assert_int_equal(rpma_conn_get_private_data(conn, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(answer));
	assert_memory_equal(pdata.ptr, answer, sizeof(answer));
	fx_conn_delete(&conn);
}

static void rejected__keeps_the_servers_answer(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	static const char answer[] = "not yet: prove it";
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_REJECTED, id, answer,
				 sizeof(answer));
	expect_next_event(conn, RPMA_CONN_REJECTED);
	struct rpma_conn_private_data pdata;
	assert_int_equal(rpma_conn_get_private_data(conn, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(answer));
	assert_memory_equal(pdata.ptr, answer, sizeof(answer));
	bool up = true;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);
	fx_conn_delete(&conn);
}

static void rejected__keeps_the_clients_request(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	static const char request[] = "the client's words";
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, NULL, request, sizeof(request), &id);
	/* a reject that reaches the passive side does not replace what the client sent */
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_REJECTED, id, "other", 6);
	expect_next_event(conn, RPMA_CONN_REJECTED);
	struct rpma_conn_private_data pdata;
	assert_int_equal(rpma_conn_get_private_data(conn, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(request));
	assert_memory_equal(pdata.ptr, request, sizeof(request));
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

static void is_up__events_keep_their_order(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rdma_event_channel *ch = fx_conn_channel(id);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ADDR_CHANGE, id, NULL, 0);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	bool up = true;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);

	expect_next_event(conn, RPMA_CONN_ESTABLISHED);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	/* an event of no meaning here is reported as rpma_conn_next_event() always did */
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_UNKNOWN);
	expect_next_event(conn, RPMA_CONN_CLOSED);
	/* the fake's channel never blocks: nothing left is RPMA_E_NO_EVENT */
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);
	fx_conn_delete(&conn);
}

/*
 * Events taken after one was read go behind those still held: the stash
 * is a ring, and its reader has moved on from the start of it
 */
static void is_up__stash_keeps_order_after_a_read(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rdma_event_channel *ch = fx_conn_channel(id);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ADDR_CHANGE, id, NULL, 0);
	bool up = false;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_true(up);
	expect_next_event(conn, RPMA_CONN_ESTABLISHED);

	/* one held, one more taken */
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_UNKNOWN);
	expect_next_event(conn, RPMA_CONN_CLOSED);
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);
	fx_conn_delete(&conn);
}

static void is_up__error_state_fails(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	fake_verbs_fail(FAKE_MODIFY_QP_TO_ERROR, 1, EIO);
	bool up = true;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	/* the connection is down all the same; the failure is logged with its errno */
	assert_false(up);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	assert_false(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

/* the next event read by the application itself brings the connection down too */
static void next_event__closed_brings_down(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	expect_next_event(conn, RPMA_CONN_CLOSED);
	assert_true(fake_verbs_qp_in_error(id->qp));
	bool up = true;
	assert_int_equal(rpma_conn_is_up(conn, &up), 0);
	assert_false(up);
	fx_conn_delete(&conn);
}

/* the event fd handed out decides whether rpma_conn_next_event() blocks */
static void next_event__nonblocking_fd(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	int fd = -1;
	assert_int_equal(rpma_conn_get_event_fd(conn, &fd), 0);
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, EAGAIN);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);
	assert_int_equal(rpma_err_get_provider_error(), EAGAIN);
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
	fx_conn_delete(&conn);
}

/* rpma_cq_wait_completion */

static void wait_completion__peer_gone_nothing_outstanding(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);

	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct rpma_completion cmpl;
	/* no time limit, and still it ends: nothing more can complete */
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), RPMA_E_NO_COMPLETION);
	assert_true(elapsed_ms(&start) < 5000);
	assert_true(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

static void wait_completion__flushed_work_first(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	struct rpma_completion cmpl;
	/* the wait sees the peer go; then the device flushes what was posted */
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), RPMA_E_NO_COMPLETION);
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = 0x1234;
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.opcode = IBV_WC_RDMA_WRITE;
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	fake_verbs_push_cq_event(id->qp->send_cq->channel, id->qp->send_cq);
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), 0);
	assert_ptr_equal(cmpl.op_context, (void *)0x1234);
	assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

/*
 * Flushes the device never completes (siw leaves work posted in the error
 * state where it is): once the connection is down and drained, the library
 * completes them itself, each once, and later completions of them are dropped
 */
static void wait_completion__orphaned_flushes(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_mr_remote *rmr = fx_mr_remote(
	    0x10000, 4096, 0x77, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	static int ctx[3];
	for (int i = 0; i < 3; i++)
		assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
					    RPMA_F_COMPLETION_ALWAYS, &ctx[i]),
				 0);
	/* the device completes the first flush only */
	const struct fake_send_record *first = fake_verbs_send(fake_verbs_sends() - 3);
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = first->wr.wr_id;
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.qp_num = id->qp->qp_num;
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);

	bool seen[3] = { false, false, false };
	struct rpma_completion cmpl;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), 0);
		assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
		assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
		int k = (int *)cmpl.op_context - ctx;
		assert_true(k >= 0 && k < 3);
		assert_false(seen[k]);
		seen[k] = true;
	}
	/* a late completion of a flush the library completed is dropped */
	const struct fake_send_record *last = fake_verbs_send(fake_verbs_sends() - 1);
	wc.wr_id = last->wr.wr_id;
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), RPMA_E_NO_COMPLETION);

	fx_mr_remote_delete(&rmr);
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

/*
 * The connection's channel was readable, but its event was gone when the
 * wait looked (another thread took it): the wait keeps watching, and
 * learns of the peer's death that comes next, well before its timeout
 */
static void wait_completion__keeps_watching_after_none(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, EAGAIN);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);

	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, 5000), RPMA_E_NO_COMPLETION);
	assert_true(elapsed_ms(&start) < 4000);
	assert_true(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

/*
 * Taking the event failed once: the wait stops watching the connection's
 * channel for a moment rather than spin, then looks again
 */
static void wait_completion__looks_again_after_failure(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, EIO);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);

	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, 5000), RPMA_E_NO_COMPLETION);
	assert_true(elapsed_ms(&start) < 4000);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	/* once it failed, once it took the event: no spinning in between */
	assert_int_equal(fake_verbs_calls(FAKE_GET_CM_EVENT) <= 4, true);
	assert_true(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

/*
 * The flushes the library completed when the connection went down may
 * still be posted: their slots are never handed out again, so that a late
 * completion of one is dropped, not credited to a later flush
 */
static void wait_completion__swept_slots_stay_retired(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_mr_remote *rmr = fx_mr_remote(
	    0x10000, 4096, 0x77, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	static int old_ctx[2], new_ctx;
	uint64_t old_wr_id[2];
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
					    RPMA_F_COMPLETION_ALWAYS, &old_ctx[i]),
				 0);
		old_wr_id[i] = fake_verbs_send(fake_verbs_sends() - 1)->wr.wr_id;
	}
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	struct rpma_completion cmpl;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, -1), 0);
		assert_int_equal(cmpl.op_status, IBV_WC_WR_FLUSH_ERR);
	}

	/* flushes posted after that, each completed, go round every slot there is */
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RDMA_READ;
	wc.qp_num = id->qp->qp_num;
	for (int i = 0; i < 300; i++) {
		assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
					    RPMA_F_COMPLETION_ALWAYS, &new_ctx),
				 0);
		wc.wr_id = fake_verbs_send(fake_verbs_sends() - 1)->wr.wr_id;
		assert_true(wc.wr_id != old_wr_id[0] && wc.wr_id != old_wr_id[1]);
		fake_verbs_push_wc(id->qp->send_cq, &wc);
		assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
		assert_ptr_equal(cmpl.op_context, &new_ctx);
	}
	/* the old flushes' late completions name no flush */
	for (int i = 0; i < 2; i++) {
		wc.wr_id = old_wr_id[i];
		fake_verbs_push_wc(id->qp->send_cq, &wc);
		assert_int_equal(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NO_COMPLETION);
	}
	fx_mr_remote_delete(&rmr);
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

/* a live connection: the wait is the application's timeout, nothing is brought down */
static void wait_completion__live_times_out(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_wait_completion(cq, &cmpl, 50), RPMA_E_NO_COMPLETION);
	assert_false(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_ESTABLISHED);
	fx_conn_delete(&conn);
}

static void wait_completion__rcq_peer_gone(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct rpma_cq *rcq = NULL;
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_non_null(rcq);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_wait_completion(rcq, &cmpl, -1), RPMA_E_NO_COMPLETION);
	assert_true(fake_verbs_qp_in_error(id->qp));
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

/* the librpma 1.x waits, on a blocking channel */

static void make_blocking(int fd)
{
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK), 0);
}

static void cq_wait__peer_gone(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
	make_blocking(fd);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	assert_int_equal(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	assert_true(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

static void cq_wait__event_still_taken(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
	make_blocking(fd);
	fake_verbs_push_cq_event(id->qp->send_cq->channel, id->qp->send_cq);
	assert_int_equal(rpma_cq_wait(cq), 0);
	assert_int_equal(fake_verbs_cq_acks(id->qp->send_cq), 1);
	assert_false(fake_verbs_qp_in_error(id->qp));
	fx_conn_delete(&conn);
}

static void conn_wait__peer_gone(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	int fd = -1;
	assert_int_equal(rpma_conn_get_compl_fd(conn, &fd), 0);
	make_blocking(fd);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	struct rpma_cq *cq = FX_POISON;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, NULL), RPMA_E_NO_COMPLETION);
	assert_null(cq);
	assert_true(fake_verbs_qp_in_error(id->qp));
	expect_next_event(conn, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(is_up__null_conn),
		T(is_up__null_is_up),
		T(is_up__live),
		T(is_up__disconnected),
		T(is_up__device_removal),
		T(is_up__connect_error),
		T(is_up__unreachable),
		T(is_up__rejected),
		T(is_up__established_keeps_private_data),
		T(rejected__keeps_the_servers_answer),
		T(rejected__keeps_the_clients_request),
		T(is_up__events_keep_their_order),
		T(is_up__stash_keeps_order_after_a_read),
		T(is_up__error_state_fails),
		T(next_event__closed_brings_down),
		T(next_event__nonblocking_fd),
		T(wait_completion__peer_gone_nothing_outstanding),
		T(wait_completion__flushed_work_first),
		T(wait_completion__orphaned_flushes),
		T(wait_completion__swept_slots_stay_retired),
		T(wait_completion__keeps_watching_after_none),
		T(wait_completion__looks_again_after_failure),
		T(wait_completion__live_times_out),
		T(wait_completion__rcq_peer_gone),
		T(cq_wait__peer_gone),
		T(cq_wait__event_still_taken),
		T(conn_wait__peer_gone),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("dead_peer", tests, NULL, NULL);
}
