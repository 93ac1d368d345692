/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cq.c -- rpma_cq_get_fd, rpma_cq_wait, rpma_cq_get_wc (librpma 1.x)
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "fake_extra.h"
#include "fixture.h"

static struct rpma_conn *conn;
static struct rdma_cm_id *id;
static struct rpma_cq *cq; /* the connection's main CQ */
static struct ibv_cq *icq; /* its rdma-core CQ */

static int cq_setup(void **state)
{
	fx_setup(state);
	conn = fx_conn_active(NULL, &id);
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	icq = id->qp->send_cq;
	return 0;
}

static int cq_teardown(void **state)
{
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

/* rpma_cq_get_fd */

static void get_fd__null_cq(void **state)
{
	(void)state;
	int fd = 12345;
	FX_INVAL(rpma_cq_get_fd(NULL, &fd));
	assert_int_equal(fd, 12345);
}

static void get_fd__null_fd(void **state)
{
	(void)state;
	FX_INVAL(rpma_cq_get_fd(cq, NULL));
}

static void get_fd__success(void **state)
{
	(void)state;
	int fd = -1;
	FX_REFUSED(0, rpma_cq_get_fd(cq, &fd));
	assert_non_null(icq->channel);
	assert_int_equal(fd, icq->channel->fd);
}

/*
 * The channel is non-blocking while it is the library's alone (a read says
 * whether an event is there); the fd the application takes is blocking,
 * as librpma 1.x gave it, and stays as the application sets it.
 */
static void get_fd__blocking_for_the_application(void **state)
{
	(void)state;
	assert_true(fcntl(icq->channel->fd, F_GETFL) & O_NONBLOCK);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
}

/* an event already there, the fd the library's: read, acknowledged, the CQ armed again */
static void wait__library_fd_reads_at_once(void **state)
{
	(void)state;
	fake_verbs_push_cq_event(icq->channel, icq);
	assert_int_equal(rpma_cq_wait(cq), 0);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
	assert_true(fake_verbs_cq_armed(icq));
	assert_int_equal(fake_verbs_misuse(), 0);
}

/* rpma_cq_wait */

static void wait__null_cq(void **state)
{
	(void)state;
	FX_INVAL(rpma_cq_wait(NULL));
}

static void wait__success(void **state)
{
	(void)state;
	/* armed from the start */
	assert_true(fake_verbs_cq_armed(icq));
	unsigned notify = fake_verbs_calls(FAKE_REQ_NOTIFY_CQ);
	fake_verbs_push_cq_event(icq->channel, icq);
	assert_false(fake_verbs_cq_armed(icq));

	assert_int_equal(rpma_cq_wait(cq), 0);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
	assert_true(fake_verbs_cq_armed(icq));
	assert_int_equal(fake_verbs_calls(FAKE_REQ_NOTIFY_CQ), notify + 1);
	assert_int_equal(fake_verbs_cq_events_queued(icq->channel), 0);
	/* a wake-up does not poll: nothing was taken from the CQ */
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), 0);
}

/*
 * The application takes the channel's fd and makes it non-blocking: then
 * rpma_cq_wait() returns at once when no event is there, as in librpma 1.x.
 */
static void application_nonblocking_fd(void)
{
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
}

