/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_gpspm.c -- GPSPM in the library: the set-up of a GPSPM connection,
 * what it refuses, the client side of a flush (the request, flow control,
 * the answer, every way it can fail), the target side (persisting exactly
 * what was asked, refusing everything else) and the serving thread
 *
 * One connection plays both parts: the fake has no peer, so the test writes
 * the peer's messages into the receive buffers the library posted (as the
 * fake recorded them) and pushes their receive completions.
 *
 * Requests: [0..1] magic 0x5047, [2] version 1, [3] type 1, [4..7] slot,
 * [8..11] seq, [12..15] rkey, [16..23] address, [24..31] length (32 bytes).
 * Atomic writes: the same with type 3 and [24..31] the 8 bytes to store.
 * Answers: the same header with type 2, then [12] status, [13..15] 0 (16).
 *
 * Ordering: a completion of an operation posted after a GPSPM request
 * (its completion polled after the request's send completion) is held
 * until that request's answer is in; an atomic write posted while a
 * request is unanswered is a request of its own, made by the target's CPU.
 */

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "versioned.h"

#define RADDR	     0x7f0000400000ULL
#define RLEN	     65536
#define RKEY	     0x00c0ffeeU
#define DEPTH	     5 /* receives this side keeps posted */
#define TARGET_DEPTH 3 /* receives the target keeps posted */
#define REQUEST	     1
#define ANSWER	     2
#define MAGIC	     0x5047

#define ST_OK		0
#define ST_MALFORMED	1
#define ST_NO_REGION	2
#define ST_OUT_OF_RANGE 3
#define ST_NOT_WRITABLE 4
#define ST_MISALIGNED	5
#define ST_FENCED	6
/* what a target answers to every request it refuses, whatever the reason */
#define ST_REFUSED ST_NO_REGION
/* the refusals after which the target closes the connection, with a log line of its own */
#define REFUSALS_MAX 4
#define ATOMIC_WRITE 3

#define PMEM_LEN 8192

static const int ALWAYS = RPMA_F_COMPLETION_ALWAYS;
static const int ON_ERROR = RPMA_F_COMPLETION_ON_ERROR;

/*
 * A connection and the receive buffers the library keeps posted on it, in
 * the order the test hands them to messages.
 */
struct gconn {
	struct rpma_conn *conn;
	struct rdma_cm_id *id;
	struct rpma_cq *cq;
	struct ibv_cq *icq;
	unsigned posted[1024]; /* indices of the fake's receive records, FIFO */
	unsigned head, tail;
	unsigned seen; /* receive records looked at */
};

static struct gconn g;
static struct rpma_mr_remote *rmr; /* the target's region, as this side knows it */
static struct rpma_mr_local *lmr;  /* this side's region, offered for GPSPM */
static char pmem[PMEM_LEN] __attribute__((aligned(64)));

/* what the persist functions were asked */
struct persist_call {
	int fn;
	const void *ptr;
	size_t len;
	unsigned recvs; /* receives posted when it was called */
	unsigned sends; /* sends posted when it was called */
};
static struct persist_call calls[64];
static int ncalls;

static void record(int fn, const void *ptr, size_t len)
{
	int n = __atomic_load_n(&ncalls, __ATOMIC_ACQUIRE);
	if (n < (int)(sizeof(calls) / sizeof(calls[0]))) {
		calls[n].fn = fn;
		calls[n].ptr = ptr;
		calls[n].len = len;
		calls[n].recvs = fake_verbs_recvs();
		calls[n].sends = fake_verbs_sends();
	}
	__atomic_store_n(&ncalls, n + 1, __ATOMIC_RELEASE);
}

static void persist_a(const void *ptr, size_t len)
{
	record(0, ptr, len);
}

static void persist_b(const void *ptr, size_t len)
{
	record(1, ptr, len);
}

static int persist_calls(void)
{
	return __atomic_load_n(&ncalls, __ATOMIC_ACQUIRE);
}

/* connections */

static void gconn_sync(struct gconn *c)
{
	for (; c->seen < fake_verbs_recvs(); c->seen++) {
		const struct fake_recv_record *r = fake_verbs_recv(c->seen);
		if (r->qp == c->id->qp) {
			assert_true(c->tail - c->head < 1024);
			c->posted[c->tail++ % 1024] = c->seen;
		}
	}
}

/* a connection made from cfg, which it deletes */
static void gconn_open_cfg(struct gconn *c, struct rpma_conn_cfg *cfg)
{
	memset(c, 0, sizeof(*c));
	c->seen = fake_verbs_recvs();
	c->conn = fx_conn_active(cfg, &c->id);
	fx_cfg_delete(&cfg);
	assert_int_equal(rpma_conn_get_cq(c->conn, &c->cq), 0);
	c->icq = c->id->qp->send_cq;
	gconn_sync(c);
}

static void gconn_open(struct gconn *c, enum rpma_gpspm_mode mode, uint32_t rq_size)
{
	gconn_open_cfg(c, vd_gpspm_cfg(mode, rq_size));
}

static const struct fake_recv_record *take_buffer(struct gconn *c)
{
	gconn_sync(c);
	assert_true(c->tail != c->head); /* a buffer is posted */
	return fake_verbs_recv(c->posted[c->head++ % 1024]);
}

/* the library posted the buffer of wr_id again, and last */
static void expect_reposted(struct gconn *c, const struct fake_recv_record *was)
{
	unsigned n = fake_verbs_recvs();
	assert_true(n > 0);
	const struct fake_recv_record *r = fake_verbs_recv(n - 1);
	assert_ptr_equal(r->qp, c->id->qp);
	assert_int_equal(r->wr.wr_id, was->wr.wr_id);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, was->sge[0].addr);
	assert_int_equal(r->sge[0].length, 64);
	assert_int_equal(r->sge[0].lkey, was->sge[0].lkey);
}

/* the peer's message arrives in the next posted buffer */
static const struct fake_recv_record *deliver(struct gconn *c, const void *msg, uint32_t len,
					      enum ibv_wc_opcode opcode)
{
	const struct fake_recv_record *r = take_buffer(c);
	assert_true(len <= r->sge[0].length);
	if (len)
		memcpy((void *)(uintptr_t)r->sge[0].addr, msg, len);
	struct ibv_wc wc = fx_wc(r->wr.wr_id, opcode, IBV_WC_SUCCESS);
	wc.byte_len = len;
	wc.qp_num = c->id->qp->qp_num;
	fake_verbs_push_wc(c->icq, &wc);
	return r;
}

/* the queue pair failed: every posted receive completes with status */
static void fail_receives(struct gconn *c, enum ibv_wc_status status)
{
	gconn_sync(c);
	while (c->head != c->tail) {
		const struct fake_recv_record *r = take_buffer(c);
		struct ibv_wc wc = fx_wc(r->wr.wr_id, IBV_WC_RECV, status);
		wc.qp_num = c->id->qp->qp_num;
		fake_verbs_push_wc(c->icq, &wc);
	}
}

/* messages */

static void put_header(uint8_t *m, uint8_t type, uint32_t slot, uint32_t seq)
{
	vd_put_le(m, MAGIC, 2);
	m[2] = 1;
	m[3] = type;
	vd_put_le(m + 4, slot, 4);
	vd_put_le(m + 8, seq, 4);
}

static void request_msg(uint8_t m[32], uint32_t slot, uint32_t seq, uint32_t rkey, uint64_t raddr,
			uint64_t len)
{
	put_header(m, REQUEST, slot, seq);
	vd_put_le(m + 12, rkey, 4);
	vd_put_le(m + 16, raddr, 8);
	vd_put_le(m + 24, len, 8);
}

static void answer_msg(uint8_t m[16], uint32_t slot, uint32_t seq, uint8_t status)
{
	memset(m, 0, 16);
	put_header(m, ANSWER, slot, seq);
	m[12] = status;
}

/* the client side */

struct req {
	uint64_t wr_id;
	uint32_t slot, seq;
	uint32_t rkey;
	uint64_t raddr, len;
};

static struct req parse_request(const struct fake_send_record *r)
{
	assert_ptr_equal(r->qp, g.id->qp);
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_int_equal(r->wr.send_flags, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].length, 32);
	const uint8_t *m = r->inline_data;
	assert_int_equal(m[0], 0x47); /* "GP", little-endian */
	assert_int_equal(m[1], 0x50);
	assert_int_equal(m[2], 1);
	assert_int_equal(m[3], REQUEST);
	struct req q = {
		.wr_id = r->wr.wr_id,
		.slot = (uint32_t)vd_get_le(m + 4, 4),
		.seq = (uint32_t)vd_get_le(m + 8, 4),
		.rkey = (uint32_t)vd_get_le(m + 12, 4),
		.raddr = vd_get_le(m + 16, 8),
		.len = vd_get_le(m + 24, 8),
	};
	return q;
}

static struct req flush(size_t offset, size_t len, int flags, const void *ctx)
{
	unsigned n = fake_verbs_sends();
	assert_int_equal(
	    rpma_flush(g.conn, rmr, offset, len, RPMA_FLUSH_TYPE_PERSISTENT, flags, ctx), 0);
	assert_int_equal(fake_verbs_sends(), n + 1);
	return parse_request(fake_verbs_send(n));
}

static const struct fake_recv_record *answer(struct req r, uint8_t status)
{
	uint8_t m[16];
	answer_msg(m, r.slot, r.seq, status);
	return deliver(&g, m, sizeof(m), IBV_WC_RECV);
}

/* the request's own send completes */
static void sent(struct req r, enum ibv_wc_status status)
{
	struct ibv_wc wc = fx_wc(r.wr_id, IBV_WC_SEND, status);
	wc.qp_num = g.id->qp->qp_num;
	fake_verbs_push_wc(g.icq, &wc);
}

static void expect_flush(const void *ctx, enum ibv_wc_status status)
{
	struct rpma_completion c;
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(rpma_cq_get_completion(g.cq, &c), 0);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_ptr_equal(c.op_context, ctx);
	assert_int_equal(c.op_status, status);
	if (status == IBV_WC_SUCCESS)
		assert_int_equal(c.byte_len, 0);
}

static void expect_nothing(void)
{
	struct rpma_completion c;
	assert_int_equal(rpma_cq_get_completion(g.cq, &c), RPMA_E_NO_COMPLETION);
}

/*
 * As many flushes as the target takes at a time (contexts &ctx[i]), each
 * request's send and then its answer in the CQ: the flow control is full
 * until a take handles an answer.
 */
static void flushes_sent_and_answered(int ctx[TARGET_DEPTH])
{
	struct req r[TARGET_DEPTH];
	for (int i = 0; i < TARGET_DEPTH; i++)
		r[i] = flush(0, 8, ALWAYS, &ctx[i]);
	for (int i = 0; i < TARGET_DEPTH; i++) {
		sent(r[i], IBV_WC_SUCCESS);
		answer(r[i], ST_OK);
	}
}

/* the target side */

static const struct fake_send_record *serve(const void *msg, uint32_t len)
{
	unsigned sends = fake_verbs_sends();
	const struct fake_recv_record *buf = deliver(&g, msg, len, IBV_WC_RECV);
	/* nothing of it is the application's */
	expect_nothing();
	expect_reposted(&g, buf);
	assert_int_equal(fake_verbs_sends(), sends + 1);
	return fake_verbs_send(sends);
}

static void expect_answer(const struct fake_send_record *r, uint32_t slot, uint32_t seq,
			  uint8_t status)
{
	assert_ptr_equal(r->qp, g.id->qp);
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_int_equal(r->wr.send_flags, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].length, 16);
	uint8_t want[16];
	answer_msg(want, slot, seq, status);
	assert_memory_equal(r->inline_data, want, 16);
}

/* the send of the last answer posted completes: it went out */
static void last_answer_went_out(void)
{
	struct ibv_wc wc =
	    fx_wc(fake_verbs_send(fake_verbs_sends() - 1)->wr.wr_id, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_verbs_push_wc(g.icq, &wc);
	expect_nothing();
}

/* a request for len bytes at offset of lmr, answered with status */
static void expect_served(uint64_t raddr, uint64_t len, uint32_t rkey, uint8_t status)
{
	static uint32_t seq = 1000;
	uint8_t m[32];
	request_msg(m, 7, ++seq, rkey, raddr, len);
	expect_answer(serve(m, sizeof(m)), 7, seq, status);
}

static uint64_t at(size_t offset)
{
	return (uint64_t)(uintptr_t)(pmem + offset);
}

/* set-up and teardown: this side is both a client of a GPSPM target and a target */

/* the set-up of every test of a GPSPM connection: made from cfg, which it deletes */
static int gp_setup_cfg(void **state, struct rpma_conn_cfg *cfg)
{
	fx_setup(state);
	ncalls = 0;
	gconn_open_cfg(&g, cfg);
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY,
		  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		  VD_RAW | VD_GPSPM);
	rmr = vd_decode_region(d, sizeof(d));
	vd_apply_target(g.conn, false, TARGET_DEPTH);
	lmr = fx_mr(pmem, PMEM_LEN, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	assert_int_equal(rpma_mr_set_persist_fn(lmr, persist_a), 0);
	return 0;
}

static int gp_setup(void **state)
{
	return gp_setup_cfg(state, vd_gpspm_cfg(RPMA_GPSPM_POLLED, DEPTH));
}

/* a connection timeout of TIMEOUT_MS: a silent target is probed after a quarter of it */
#define TIMEOUT_MS     40
#define PROBE_AFTER_MS (TIMEOUT_MS / 4)

static int gp_setup_short_timeout(void **state)
{
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_POLLED, DEPTH);
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, TIMEOUT_MS), 0);
	return gp_setup_cfg(state, cfg);
}

static int gp_teardown(void **state)
{
	if (lmr)
		fx_mr_dereg(&lmr);
	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&g.conn);
	return fx_teardown(state);
}

/*
 * Set-up of a GPSPM connection
 */

static struct rpma_conn_cfg *cfg_of(enum rpma_gpspm_mode mode, uint32_t cq, uint32_t sq,
				    uint32_t rq)
{
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(mode, rq);
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, cq), 0);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, sq), 0);
	return cfg;
}

/* what a GPSPM connection's queues look like, before it is connected */
static void expect_queues(struct rdma_cm_id *id, unsigned first_recv, uint32_t cq, uint32_t sq,
			  uint32_t depth)
{
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_non_null(attr);
	/*
	 * The library's sends beyond the application's, GPSPM both ways on
	 * the connection: depth requests of its own and depth answers to the
	 * peer's in flight at once, and a probe.
	 */
	assert_int_equal(attr->cap.max_send_wr, sq + 2 * depth + 1);
	assert_int_equal(attr->cap.max_recv_wr, depth);
	assert_true(attr->cap.max_inline_data >= 32);
	assert_null(attr->srq);
	/* receives complete on the main CQ, which has room for the library's work */
	assert_ptr_equal(attr->recv_cq, attr->send_cq);
	/* and those sends' completions with the receives' */
	assert_int_equal(attr->send_cq->cqe, (int)(cq + 3 * depth + 1));

	assert_int_equal(fake_verbs_recvs() - first_recv, depth);
	for (unsigned i = first_recv; i < first_recv + depth; i++) {
		const struct fake_recv_record *r = fake_verbs_recv(i);
		assert_ptr_equal(r->qp, id->qp);
		assert_int_equal(r->wr.num_sge, 1);
		assert_int_equal(r->sge[0].length, 64);
		assert_int_equal(r->sge[0].lkey, fx_lkey_of((void *)(uintptr_t)r->sge[0].addr, 64));
		/* the buffers do not overlap, and each names itself */
		for (unsigned j = first_recv; j < i; j++) {
			const struct fake_recv_record *o = fake_verbs_recv(j);
			assert_true(o->sge[0].addr + 64 <= r->sge[0].addr ||
				    r->sge[0].addr + 64 <= o->sge[0].addr);
			assert_true(o->wr.wr_id != r->wr.wr_id);
		}
	}
}

