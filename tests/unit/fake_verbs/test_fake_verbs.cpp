// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_fake_verbs.cpp -- the fake rdma-core keeps the promises of fake_verbs.h
 *
 * Every other unit test trusts the fake; these cases check it directly,
 * through the same rpma::verbs functions the library calls.
 */

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <csetjmp>
#include <arpa/inet.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>

extern "C" {
#include <cmocka.h>
}

#include "fake_verbs.h"
#include "verbs/verbs.hpp"

namespace v = rpma::verbs;

namespace
{

int setup(void **)
{
	fake_verbs_reset();
	return 0;
}

int teardown(void **)
{
	unsigned misuse = fake_verbs_misuse();
	fake_verbs_reset();
	assert_int_equal(misuse, 0);
	return 0;
}

bool readable(int fd)
{
	pollfd p{};
	p.fd = fd;
	p.events = POLLIN;
	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

ibv_pd *pd_ok()
{
	ibv_pd *pd = v::alloc_pd(fake_verbs_context());
	assert_non_null(pd);
	return pd;
}

/* a resolved, synchronous id with a QP on two CQs */
struct qp_set {
	ibv_pd *pd;
	ibv_cq *cq;
	ibv_cq *rcq;
	rdma_cm_id *id;
};

qp_set make_qp(uint32_t max_inline)
{
	qp_set q{};
	q.pd = pd_ok();
	q.cq = v::create_cq(fake_verbs_context(), 10, nullptr, nullptr);
	q.rcq = v::create_cq(fake_verbs_context(), 10, nullptr, nullptr);
	assert_non_null(q.cq);
	assert_non_null(q.rcq);
	assert_int_equal(v::create_id(nullptr, &q.id, nullptr), 0);
	sockaddr_in dst{};
	dst.sin_family = AF_INET;
	dst.sin_addr.s_addr = htonl(0x0a000001);
	assert_int_equal(v::resolve_addr(q.id, nullptr, (sockaddr *)&dst, 1000), 0);
	assert_int_equal(v::resolve_route(q.id, 1000), 0);
	ibv_qp_init_attr_ex attr{};
	attr.send_cq = q.cq;
	attr.recv_cq = q.rcq;
	attr.cap.max_send_wr = 10;
	attr.cap.max_recv_wr = 10;
	attr.cap.max_send_sge = 4;
	attr.cap.max_recv_sge = 4;
	attr.cap.max_inline_data = max_inline;
	attr.qp_type = IBV_QPT_RC;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr.pd = q.pd;
	assert_int_equal(v::create_qp_ex(q.id, &attr), 0);
	assert_non_null(q.id->qp);
	return q;
}

void free_qp(qp_set &q)
{
	v::destroy_qp(q.id);
	assert_int_equal(v::destroy_id(q.id), 0);
	assert_int_equal(v::destroy_cq(q.cq), 0);
	assert_int_equal(v::destroy_cq(q.rcq), 0);
	assert_int_equal(v::dealloc_pd(q.pd), 0);
}

void live_objects_and_reset(void **)
{
	assert_int_equal(fake_verbs_live_objects(), 0);
	ibv_pd *pd = pd_ok();
	rdma_event_channel *ch = v::create_event_channel();
	assert_non_null(ch);
	assert_int_equal(fake_verbs_live_objects(), 2);
	assert_int_equal(v::dealloc_pd(pd), 0);
	assert_int_equal(fake_verbs_live_objects(), 1);
	/* reset frees whatever is left */
	fake_verbs_reset();
	assert_int_equal(fake_verbs_live_objects(), 0);
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 0);
}

void *alloc_and_free_pd(void *)
{
	v::dealloc_pd(pd_ok());
	return nullptr;
}

/*
 * A call made by another thread counts in fake_verbs_calls() and not in
 * this thread's fake_verbs_thread_calls(): FX_REFUSED() checks the latter,
 * so that a library thread polling meanwhile is no call of the refused one.
 */
void thread_calls_are_the_callers(void **)
{
	const unsigned mine = fake_verbs_thread_calls(FAKE_ALLOC_PD);
	pthread_t other;
	assert_int_equal(pthread_create(&other, nullptr, alloc_and_free_pd, nullptr), 0);
	assert_int_equal(pthread_join(other, nullptr), 0);
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 1);
	assert_int_equal(fake_verbs_thread_calls(FAKE_ALLOC_PD), mine);
	v::dealloc_pd(pd_ok());
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 2);
	assert_int_equal(fake_verbs_thread_calls(FAKE_ALLOC_PD), mine + 1);
}