static void wait__two_events(void **state)
{
	(void)state;
	application_nonblocking_fd();
	fake_verbs_push_cq_event(icq->channel, icq);
	fake_verbs_push_cq_event(icq->channel, icq);
	assert_int_equal(rpma_cq_wait(cq), 0);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
	assert_int_equal(rpma_cq_wait(cq), 0);
	assert_int_equal(fake_verbs_cq_acks(icq), 2);
	assert_int_equal(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	assert_int_equal(fake_verbs_cq_acks(icq), 2);
}

static void wait__nonblocking_empty(void **state)
{
	(void)state;
	application_nonblocking_fd();
	assert_int_equal(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	assert_int_equal(fake_verbs_cq_acks(icq), 0);
	fake_verbs_fail(FAKE_GET_CQ_EVENT, 1, EAGAIN);
	fake_verbs_push_cq_event(icq->channel, icq);
	assert_int_equal(rpma_cq_wait(cq), RPMA_E_NO_COMPLETION);
	assert_int_equal(fake_verbs_cq_acks(icq), 0);
	/* the event is still there for the next call */
	assert_int_equal(rpma_cq_wait(cq), 0);
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
}

static void wait__rearm_fails(void **state)
{
	(void)state;
	fake_verbs_push_cq_event(icq->channel, icq);
	fake_verbs_fail(FAKE_REQ_NOTIFY_CQ, 1, EIO);
	assert_int_equal(rpma_cq_wait(cq), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	/* acknowledged all the same: the CQ can still be destroyed */
	assert_int_equal(fake_verbs_cq_acks(icq), 1);
}

static void wait__shared_channel(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *sid = NULL;
	struct rpma_conn *shared = fx_conn_active(cfg, &sid);
	struct rpma_cq *scq = NULL, *srcq = NULL;
	assert_int_equal(rpma_conn_get_cq(shared, &scq), 0);
	assert_int_equal(rpma_conn_get_rcq(shared, &srcq), 0);
	fake_verbs_push_cq_event(sid->qp->send_cq->channel, sid->qp->send_cq);
	FX_REFUSED(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(scq));
	FX_REFUSED(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(srcq));
	/* the event is left for rpma_conn_wait */
	assert_int_equal(fake_verbs_cq_events_queued(sid->qp->send_cq->channel), 1);
	struct rpma_cq *fired = NULL;
	assert_int_equal(rpma_conn_wait(shared, 0, &fired, NULL), 0);
	assert_ptr_equal(fired, scq);
	fx_conn_delete(&shared);
	fx_cfg_delete(&cfg);
}

static void wait__rcq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rdma_cm_id *rid = NULL;
	struct rpma_conn *c = fx_conn_active(cfg, &rid);
	struct rpma_cq *rcq = NULL;
	assert_int_equal(rpma_conn_get_rcq(c, &rcq), 0);
	struct ibv_cq *ircq = rid->qp->recv_cq;
	fake_verbs_push_cq_event(ircq->channel, ircq);
	/* the main CQ has its own channel: nothing for it (its fd made non-blocking) */
	struct rpma_cq *main_cq = NULL;
	assert_int_equal(rpma_conn_get_cq(c, &main_cq), 0);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(main_cq, &fd), 0);
	assert_int_equal(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	assert_int_equal(rpma_cq_wait(main_cq), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_wait(rcq), 0);
	assert_int_equal(fake_verbs_cq_acks(ircq), 1);
	assert_int_equal(fake_verbs_cq_acks(rid->qp->send_cq), 0);
	fx_conn_delete(&c);
	fx_cfg_delete(&cfg);
}

static void wait__unknown_cq(void **state)
{
	(void)state;
	struct ibv_cq *stranger = fx_extra_cq(icq->channel);
	assert_non_null(stranger);
	fake_verbs_push_cq_event(icq->channel, stranger);
	assert_int_equal(rpma_cq_wait(cq), RPMA_E_UNKNOWN);
	assert_int_equal(fake_verbs_cq_acks(icq), 0);
	if (fake_verbs_cq_acks(stranger) == 0)
		fx_extra_cq_ack(stranger, 1);
	assert_int_equal(fx_extra_cq_destroy(stranger), 0);
}

/* rpma_cq_get_wc */

static void push(uint64_t wr_id, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc = fx_wc(wr_id, opcode, IBV_WC_SUCCESS);
	fake_verbs_push_wc(icq, &wc);
}

static void get_wc__null_cq(void **state)
{
	(void)state;
	struct ibv_wc wc;
	int got = 77;
	FX_INVAL(rpma_cq_get_wc(NULL, 1, &wc, &got));
	assert_int_equal(got, 77);
}

static void get_wc__bad_num_entries(void **state)
{
	(void)state;
	struct ibv_wc wc[2];
	int got = 77;
	push(1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_get_wc(cq, 0, wc, &got));
	FX_INVAL(rpma_cq_get_wc(cq, -1, wc, &got));
	FX_INVAL(rpma_cq_get_wc(cq, -2147483647 - 1, wc, &got));
	assert_int_equal(got, 77);
	/* nothing was taken */
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void get_wc__null_wc(void **state)
{
	(void)state;
	int got = 77;
	push(1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_get_wc(cq, 1, NULL, &got));
	assert_int_equal(got, 77);
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void get_wc__null_got_with_many(void **state)
{
	(void)state;
	struct ibv_wc wc[2];
	push(1, IBV_WC_SEND);
	FX_INVAL(rpma_cq_get_wc(cq, 2, wc, NULL));
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
}

static void get_wc__null_got_with_one(void **state)
{
	(void)state;
	struct ibv_wc wc;
	push(0x1234, IBV_WC_RDMA_WRITE);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, 0x1234);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
}

static void get_wc__fifo_up_to_n(void **state)
{
	(void)state;
	push(1, IBV_WC_SEND);
	push(2, IBV_WC_RDMA_WRITE);
	push(3, IBV_WC_RECV);
	struct ibv_wc wc[5];
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(cq, 2, wc, &got), 0);
	assert_int_equal(got, 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(fake_verbs_wcs_queued(icq), 1);
	assert_int_equal(rpma_cq_get_wc(cq, 5, wc, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(wc[0].wr_id, 3);
	assert_int_equal(wc[0].opcode, IBV_WC_RECV);
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), 2);
}

static void get_wc__empty(void **state)
{
	(void)state;
	struct ibv_wc wc;
	int got = 77;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), RPMA_E_NO_COMPLETION);
	assert_int_equal(got, 77);
	push(9, IBV_WC_SEND);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), 0);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), RPMA_E_NO_COMPLETION);
}