static void setup__active(void **state)
{
	(void)state;
	for (int mode = RPMA_GPSPM_POLLED; mode <= RPMA_GPSPM_THREAD; mode++) {
		struct rpma_conn_cfg *cfg = cfg_of((enum rpma_gpspm_mode)mode, 9, 7, 5);
		unsigned first = fake_verbs_recvs();
		struct rdma_cm_id *id = NULL;
		struct rpma_conn_req *req = fx_req_active(cfg, &id);
		/* the receives are there before the peer can send anything */
		assert_int_equal(fake_verbs_calls(FAKE_CONNECT), 0);
		expect_queues(id, first, 9, 7, 5);
		struct rpma_conn *conn = NULL;
		assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
		/* connecting posts no more */
		assert_int_equal(fake_verbs_recvs() - first, 5);
		fx_conn_delete(&conn);
		fx_cfg_delete(&cfg);
		fx_release();
		fx_fresh();
	}
}

static void setup__passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = cfg_of(RPMA_GPSPM_POLLED, 4, 3, 6);
	unsigned first = fake_verbs_recvs();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, NULL, 0, &id);
	/* a request not yet consented to has no queues, and no receives posted */
	assert_int_equal(fake_verbs_recvs(), first);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 1);
	expect_queues(id, first, 4, 3, 6);
	assert_int_equal(fake_verbs_recvs() - first, 6);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
}

/* the depth a connection announces in a byte: at most 255 receives */
static void setup__depth_capped(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = cfg_of(RPMA_GPSPM_POLLED, 10, 10, 1000);
	unsigned first = fake_verbs_recvs();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &id);
	expect_queues(id, first, 10, 10, 255);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_cfg_delete(&cfg);
}

/* refused before anything is created or taken */
static void expect_refused_cfg(struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = FX_POISON;
	FX_INVAL(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, cfg, &req));
	assert_ptr_equal(req, FX_POISON);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > 0);

	/* passive: the client's request stays for a configuration that works */
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, NULL, 0);
	FX_INVAL(rpma_ep_next_conn_req(ep, cfg, &req));
	assert_ptr_equal(req, FX_POISON);
	assert_int_equal(fake_verbs_cm_events_queued(evch), 1);
	req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

static void setup__refused_with_rcq(void **state)
{
	(void)state;
	for (int mode = RPMA_GPSPM_POLLED; mode <= RPMA_GPSPM_THREAD; mode++) {
		struct rpma_conn_cfg *cfg = cfg_of((enum rpma_gpspm_mode)mode, 10, 10, 10);
		assert_int_equal(rpma_conn_cfg_set_rcq_size(cfg, 4), 0);
		expect_refused_cfg(cfg);
		fx_cfg_delete(&cfg);
	}
}

static void setup__refused_with_srq(void **state)
{
	(void)state;
	for (uint32_t rcq = 0; rcq <= 8; rcq += 8) {
		struct rpma_srq_cfg *scfg = NULL;
		assert_int_equal(rpma_srq_cfg_new(&scfg), 0);
		assert_int_equal(rpma_srq_cfg_set_rcq_size(scfg, rcq), 0);
		struct rpma_srq *srq = NULL;
		assert_int_equal(rpma_srq_new(fx_peer, scfg, &srq), 0);
		struct rpma_conn_cfg *cfg = cfg_of(RPMA_GPSPM_POLLED, 10, 10, 10);
		assert_int_equal(rpma_conn_cfg_set_srq(cfg, srq), 0);
		expect_refused_cfg(cfg);
		fx_cfg_delete(&cfg);
		assert_int_equal(rpma_srq_delete(&srq), 0);
		assert_int_equal(rpma_srq_cfg_delete(&scfg), 0);
	}
}

static void setup__refused_without_rq(void **state)
{
	(void)state;
	for (int mode = RPMA_GPSPM_POLLED; mode <= RPMA_GPSPM_THREAD; mode++) {
		struct rpma_conn_cfg *cfg = cfg_of((enum rpma_gpspm_mode)mode, 10, 10, 0);
		expect_refused_cfg(cfg);
		fx_cfg_delete(&cfg);
	}
}

/*
 * A thread's connection with a shared completion channel: the channel would
 * be the thread's, and rpma_conn_wait() would take the events that wake it
 */
static void setup__refused_thread_with_shared_channel(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = cfg_of(RPMA_GPSPM_THREAD, 10, 10, 10);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	expect_refused_cfg(cfg);
	/* polled by the application, the shared channel is the application's */
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED), 0);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	int fd = -1;
	assert_int_equal(rpma_conn_get_compl_fd(conn, &fd), 0);
	assert_true(fd >= 0);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

struct new_arg {
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
};

static void new_prelude(void *arg)
{
	((struct new_arg *)arg)->req = FX_POISON;
}

static int new_run(void *arg)
{
	struct new_arg *a = arg;
	return rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, a->cfg, &a->req);
}

static void new_untouched(void *arg)
{
	assert_ptr_equal(((struct new_arg *)arg)->req, FX_POISON);
}

static void new_cleanup(void *arg, bool succeeded)
{
	if (succeeded)
		assert_int_equal(rpma_conn_req_delete(&((struct new_arg *)arg)->req), 0);
}

static const struct fx_ctor new_ctor = {
	.prelude = new_prelude,
	.run = new_run,
	.untouched = new_untouched,
	.cleanup = new_cleanup,
};

/*
 * Every rdma-core call of the set-up failing in turn: nothing left behind.
 * (RPMA_GPSPM_THREAD makes the same calls, then starts its thread, whose
 * own polls would be counted among them.)
 */
static void setup__each_provider_failure(void **state)
{
	(void)state;
	struct new_arg arg = { .cfg = cfg_of(RPMA_GPSPM_POLLED, 4, 4, 3) };
	/* ... and the GPSPM buffers' registration and their 3 receives */
	assert_true(fx_each_provider_failure(&new_ctor, &arg, EPROTO) >= 7 + 1 + 3);
	fx_cfg_delete(&arg.cfg);
}

/*
 * What a GPSPM connection refuses: the receive queue is the library's
 */

/* a refusal is logged */
#define LOGGED(refusal)                                                                            \
	do {                                                                                       \
		unsigned logged_errors_ = fx_log_count(RPMA_LOG_LEVEL_ERROR);                      \
		refusal;                                                                           \
		assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > logged_errors_);                  \
	} while (0)

static void refuses__messages(void **state)
{
	(void)state;
	static char buf[64];
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf),
					 RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV |
					     RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	LOGGED(FX_INVAL(rpma_recv(g.conn, mr, 0, 8, buf)));
	LOGGED(FX_INVAL(rpma_send(g.conn, mr, 0, 8, ALWAYS, buf)));
	LOGGED(FX_INVAL(rpma_send_with_imm(g.conn, mr, 0, 8, ALWAYS, 7, buf)));
	LOGGED(FX_INVAL(rpma_write_with_imm(g.conn, rmr, 0, mr, 0, 8, ALWAYS, 7, buf)));

	/* one-sided operations are the application's, as on any connection */
	unsigned sends = fake_verbs_sends();
	assert_int_equal(rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS, buf), 0);
	assert_int_equal(rpma_read(g.conn, mr, 0, rmr, 0, 8, ALWAYS, buf), 0);
	assert_int_equal(rpma_atomic_write(g.conn, rmr, 0, buf, ALWAYS, buf), 0);
	assert_int_equal(fake_verbs_sends(), sends + 3);
	fx_mr_dereg(&mr);
}

static void refuses__conn_req_recv(void **state)
{
	(void)state;
	static char buf[64];
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	for (int mode = RPMA_GPSPM_POLLED; mode <= RPMA_GPSPM_THREAD; mode++) {
		struct rpma_conn_cfg *cfg = cfg_of((enum rpma_gpspm_mode)mode, 10, 10, 4);
		struct rpma_conn_req *req = fx_req_active(cfg, NULL);
		unsigned recvs = fake_verbs_recvs();
		FX_INVAL(rpma_conn_req_recv(req, mr, 0, 8, buf));
		assert_int_equal(fake_verbs_recvs(), recvs);
		assert_int_equal(rpma_conn_req_delete(&req), 0);
		fx_cfg_delete(&cfg);
	}
	fx_mr_dereg(&mr);
}

/*
 * The client side of a GPSPM flush
 */

static void client__request(void **state)
{
	(void)state;
	static int ctx1, ctx2;
	struct req a = flush(100, 777, ALWAYS, &ctx1);
	assert_int_equal(a.rkey, RKEY);
	assert_int_equal(a.raddr, RADDR + 100);
	assert_int_equal(a.len, 777);
	/* the work request is named by the library, not by the context */
	assert_true(a.wr_id != (uintptr_t)&ctx1);

	struct req b = flush(RLEN - 1, 1, ON_ERROR, &ctx2);
	assert_int_equal(b.raddr, RADDR + RLEN - 1);
	assert_int_equal(b.len, 1);
	assert_int_equal(b.seq, a.seq + 1);
	assert_true(b.slot != a.slot);
	assert_true(b.wr_id != a.wr_id);
	/* even an unsignaled flush sends a signaled request: its answer must come */
	expect_nothing();
}

/* a GPSPM flush of nothing asks for nothing, and still waits for its answer */
static void client__zero_length(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(RLEN, 0, ALWAYS, &ctx);
	assert_int_equal(a.raddr, RADDR + RLEN);
	assert_int_equal(a.len, 0);
	sent(a, IBV_WC_SUCCESS);
	expect_nothing();
	answer(a, ST_OK);
	expect_flush(&ctx, IBV_WC_SUCCESS);
}

static void client__answer_after_send(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 64, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	expect_nothing();
	const struct fake_recv_record *buf = answer(a, ST_OK);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	expect_reposted(&g, buf);
	expect_nothing();
}

static void client__answer_before_send(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 64, ALWAYS, &ctx);
	const struct fake_recv_record *buf = answer(a, ST_OK);
	/*
	 * What was posted before the request may not have completed yet: the
	 * flush waits for its send's completion, which comes after theirs
	 */
	expect_nothing();
	expect_reposted(&g, buf);
	sent(a, IBV_WC_SUCCESS);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	expect_nothing();
}

/* slots come back whichever completes first: far more flushes than slots */
static void client__slots_come_back(void **state)
{
	(void)state;
	static int ctx[4];
	for (int round = 0; round < 300; round++) {
		const int *c = &ctx[round % 4];
		struct req a = flush((size_t)round, 8, ALWAYS, c);
		if (round % 2) {
			sent(a, IBV_WC_SUCCESS);
			answer(a, ST_OK);
		} else {
			answer(a, ST_OK);
			sent(a, IBV_WC_SUCCESS);
		}
		expect_flush(c, IBV_WC_SUCCESS);
		expect_nothing();
	}
}

/* as many flushes in flight as the target takes, and this side answers for */
static void client__flow_control(void **state)
{
	(void)state;
	static int ctx[8];
	struct req r[8];
	for (int i = 0; i < TARGET_DEPTH; i++)
		r[i] = flush(0, 8, i % 2 ? ON_ERROR : ALWAYS, &ctx[i]);
	/* one more must wait; nothing is posted, nothing logged as an error */
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	FX_REFUSED(RPMA_E_AGAIN, rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS,
					    &ctx[TARGET_DEPTH]));
	FX_REFUSED(RPMA_E_AGAIN, rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ON_ERROR,
					    &ctx[TARGET_DEPTH]));
	/* nor in a batch, which names the element that must wait */
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_FLUSH;
	op.flags = ALWAYS;
	op.op_context = &ctx[TARGET_DEPTH];
	op.remote = rmr;
	op.len = 8;
	op.flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
	int failed = -1;
	FX_REFUSED(RPMA_E_AGAIN, rpma_post_batch(g.conn, &op, 1, &failed));
	assert_int_equal(failed, 0);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors);
	/* read-after-write is not counted: a visibility flush goes */
	assert_int_equal(rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, ALWAYS, &ctx[7]),
			 0);

	/* the send's completion frees nothing, the answer does */
	sent(r[0], IBV_WC_SUCCESS);
	expect_nothing();
	FX_REFUSED(RPMA_E_AGAIN, rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS,
					    &ctx[TARGET_DEPTH]));
	answer(r[0], ST_OK);
	expect_flush(&ctx[0], IBV_WC_SUCCESS);
	r[TARGET_DEPTH] = flush(0, 8, ALWAYS, &ctx[TARGET_DEPTH]);
	FX_REFUSED(RPMA_E_AGAIN,
		   rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS, &ctx[6]));
	/* an unsignaled flush's answer frees its place too, without a completion */
	answer(r[1], ST_OK);
	expect_nothing();
	flush(0, 8, ALWAYS, &ctx[6]);
}

/* this side's own depth limits too, when it is the smaller */
static void client__flow_control_own_depth(void **state)
{
	(void)state;
	static int ctx[4];
	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&g.conn);
	gconn_open(&g, RPMA_GPSPM_POLLED, 2);
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, VD_RAW | VD_GPSPM);
	rmr = vd_decode_region(d, sizeof(d));
	vd_apply_target(g.conn, false, 200);
	struct req a = flush(0, 8, ALWAYS, &ctx[0]);
	flush(0, 8, ALWAYS, &ctx[1]);
	FX_REFUSED(RPMA_E_AGAIN,
		   rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS, &ctx[2]));
	answer(a, ST_OK);
	/* the answer, once taken, frees the place, before the send's completion */
	expect_nothing();
	flush(0, 8, ALWAYS, &ctx[2]);
	sent(a, IBV_WC_SUCCESS);
	expect_flush(&ctx[0], IBV_WC_SUCCESS);
}

static void client__unsignaled(void **state)
{
	(void)state;
	static int ok_ctx, bad_ctx;
	struct req ok = flush(0, 8, ON_ERROR, &ok_ctx);
	struct req bad = flush(8, 8, ON_ERROR, &bad_ctx);
	sent(ok, IBV_WC_SUCCESS);
	sent(bad, IBV_WC_SUCCESS);
	answer(ok, ST_OK);
	expect_nothing();
	/* a failure always completes */
	answer(bad, ST_OUT_OF_RANGE);
	expect_flush(&bad_ctx, IBV_WC_REM_ACCESS_ERR);
	expect_nothing();
}