void fail_nth_call(void **)
{
	fake_verbs_fail(FAKE_ALLOC_PD, 2, ENOMEM);
	ibv_pd *a = v::alloc_pd(fake_verbs_context());
	errno = 0;
	ibv_pd *b = v::alloc_pd(fake_verbs_context());
	int err = errno;
	ibv_pd *c = v::alloc_pd(fake_verbs_context());
	assert_non_null(a);
	assert_null(b);
	assert_int_equal(err, ENOMEM);
	assert_non_null(c);
	assert_int_equal(fake_verbs_calls(FAKE_ALLOC_PD), 3);
	v::dealloc_pd(a);
	v::dealloc_pd(c);
}

void fail_return_conventions(void **)
{
	ibv_pd *pd = pd_ok();
	/* ibv_*: the errno itself */
	fake_verbs_fail(FAKE_DEALLOC_PD, 1, EBUSY);
	assert_int_equal(v::dealloc_pd(pd), EBUSY);
	assert_int_equal(errno, EBUSY);
	/* rdma_*: -1 */
	fake_verbs_fail(FAKE_CREATE_ID, 1, EMFILE);
	rdma_cm_id *id = nullptr;
	assert_int_equal(v::create_id(nullptr, &id, nullptr), -1);
	assert_int_equal(errno, EMFILE);
	assert_null(id);
	/* errno 0: still a failure */
	fake_verbs_fail(FAKE_DEALLOC_PD, 1, 0);
	assert_int_not_equal(v::dealloc_pd(pd), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(fake_verbs_live_objects(), 1);
	assert_int_equal(v::dealloc_pd(pd), 0);
}

void empty_channels(void **)
{
	rdma_event_channel *ch = v::create_event_channel();
	rdma_cm_event *ev = nullptr;
	assert_int_equal(v::get_cm_event(ch, &ev), -1);
	assert_int_equal(errno, ENODATA);
	ibv_comp_channel *cc = v::create_comp_channel(fake_verbs_context());
	ibv_cq *cq = nullptr;
	void *ctx = nullptr;
	assert_int_not_equal(v::get_cq_event(cc, &cq, &ctx), 0);
	assert_int_equal(errno, EAGAIN);
	/* real fds */
	assert_true(fcntl(ch->fd, F_GETFL) >= 0);
	assert_true(fcntl(cc->fd, F_GETFL) >= 0);
	assert_false(readable(ch->fd));
	assert_false(readable(cc->fd));
	v::destroy_event_channel(ch);
	assert_int_equal(v::destroy_comp_channel(cc), 0);
}

void cm_events_fifo(void **)
{
	rdma_event_channel *ch = v::create_event_channel();
	rdma_cm_id *id = nullptr;
	assert_int_equal(v::create_id(ch, &id, (void *)0x77), 0);
	const char pdata[] = "hello";
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ESTABLISHED, id, pdata, sizeof(pdata));
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_DISCONNECTED, id, nullptr, 0);
	assert_int_equal(fake_verbs_cm_events_queued(ch), 2);
	assert_true(readable(ch->fd));

	rdma_cm_event *ev = nullptr;
	assert_int_equal(v::get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_ESTABLISHED);
	assert_ptr_equal(ev->id, id);
	assert_int_equal(ev->param.conn.private_data_len, sizeof(pdata));
	assert_memory_equal(ev->param.conn.private_data, pdata, sizeof(pdata));
	int live = fake_verbs_live_objects();
	assert_int_equal(v::ack_cm_event(ev), 0);
	assert_int_equal(fake_verbs_live_objects(), live - 1);
	assert_true(readable(ch->fd));

	assert_int_equal(v::get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->event, RDMA_CM_EVENT_DISCONNECTED);
	assert_null(ev->param.conn.private_data);
	assert_int_equal(v::ack_cm_event(ev), 0);
	assert_false(readable(ch->fd));
	assert_int_equal(v::destroy_id(id), 0);
	v::destroy_event_channel(ch);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