static void get_wc__fields_copied(void **state)
{
	(void)state;
	struct ibv_wc in;
	memset(&in, 0, sizeof(in));
	in.wr_id = 0xfeedfacecafebeefULL;
	in.status = IBV_WC_SUCCESS;
	in.opcode = IBV_WC_RECV;
	in.byte_len = 777;
	in.imm_data = htonl(0x01020304);
	in.qp_num = id->qp->qp_num;
	in.wc_flags = IBV_WC_WITH_IMM;
	fake_verbs_push_wc(icq, &in);
	struct ibv_wc out;
	memset(&out, 0xff, sizeof(out));
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &out, &got), 0);
	assert_int_equal(got, 1);
	/* exactly what ibv_poll_cq gave: nothing translated */
	assert_int_equal(out.wr_id, in.wr_id);
	assert_int_equal(out.status, in.status);
	assert_int_equal(out.opcode, in.opcode);
	assert_int_equal(out.byte_len, in.byte_len);
	assert_int_equal(out.imm_data, in.imm_data);
	assert_int_equal(out.qp_num, in.qp_num);
	assert_int_equal(out.wc_flags, in.wc_flags);
}

static void get_wc__error_status(void **state)
{
	(void)state;
	struct ibv_wc in = fx_wc(0xabc, (enum ibv_wc_opcode)0x7f, IBV_WC_REM_ACCESS_ERR);
	in.vendor_err = 0x88;
	fake_verbs_push_wc(icq, &in);
	struct ibv_wc out;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &out, NULL), 0);
	assert_int_equal(out.wr_id, 0xabc);
	assert_int_equal(out.status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(out.vendor_err, 0x88);
}

static void get_wc__poll_fails(void **state)
{
	(void)state;
	push(1, IBV_WC_SEND);
	struct ibv_wc wc;
	int got = 77;
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), -EIO);
	assert_int_equal(got, 77);
	/* the completion is still there */
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), 0);
	assert_int_equal(wc.wr_id, 1);
}

static void get_wc__flush_context(void **state)
{
	(void)state;
	/* librpma 1.x: a flush's op_context comes back in wr_id, like any other */
	static char rbuf[64];
	struct rpma_mr_remote *rmr =
	    fx_mr_remote((uintptr_t)rbuf, sizeof(rbuf), 0x42, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	int ctx = 0;
	assert_int_equal(
	    rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS, &ctx),
	    0);
	assert_int_equal(fake_verbs_sends(), 1);
	push(fake_verbs_send(0)->wr.wr_id, IBV_WC_RDMA_READ);
	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, (uintptr_t)&ctx);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	fx_mr_remote_delete(&rmr);
}

static void get_wc__rcq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rdma_cm_id *rid = NULL;
	struct rpma_conn *c = fx_conn_active(cfg, &rid);
	struct rpma_cq *main_cq = NULL, *rcq = NULL;
	assert_int_equal(rpma_conn_get_cq(c, &main_cq), 0);
	assert_int_equal(rpma_conn_get_rcq(c, &rcq), 0);
	struct ibv_wc in = fx_wc(5, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_verbs_push_wc(rid->qp->recv_cq, &in);
	struct ibv_wc out;
	assert_int_equal(rpma_cq_get_wc(main_cq, 1, &out, NULL), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_get_wc(rcq, 1, &out, NULL), 0);
	assert_int_equal(out.wr_id, 5);
	fx_conn_delete(&c);
	fx_cfg_delete(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, cq_setup, cq_teardown)
		T(get_fd__null_cq),
		T(get_fd__null_fd),
		T(get_fd__success),
		T(get_fd__blocking_for_the_application),
		T(wait__library_fd_reads_at_once),
		T(wait__null_cq),
		T(wait__success),
		T(wait__two_events),
		T(wait__nonblocking_empty),
		T(wait__rearm_fails),
		T(wait__shared_channel),
		T(wait__rcq),
		T(wait__unknown_cq),
		T(get_wc__null_cq),
		T(get_wc__bad_num_entries),
		T(get_wc__null_wc),
		T(get_wc__null_got_with_many),
		T(get_wc__null_got_with_one),
		T(get_wc__fifo_up_to_n),
		T(get_wc__empty),
		T(get_wc__fields_copied),
		T(get_wc__error_status),
		T(get_wc__poll_fails),
		T(get_wc__flush_context),
		T(get_wc__rcq),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("cq", tests, NULL, NULL);
}