/* what the target answers, as the status of the flush's completion */
static void client__status_mapping(void **state)
{
	(void)state;
	static const struct {
		uint8_t status;
		enum ibv_wc_status wc;
	} cases[] = {
		{ ST_OK, IBV_WC_SUCCESS },
		{ ST_MALFORMED, IBV_WC_REM_INV_REQ_ERR },
		{ ST_NO_REGION, IBV_WC_REM_ACCESS_ERR },
		{ ST_OUT_OF_RANGE, IBV_WC_REM_ACCESS_ERR },
		{ 4, IBV_WC_REM_ACCESS_ERR },  /* not writable */
		{ 5, IBV_WC_REM_INV_REQ_ERR }, /* misaligned */
		{ 6, IBV_WC_REM_OP_ERR },      /* fenced */
		{ 7, IBV_WC_REM_INV_REQ_ERR },
		{ 0xff, IBV_WC_REM_INV_REQ_ERR },
	};
	static int ctx;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct req a = flush(0, 8, ALWAYS, &ctx);
		sent(a, IBV_WC_SUCCESS);
		unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
		answer(a, cases[i].status);
		expect_flush(&ctx, cases[i].wc);
		/* a refusal is worth a log line */
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR),
				 errors + (cases[i].status != ST_OK));
	}
}

/* the request could not be sent: the flush fails with the send's status */
static void client__send_fails(void **state)
{
	(void)state;
	static int ctx1, ctx2, ctx3;
	struct req a = flush(0, 8, ALWAYS, &ctx1);
	struct req b = flush(0, 8, ON_ERROR, &ctx2);
	sent(a, IBV_WC_RETRY_EXC_ERR);
	sent(b, IBV_WC_RNR_RETRY_EXC_ERR);
	expect_flush(&ctx1, IBV_WC_RETRY_EXC_ERR);
	expect_flush(&ctx2, IBV_WC_RNR_RETRY_EXC_ERR);
	expect_nothing();
	/* their places are free again */
	struct req r[TARGET_DEPTH];
	for (int i = 0; i < TARGET_DEPTH; i++)
		r[i] = flush(0, 8, ALWAYS, &ctx3);
	(void)r;
	/* and an answer that comes anyway is for no flush in flight */
	answer(a, ST_OK);
	expect_nothing();
}

/*
 * The provider refuses a request's post: RPMA_E_PROVIDER with its errno,
 * logged, and neither its slot nor its place in the flow control kept, so
 * that more failures than either holds leave every flush room to go.
 */
static void client__post_fails(void **state)
{
	(void)state;
	static int ctx;
	for (int i = 0; i < 300; i++) {
		const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
		fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
		assert_int_equal(
		    rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS, &ctx),
		    RPMA_E_PROVIDER);
		assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
		assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	}
	struct req r[TARGET_DEPTH];
	for (int i = 0; i < TARGET_DEPTH; i++)
		r[i] = flush(0, 8, ALWAYS, &ctx);
	for (int i = 0; i < TARGET_DEPTH; i++) {
		sent(r[i], IBV_WC_SUCCESS);
		answer(r[i], ST_OK);
		expect_flush(&ctx, IBV_WC_SUCCESS);
	}
	expect_nothing();
}

/* the answer came, then the send reports a failure: one completion only */
static void client__send_fails_after_answer(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	answer(a, ST_OK);
	expect_nothing();
	/* the target persisted it: the answer, not the send's status, says so */
	sent(a, IBV_WC_WR_FLUSH_ERR);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	expect_nothing();
}

/* the queue pair failed: every flush waiting for an answer fails, once */
static void client__qp_fails(void **state)
{
	(void)state;
	static int ctx[3];
	struct req r[3];
	for (int i = 0; i < 3; i++) {
		r[i] = flush(0, 8, i == 2 ? ON_ERROR : ALWAYS, &ctx[i]);
		sent(r[i], IBV_WC_SUCCESS);
	}
	unsigned recvs = fake_verbs_recvs();
	fail_receives(&g, IBV_WC_WR_FLUSH_ERR);
	struct rpma_completion c[8];
	int n = rpma_cq_get_completions(g.cq, c, 8);
	assert_int_equal(n, 3);
	int seen[3] = { 0 };
	for (int i = 0; i < n; i++) {
		assert_int_equal(c[i].op, RPMA_OP_FLUSH);
		assert_int_equal(c[i].op_status, IBV_WC_WR_FLUSH_ERR);
		int which = (int)((const int *)c[i].op_context - ctx);
		assert_true(which >= 0 && which < 3);
		seen[which]++;
	}
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 1);
	assert_int_equal(seen[2], 1);
	/* a failed queue pair takes no receives back */
	assert_int_equal(fake_verbs_recvs(), recvs);
	expect_nothing();
}

/* the queue pair failed before the requests' sends were seen */
static void client__qp_fails_before_send(void **state)
{
	(void)state;
	static int ctx[3];
	struct req sent_ok = flush(0, 8, ALWAYS, &ctx[0]);
	struct req pending_ok = flush(0, 8, ALWAYS, &ctx[1]);
	struct req pending_err = flush(0, 8, ALWAYS, &ctx[2]);
	sent(sent_ok, IBV_WC_SUCCESS);
	fail_receives(&g, IBV_WC_WR_FLUSH_ERR);
	expect_flush(&ctx[0], IBV_WC_WR_FLUSH_ERR);
	expect_nothing();
	/* a send that completed although the answers cannot come any more */
	sent(pending_ok, IBV_WC_SUCCESS);
	expect_flush(&ctx[1], IBV_WC_WR_FLUSH_ERR);
	sent(pending_err, IBV_WC_WR_FLUSH_ERR);
	expect_flush(&ctx[2], IBV_WC_WR_FLUSH_ERR);
	expect_nothing();
}

/* answers to nothing: logged, dropped, their buffer posted again */
static void client__stray_answers(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	const struct req strays[] = {
		{ .slot = a.slot, .seq = a.seq + 1 },  /* the slot, another flush */
		{ .slot = a.slot + 1, .seq = a.seq },  /* a free slot */
		{ .slot = 0xffffffffU, .seq = a.seq }, /* no slot at all */
		{ .slot = 1U << 20, .seq = a.seq },    /* beyond the slots */
	};
	for (size_t i = 0; i < sizeof(strays) / sizeof(strays[0]); i++) {
		unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
		unsigned sends = fake_verbs_sends();
		const struct fake_recv_record *buf = answer(strays[i], ST_OK);
		expect_nothing();
		expect_reposted(&g, buf);
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
		assert_non_null(strstr(fx_log_last(), "no request in flight"));
		assert_int_equal(fake_verbs_sends(), sends);
	}
	/* the real answer still completes the flush, and only once */
	answer(a, ST_OK);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	answer(a, ST_OK);
	expect_nothing();
}

/* a message that is not GPSPM's, or too short to be: logged, dropped, buffer back */
static void expect_ignored(const uint8_t *m, uint32_t len, enum ibv_wc_opcode opcode)
{
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	unsigned sends = fake_verbs_sends();
	const struct fake_recv_record *buf = deliver(&g, m, len, opcode);
	expect_nothing();
	expect_reposted(&g, buf);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
	assert_int_equal(fake_verbs_sends(), sends);
}

static void client__foreign_messages(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	uint8_t good[16];
	answer_msg(good, a.slot, a.seq, ST_OK);
	uint8_t m[16];

	/* too short for a header, or for an answer */
	expect_ignored(good, 0, IBV_WC_RECV);
	expect_ignored(good, 11, IBV_WC_RECV);
	expect_ignored(good, 15, IBV_WC_RECV);
	/* someone else's magic, another version */
	memcpy(m, good, 16);
	m[0] ^= 1;
	expect_ignored(m, 16, IBV_WC_RECV);
	memcpy(m, good, 16);
	m[1] = 0;
	expect_ignored(m, 16, IBV_WC_RECV);
	memcpy(m, good, 16);
	m[2] = 2;
	expect_ignored(m, 16, IBV_WC_RECV);
	/* the peer's write with immediate data consumed a buffer */
	expect_ignored(good, 0, IBV_WC_RECV_RDMA_WITH_IMM);
	expect_ignored(good, 16, IBV_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(persist_calls(), 0);

	/* none of it completed the flush; its real answer does */
	answer(a, ST_OK);
	expect_flush(&ctx, IBV_WC_SUCCESS);
}

/* a GPSPM message of a type this library does not know is refused in kind */
static void client__unknown_type(void **state)
{
	(void)state;
	uint8_t m[32];
	request_msg(m, 9, 77, fx_mr_rkey(lmr), at(0), 8);
	m[3] = 9;
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_answer(serve(m, sizeof(m)), 9, 77, ST_REFUSED);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	assert_int_equal(persist_calls(), 0);
}

/* through the librpma 1.x interface: a flush is an RDMA read, the rest is hidden */
static void client__get_wc(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	struct ibv_wc app = fx_wc(0x1234, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	sent(a, IBV_WC_SUCCESS);
	fake_verbs_push_wc(g.icq, &app);
	answer(a, ST_OK);
	struct ibv_wc wc[4];
	memset(wc, 0, sizeof(wc));
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(g.cq, 4, wc, &got), 0);
	assert_int_equal(got, 2);
	/* the write was posted after the flush: it waited for the answer */
	assert_int_equal(wc[0].wr_id, (uintptr_t)&ctx);
	assert_int_equal(wc[0].opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	/* the connection it came from, as for any completion */
	assert_int_equal(wc[0].qp_num, g.id->qp->qp_num);
	assert_int_equal(wc[1].wr_id, 0x1234);
	assert_int_equal(wc[1].opcode, IBV_WC_RDMA_WRITE);
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, wc, NULL), RPMA_E_NO_COMPLETION);

	/* a failed one too */
	struct req b = flush(0, 8, ON_ERROR, &ctx);
	answer(b, ST_NO_REGION);
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, wc, NULL), RPMA_E_NO_COMPLETION);
	sent(b, IBV_WC_SUCCESS);
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, wc, NULL), 0);
	assert_int_equal(wc[0].wr_id, (uintptr_t)&ctx);
	assert_int_equal(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(wc[0].qp_num, g.id->qp->qp_num);
}

/*
 * More than one poll's worth: 40 completions of the application, a flush
 * (its answer before or after its send), 40 more, another flush, 5 more.
 */
static void push_many(const int ctx[2], bool answer_first)
{
	struct req r[2] = { flush(0, 8, ALWAYS, &ctx[0]), flush(0, 8, ALWAYS, &ctx[1]) };
	uintptr_t app = 1;
	for (int part = 0; part < 3; part++) {
		for (int i = 0; i < (part < 2 ? 40 : 5); i++, app++) {
			struct ibv_wc w = fx_wc(app, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
			fake_verbs_push_wc(g.icq, &w);
		}
		if (part == 2)
			break;
		if (answer_first) {
			answer(r[part], ST_OK);
			sent(r[part], IBV_WC_SUCCESS);
		} else {
			sent(r[part], IBV_WC_SUCCESS);
			answer(r[part], ST_OK);
		}
	}
}

static void expect_many(const int ctx[2], const uint64_t *wr_id, const bool *is_flush, int got)
{
	assert_int_equal(got, 87);
	uintptr_t next = 1;
	for (int i = 0; i < got; i++) {
		if (i == 40 || i == 81) {
			assert_int_equal(wr_id[i], (uintptr_t)&ctx[i == 81]);
			assert_true(is_flush[i]);
		} else {
			assert_int_equal(wr_id[i], next++);
			assert_false(is_flush[i]);
		}
	}
	expect_nothing();
}

static void client__get_wc_many(void **state)
{
	(void)state;
	static int ctx[2];
	uint64_t wr_id[100];
	bool is_flush[100];
	for (int answer_first = 0; answer_first <= 1; answer_first++) {
		push_many(ctx, answer_first);
		struct ibv_wc wc[100];
		int got = 0;
		assert_int_equal(rpma_cq_get_wc(g.cq, 100, wc, &got), 0);
		for (int i = 0; i < got; i++) {
			wr_id[i] = wc[i].wr_id;
			is_flush[i] = wc[i].opcode == IBV_WC_RDMA_READ;
		}
		expect_many(ctx, wr_id, is_flush, got);

		push_many(ctx, answer_first);
		struct rpma_completion c[100];
		got = rpma_cq_get_completions(g.cq, c, 100);
		for (int i = 0; i < got; i++) {
			wr_id[i] = (uintptr_t)c[i].op_context;
			is_flush[i] = c[i].op == RPMA_OP_FLUSH;
		}
		expect_many(ctx, wr_id, is_flush, got);
	}
}

/* a receive that fails for another reason than a failing queue pair */
static void client__receive_fails(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	const struct fake_recv_record *r = take_buffer(&g);
	struct ibv_wc wc = fx_wc(r->wr.wr_id, IBV_WC_RECV, IBV_WC_LOC_PROT_ERR);
	fake_verbs_push_wc(g.icq, &wc);
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_flush(&ctx, IBV_WC_LOC_PROT_ERR);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	expect_nothing();
}

/*
 * A target gone silent: once a request's send completed, nothing of it is
 * left for the transport to retransmit, so the library probes the
 * connection when polls find nothing for a quarter of its timeout
 */

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* the probe the library posted as send record n */
static uint64_t expect_probe(unsigned n)
{
	const struct fake_send_record *p = fake_verbs_send(n);
	assert_ptr_equal(p->qp, g.id->qp);
	assert_int_equal(p->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(p->wr.num_sge, 0);
	/* signaled, so that a target that is there is seen to be; never fenced */
	assert_int_equal(p->wr.send_flags, IBV_SEND_SIGNALED);
	return p->wr.wr_id;
}

/* the probe's own work request completes */
static void probe_completes(uint64_t probe, enum ibv_wc_status status)
{
	struct ibv_wc wc = fx_wc(probe, IBV_WC_RDMA_WRITE, status);
	fake_verbs_push_wc(g.icq, &wc);
}

/* polls that find nothing for longer than the probe time: one probe, posted once */
static unsigned silent_for_probe_time(void)
{
	unsigned sends = fake_verbs_sends();
	expect_nothing(); /* takes what completed last, the library's own */
	expect_nothing(); /* finds nothing: the silence starts */
	sleep_ms(2 * PROBE_AFTER_MS);
	expect_nothing(); /* it lasted: a probe */
	assert_int_equal(fake_verbs_sends(), sends + 1);
	return sends;
}

static void probe__fails_the_flushes_waiting(void **state)
{
	(void)state;
	static int ctx[2];
	struct req a = flush(0, 8, ALWAYS, &ctx[0]);
	struct req b = flush(8, 8, ON_ERROR, &ctx[1]);
	sent(a, IBV_WC_SUCCESS);
	sent(b, IBV_WC_SUCCESS);
	unsigned n = silent_for_probe_time();
	uint64_t probe = expect_probe(n);
	/* a probe in flight: no other, however long the silence */
	sleep_ms(2 * PROBE_AFTER_MS);
	expect_nothing();
	assert_int_equal(fake_verbs_sends(), n + 1);

	/* the transport gave up on it: so do the flushes, with its status */
	probe_completes(probe, IBV_WC_RETRY_EXC_ERR);
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_flush(&ctx[0], IBV_WC_RETRY_EXC_ERR);
	expect_flush(&ctx[1], IBV_WC_RETRY_EXC_ERR);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	expect_nothing();
	/* the receives the failed queue pair flushes add nothing */
	fail_receives(&g, IBV_WC_WR_FLUSH_ERR);
	expect_nothing();
	/* and a connection that failed is not probed again */
	sleep_ms(2 * PROBE_AFTER_MS);
	expect_nothing();
	assert_int_equal(fake_verbs_sends(), n + 1);
}

static void probe__acknowledged_is_not_a_completion(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	unsigned n = silent_for_probe_time();
	uint64_t probe = expect_probe(n);
	probe_completes(probe, IBV_WC_SUCCESS);
	/* the target is there, only slow: nothing for the application, the flush waits */
	expect_nothing();
	/* still silent: probed again, after the probe time once more */
	n = silent_for_probe_time();
	probe = expect_probe(n);
	probe_completes(probe, IBV_WC_SUCCESS);
	answer(a, ST_OK);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	expect_nothing();
	/* nothing awaited: no probe */
	sleep_ms(2 * PROBE_AFTER_MS);
	expect_nothing();
	assert_int_equal(fake_verbs_sends(), n + 1);
}

/* a probe's completion flushed by a queue pair that failed: the flushes get their own */
static void probe__flushed(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	uint64_t probe = expect_probe(silent_for_probe_time());
	probe_completes(probe, IBV_WC_WR_FLUSH_ERR);
	expect_nothing();
	fail_receives(&g, IBV_WC_WR_FLUSH_ERR);
	expect_flush(&ctx, IBV_WC_WR_FLUSH_ERR);
	expect_nothing();
}

/* no probe while a request's send is in flight (the transport retransmits it) */
static void probe__not_before_the_send_completes(void **state)
{
	(void)state;
	static int ctx;
	unsigned sends = fake_verbs_sends();
	struct req a = flush(0, 8, ALWAYS, &ctx);
	expect_nothing();
	sleep_ms(2 * PROBE_AFTER_MS);
	expect_nothing();
	assert_int_equal(fake_verbs_sends(), sends + 1); /* the request alone */
	/* completions heard end a silence: the next starts with the next empty poll */
	sent(a, IBV_WC_SUCCESS);
	expect_nothing();
	assert_int_equal(fake_verbs_sends(), sends + 1);
}

/* a probe that cannot be posted: logged, and tried again by a later poll */
static void probe__post_fails(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	unsigned sends = fake_verbs_sends();
	expect_nothing(); /* the send's completion */
	expect_nothing(); /* the silence starts */
	sleep_ms(2 * PROBE_AFTER_MS);
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_nothing();
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	assert_int_equal(fake_verbs_sends(), sends);
	expect_nothing();
	expect_probe(sends);
}

/* a thread asleep in a wait probes too: no poll finds the silence for it */
static void probe__while_waiting(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	unsigned sends = fake_verbs_sends();
	struct rpma_completion c;
	assert_int_equal(rpma_cq_wait_completion(g.cq, &c, 8 * PROBE_AFTER_MS),
			 RPMA_E_NO_COMPLETION);
	assert_int_equal(fake_verbs_sends(), sends + 1);
	expect_probe(sends);
}

/* many at once, among the application's own completions */
static void client__get_completions(void **state)
{
	(void)state;
	static int ctx[3];
	struct req r[3];
	for (int i = 0; i < 3; i++)
		r[i] = flush(0, 8, ALWAYS, &ctx[i]);
	struct ibv_wc w1 = fx_wc(0x11, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	struct ibv_wc w2 = fx_wc(0x22, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	/* answers come in the order of the requests, sometimes before their sends */
	sent(r[0], IBV_WC_SUCCESS);
	fake_verbs_push_wc(g.icq, &w1);
	answer(r[0], ST_OK);
	answer(r[1], ST_OK); /* before its send */
	sent(r[1], IBV_WC_SUCCESS);
	fake_verbs_push_wc(g.icq, &w2);
	answer(r[2], ST_MALFORMED);
	sent(r[2], IBV_WC_SUCCESS);

	/* in post order: each operation after the flushes posted before it */
	struct rpma_completion c[8];
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 8), 5);
	assert_ptr_equal(c[0].op_context, &ctx[0]);
	assert_int_equal(c[0].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[1].op_context, (void *)0x11);
	assert_int_equal(c[1].op, RPMA_OP_WRITE);
	assert_ptr_equal(c[2].op_context, &ctx[1]);
	assert_int_equal(c[2].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[3].op_context, (void *)0x22);
	assert_int_equal(c[3].op, RPMA_OP_READ);
	assert_ptr_equal(c[4].op_context, &ctx[2]);
	assert_int_equal(c[4].op, RPMA_OP_FLUSH);
	assert_int_equal(c[4].op_status, IBV_WC_REM_INV_REQ_ERR);
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 8), 0);
}