void connect_request_new_id(void **)
{
	rdma_event_channel *ch = v::create_event_channel();
	rdma_cm_id *listener = nullptr;
	assert_int_equal(v::create_id(ch, &listener, (void *)0x55), 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(v::bind_addr(listener, (sockaddr *)&a), 0);
	assert_int_equal(v::listen(listener, 7), 0);
	assert_int_equal(fake_verbs_last_backlog(), 7);

	int before = fake_verbs_live_objects();
	const uint8_t pdata[3] = { 1, 2, 3 };
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, pdata, 3);
	/* not counted before it is handed out */
	assert_int_equal(fake_verbs_live_objects(), before);
	rdma_cm_id *incoming = fake_verbs_last_id();
	assert_non_null(incoming);

	rdma_cm_event *ev = nullptr;
	assert_int_equal(v::get_cm_event(ch, &ev), 0);
	assert_ptr_equal(ev->id, incoming);
	assert_ptr_equal(ev->listen_id, listener);
	assert_ptr_equal(incoming->verbs, fake_verbs_context());
	assert_ptr_equal(incoming->context, (void *)0x55);
	assert_int_equal(fake_verbs_live_objects(), before + 2); /* the id and the event */
	assert_int_equal(v::ack_cm_event(ev), 0);
	assert_int_equal(v::reject(incoming, "no", 2), 0);
	uint8_t len = 0;
	assert_memory_equal(fake_verbs_last_conn_pdata(&len), "no", 2);
	assert_int_equal(len, 2);
	assert_int_equal(fake_verbs_id_calls(incoming, FAKE_REJECT), 1);
	assert_int_equal(v::destroy_id(incoming), 0);
	assert_int_equal(fake_verbs_live_objects(), before);
	assert_int_equal(v::destroy_id(listener), 0);
	v::destroy_event_channel(ch);
}

/*
 * A CONNECT_REQUEST names the client's queue pair, one of its own per
 * request and none of the fake's; an iWARP one names none (0); a test may
 * change the number before the event is taken.
 */
void connect_request_qp_num(void **)
{
	qp_set mine = make_qp(8);
	rdma_event_channel *ch = v::create_event_channel();
	uint32_t got[4];
	for (int i = 0; i < 4; i++) {
		if (i == 2)
			fake_verbs_set_iwarp(true);
		fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, nullptr, 0);
		if (i == 3)
			fake_verbs_last_pushed_cm_event()->param.conn.qp_num = 0x123456;
		rdma_cm_event *ev = nullptr;
		assert_int_equal(v::get_cm_event(ch, &ev), 0);
		got[i] = ev->param.conn.qp_num;
		rdma_cm_id *incoming = ev->id;
		assert_int_equal(v::ack_cm_event(ev), 0);
		assert_int_equal(v::destroy_id(incoming), 0);
	}
	assert_int_equal(got[0], FAKE_FIRST_PEER_QP_NUM);
	assert_int_equal(got[1], FAKE_FIRST_PEER_QP_NUM + 1);
	assert_int_not_equal(got[0], mine.id->qp->qp_num);
	assert_int_equal(got[2], 0);
	assert_int_equal(got[3], 0x123456);

	/* the other events carry none */
	fake_verbs_set_iwarp(false);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ESTABLISHED, nullptr, nullptr, 0);
	rdma_cm_event *ev = nullptr;
	assert_int_equal(v::get_cm_event(ch, &ev), 0);
	assert_int_equal(ev->param.conn.qp_num, 0);
	assert_int_equal(v::ack_cm_event(ev), 0);
	v::destroy_event_channel(ch);
	free_qp(mine);
	assert_int_equal(fake_verbs_live_objects(), 0);

	/* a reset starts over */
	fake_verbs_reset();
	ch = v::create_event_channel();
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, nullptr, 0);
	assert_int_equal(fake_verbs_last_pushed_cm_event()->param.conn.qp_num,
			 FAKE_FIRST_PEER_QP_NUM);
	assert_int_equal(v::get_cm_event(ch, &ev), 0);
	rdma_cm_id *incoming = ev->id;
	assert_int_equal(v::ack_cm_event(ev), 0);
	assert_int_equal(v::destroy_id(incoming), 0);
	v::destroy_event_channel(ch);
}