/* one completion at a time, when the library's own come in between */
static void client__get_completions_one_by_one(void **state)
{
	(void)state;
	static int ctx[2];
	struct req a = flush(0, 8, ALWAYS, &ctx[0]);
	struct req b = flush(0, 8, ALWAYS, &ctx[1]);
	sent(a, IBV_WC_SUCCESS);
	sent(b, IBV_WC_SUCCESS);
	answer(a, ST_OK);
	answer(b, ST_OK);
	struct rpma_completion c[1];
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 1), 1);
	assert_ptr_equal(c[0].op_context, &ctx[0]);
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 1), 1);
	assert_ptr_equal(c[0].op_context, &ctx[1]);
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 1), 0);
}

/*
 * An initiator's take handles no more than it has room for: each answer
 * it handles gives its flush's place back, so that taking one flush's
 * completion frees one place, and the flushes posted and not taken never
 * outnumber what the target takes at a time. What its poll read beyond
 * that waits, unhandled, for the next takes.
 */
static void client__a_take_frees_one_place(void **state)
{
	(void)state;
	static int ctx[TARGET_DEPTH + 1];
	flushes_sent_and_answered(ctx);
	expect_flush(&ctx[0], IBV_WC_SUCCESS);
	/* the other requests' sends and answers were polled with the first's, not handled */
	assert_int_equal(fake_verbs_wcs_queued(g.icq), 0);
	flush(0, 8, ALWAYS, &ctx[TARGET_DEPTH]);
	FX_REFUSED(RPMA_E_AGAIN, rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS,
					    &ctx[TARGET_DEPTH]));
	for (int i = 1; i < TARGET_DEPTH; i++)
		expect_flush(&ctx[i], IBV_WC_SUCCESS);
	expect_nothing();
}

/*
 * The target side
 */

static void target__persists_the_range(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	uint8_t m[32];
	request_msg(m, 5, 0x01020304, rkey, at(100), 300);
	const unsigned recvs = fake_verbs_recvs();
	const unsigned sends = fake_verbs_sends();
	const struct fake_send_record *r = serve(m, sizeof(m));
	expect_answer(r, 5, 0x01020304, ST_OK);
	assert_int_equal(persist_calls(), 1);
	assert_int_equal(calls[0].fn, 0);
	assert_ptr_equal(calls[0].ptr, pmem + 100);
	assert_int_equal(calls[0].len, 300);
	/* the buffer went back before the persist, the answer after it */
	assert_int_equal(calls[0].recvs, recvs + 1);
	assert_int_equal(calls[0].sends, sends);

	/* the answer's own completion is the library's */
	assert_true(r->wr.wr_id != 0);
	struct ibv_wc wc = fx_wc(r->wr.wr_id, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_verbs_push_wc(g.icq, &wc);
	expect_nothing();
	/* a flushed one too: the queue pair is down already */
	wc.status = IBV_WC_WR_FLUSH_ERR;
	fake_verbs_push_wc(g.icq, &wc);
	expect_nothing();
	assert_int_equal(fake_verbs_id_calls(g.id, FAKE_DISCONNECT), 0);
	/*
	 * A failed one is logged, and the connection closed: the initiator
	 * would wait for that answer forever
	 */
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	wc.status = IBV_WC_RETRY_EXC_ERR;
	fake_verbs_push_wc(g.icq, &wc);
	expect_nothing();
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	assert_int_equal(fake_verbs_id_calls(g.id, FAKE_DISCONNECT), 1);
}

/* an answer that cannot be posted closes the connection too */
static void target__answer_not_posted(void **state)
{
	(void)state;
	uint8_t m[32];
	request_msg(m, 6, 77, fx_mr_rkey(lmr), at(0), 64);
	const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	deliver(&g, m, sizeof(m), IBV_WC_RECV);
	expect_nothing();
	assert_int_equal(persist_calls(), 1);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	assert_int_equal(fake_verbs_id_calls(g.id, FAKE_DISCONNECT), 1);
}

static void target__edges(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	expect_served(at(0), PMEM_LEN, rkey, ST_OK);
	expect_served(at(PMEM_LEN - 1), 1, rkey, ST_OK);
	assert_int_equal(persist_calls(), 2);
	assert_ptr_equal(calls[0].ptr, pmem);
	assert_int_equal(calls[0].len, PMEM_LEN);
	assert_ptr_equal(calls[1].ptr, pmem + PMEM_LEN - 1);
	assert_int_equal(calls[1].len, 1);
	/* nothing to persist: an answer, no call */
	expect_served(at(0), 0, rkey, ST_OK);
	expect_served(at(PMEM_LEN), 0, rkey, ST_OK);
	assert_int_equal(persist_calls(), 2);
}

static void target__wrong_rkey(void **state)
{
	(void)state;
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_served(at(0), 8, fx_mr_rkey(lmr) + 1, ST_REFUSED);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
	assert_non_null(strstr(fx_log_last(), "rkey"));
	assert_int_equal(persist_calls(), 0);
}

static void target__out_of_range(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	const struct {
		uint64_t raddr, len;
	} cases[] = {
		{ at(0) - 1, 8 },				    /* starts before */
		{ at(0) - 1, 1 },	   { at(PMEM_LEN - 8), 9 }, /* ends after */
		{ at(PMEM_LEN), 1 },	   { at(PMEM_LEN) + 1, 0 }, /* empty, but beyond */
		{ at(0), PMEM_LEN + 1 },   { at(8), UINT64_MAX },   /* overflows */
		{ at(8), UINT64_MAX - 7 }, { UINT64_MAX - 3, 16 },  { UINT64_MAX, 1 }, { 0, 8 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
		expect_served(cases[i].raddr, cases[i].len, rkey, ST_REFUSED);
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR),
				 errors + 1 + (i + 1 == REFUSALS_MAX));
		last_answer_went_out();
	}
	assert_int_equal(persist_calls(), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DISCONNECT), 1);
}

/* a region withdrawn from GPSPM, or gone, is not persisted any more */
static void target__withdrawn(void **state)
{
	(void)state;
	static char other[3][1024] __attribute__((aligned(64)));
	struct rpma_mr_local *mr[3];
	uint32_t rkey[3];
	for (int i = 0; i < 3; i++) {
		mr[i] = fx_mr(other[i], sizeof(other[i]), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
		rkey[i] = fx_mr_rkey(mr[i]);
		assert_int_equal(rpma_mr_set_persist_fn(mr[i], i == 1 ? persist_b : persist_a), 0);
	}
	const uint64_t base1 = (uint64_t)(uintptr_t)other[1];
	expect_served(base1 + 16, 32, rkey[1], ST_OK);
	assert_int_equal(persist_calls(), 1);
	assert_int_equal(calls[0].fn, 1);
	assert_ptr_equal(calls[0].ptr, other[1] + 16);

	/* withdrawn: refused, and the others still served with their own functions */
	assert_int_equal(rpma_mr_set_persist_fn(mr[1], NULL), 0);
	expect_served(base1 + 16, 32, rkey[1], ST_NO_REGION);
	expect_served((uint64_t)(uintptr_t)other[0], 8, rkey[0], ST_OK);
	expect_served((uint64_t)(uintptr_t)other[2], 8, rkey[2], ST_OK);
	expect_served(at(8), 8, fx_mr_rkey(lmr), ST_OK);
	assert_int_equal(persist_calls(), 4);
	assert_ptr_equal(calls[1].ptr, other[0]);
	assert_ptr_equal(calls[2].ptr, other[2]);
	assert_ptr_equal(calls[3].ptr, pmem + 8);

	/* offered again, with another function */
	assert_int_equal(rpma_mr_set_persist_fn(mr[1], persist_a), 0);
	expect_served(base1, 8, rkey[1], ST_OK);
	assert_int_equal(calls[4].fn, 0);

	/* deregistered while offered: refused */
	fx_mr_dereg(&mr[0]);
	expect_served((uint64_t)(uintptr_t)other[0], 8, rkey[0], ST_NO_REGION);
	const uint32_t lmr_rkey = fx_mr_rkey(lmr);
	fx_mr_dereg(&lmr);
	expect_served(at(8), 8, lmr_rkey, ST_NO_REGION);
	expect_served((uint64_t)(uintptr_t)other[2], 8, rkey[2], ST_OK);
	assert_int_equal(persist_calls(), 6);
	fx_mr_dereg(&mr[2]);
	fx_mr_dereg(&mr[1]);
}

static void target__short_request(void **state)
{
	(void)state;
	uint8_t m[32];
	request_msg(m, 3, 44, fx_mr_rkey(lmr), at(0), 8);
	for (uint32_t len = 12; len < 32; len++) {
		unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
		expect_answer(serve(m, len), 3, 44, ST_REFUSED);
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR),
				 errors + 1 + (len - 11 == REFUSALS_MAX));
	}
	assert_int_equal(persist_calls(), 0);
	/* the whole request, for comparison */
	expect_answer(serve(m, 32), 3, 44, ST_OK);
	/* and a longer one (a later version's) is served from its first 32 bytes */
	uint8_t longer[64];
	memset(longer, 0xab, sizeof(longer));
	memcpy(longer, m, 32);
	expect_answer(serve(longer, 64), 3, 44, ST_OK);
	assert_int_equal(persist_calls(), 2);
}