void cq_events_and_completions(void **)
{
	ibv_comp_channel *cc = v::create_comp_channel(fake_verbs_context());
	ibv_cq *cq = v::create_cq(fake_verbs_context(), 4, (void *)0x99, cc);
	assert_non_null(cq);
	assert_ptr_equal(cq->channel, cc);
	assert_ptr_equal(cq->cq_context, (void *)0x99);
	assert_int_equal(v::req_notify_cq(cq), 0);
	assert_true(fake_verbs_cq_armed(cq));
	fake_verbs_push_cq_event(cc, cq);
	assert_false(fake_verbs_cq_armed(cq));
	assert_true(readable(cc->fd));
	ibv_cq *got = nullptr;
	void *ctx = nullptr;
	assert_int_equal(v::get_cq_event(cc, &got, &ctx), 0);
	assert_ptr_equal(got, cq);
	assert_ptr_equal(ctx, (void *)0x99);
	assert_false(readable(cc->fd));
	/* an unacknowledged event keeps the CQ */
	assert_int_equal(v::destroy_cq(cq), EBUSY);
	assert_int_equal(fake_verbs_misuse(), 1);
	v::ack_cq_events(cq, 1);
	assert_int_equal(fake_verbs_cq_acks(cq), 1);

	ibv_wc wc[3]{};
	for (int i = 0; i < 3; i++) {
		ibv_wc w{};
		w.wr_id = 100 + i;
		fake_verbs_push_wc(cq, &w);
	}
	assert_int_equal(v::poll_cq(cq, 2, wc), 2);
	assert_int_equal(wc[0].wr_id, 100);
	assert_int_equal(wc[1].wr_id, 101);
	assert_int_equal(v::poll_cq(cq, 3, wc), 1);
	assert_int_equal(wc[0].wr_id, 102);
	assert_int_equal(v::poll_cq(cq, 3, wc), 0);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	assert_int_equal(v::poll_cq(cq, 3, wc), -EIO);

	/* a channel with a CQ on it cannot go */
	assert_int_equal(v::destroy_comp_channel(cc), EBUSY);
	assert_int_equal(v::destroy_cq(cq), 0);
	assert_int_equal(v::destroy_comp_channel(cc), 0);
	fake_verbs_reset(); /* the deliberate misuse above */
}