/* requests between the application's completions: only those come out */
static void target__hidden_among_completions(void **state)
{
	(void)state;
	uint8_t m[32];
	request_msg(m, 1, 1, fx_mr_rkey(lmr), at(0), 64);
	struct ibv_wc w1 = fx_wc(0x31, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	struct ibv_wc w2 = fx_wc(0x32, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	fake_verbs_push_wc(g.icq, &w1);
	deliver(&g, m, sizeof(m), IBV_WC_RECV);
	fake_verbs_push_wc(g.icq, &w2);
	deliver(&g, m, sizeof(m), IBV_WC_RECV);
	struct rpma_completion c[4];
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 4), 2);
	assert_ptr_equal(c[0].op_context, (void *)0x31);
	assert_ptr_equal(c[1].op_context, (void *)0x32);
	assert_int_equal(persist_calls(), 2);

	/* and through the 1.x interface */
	fake_verbs_push_wc(g.icq, &w1);
	deliver(&g, m, sizeof(m), IBV_WC_RECV);
	struct ibv_wc wc[4];
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(g.cq, 4, wc, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(wc[0].wr_id, 0x31);
	deliver(&g, m, sizeof(m), IBV_WC_RECV);
	assert_int_equal(rpma_cq_get_wc(g.cq, 4, wc, &got), RPMA_E_NO_COMPLETION);
	assert_int_equal(persist_calls(), 4);
}

/*
 * A pure target (it sends no request) reads what its CQ holds with one
 * poll: the completion of an answer it sent, a request to serve, and the
 * application's completions behind them; those that a take of one has no
 * room for are held and come with the next takes, in order, once each,
 * without another poll.
 */
static void target__one_poll_for_a_take(void **state)
{
	(void)state;
	struct gconn t;
	gconn_open(&t, RPMA_GPSPM_POLLED, DEPTH);
	uint8_t m[32];
	request_msg(m, 1, 1, fx_mr_rkey(lmr), at(0), 64);
	unsigned sends = fake_verbs_sends();
	deliver(&t, m, sizeof(m), IBV_WC_RECV);
	struct rpma_completion c;
	assert_int_equal(rpma_cq_get_completion(t.cq, &c), RPMA_E_NO_COMPLETION);
	assert_int_equal(persist_calls(), 1);
	assert_int_equal(fake_verbs_sends(), sends + 1);

	struct ibv_wc went = fx_wc(fake_verbs_send(sends)->wr.wr_id, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_verbs_push_wc(t.icq, &went);
	request_msg(m, 2, 2, fx_mr_rkey(lmr), at(64), 64);
	deliver(&t, m, sizeof(m), IBV_WC_RECV);
	struct ibv_wc w1 = fx_wc(0x41, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	struct ibv_wc w2 = fx_wc(0x42, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	fake_verbs_push_wc(t.icq, &w1);
	fake_verbs_push_wc(t.icq, &w2);

	const unsigned polls = fake_verbs_calls(FAKE_POLL_CQ);
	assert_int_equal(rpma_cq_get_completion(t.cq, &c), 0);
	assert_ptr_equal(c.op_context, (void *)0x41);
	assert_int_equal(c.op, RPMA_OP_WRITE);
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), polls + 1);
	assert_int_equal(fake_verbs_wcs_queued(t.icq), 0);
	assert_int_equal(persist_calls(), 2);
	struct ibv_wc wc;
	int got = 0;
	assert_int_equal(rpma_cq_get_wc(t.cq, 1, &wc, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(wc.wr_id, 0x42);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	/* the held one came without a poll */
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), polls + 1);
	assert_int_equal(rpma_cq_get_completion(t.cq, &c), RPMA_E_NO_COMPLETION);
	fx_conn_delete(&t.conn);
}

/* a pure target serves while it waits for completions that never come */
static void target__served_while_waiting(void **state)
{
	(void)state;
	uint8_t m[32];
	request_msg(m, 2, 2, fx_mr_rkey(lmr), at(64), 64);
	deliver(&g, m, sizeof(m), IBV_WC_RECV);
	fake_verbs_push_cq_event(g.icq->channel, g.icq);
	struct rpma_completion c;
	assert_int_equal(rpma_cq_wait_completion(g.cq, &c, 50), RPMA_E_NO_COMPLETION);
	assert_int_equal(persist_calls(), 1);
	assert_ptr_equal(calls[0].ptr, pmem + 64);
	assert_int_equal(fake_verbs_cq_events_queued(g.icq->channel), 0);
}

/*
 * Several threads poll a target's CQ: a request is served, and answered,
 * before a later one, even when its persist function is slow and another
 * thread polls the later one meanwhile.
 */
static int slow_inside;

static void persist_slow_first(const void *ptr, size_t len)
{
	if (ptr == pmem) {
		__atomic_store_n(&slow_inside, 1, __ATOMIC_RELEASE);
		usleep(100000);
	}
	record(0, ptr, len);
}

static void *poll_once(void *arg)
{
	(void)arg;
	struct rpma_completion c;
	assert_int_equal(rpma_cq_get_completion(g.cq, &c), RPMA_E_NO_COMPLETION);
	return NULL;
}

static void target__answers_in_order_whoever_polls(void **state)
{
	(void)state;
	assert_int_equal(rpma_mr_set_persist_fn(lmr, persist_slow_first), 0);
	const uint32_t rkey = fx_mr_rkey(lmr);
	uint8_t m[2][32];
	request_msg(m[0], 1, 100, rkey, at(0), 64);
	request_msg(m[1], 2, 101, rkey, at(64), 64);
	const unsigned sends = fake_verbs_sends();
	__atomic_store_n(&slow_inside, 0, __ATOMIC_RELEASE);

	deliver(&g, m[0], sizeof(m[0]), IBV_WC_RECV);
	pthread_t first, second;
	assert_int_equal(pthread_create(&first, NULL, poll_once, NULL), 0);
	while (!__atomic_load_n(&slow_inside, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* the first request is being persisted: the second comes, another thread polls */
	deliver(&g, m[1], sizeof(m[1]), IBV_WC_RECV);
	assert_int_equal(pthread_create(&second, NULL, poll_once, NULL), 0);
	assert_int_equal(pthread_join(first, NULL), 0);
	assert_int_equal(pthread_join(second, NULL), 0);

	assert_int_equal(persist_calls(), 2);
	assert_ptr_equal(calls[0].ptr, pmem);
	assert_ptr_equal(calls[1].ptr, pmem + 64);
	assert_int_equal(fake_verbs_sends(), sends + 2);
	expect_answer(fake_verbs_send(sends), 1, 100, ST_OK);
	expect_answer(fake_verbs_send(sends + 1), 2, 101, ST_OK);
}

/*
 * RPMA_GPSPM_THREAD: a library thread serves the connection
 */

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * The threads of the process, once they are n again: a thread that was
 * joined has exited, but the kernel drops it from /proc/self/task a
 * moment later (after it wakes the joiner), which a loaded machine can
 * stretch. A thread that is still running never goes: then n is not
 * reached within 2 s and the count is returned as it is.
 */
static int count_threads_settled(int n)
{
	int now = count_threads();
	for (int i = 0; i < 2000 && now != n; i++) {
		usleep(1000);
		now = count_threads();
	}
	return now;
}

static bool wait_until_sends(unsigned n)
{
	for (int i = 0; i < 5000; i++) {
		if (fake_verbs_sends() >= n)
			return true;
		usleep(1000);
	}
	return false;
}

static void wait_until_polled(void)
{
	for (int i = 0; i < 5000 && fake_verbs_calls(FAKE_POLL_CQ) == 0; i++)
		usleep(1000);
	assert_true(fake_verbs_calls(FAKE_POLL_CQ) > 0);
	usleep(20000); /* then it sleeps on the channel */
}

static void thread__serves_and_stops(void **state)
{
	(void)state;
	const int before = count_threads();
	struct gconn t;
	gconn_open(&t, RPMA_GPSPM_THREAD, 4);
	assert_int_equal(count_threads(), before + 1);
	wait_until_polled();

	const uint32_t rkey = fx_mr_rkey(lmr);
	for (int i = 0; i < 3; i++) {
		uint8_t m[32];
		request_msg(m, (uint32_t)i, 500 + (uint32_t)i, rkey, at(128 * (size_t)i), 128);
		unsigned sends = fake_verbs_sends();
		deliver(&t, m, sizeof(m), IBV_WC_RECV);
		/* the thread sleeps on the CQ's channel until the completion's event */
		fake_verbs_push_cq_event(t.icq->channel, t.icq);
		assert_true(wait_until_sends(sends + 1));
		const struct fake_send_record *r = fake_verbs_send(sends);
		assert_ptr_equal(r->qp, t.id->qp);
		uint8_t want[16];
		answer_msg(want, (uint32_t)i, 500 + (uint32_t)i, ST_OK);
		assert_memory_equal(r->inline_data, want, 16);
		assert_int_equal(persist_calls(), i + 1);
		assert_ptr_equal(calls[i].ptr, pmem + 128 * i);
		assert_int_equal(calls[i].len, 128);
	}
	/* each event was taken, acknowledged and the CQ armed again */
	for (int i = 0; i < 5000 && fake_verbs_cq_acks(t.icq) < 3; i++)
		usleep(1000);
	assert_int_equal(fake_verbs_cq_acks(t.icq), 3);
	assert_int_equal(fake_verbs_cq_events_queued(t.icq->channel), 0);

	/* deleting the connection stops the thread */
	fx_conn_delete(&t.conn);
	assert_int_equal(count_threads_settled(before), before);
}

/* the application's completions on such a connection are dropped, not kept */
static void thread__drops_other_completions(void **state)
{
	(void)state;
	struct gconn t;
	gconn_open(&t, RPMA_GPSPM_THREAD, 2);
	wait_until_polled();
	struct ibv_wc w = fx_wc(0x77, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	fake_verbs_push_wc(t.icq, &w);
	fake_verbs_push_cq_event(t.icq->channel, t.icq);
	for (int i = 0; i < 5000 && fake_verbs_wcs_queued(t.icq) > 0; i++)
		usleep(1000);
	assert_int_equal(fake_verbs_wcs_queued(t.icq), 0);
	fx_conn_delete(&t.conn);
}

/*
 * The device is removed: the CQ's channel stays readable and its events
 * cannot be read. The thread says so once and stops polling, rather than
 * spin; deleting the connection still stops it.
 */
static void thread__stops_on_a_lost_channel(void **state)
{
	(void)state;
	const int before = count_threads();
	struct gconn t;
	gconn_open(&t, RPMA_GPSPM_THREAD, 4);
	wait_until_polled();
	const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	const unsigned polls = fake_verbs_calls(FAKE_POLL_CQ);
	fake_verbs_break_comp_channel(t.icq->channel);
	for (int i = 0; i < 5000 && fx_log_count(RPMA_LOG_LEVEL_ERROR) == errors; i++)
		usleep(1000);
	usleep(200000);
	/* a spinning thread polls thousands of times in 0.2 s; this one looked once more */
	assert_in_range(fake_verbs_calls(FAKE_POLL_CQ) - polls, 1, 3);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
	fx_conn_delete(&t.conn);
	assert_int_equal(count_threads_settled(before), before);
}

/* a GPSPM connection served by the library's thread that polls spin_us after each entry */
static void gconn_open_spinning(struct gconn *c, uint32_t spin_us)
{
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_THREAD, 4);
	assert_int_equal(rpma_conn_cfg_set_gpspm_spin(cfg, spin_us), 0);
	gconn_open_cfg(c, cfg);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * While the thread spins (it has just started, with a spin of a second), a
 * request is served without any event of the CQ's channel: the wake-up a
 * sleeping thread needs is saved.
 */
static void thread__spin_serves_without_event(void **state)
{
	(void)state;
	struct gconn t;
	gconn_open_spinning(&t, RPMA_GPSPM_SPIN_US_MAX);
	const uint32_t rkey = fx_mr_rkey(lmr);
	for (int i = 0; i < 3; i++) {
		uint8_t m[32];
		request_msg(m, (uint32_t)i, 700 + (uint32_t)i, rkey, at(64 * (size_t)i), 64);
		unsigned sends = fake_verbs_sends();
		deliver(&t, m, sizeof(m), IBV_WC_RECV);
		assert_true(wait_until_sends(sends + 1));
		uint8_t want[16];
		answer_msg(want, (uint32_t)i, 700 + (uint32_t)i, ST_OK);
		assert_memory_equal(fake_verbs_send(sends)->inline_data, want, 16);
	}
	assert_int_equal(persist_calls(), 3);
	assert_int_equal(fake_verbs_cq_acks(t.icq), 0);
	fx_conn_delete(&t.conn);
}

/*
 * The spin is bounded: once it is over, the thread sleeps on the channel
 * (it stops polling), and a request is served only after the channel's
 * event; with a spin of 0 it sleeps at once.
 */
static void thread__spin_ends_in_sleep(void **state)
{
	(void)state;
	static const uint32_t spins[] = { 0, 2000 };
	for (size_t k = 0; k < sizeof(spins) / sizeof(spins[0]); k++) {
		struct gconn t;
		gconn_open_spinning(&t, spins[k]);
		wait_until_polled();
		usleep(spins[k] + 50000); /* the spin is over */
		const unsigned polls = fake_verbs_calls(FAKE_POLL_CQ);
		usleep(100000);
		assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), polls);

		const uint32_t rkey = fx_mr_rkey(lmr);
		uint8_t m[32];
		request_msg(m, 1, 800 + (uint32_t)k, rkey, at(0), 64);
		unsigned sends = fake_verbs_sends();
		const int persisted = persist_calls();
		deliver(&t, m, sizeof(m), IBV_WC_RECV);
		usleep(50000);
		assert_int_equal(fake_verbs_sends(), sends); /* asleep: not served yet */
		fake_verbs_push_cq_event(t.icq->channel, t.icq);
		assert_true(wait_until_sends(sends + 1));
		assert_int_equal(persist_calls(), persisted + 1);
		fx_conn_delete(&t.conn);
	}
}

/* a thread in the middle of a long spin stops at once when its connection goes */
static void thread__stops_while_spinning(void **state)
{
	(void)state;
	const int before = count_threads();
	struct gconn t;
	gconn_open_spinning(&t, RPMA_GPSPM_SPIN_US_MAX);
	for (int i = 0; i < 5000 && fake_verbs_calls(FAKE_POLL_CQ) < 2; i++)
		usleep(100);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fx_conn_delete(&t.conn);
	/* waiting out the spin would take a second */
	assert_true(seconds_since(&t0) < 0.5);
	assert_int_equal(count_threads_settled(before), before);
}

/* a request rejected (the passive side) stops its thread as well */
static void thread__stops_with_request(void **state)
{
	(void)state;
	const int before = count_threads();
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = cfg_of(RPMA_GPSPM_THREAD, 4, 4, 4);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, NULL, 0, NULL);
	/* none for a request not yet consented to; offering a region is consent */
	assert_int_equal(count_threads(), before);
	static char area[256] __attribute__((aligned(64)));
	struct rpma_mr_local *mr = fx_mr(area, sizeof(area), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	assert_int_equal(rpma_mr_set_persist_fn(mr, persist_a), 0);
	assert_int_equal(rpma_conn_req_gpspm_offer(req, mr), 0);
	assert_int_equal(count_threads(), before + 1);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(count_threads_settled(before), before);
	fx_mr_dereg(&mr);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
}

/* the connection carries nothing of the application's, and its CQ is the thread's */
static void thread__refuses_everything(void **state)
{
	(void)state;
	static char buf[64];
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf),
					 RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV |
					     RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	struct gconn t;
	gconn_open(&t, RPMA_GPSPM_THREAD, 4);
	vd_apply_target(t.conn, true, TARGET_DEPTH);
	wait_until_polled();
	const unsigned sends = fake_verbs_sends();
	const unsigned recvs = fake_verbs_recvs();
	static const char v[8] = "1234567";

	LOGGED(assert_int_equal(rpma_read(t.conn, mr, 0, rmr, 0, 8, ALWAYS, buf), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_write(t.conn, rmr, 0, mr, 0, 8, ALWAYS, buf), RPMA_E_INVAL));
	LOGGED(
	    assert_int_equal(rpma_write(t.conn, NULL, 0, NULL, 0, 0, ON_ERROR, buf), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_write_with_imm(t.conn, rmr, 0, mr, 0, 8, ALWAYS, 1, buf),
				RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_atomic_write(t.conn, rmr, 0, v, ALWAYS, buf), RPMA_E_INVAL));
	LOGGED(assert_int_equal(
	    rpma_flush(t.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS, buf), RPMA_E_INVAL));
	LOGGED(assert_int_equal(
	    rpma_flush(t.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, ON_ERROR, buf),
	    RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_send(t.conn, mr, 0, 8, ALWAYS, buf), RPMA_E_INVAL));
	LOGGED(
	    assert_int_equal(rpma_send_with_imm(t.conn, mr, 0, 8, ALWAYS, 1, buf), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_recv(t.conn, mr, 0, 8, buf), RPMA_E_INVAL));
	assert_int_equal(fake_verbs_sends(), sends);
	assert_int_equal(fake_verbs_recvs(), recvs);

	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(t.conn, &cq), 0);
	assert_ptr_equal(cq, t.cq);
	struct rpma_completion c;
	struct ibv_wc wc;
	int fd = -12345, got = 0;
	const unsigned polls = fake_verbs_calls(FAKE_POLL_CQ);
	LOGGED(assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_cq_get_completions(cq, &c, 1), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_cq_wait_completion(cq, &c, 0), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_cq_get_wc(cq, 1, &wc, &got), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_cq_wait(cq), RPMA_E_INVAL));
	LOGGED(assert_int_equal(rpma_cq_get_fd(cq, &fd), RPMA_E_INVAL));
	assert_int_equal(fd, -12345);
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), polls);
	assert_int_equal(fake_verbs_calls(FAKE_GET_CQ_EVENT), 0);

	fx_conn_delete(&t.conn);
	fx_mr_dereg(&mr);
}

/*
 * Ordering: completions in post order, atomic writes behind GPSPM flushes
 */

/* an operation of the application completes (posted after what completed before) */
static void op_completes(uint64_t wr_id, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc = fx_wc(wr_id, opcode, IBV_WC_SUCCESS);
	wc.qp_num = g.id->qp->qp_num;
	fake_verbs_push_wc(g.icq, &wc);
}

static void expect_op(uint64_t wr_id, enum rpma_op op)
{
	struct rpma_completion c;
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(rpma_cq_get_completion(g.cq, &c), 0);
	assert_ptr_equal(c.op_context, (void *)(uintptr_t)wr_id);
	assert_int_equal(c.op, op);
	assert_int_equal(c.op_status, IBV_WC_SUCCESS);
}

/*
 * "Post unsignaled flushes, wait for the last signaled operation": a read
 * posted after an unsignaled GPSPM flush completes only once the flush's
 * answer is in, through either interface.
 */
static void order__read_waits_for_unsignaled_flush(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ON_ERROR, &ctx);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x77, IBV_WC_RDMA_READ);
	expect_nothing();
	struct ibv_wc wc;
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, NULL), RPMA_E_NO_COMPLETION);
	answer(a, ST_OK);
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, NULL), 0);
	assert_int_equal(wc.wr_id, 0x77);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	expect_nothing();
}

/*
 * One entry at a time through rpma_cq_get_wc (its GPSPM path): the count
 * is set with the completion, left alone without one, and a failed poll
 * says so and loses nothing.
 */
static void order__get_wc_one_entry(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x78, IBV_WC_RDMA_WRITE);
	struct ibv_wc wc;
	int got = 77;
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, &got), RPMA_E_NO_COMPLETION);
	assert_int_equal(got, 77);
	answer(a, ST_OK);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, &got), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), -EIO);
	assert_int_equal(got, 77);
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(wc.wr_id, (uintptr_t)&ctx);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	got = 77;
	assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, &got), 0);
	assert_int_equal(got, 1);
	assert_int_equal(wc.wr_id, 0x78);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	expect_nothing();
}

/* the same through rpma_cq_get_completion (its GPSPM path) */
static void order__get_completion_one_entry(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x79, IBV_WC_RDMA_WRITE);
	expect_nothing();
	answer(a, ST_OK);
	fake_verbs_fail(FAKE_POLL_CQ, 1, EIO);
	struct rpma_completion c;
	assert_int_equal(rpma_cq_get_completion(g.cq, &c), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), -EIO);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	assert_int_equal(rpma_cq_get_completion(g.cq, &c), 0);
	assert_ptr_equal(c.op_context, (void *)0x79);
	assert_int_equal(c.op, RPMA_OP_WRITE);
	assert_int_equal(c.op_status, IBV_WC_SUCCESS);
	expect_nothing();
}

/* held completions come out in post order, one call at a time too */
static void order__held_in_post_order(void **state)
{
	(void)state;
	static int ctx[3];
	/* posted before the first flush's send completed: not held */
	struct req a = flush(0, 8, ALWAYS, &ctx[0]);
	op_completes(0x10, IBV_WC_RDMA_WRITE);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x11, IBV_WC_RDMA_WRITE);
	struct req b = flush(8, 8, ON_ERROR, &ctx[1]);
	sent(b, IBV_WC_SUCCESS);
	op_completes(0x12, IBV_WC_RDMA_READ);
	struct req c = flush(16, 8, ALWAYS, &ctx[2]);
	sent(c, IBV_WC_SUCCESS);
	op_completes(0x13, IBV_WC_RDMA_WRITE);

	expect_op(0x10, RPMA_OP_WRITE);
	expect_nothing();
	answer(a, ST_OK);
	expect_flush(&ctx[0], IBV_WC_SUCCESS);
	expect_op(0x11, RPMA_OP_WRITE);
	expect_nothing();
	/* b's answer before its turn could come: nothing of c's part moves */
	answer(b, ST_OK);
	expect_op(0x12, RPMA_OP_READ);
	expect_nothing();
	answer(c, ST_OK);
	expect_flush(&ctx[2], IBV_WC_SUCCESS);
	expect_op(0x13, RPMA_OP_WRITE);
	expect_nothing();
}

/* an answer that comes before its request's send completion keeps its place */
static void order__answer_before_send(void **state)
{
	(void)state;
	static int ctx[2];
	struct req a = flush(0, 8, ALWAYS, &ctx[0]);
	struct req b = flush(8, 8, ALWAYS, &ctx[1]);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x21, IBV_WC_RDMA_WRITE);
	answer(a, ST_OK);
	answer(b, ST_OK);
	sent(b, IBV_WC_SUCCESS);
	op_completes(0x22, IBV_WC_RDMA_WRITE);
	struct rpma_completion c[8];
	/* one at a time: what waits for its turn waits across calls */
	for (int i = 0; i < 4; i++)
		assert_int_equal(rpma_cq_get_completions(g.cq, &c[i], 1), 1);
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 8), 0);
	assert_ptr_equal(c[0].op_context, &ctx[0]);
	assert_int_equal(c[0].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[1].op_context, (void *)0x21);
	assert_ptr_equal(c[2].op_context, &ctx[1]);
	assert_int_equal(c[2].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[3].op_context, (void *)0x22);
}

/* the connection fails: the flush fails first, then what waited behind it */
static void order__failure_releases_in_order(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ON_ERROR, &ctx);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x31, IBV_WC_RDMA_READ);
	expect_nothing();
	fail_receives(&g, IBV_WC_WR_FLUSH_ERR);
	expect_flush(&ctx, IBV_WC_WR_FLUSH_ERR);
	expect_op(0x31, RPMA_OP_READ);
	expect_nothing();
}

/* an atomic write request as the client posted it */
static struct req parse_atomic_write(const struct fake_send_record *r, uint8_t value[8])
{
	assert_ptr_equal(r->qp, g.id->qp);
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_int_equal(r->wr.send_flags, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	assert_int_equal(r->sge[0].length, 32);
	const uint8_t *m = r->inline_data;
	assert_int_equal(vd_get_le(m, 2), MAGIC);
	assert_int_equal(m[2], 1);
	assert_int_equal(m[3], ATOMIC_WRITE);
	memcpy(value, m + 24, 8);
	struct req q = {
		.wr_id = r->wr.wr_id,
		.slot = (uint32_t)vd_get_le(m + 4, 4),
		.seq = (uint32_t)vd_get_le(m + 8, 4),
		.rkey = (uint32_t)vd_get_le(m + 12, 4),
		.raddr = vd_get_le(m + 16, 8),
	};
	return q;
}

/*
 * A commit word posted while a GPSPM flush is unanswered goes to the
 * target's CPU, behind the flush; once nothing is unanswered, as an RDMA
 * write again.
 */
static void atomic__behind_unanswered_flush(void **state)
{
	(void)state;
	static int ctx, wctx;
	const char word[8] = { 'c', 'o', 'm', 'm', 'i', 't', '0', '1' };
	struct req a = flush(0, 64, ON_ERROR, &ctx);
	unsigned n = fake_verbs_sends();
	assert_int_equal(rpma_atomic_write(g.conn, rmr, 64, word, ALWAYS, &wctx), 0);
	assert_int_equal(fake_verbs_sends(), n + 1);
	uint8_t value[8];
	struct req w = parse_atomic_write(fake_verbs_send(n), value);
	assert_memory_equal(value, word, 8);
	assert_int_equal(w.rkey, RKEY);
	assert_int_equal(w.raddr, RADDR + 64);
	assert_true(w.slot != a.slot);

	sent(a, IBV_WC_SUCCESS);
	sent(w, IBV_WC_SUCCESS);
	expect_nothing();
	answer(a, ST_OK);
	expect_nothing();
	answer(w, ST_OK);
	/* a write's completion, not a flush's */
	expect_op((uintptr_t)&wctx, RPMA_OP_WRITE);
	expect_nothing();

	/* nothing unanswered: the fenced inline write of librpma 1.x */
	n = fake_verbs_sends();
	assert_int_equal(rpma_atomic_write(g.conn, rmr, 64, word, ALWAYS, &wctx), 0);
	assert_int_equal(fake_verbs_sends(), n + 1);
	const struct fake_send_record *r = fake_verbs_send(n);
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_true(r->wr.send_flags & IBV_SEND_FENCE);
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + 64);
}

/*
 * An atomic write the target refuses completes as what it is, an atomic
 * write (RPMA_OP_WRITE, as rpma_atomic_write's every completion), failed,
 * and with its own context: through either interface.
 */
static void atomic__refused_completes_as_write(void **state)
{
	(void)state;
	static int ctx, wctx[2];
	const char word[8] = { 0 };
	for (int i = 0; i < 2; i++) {
		struct req a = flush(0, 64, ON_ERROR, &ctx);
		unsigned n = fake_verbs_sends();
		assert_int_equal(rpma_atomic_write(g.conn, rmr, 64, word, ALWAYS, &wctx[i]), 0);
		uint8_t value[8];
		struct req w = parse_atomic_write(fake_verbs_send(n), value);
		sent(a, IBV_WC_SUCCESS);
		sent(w, IBV_WC_SUCCESS);
		answer(a, ST_OK);
		answer(w, ST_NOT_WRITABLE);
		if (i == 0) {
			struct rpma_completion c;
			memset(&c, 0x5a, sizeof(c));
			assert_int_equal(rpma_cq_get_completion(g.cq, &c), 0);
			assert_ptr_equal(c.op_context, &wctx[0]);
			assert_int_not_equal(c.op_status, IBV_WC_SUCCESS);
			assert_int_equal(c.op, RPMA_OP_WRITE);
		} else {
			struct ibv_wc wc;
			assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, NULL), 0);
			assert_int_equal(wc.wr_id, (uintptr_t)&wctx[1]);
			assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
		}
		expect_nothing();
	}
}

/* a region that offers no GPSPM cannot carry it: the application waits */
static void atomic__region_without_gpspm(void **state)
{
	(void)state;
	static int ctx;
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR + RLEN, 4096, RKEY + 1,
		  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, VD_RAW);
	struct rpma_mr_remote *plain = vd_decode_region(d, sizeof(d));
	struct req a = flush(0, 8, ON_ERROR, &ctx);
	const char word[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	unsigned n = fake_verbs_sends();
	assert_int_equal(rpma_atomic_write(g.conn, plain, 0, word, ALWAYS, &ctx), RPMA_E_AGAIN);
	assert_int_equal(fake_verbs_sends(), n);
	sent(a, IBV_WC_SUCCESS);
	answer(a, ST_OK);
	expect_nothing();
	/* the flush is done: the write goes */
	assert_int_equal(rpma_atomic_write(g.conn, plain, 0, word, ALWAYS, &ctx), 0);
	assert_int_equal(fake_verbs_sends(), n + 1);
	assert_int_equal(fake_verbs_send(n)->wr.opcode, IBV_WR_RDMA_WRITE);
	fx_mr_remote_delete(&plain);
}

/* a refused flush: no commit may ever land behind it on this connection */
static void atomic__refused_after_refused_flush(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	answer(a, ST_NO_REGION);
	expect_flush(&ctx, IBV_WC_REM_ACCESS_ERR);
	const char word[8] = { 0 };
	unsigned n = fake_verbs_sends();
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	assert_int_equal(rpma_atomic_write(g.conn, rmr, 0, word, ALWAYS, &ctx), RPMA_E_NOSUPP);
	assert_int_equal(fake_verbs_sends(), n);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) > errors);
}

static void atomic_write_msg(uint8_t m[32], uint32_t slot, uint32_t seq, uint32_t rkey,
			     uint64_t raddr, const void *value)
{
	put_header(m, ATOMIC_WRITE, slot, seq);
	vd_put_le(m + 12, rkey, 4);
	vd_put_le(m + 16, raddr, 8);
	memcpy(m + 24, value, 8);
}