void post_send_deep_copy(void **)
{
	qp_set q = make_qp(16);
	char data[16] = "abcdefgh";
	ibv_sge sge[2] = { { (uint64_t)(uintptr_t)data, 4, 11 },
			   { (uint64_t)(uintptr_t)(data + 4), 4, 12 } };
	ibv_send_wr wr2{};
	wr2.wr_id = 2;
	wr2.opcode = IBV_WR_RDMA_READ;
	ibv_send_wr wr{};
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.next = &wr2;
	ibv_send_wr *bad = nullptr;
	assert_int_equal(v::post_send(q.id->qp, &wr, &bad), 0);
	/* the caller's memory changes: the records do not */
	memset(data, 'z', sizeof(data));
	sge[0].length = 999;
	assert_int_equal(fake_verbs_sends(), 2);
	const fake_send_record *r = fake_verbs_send(0);
	assert_int_equal(r->wr.wr_id, 1);
	assert_null(r->wr.next);
	assert_ptr_equal(r->wr.sg_list, r->sge);
	assert_int_equal(r->sge[0].length, 4);
	assert_int_equal(r->sge[1].lkey, 12);
	assert_memory_equal(r->inline_data, "abcdefgh", 8);
	assert_ptr_equal(r->qp, q.id->qp);
	assert_int_equal(fake_verbs_send(1)->wr.wr_id, 2);
	assert_null(fake_verbs_send(1)->wr.sg_list);
	/* where each element was */
	assert_ptr_equal(r->posted_from, &wr);
	assert_ptr_equal(fake_verbs_send(1)->posted_from, &wr2);
	/* later records do not move the earlier ones */
	for (int i = 0; i < 100; i++) {
		wr2.next = nullptr;
		assert_int_equal(v::post_send(q.id->qp, &wr2, &bad), 0);
	}
	assert_ptr_equal(r, fake_verbs_send(0));
	assert_ptr_equal(r->wr.sg_list, r->sge);

	/* inline beyond max_inline_data */
	char big[32] = {};
	ibv_sge bsge = { (uint64_t)(uintptr_t)big, 32, 1 };
	ibv_send_wr bw{};
	bw.opcode = IBV_WR_SEND;
	bw.send_flags = IBV_SEND_INLINE;
	bw.sg_list = &bsge;
	bw.num_sge = 1;
	assert_int_equal(v::post_send(q.id->qp, &bw, &bad), ENOMEM);
	assert_ptr_equal(bad, &bw);
	free_qp(q);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

struct interrupting_post {
	ibv_qp *qp;
	ibv_send_wr *wr;
	int calls;
};

void post_in_between(void *arg)
{
	auto *p = static_cast<interrupting_post *>(arg);
	p->calls++;
	ibv_send_wr *bad = nullptr;
	assert_int_equal(v::post_send(p->qp, p->wr, &bad), 0);
}

/* what runs before the next post_send: once, first, and free to post itself */
void post_send_before_next(void **)
{
	qp_set q = make_qp(16);
	ibv_send_wr inner{};
	inner.wr_id = 7;
	inner.opcode = IBV_WR_RDMA_READ;
	ibv_send_wr outer{};
	outer.wr_id = 8;
	outer.opcode = IBV_WR_RDMA_READ;
	interrupting_post p{ q.id->qp, &inner, 0 };
	fake_verbs_before_next_post_send(post_in_between, &p);
	ibv_send_wr *bad = nullptr;
	assert_int_equal(v::post_send(q.id->qp, &outer, &bad), 0);
	assert_int_equal(p.calls, 1);
	assert_int_equal(fake_verbs_sends(), 2);
	assert_int_equal(fake_verbs_send(0)->wr.wr_id, 7);
	assert_int_equal(fake_verbs_send(1)->wr.wr_id, 8);
	assert_int_equal(v::post_send(q.id->qp, &outer, &bad), 0);
	assert_int_equal(p.calls, 1);
	/* taken back before any post: never called */
	fake_verbs_before_next_post_send(post_in_between, &p);
	fake_verbs_before_next_post_send(nullptr, nullptr);
	assert_int_equal(v::post_send(q.id->qp, &outer, &bad), 0);
	assert_int_equal(p.calls, 1);
	assert_int_equal(fake_verbs_sends(), 4);
	free_qp(q);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

void qp_numbers_and_busy_objects(void **)
{
	qp_set a = make_qp(8);
	qp_set b = make_qp(8);
	assert_int_not_equal(a.id->qp->qp_num, b.id->qp->qp_num);
	assert_ptr_equal(a.id->qp->send_cq, a.cq);
	assert_ptr_equal(a.id->qp->recv_cq, a.rcq);
	assert_int_equal(fake_verbs_qp_init_attr(a.id->qp)->cap.max_send_sge, 4);
	assert_int_equal(v::destroy_cq(a.cq), EBUSY);
	assert_int_equal(v::dealloc_pd(a.pd), EBUSY);
	free_qp(a);
	free_qp(b);
}

void reg_mr_rules(void **)
{
	ibv_pd *pd = pd_ok();
	char buf[64];
	assert_null(v::reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	assert_null(v::reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_ON_DEMAND));
	assert_int_equal(errno, EOPNOTSUPP);
	fake_verbs_set_odp(true);
	ibv_mr *mr = v::reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	assert_ptr_equal(mr->addr, buf);
	assert_int_equal(mr->length, sizeof(buf));
	assert_int_not_equal(mr->lkey, mr->rkey);
	assert_int_equal(fake_verbs_reg_mrs(), 3);
	assert_int_equal(fake_verbs_reg_mr(2)->rkey, mr->rkey);
	assert_int_equal(v::dereg_mr(mr), 0);
	/* a second dereg of the same MR is misuse, reported, not a crash */
	assert_int_not_equal(v::dereg_mr(mr), 0);
	assert_int_equal(fake_verbs_misuse(), 1);
	assert_int_equal(v::dealloc_pd(pd), 0);
	fake_verbs_reset();
}

void device_capabilities(void **)
{
	ibv_device_attr_ex attr{};
	assert_int_equal(v::query_device_ex(fake_verbs_context(), &attr), 0);
	assert_int_equal(attr.odp_caps.general_caps, 0);
	assert_int_equal(attr.device_cap_flags_ex & FAKE_DEVICE_ATOMIC_WRITE, 0);
	assert_int_equal(v::native_ops(attr), 0);
	assert_int_equal(fake_verbs_context()->device->transport_type, IBV_TRANSPORT_IB);
	fake_verbs_set_odp(true);
	fake_verbs_set_native_atomic_write(true);
	fake_verbs_set_iwarp(true);
	assert_int_equal(v::query_device_ex(fake_verbs_context(), &attr), 0);
	assert_true(attr.odp_caps.general_caps & IBV_ODP_SUPPORT);
	assert_true(attr.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_WRITE);
	assert_true(attr.odp_caps.per_transport_caps.rc_odp_caps & IBV_ODP_SUPPORT_READ);
	assert_true(attr.device_cap_flags_ex & FAKE_DEVICE_ATOMIC_WRITE);
	assert_int_equal(v::native_ops(attr), v::NATIVE_ATOMIC_WRITE);
	assert_int_equal(v::native_send_ops(v::NATIVE_ATOMIC_WRITE), FAKE_QP_EX_WITH_ATOMIC_WRITE);
	assert_int_equal(v::native_send_ops(0), 0);
	assert_int_equal(fake_verbs_context()->device->transport_type, IBV_TRANSPORT_IWARP);
	fake_verbs_reset();
	assert_int_equal(fake_verbs_context()->device->transport_type, IBV_TRANSPORT_IB);
}

void native_flush_registration(void **)
{
	static char mem[4096];
	assert_int_equal(v::native_flush_access(v::NATIVE_FLUSH_GLOBAL), FAKE_ACCESS_FLUSH_GLOBAL);
	assert_int_equal(v::native_flush_access(v::NATIVE_FLUSH_PERSISTENT),
			 FAKE_ACCESS_FLUSH_PERSISTENT);
	assert_int_equal(v::native_flush_access(0), 0);
	ibv_pd *pd = v::alloc_pd(fake_verbs_context());
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	/* a device without native flush refuses the flags */
	errno = 0;
	assert_null(v::reg_mr(pd, mem, sizeof(mem), rw | FAKE_ACCESS_FLUSH_GLOBAL));
	assert_int_equal(errno, EOPNOTSUPP);
	fake_verbs_set_native_flush(true);
	ibv_device_attr_ex attr{};
	assert_int_equal(v::query_device_ex(fake_verbs_context(), &attr), 0);
	assert_int_equal(v::native_ops(attr), v::NATIVE_FLUSH_GLOBAL | v::NATIVE_FLUSH_PERSISTENT);
	assert_int_equal(v::native_send_ops(v::NATIVE_FLUSH_PERSISTENT), FAKE_QP_EX_WITH_FLUSH);
	/* global visibility for any memory, persistence for persistent memory only */
	ibv_mr *global = v::reg_mr(pd, mem, sizeof(mem), rw | FAKE_ACCESS_FLUSH_GLOBAL);
	assert_non_null(global);
	errno = 0;
	assert_null(v::reg_mr(pd, mem, sizeof(mem), rw | FAKE_ACCESS_FLUSH_PERSISTENT));
	assert_int_equal(errno, EINVAL);
	fake_verbs_set_pmem(mem, sizeof(mem) - 1);
	assert_null(v::reg_mr(pd, mem, sizeof(mem), rw | FAKE_ACCESS_FLUSH_PERSISTENT));
	fake_verbs_set_pmem(mem, sizeof(mem));
	ibv_mr *persistent = v::reg_mr(pd, mem, sizeof(mem), rw | FAKE_ACCESS_FLUSH_PERSISTENT);
	assert_non_null(persistent);
	assert_int_equal(v::dereg_mr(global), 0);
	assert_int_equal(v::dereg_mr(persistent), 0);
	assert_int_equal(v::dealloc_pd(pd), 0);
	assert_int_equal(fake_verbs_misuse(), 0);
	fake_verbs_reset();
}

void addresses(void **)
{
	rdma_addrinfo hints{};
	hints.ai_flags = RAI_PASSIVE;
	rdma_addrinfo *ai = nullptr;
	assert_int_equal(v::getaddrinfo("10.1.2.3", "7204", &hints, &ai), 0);
	assert_non_null(ai->ai_src_addr);
	assert_null(ai->ai_dst_addr);
	auto *sin = reinterpret_cast<sockaddr_in *>(ai->ai_src_addr);
	assert_int_equal(sin->sin_family, AF_INET);
	assert_int_equal(ntohs(sin->sin_port), 7204);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0x0a010203);
	v::freeaddrinfo(ai);

	hints.ai_flags = 0;
	assert_int_equal(v::getaddrinfo("::1", nullptr, &hints, &ai), 0);
	assert_null(ai->ai_src_addr);
	assert_int_equal(ai->ai_dst_addr->sa_family, AF_INET6);
	v::freeaddrinfo(ai);

	ai = nullptr;
	assert_int_equal(v::getaddrinfo("host.example", "1", &hints, &ai), -1);
	assert_int_not_equal(errno, 0);
	assert_int_equal(v::getaddrinfo("1.2.3.4", "port", &hints, &ai), -1);
	assert_int_equal(v::getaddrinfo("1.2.3.4", "70000", &hints, &ai), -1);
	assert_null(ai);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

void ids_and_binding(void **)
{
	rdma_cm_id *id = nullptr;
	assert_int_equal(v::create_id(nullptr, &id, nullptr), 0);
	assert_non_null(id->channel); /* synchronous: librdmacm's own channel */
	assert_null(id->verbs);
	sockaddr_in any{};
	any.sin_family = AF_INET;
	assert_int_equal(v::bind_addr(id, (sockaddr *)&any), 0);
	assert_null(id->verbs);
	assert_int_equal(v::destroy_id(id), 0);

	assert_int_equal(v::create_id(nullptr, &id, nullptr), 0);
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(0xc0a80001);
	assert_int_equal(v::bind_addr(id, (sockaddr *)&a), 0);
	assert_ptr_equal(id->verbs, fake_verbs_context());
	assert_non_null(id->pd);
	/* migrating to a channel of its own makes it asynchronous */
	rdma_event_channel *ch = v::create_event_channel();
	assert_int_equal(v::migrate_id(id, ch), 0);
	assert_ptr_equal(id->channel, ch);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_DISCONNECTED, id, nullptr, 0);
	rdma_event_channel *ch2 = v::create_event_channel();
	assert_int_equal(v::migrate_id(id, ch2), 0);
	/* its queued event went along */
	assert_int_equal(fake_verbs_cm_events_queued(ch), 0);
	assert_int_equal(fake_verbs_cm_events_queued(ch2), 1);
	assert_false(readable(ch->fd));
	assert_true(readable(ch2->fd));
	assert_int_equal(v::destroy_id(id), 0);
	/* and went with the id */
	assert_int_equal(fake_verbs_cm_events_queued(ch2), 0);
	v::destroy_event_channel(ch);
	v::destroy_event_channel(ch2);
	assert_int_equal(fake_verbs_live_objects(), 0);
}

int find_library(dl_phdr_info *info, size_t, void *data)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "librpma.so", 10) == 0 || strncmp(base, "libibverbs.so", 13) == 0 ||
	    strncmp(base, "librdmacm.so", 12) == 0) {
		snprintf(static_cast<char *>(data), 256, "%s", name);
		return 1;
	}
	return 0;
}