/* the target stores the word, in one piece, and persists nothing by itself */
static void target__atomic_write(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	const uint8_t word[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	uint8_t m[32];
	memset(pmem, 0, 64);
	atomic_write_msg(m, 4, 40, rkey, at(16), word);
	expect_answer(serve(m, sizeof(m)), 4, 40, ST_OK);
	assert_memory_equal(pmem + 16, word, 8);
	assert_int_equal(pmem[15], 0);
	assert_int_equal(pmem[24], 0);
	assert_int_equal(persist_calls(), 0);

	/* refused: misaligned, past the region, unknown key; nothing stored */
	memset(pmem, 0, 64);
	atomic_write_msg(m, 4, 41, rkey, at(4), word);
	expect_answer(serve(m, sizeof(m)), 4, 41, ST_REFUSED);
	atomic_write_msg(m, 4, 42, rkey, at(PMEM_LEN - 4), word);
	expect_answer(serve(m, sizeof(m)), 4, 42, ST_REFUSED);
	atomic_write_msg(m, 4, 43, rkey + 1, at(16), word);
	expect_answer(serve(m, sizeof(m)), 4, 43, ST_REFUSED);
	for (int i = 0; i < 64; i++)
		assert_int_equal(pmem[i], 0);
}

/* a region the peer may not write: its CPU does not write it either */
static void target__atomic_write_not_writable(void **state)
{
	(void)state;
	static char ro[4096] __attribute__((aligned(64)));
	struct rpma_mr_local *mr = fx_mr(ro, sizeof(ro), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	assert_int_equal(rpma_mr_set_persist_fn(mr, persist_b), 0);
	const uint8_t word[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	uint8_t m[32];
	atomic_write_msg(m, 2, 50, fx_mr_rkey(mr), (uintptr_t)ro, word);
	expect_answer(serve(m, sizeof(m)), 2, 50, ST_REFUSED);
	assert_int_equal(ro[0], 0);
	fx_mr_dereg(&mr);
}

/* after a refused flush, the peer's atomic writes are refused too */
static void target__atomic_write_fenced(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	expect_served(at(0), 8, rkey + 1, ST_NO_REGION);
	const uint8_t word[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	uint8_t m[32];
	memset(pmem, 0, 64);
	atomic_write_msg(m, 1, 60, rkey, at(8), word);
	expect_answer(serve(m, sizeof(m)), 1, 60, ST_REFUSED);
	assert_int_equal(pmem[8], 0);
	/* flushes are still served */
	expect_served(at(0), 8, rkey, ST_OK);
}

/*
 * Waiting for room: after RPMA_E_AGAIN, rpma_conn_wait_flush_room handles
 * the answers that free places, and keeps the other completions it finds
 */
static void room__wait_after_again(void **state)
{
	(void)state;
	static int ctx[TARGET_DEPTH + 1];
	struct req r[TARGET_DEPTH];
	for (int i = 0; i < TARGET_DEPTH; i++)
		r[i] = flush(0, 8, ON_ERROR, &ctx[i]);
	FX_REFUSED(RPMA_E_AGAIN, rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS,
					    &ctx[TARGET_DEPTH]));
	/* nothing answered: no room, within the time given */
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), RPMA_E_NO_COMPLETION);
	for (int i = 0; i < TARGET_DEPTH; i++)
		sent(r[i], IBV_WC_SUCCESS);
	/* an operation of the application posted after them, then the first answer */
	op_completes(0x41, IBV_WC_RDMA_WRITE);
	answer(r[0], ST_OK);
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), 0);
	r[0] = flush(0, 8, ALWAYS, &ctx[TARGET_DEPTH]);
	/* the write's completion was kept, and waits for the other answers */
	expect_nothing();
	answer(r[1], ST_OK);
	answer(r[2], ST_OK);
	expect_op(0x41, RPMA_OP_WRITE);
	sent(r[0], IBV_WC_SUCCESS);
	answer(r[0], ST_OK);
	expect_flush(&ctx[TARGET_DEPTH], IBV_WC_SUCCESS);
	expect_nothing();
	/* room now: at once */
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, -1), 0);
}

/*
 * The answers a take polled and left unread (its caller had room for one
 * completion) free their places when rpma_conn_wait_flush_room handles
 * them, without waiting for an event; their completions then come in post
 * order, before those of later posts, and with later takes of several.
 */
static void room__answers_left_unread(void **state)
{
	(void)state;
	static int ctx[TARGET_DEPTH + 1];
	flushes_sent_and_answered(ctx);
	/* an operation of the application posted after every request */
	op_completes(0x41, IBV_WC_RDMA_WRITE);
	expect_flush(&ctx[0], IBV_WC_SUCCESS);
	assert_int_equal(fake_verbs_wcs_queued(g.icq), 0);
	struct req last = flush(0, 8, ALWAYS, &ctx[TARGET_DEPTH]);
	FX_REFUSED(RPMA_E_AGAIN, rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS,
					    &ctx[TARGET_DEPTH]));

	const unsigned polls = fake_verbs_calls(FAKE_POLL_CQ);
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), 0);
	/* the unread answers were enough: the CQ was looked at once, and found empty */
	assert_int_equal(fake_verbs_calls(FAKE_POLL_CQ), polls + 1);
	assert_int_equal(fake_verbs_wcs_queued(g.icq), 0);

	sent(last, IBV_WC_SUCCESS);
	answer(last, ST_OK);
	struct rpma_completion c[8];
	assert_int_equal(rpma_cq_get_completions(g.cq, c, 8), TARGET_DEPTH + 1);
	for (int i = 1; i < TARGET_DEPTH; i++) {
		assert_int_equal(c[i - 1].op, RPMA_OP_FLUSH);
		assert_ptr_equal(c[i - 1].op_context, &ctx[i]);
	}
	assert_int_equal(c[TARGET_DEPTH - 1].op, RPMA_OP_WRITE);
	assert_ptr_equal(c[TARGET_DEPTH - 1].op_context, (void *)0x41);
	assert_int_equal(c[TARGET_DEPTH].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[TARGET_DEPTH].op_context, &ctx[TARGET_DEPTH]);
	expect_nothing();
}

/*
 * Back-pressure: completions held for their turn are bounded by refusing
 * posts, never by dropping completions
 */

/* far more posts than any connection of these tests may hold completions of */
#define MANY_POSTS 1000

/* a local region for the application's writes and reads */
static struct rpma_mr_local *app_mr(void)
{
	static char buf[64];
	return fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
}

/*
 * Every kind of post is refused, posting nothing, while the held store is
 * at its limit.
 */
static void expect_posts_held(struct rpma_mr_local *mr)
{
	static int ctx;
	static const char word[8] = { 0 };
	FX_REFUSED(RPMA_E_AGAIN, rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS, &ctx));
	FX_REFUSED(RPMA_E_AGAIN, rpma_write(g.conn, rmr, 0, mr, 0, 8, ON_ERROR, &ctx));
	FX_REFUSED(RPMA_E_AGAIN, rpma_read(g.conn, mr, 0, rmr, 0, 8, ALWAYS, &ctx));
	FX_REFUSED(RPMA_E_AGAIN,
		   rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, ALWAYS, &ctx));
	FX_REFUSED(RPMA_E_AGAIN,
		   rpma_flush(g.conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, ON_ERROR, &ctx));
	FX_REFUSED(RPMA_E_AGAIN, rpma_atomic_write(g.conn, rmr, 0, word, ALWAYS, &ctx));
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_WRITE;
	op.flags = ALWAYS;
	op.local = mr;
	op.remote = rmr;
	op.len = 8;
	int failed = -7;
	FX_REFUSED(RPMA_E_AGAIN, rpma_post_batch(g.conn, &op, 1, &failed));
	assert_int_equal(failed, 0);
	struct rpma_write_template *t = NULL;
	assert_int_equal(rpma_write_template_new(g.conn, rmr, mr, RPMA_FLUSH_TYPE_PERSISTENT, &t),
			 0);
	const struct rpma_write_range w = { 0, 0, 8 };
	FX_REFUSED(RPMA_E_AGAIN, rpma_write_template_post(t, &w, 1, ALWAYS, &ctx));
	assert_int_equal(rpma_write_template_delete(&t), 0);
	/* back-pressure, not an error */
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 0);
}

/*
 * One signaled write at a time, each polled for at once, while a flush's
 * answer is slow: every write's completion is held behind the flush, and
 * frees its send queue entry. The posts stop at the store's limit
 * (RPMA_E_AGAIN); the wait for room says nothing can go until the answer
 * is in, then that completions are to be taken; all of them come, the
 * flush's first, none lost, and the posts go again.
 */
static void hold__one_write_at_a_time(void **state)
{
	(void)state;
	static int ctx;
	struct rpma_mr_local *mr = app_mr();
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	int posted = 0;
	int ret = 0;
	while (posted < MANY_POSTS) {
		ret = rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS,
				 (void *)(uintptr_t)(0x1000 + posted));
		if (ret)
			break;
		op_completes(0x1000 + (uint64_t)posted, IBV_WC_RDMA_WRITE);
		posted++;
		expect_nothing();
	}
	assert_int_equal(ret, RPMA_E_AGAIN);
	assert_true(posted > 0);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_FATAL), 0);
	expect_posts_held(mr);

	/* nothing goes before the answer: no room within the time given */
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), RPMA_E_NO_COMPLETION);
	answer(a, ST_OK);
	/* the answer is in: the held completions are to be taken before anything posts */
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), RPMA_E_AGAIN);
	expect_flush(&ctx, IBV_WC_SUCCESS);
	for (int i = 0; i < posted; i++)
		expect_op(0x1000 + (uint64_t)i, RPMA_OP_WRITE);
	expect_nothing();
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), 0);
	assert_int_equal(rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS, &ctx), 0);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_FATAL), 0);
	fx_mr_dereg(&mr);
}

/*
 * Waits for room between posts, without a take: each wait handles what
 * the CQ holds and keeps the application's completions. With every place
 * of the flow control taken and no answer in, the posts stop at the
 * store's limit; the answers, behind all of it in the CQ, are still
 * read by the wait, and every completion comes, in post order.
 */
static void hold__waits_between_posts(void **state)
{
	(void)state;
	static int ctx[TARGET_DEPTH];
	struct rpma_mr_local *mr = app_mr();
	struct req r[TARGET_DEPTH];
	for (int i = 0; i < TARGET_DEPTH; i++) {
		r[i] = flush(0, 8, ALWAYS, &ctx[i]);
		sent(r[i], IBV_WC_SUCCESS);
	}
	int posted = 0;
	int ret = 0;
	while (posted < MANY_POSTS) {
		ret = rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS,
				 (void *)(uintptr_t)(0x2000 + posted));
		if (ret)
			break;
		op_completes(0x2000 + (uint64_t)posted, IBV_WC_RDMA_WRITE);
		posted++;
		assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), RPMA_E_NO_COMPLETION);
	}
	assert_int_equal(ret, RPMA_E_AGAIN);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_FATAL), 0);
	for (int i = 0; i < TARGET_DEPTH; i++)
		answer(r[i], ST_OK);
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), RPMA_E_AGAIN);
	assert_int_equal(fake_verbs_wcs_queued(g.icq), 0);
	for (int i = 0; i < TARGET_DEPTH; i++)
		expect_flush(&ctx[i], IBV_WC_SUCCESS);
	for (int i = 0; i < posted; i++)
		expect_op(0x2000 + (uint64_t)i, RPMA_OP_WRITE);
	expect_nothing();
	assert_int_equal(rpma_conn_wait_flush_room(g.conn, 0), 0);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_FATAL), 0);
	fx_mr_dereg(&mr);
}

/*
 * Waits see what a take already read from the CQ: no event announces it
 * any more
 */

/* a wait of librpma 1.x run in a thread of its own, so that a test can tell it blocks */
struct bounded_wait {
	bool conn_wait; /* rpma_conn_wait, not rpma_cq_wait */
	int ret;
	struct rpma_cq *cq;
	int done;
};

static void *bounded_wait_run(void *arg)
{
	struct bounded_wait *w = arg;
	if (w->conn_wait)
		w->ret = rpma_conn_wait(g.conn, 0, &w->cq, NULL);
	else
		w->ret = rpma_cq_wait(g.cq);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The wait returns within 300 ms, with ret; one still blocked then is
 * woken by an event the test pushes, and the test fails.
 */
static int wait_returns(bool conn_wait, struct rpma_cq **cq)
{
	struct bounded_wait w = { conn_wait, 0, NULL, 0 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, bounded_wait_run, &w), 0);
	for (int i = 0; i < 300 && !__atomic_load_n(&w.done, __ATOMIC_ACQUIRE); i++)
		sleep_ms(1);
	const bool blocked = !__atomic_load_n(&w.done, __ATOMIC_ACQUIRE);
	if (blocked)
		fake_verbs_push_cq_event(g.icq->channel, g.icq);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (blocked)
		fail_msg("the wait still blocked after 300 ms, with a completion ready");
	if (cq)
		*cq = w.cq;
	return w.ret;
}

/*
 * A write, a flush's send and its answer, one event for the three. The
 * loop of librpma 1.x, "wait, then get one": the first take reads all
 * three and hands out the write; the flush's completion, read with it, is
 * there for the next wait and take, though no event will come for it.
 */
static void wait_loop_1x(bool conn_wait)
{
	static int ctx;
	struct rpma_mr_local *mr = app_mr();
	assert_int_equal(rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS, (void *)0x51), 0);
	struct req a = flush(0, 8, ALWAYS, &ctx);
	op_completes(0x51, IBV_WC_RDMA_WRITE);
	sent(a, IBV_WC_SUCCESS);
	answer(a, ST_OK);
	fake_verbs_push_cq_event(g.icq->channel, g.icq);

	uint64_t want[2] = { 0x51, (uintptr_t)&ctx };
	enum ibv_wc_opcode op[2] = { IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ };
	for (int i = 0; i < 2; i++) {
		struct rpma_cq *cq = NULL;
		assert_int_equal(wait_returns(conn_wait, &cq), 0);
		if (conn_wait)
			assert_ptr_equal(cq, g.cq);
		struct ibv_wc wc;
		int got = 0;
		assert_int_equal(rpma_cq_get_wc(g.cq, 1, &wc, &got), 0);
		assert_int_equal(got, 1);
		assert_int_equal(wc.wr_id, want[i]);
		assert_int_equal(wc.opcode, op[i]);
		/* nothing more in the CQ, and no event: what was read, was read at once */
		assert_int_equal(fake_verbs_wcs_queued(g.icq), 0);
		assert_int_equal(fake_verbs_cq_events_queued(g.icq->channel), 0);
	}
	expect_nothing();
	fx_mr_dereg(&mr);
}

static void wait__cq_wait_then_get_one(void **state)
{
	(void)state;
	wait_loop_1x(false);
}

/* the same with rpma_conn_wait, on a connection whose CQ shares its channel */
static void wait__conn_wait_then_get_one(void **state)
{
	(void)state;
	wait_loop_1x(true);
}

static int gp_setup_shared_channel(void **state)
{
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_POLLED, DEPTH);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	return gp_setup_cfg(state, cfg);
}

/*
 * A completion held for its turn is no reason to return: it waits for an
 * answer, whose event comes.
 */
static void wait__not_for_held_before_their_turn(void **state)
{
	(void)state;
	static int ctx;
	struct req a = flush(0, 8, ON_ERROR, &ctx);
	sent(a, IBV_WC_SUCCESS);
	op_completes(0x52, IBV_WC_RDMA_WRITE);
	expect_nothing();
	struct rpma_completion c;
	/* the held write is not ready: the wait times out */
	assert_int_equal(rpma_cq_wait_completion(g.cq, &c, 20), RPMA_E_NO_COMPLETION);
	answer(a, ST_OK);
	fake_verbs_push_cq_event(g.icq->channel, g.icq);
	assert_int_equal(rpma_cq_wait(g.cq), 0);
	expect_op(0x52, RPMA_OP_WRITE);
	expect_nothing();
}

/*
 * A peer gone without a connection event, on a device that never flushes
 * what its queue pair held in the error state (siw): an application's
 * operation fails, and the receives and the answer never complete. Once
 * the failure's drain time is over, the polls fail the flush awaiting its
 * answer, before the failed write posted after it, and give its place
 * back.
 */
static void sweep__gpspm_after_failed_completion(void **state)
{
	(void)state;
	static int ctx;
	struct rpma_mr_local *mr = app_mr();
	struct req a = flush(0, 8, ALWAYS, &ctx);
	sent(a, IBV_WC_SUCCESS);
	assert_int_equal(rpma_write(g.conn, rmr, 0, mr, 0, 8, ALWAYS, (void *)0x61), 0);
	struct ibv_wc wc = fx_wc(0x61, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR);
	wc.qp_num = g.id->qp->qp_num;
	const long long at = now_ms();
	fake_verbs_push_wc(g.icq, &wc);
	/* the write's failure waits behind the flush */
	expect_nothing();

	struct rpma_completion c[2];
	int got = 0;
	while (got < 2) {
		int ret = rpma_cq_get_completion(g.cq, &c[got]);
		if (ret == RPMA_E_NO_COMPLETION) {
			if (now_ms() - at > 5000)
				fail_msg("the flush was not swept within 5 s of the failure");
			sleep_ms(5);
			continue;
		}
		assert_int_equal(ret, 0);
		got++;
	}
	assert_true(now_ms() - at >= 250);
	assert_int_equal(c[0].op, RPMA_OP_FLUSH);
	assert_ptr_equal(c[0].op_context, &ctx);
	assert_int_equal(c[0].op_status, IBV_WC_WR_FLUSH_ERR);
	assert_ptr_equal(c[1].op_context, (void *)0x61);
	assert_int_equal(c[1].op_status, IBV_WC_RETRY_EXC_ERR);
	expect_nothing();
	/* the flush's place came back: as many flushes as the target takes may be posted */
	for (int i = 0; i < TARGET_DEPTH; i++)
		flush(0, 8, ON_ERROR, &ctx);
	fx_mr_dereg(&mr);
}

/* nothing to wait for without GPSPM; refused where the application has no CQ */
static void room__other_connections(void **state)
{
	(void)state;
	struct rpma_conn *plain = fx_conn_active(NULL, NULL);
	assert_int_equal(rpma_conn_wait_flush_room(plain, -1), 0);
	fx_conn_delete(&plain);
	fx_release();
	fx_fresh();
	assert_int_equal(rpma_conn_wait_flush_room(NULL, 0), RPMA_E_INVAL);
	struct gconn t;
	gconn_open(&t, RPMA_GPSPM_THREAD, DEPTH);
	/* as the thread tests below: the serving thread is up and asleep first */
	wait_until_polled();
	vd_apply_target(t.conn, false, TARGET_DEPTH);
	FX_REFUSED(RPMA_E_INVAL, rpma_conn_wait_flush_room(t.conn, 0));
	fx_conn_delete(&t.conn);
}

/* a persist function with a context: given back, with the range */
struct persist_ctx_calls {
	int calls;
	const void *ptr;
	size_t len;
};

static void persist_with_ctx(void *ctx, const void *ptr, size_t len)
{
	struct persist_ctx_calls *c = ctx;
	c->calls++;
	c->ptr = ptr;
	c->len = len;
}

static void target__persist_ctx_fn(void **state)
{
	(void)state;
	static struct persist_ctx_calls seen;
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(rpma_mr_set_persist_ctx_fn(lmr, persist_with_ctx, &seen), 0);
	const uint32_t rkey = fx_mr_rkey(lmr);
	expect_served(at(256), 128, rkey, ST_OK);
	assert_int_equal(seen.calls, 1);
	assert_ptr_equal(seen.ptr, pmem + 256);
	assert_int_equal(seen.len, 128);
	/* in place of the function without one */
	assert_int_equal(persist_calls(), 0);
	/* the region offers GPSPM as with rpma_mr_set_persist_fn */
	uint8_t d[VD_REGION_SIZE];
	size_t size = 0;
	assert_int_equal(rpma_mr_get_versioned_descriptor_size(lmr, &size), 0);
	assert_int_equal(size, VD_REGION_SIZE);
	assert_int_equal(rpma_mr_get_versioned_descriptor(lmr, d), 0);
	assert_true(d[23] & VD_GPSPM);
	/* and a plain function takes its place again */
	assert_int_equal(rpma_mr_set_persist_fn(lmr, persist_a), 0);
	expect_served(at(0), 8, rkey, ST_OK);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(persist_calls(), 1);
	/* NULL withdraws the offer */
	assert_int_equal(rpma_mr_set_persist_ctx_fn(lmr, NULL, NULL), 0);
	expect_served(at(0), 8, rkey, ST_NO_REGION);
	assert_int_equal(rpma_mr_get_versioned_descriptor(lmr, d), 0);
	assert_false(d[23] & VD_GPSPM);
	/* a region not registered for persistent flush cannot offer it */
	static char dram[4096] __attribute__((aligned(64)));
	struct rpma_mr_local *mr = fx_mr(dram, sizeof(dram), RPMA_MR_USAGE_WRITE_DST);
	FX_REFUSED(RPMA_E_INVAL, rpma_mr_set_persist_ctx_fn(mr, persist_with_ctx, &seen));
	assert_int_equal(rpma_mr_set_persist_ctx_fn(NULL, persist_with_ctx, &seen), RPMA_E_INVAL);
	fx_mr_dereg(&mr);
}

/*
 * Scopes: a connection offered regions reaches those only, with the same
 * answer for a region that exists and one that does not
 */

/* g again, made from a request offered region (and nothing else) */
static void gconn_open_offered(struct gconn *c, const struct rpma_mr_local *region)
{
	memset(c, 0, sizeof(*c));
	c->seen = fake_verbs_recvs();
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_POLLED, DEPTH);
	struct rpma_conn_req *req = fx_req_active(cfg, &c->id);
	fx_cfg_delete(&cfg);
	assert_int_equal(rpma_conn_req_gpspm_offer(req, region), 0);
	/* twice is once */
	assert_int_equal(rpma_conn_req_gpspm_offer(req, region), 0);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &c->conn), 0);
	assert_int_equal(rpma_conn_get_cq(c->conn, &c->cq), 0);
	c->icq = c->id->qp->send_cq;
	gconn_sync(c);
	vd_apply_target(c->conn, false, TARGET_DEPTH);
}

static void target__scope(void **state)
{
	(void)state;
	static char mine[1024] __attribute__((aligned(64)));
	struct rpma_mr_local *offered = fx_mr(
	    mine, sizeof(mine), RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	assert_int_equal(rpma_mr_set_persist_fn(offered, persist_b), 0);
	fx_conn_delete(&g.conn);
	gconn_open_offered(&g, offered);

	/* the offered region: served */
	expect_served((uint64_t)(uintptr_t)mine + 64, 8, fx_mr_rkey(offered), ST_OK);
	assert_int_equal(persist_calls(), 1);
	assert_int_equal(calls[0].fn, 1);

	/* lmr offers GPSPM too, but not to this connection: refused, as no region at all is */
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_served(at(0), 8, fx_mr_rkey(lmr), ST_REFUSED);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
	assert_non_null(strstr(fx_log_last(), "not offered"));
	expect_served(at(0), 8, fx_mr_rkey(lmr) + 1000, ST_REFUSED);
	const uint8_t word[8] = { 7, 7, 7, 7, 7, 7, 7, 7 };
	uint8_t m[32];
	memset(pmem, 0, 64);
	atomic_write_msg(m, 5, 70, fx_mr_rkey(lmr), at(8), word);
	expect_answer(serve(m, sizeof(m)), 5, 70, ST_REFUSED);
	assert_int_equal(pmem[8], 0);
	assert_int_equal(persist_calls(), 1);

	/* withdrawn and offered again, the region is a new one to the connection */
	assert_int_equal(rpma_mr_set_persist_fn(offered, NULL), 0);
	assert_int_equal(rpma_mr_set_persist_fn(offered, persist_b), 0);
	expect_served((uint64_t)(uintptr_t)mine, 8, fx_mr_rkey(offered), ST_REFUSED);
	assert_int_equal(persist_calls(), 1);
	fx_mr_dereg(&offered);
}

/* GPSPM_REFUSALS_MAX refused requests close the connection, once */
static void target__refusals_close_the_connection(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	for (int i = 0; i < REFUSALS_MAX - 1; i++)
		expect_served(at(PMEM_LEN), 8, rkey, ST_REFUSED);
	assert_int_equal(fake_verbs_calls(FAKE_DISCONNECT), 0);
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	expect_served(at(0), 8, rkey + 1, ST_REFUSED);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 2);
	assert_non_null(strstr(fx_log_last(), "closing the connection"));
	/*
	 * Closed once that answer went out, not before: a disconnect moves
	 * the queue pair to the error state, which would flush the answer
	 */
	assert_int_equal(fake_verbs_calls(FAKE_DISCONNECT), 0);
	last_answer_went_out();
	assert_int_equal(fake_verbs_id_calls(g.id, FAKE_DISCONNECT), 1);
	/* what was queued behind it is still answered, and nothing more is closed */
	expect_served(at(0), 8, rkey + 1, ST_REFUSED);
	last_answer_went_out();
	assert_int_equal(fake_verbs_calls(FAKE_DISCONNECT), 1);
	assert_int_equal(persist_calls(), 0);
}

/* requests served before the limit do not count */
static void target__served_requests_do_not_count(void **state)
{
	(void)state;
	const uint32_t rkey = fx_mr_rkey(lmr);
	for (int i = 0; i < REFUSALS_MAX - 1; i++)
		expect_served(at(PMEM_LEN), 8, rkey, ST_REFUSED);
	for (int i = 0; i < 8; i++)
		expect_served(at(0), 8, rkey, ST_OK);
	assert_int_equal(fake_verbs_calls(FAKE_DISCONNECT), 0);
}

/* rpma_conn_req_gpspm_offer's arguments */
static void offer__arguments(void **state)
{
	(void)state;
	static char area[17][256] __attribute__((aligned(64)));
	struct rpma_mr_local *mr[17];
	for (int i = 0; i < 17; i++) {
		mr[i] = fx_mr(area[i], sizeof(area[i]), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
		assert_int_equal(rpma_mr_set_persist_fn(mr[i], persist_a), 0);
	}
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_POLLED, DEPTH);
	struct rpma_conn_req *req = fx_req_active(cfg, NULL);
	FX_INVAL(rpma_conn_req_gpspm_offer(NULL, mr[0]));
	FX_INVAL(rpma_conn_req_gpspm_offer(req, NULL));

	/* a region that offers no GPSPM */
	static char plain[256] __attribute__((aligned(64)));
	struct rpma_mr_local *none = fx_mr(plain, sizeof(plain), RPMA_MR_USAGE_WRITE_DST);
	FX_INVAL(rpma_conn_req_gpspm_offer(req, none));
	fx_mr_dereg(&none);

	/* a region of another peer */
	struct rpma_peer *other = NULL;
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &other), 0);
	struct rpma_mr_local *theirs = NULL;
	assert_int_equal(
	    rpma_mr_reg(other, plain, sizeof(plain), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &theirs),
	    0);
	assert_int_equal(rpma_mr_set_persist_fn(theirs, persist_a), 0);
	FX_INVAL(rpma_conn_req_gpspm_offer(req, theirs));
	assert_int_equal(rpma_mr_dereg(&theirs), 0);
	assert_int_equal(rpma_peer_delete(&other), 0);

	/* sixteen regions, not seventeen */
	for (int i = 0; i < 16; i++)
		assert_int_equal(rpma_conn_req_gpspm_offer(req, mr[i]), 0);
	FX_INVAL(rpma_conn_req_gpspm_offer(req, mr[16]));
	assert_int_equal(rpma_conn_req_delete(&req), 0);

	/* a request without GPSPM */
	req = fx_req_active(NULL, NULL);
	FX_INVAL(rpma_conn_req_gpspm_offer(req, mr[0]));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_cfg_delete(&cfg);
	for (int i = 0; i < 17; i++)
		fx_mr_dereg(&mr[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f)  cmocka_unit_test_setup_teardown(f, gp_setup, gp_teardown)
#define TF(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		TF(setup__active),
		TF(setup__passive),
		TF(setup__depth_capped),
		TF(setup__refused_with_rcq),
		TF(setup__refused_with_srq),
		TF(setup__refused_without_rq),
		TF(setup__refused_thread_with_shared_channel),
		TF(setup__each_provider_failure),
		T(refuses__messages),
		TF(refuses__conn_req_recv),
		T(client__request),
		T(client__zero_length),
		T(client__answer_after_send),
		T(client__answer_before_send),
		T(client__slots_come_back),
		T(client__flow_control),
		T(client__flow_control_own_depth),
		T(client__unsignaled),
		T(order__read_waits_for_unsignaled_flush),
		T(order__get_wc_one_entry),
		T(order__get_completion_one_entry),
		T(order__held_in_post_order),
		T(order__answer_before_send),
		T(order__failure_releases_in_order),
		T(atomic__behind_unanswered_flush),
		T(atomic__region_without_gpspm),
		T(atomic__refused_after_refused_flush),
		T(atomic__refused_completes_as_write),
		T(target__atomic_write),
		T(target__atomic_write_not_writable),
		T(target__atomic_write_fenced),
		T(target__scope),
		T(target__refusals_close_the_connection),
		T(target__served_requests_do_not_count),
		TF(offer__arguments),
		T(room__wait_after_again),
		T(room__answers_left_unread),
		TF(room__other_connections),
		T(hold__one_write_at_a_time),
		T(hold__waits_between_posts),
		T(wait__cq_wait_then_get_one),
		cmocka_unit_test_setup_teardown(wait__conn_wait_then_get_one,
						gp_setup_shared_channel, gp_teardown),
		T(wait__not_for_held_before_their_turn),
		T(sweep__gpspm_after_failed_completion),
		T(target__persist_ctx_fn),
		T(client__status_mapping),
		T(client__send_fails),
		T(client__post_fails),
		T(client__send_fails_after_answer),
		T(client__qp_fails),
		T(client__qp_fails_before_send),
		T(client__stray_answers),
		T(client__foreign_messages),
		T(client__unknown_type),
		T(client__get_wc),
		T(client__get_wc_many),
		T(client__receive_fails),
#define TS(f) cmocka_unit_test_setup_teardown(f, gp_setup_short_timeout, gp_teardown)
		TS(probe__fails_the_flushes_waiting),
		TS(probe__acknowledged_is_not_a_completion),
		TS(probe__flushed),
		TS(probe__not_before_the_send_completes),
		TS(probe__post_fails),
		TS(probe__while_waiting),
		T(client__get_completions),
		T(client__get_completions_one_by_one),
		T(client__a_take_frees_one_place),
		T(target__persists_the_range),
		T(target__answer_not_posted),
		T(target__edges),
		T(target__wrong_rkey),
		T(target__out_of_range),
		T(target__withdrawn),
		T(target__short_request),
		T(target__hidden_among_completions),
		T(target__one_poll_for_a_take),
		T(target__served_while_waiting),
		T(target__answers_in_order_whoever_polls),
		T(thread__serves_and_stops),
		T(thread__drops_other_completions),
		T(thread__stops_on_a_lost_channel),
		T(thread__spin_serves_without_event),
		T(thread__spin_ends_in_sleep),
		T(thread__stops_while_spinning),
		TF(thread__stops_with_request),
		T(thread__refuses_everything),
#undef T
#undef TF
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("gpspm", tests, NULL, NULL);
}