/*
 * The unit tests link the library's objects statically with the fake: no
 * librpma (e.g. Debian's in /usr/lib) and no real rdma-core may be loaded.
 */
void no_real_library_loaded(void **)
{
	char found[256] = "";
	dl_iterate_phdr(find_library, found);
	if (found[0])
		fail_msg("%s is loaded into a unit test", found);
}

} /* namespace */

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(no_real_library_loaded, setup, teardown),
		cmocka_unit_test_setup_teardown(live_objects_and_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(fail_nth_call, setup, teardown),
		cmocka_unit_test_setup_teardown(thread_calls_are_the_callers, setup, teardown),
		cmocka_unit_test_setup_teardown(fail_return_conventions, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_channels, setup, teardown),
		cmocka_unit_test_setup_teardown(cm_events_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(connect_request_new_id, setup, teardown),
		cmocka_unit_test_setup_teardown(connect_request_qp_num, setup, teardown),
		cmocka_unit_test_setup_teardown(cq_events_and_completions, setup, teardown),
		cmocka_unit_test_setup_teardown(post_send_deep_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(post_send_before_next, setup, teardown),
		cmocka_unit_test_setup_teardown(qp_numbers_and_busy_objects, setup, teardown),
		cmocka_unit_test_setup_teardown(reg_mr_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(device_capabilities, setup, teardown),
		cmocka_unit_test_setup_teardown(native_flush_registration, setup, teardown),
		cmocka_unit_test_setup_teardown(addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(ids_and_binding, setup, teardown),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
