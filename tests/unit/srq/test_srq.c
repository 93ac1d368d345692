/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_srq.c -- rpma_srq_new, rpma_srq_delete, rpma_srq_recv,
 * rpma_srq_get_rcq, and where receive completions of a connection go
 */

#include <errno.h>
#include <string.h>

#include "fake_extra.h"
#include "fixture.h"

static char buf[512];

static struct rpma_srq_cfg *srq_cfg(uint32_t rq_size, uint32_t rcq_size)
{
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, rq_size), 0);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(cfg, rcq_size), 0);
	return cfg;
}

static struct rpma_srq *srq_new(struct rpma_srq_cfg *cfg)
{
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_srq_new(fx_peer, cfg, &srq), 0);
	assert_non_null(srq);
	return srq;
}

static void srq_delete(struct rpma_srq **srq)
{
	assert_int_equal(rpma_srq_delete(srq), 0);
	assert_null(*srq);
}

/* the ibv_srq behind srq, as seen by a receive posted to it */
static struct ibv_srq *ibv_srq_of(struct rpma_srq *srq)
{
	unsigned before = fake_verbs_recvs();
	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, NULL), 0);
	assert_int_equal(fake_verbs_recvs(), before + 1);
	return fake_verbs_recv(before)->srq;
}

/* rpma_srq_new */

static void new__null_peer(void **state)
{
	(void)state;
	struct rpma_srq *srq = FX_POISON;
	FX_INVAL(rpma_srq_new(NULL, NULL, &srq));
	assert_ptr_equal(srq, FX_POISON);
}

static void new__null_srq_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_srq_new(fx_peer, NULL, NULL));
}

static void new__defaults(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_srq *srq = srq_new(NULL);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_SRQ), 1);
	struct ibv_srq *isrq = ibv_srq_of(srq);
	assert_non_null(isrq);
	const struct ibv_srq_init_attr *attr = fake_verbs_srq_init_attr(isrq);
	assert_non_null(attr);
	/* librpma 1.x's defaults: 20 receives, a receive CQ of 20 entries */
	assert_int_equal(attr->attr.max_wr, 20);
	/* a receive CQ with a channel of its own, armed */
	struct rpma_cq *rcq = NULL;
	assert_int_equal(rpma_srq_get_rcq(srq, &rcq), 0);
	assert_non_null(rcq);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(rcq, &fd), 0);
	assert_true(fd >= 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_CQ), 1);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_COMP_CHANNEL), 1);
	srq_delete(&srq);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void new__cfg(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = srq_cfg(37, 0);
	struct rpma_srq *srq = srq_new(cfg);
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	const struct ibv_srq_init_attr *attr = fake_verbs_srq_init_attr(ibv_srq_of(srq));
	assert_int_equal(attr->attr.max_wr, 37);
	/* rcq_size 0: no receive CQ */
	struct rpma_cq *rcq = FX_POISON;
	assert_int_equal(rpma_srq_get_rcq(srq, &rcq), 0);
	assert_null(rcq);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_CQ), 0);
	srq_delete(&srq);
}

struct new_arg {
	struct rpma_srq_cfg *cfg;
	struct rpma_srq *srq;
};

static void new_prelude(void *arg)
{
	((struct new_arg *)arg)->srq = FX_POISON;
}

static int new_run(void *arg)
{
	struct new_arg *a = arg;
	return rpma_srq_new(fx_peer, a->cfg, &a->srq);
}

static void new_untouched(void *arg)
{
	assert_ptr_equal(((struct new_arg *)arg)->srq, FX_POISON);
}

static void new_cleanup(void *arg, bool succeeded)
{
	if (succeeded)
		srq_delete(&((struct new_arg *)arg)->srq);
}

static const struct fx_ctor new_ctor = {
	.prelude = new_prelude,
	.run = new_run,
	.untouched = new_untouched,
	.cleanup = new_cleanup,
};

static void new__each_provider_failure(void **state)
{
	(void)state;
	struct new_arg arg = { 0 };
	/* SRQ, completion channel, CQ, arming */
	assert_true(fx_each_provider_failure(&new_ctor, &arg, EPROTO) >= 4);
}

static void new__each_provider_failure_no_rcq(void **state)
{
	(void)state;
	struct new_arg arg = { 0 };
	arg.cfg = srq_cfg(10, 0);
	assert_true(fx_each_provider_failure(&new_ctor, &arg, EPROTO) >= 1);
	assert_int_equal(rpma_srq_cfg_delete(&arg.cfg), 0);
}

/* rpma_srq_delete */

static void delete__null_srq_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_srq_delete(NULL));
}

static void delete__null_srq(void **state)
{
	(void)state;
	struct rpma_srq *srq = NULL;
	FX_REFUSED(0, rpma_srq_delete(&srq));
	assert_null(srq);
}

static void delete__success(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_srq *srq = srq_new(NULL);
	assert_int_equal(rpma_srq_delete(&srq), 0);
	assert_null(srq);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_SRQ), 1);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_CQ), 1);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_COMP_CHANNEL), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void delete__destroy_srq_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_srq *srq = srq_new(NULL);
	struct ibv_srq *isrq = ibv_srq_of(srq);
	fake_verbs_fail(FAKE_DESTROY_SRQ, 1, EBUSY);
	assert_int_equal(rpma_srq_delete(&srq), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);
	assert_null(srq);
	/* the receive CQ and its channel are released all the same: only the SRQ is left */
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_CQ), 1);
	assert_int_equal(fake_verbs_live_objects() - base, 1);
	assert_int_equal(fx_extra_srq_destroy(isrq), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
}

/* rpma_srq_recv */

static void recv__null_srq(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	FX_INVAL(rpma_srq_recv(NULL, mr, 0, 8, NULL));
	fx_mr_dereg(&mr);
}

static void recv__null_dst_with_len(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	FX_INVAL(rpma_srq_recv(srq, NULL, 0, 8, NULL));
	FX_INVAL(rpma_srq_recv(srq, NULL, 8, 0, NULL));
	assert_int_equal(fake_verbs_recvs(), 0);
	srq_delete(&srq);
}

static void recv__beyond_region(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, 64, RPMA_MR_USAGE_RECV);
	struct rpma_srq *srq = srq_new(NULL);
	FX_INVAL(rpma_srq_recv(srq, mr, 60, 8, NULL));
	FX_INVAL(rpma_srq_recv(srq, mr, SIZE_MAX, 2, NULL));
	assert_int_equal(fake_verbs_recvs(), 0);
	srq_delete(&srq);
	fx_mr_dereg(&mr);
}

static void recv__success(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	struct rpma_srq *srq = srq_new(NULL);
	int ctx = 0;
	assert_int_equal(rpma_srq_recv(srq, mr, 32, 128, &ctx), 0);
	assert_int_equal(fake_verbs_recvs(), 1);
	const struct fake_recv_record *r = fake_verbs_recv(0);
	assert_non_null(r->srq);
	assert_null(r->qp);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)buf + 32);
	assert_int_equal(r->sge[0].length, 128);
	assert_int_equal(r->sge[0].lkey, fx_lkey_of(buf, sizeof(buf)));
	assert_int_equal(fake_verbs_calls(FAKE_POST_SRQ_RECV), 1);
	assert_int_equal(fake_verbs_calls(FAKE_POST_RECV), 0);
	srq_delete(&srq);
	fx_mr_dereg(&mr);
}

static void recv__zero_length(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	int ctx = 0;
	assert_int_equal(rpma_srq_recv(srq, NULL, 0, 0, &ctx), 0);
	const struct fake_recv_record *r = fake_verbs_recv(0);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(r->wr.num_sge == 0 || r->sge[0].length == 0);
	srq_delete(&srq);
}

static void recv__post_fails(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	struct rpma_srq *srq = srq_new(NULL);
	fake_verbs_fail(FAKE_POST_SRQ_RECV, 1, ENOMEM);
	assert_int_equal(rpma_srq_recv(srq, mr, 0, 8, NULL), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_int_equal(rpma_srq_recv(srq, mr, 0, 8, NULL), 0);
	srq_delete(&srq);
	fx_mr_dereg(&mr);
}

/* rpma_srq_get_rcq */

static void get_rcq__null_srq(void **state)
{
	(void)state;
	struct rpma_cq *rcq = FX_POISON;
	FX_INVAL(rpma_srq_get_rcq(NULL, &rcq));
	assert_ptr_equal(rcq, FX_POISON);
}

static void get_rcq__null_rcq_ptr(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	FX_INVAL(rpma_srq_get_rcq(srq, NULL));
	srq_delete(&srq);
}

/* where receive completions go */

static struct rpma_conn *conn_with(struct rpma_srq *srq, uint32_t rcq_size, bool shared,
				   struct rdma_cm_id **id)
{
	struct rpma_conn_cfg *cfg = fx_cfg(10, rcq_size, shared);
	if (srq != NULL)
		assert_int_equal(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rpma_conn *conn = fx_conn_active(cfg, id);
	fx_cfg_delete(&cfg);
	return conn;
}

/* pushes a receive completion on the QP's receive CQ; returns who gets it */
static void expect_recv_on(struct rdma_cm_id *id, struct rpma_cq *expected,
			   struct rpma_cq *not_there)
{
	struct ibv_wc wc = fx_wc(0x5ecec0de, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_verbs_push_wc(id->qp->recv_cq, &wc);
	struct rpma_completion c;
	if (not_there != NULL && not_there != expected)
		assert_int_equal(rpma_cq_get_completion(not_there, &c), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_get_completion(expected, &c), 0);
	assert_int_equal(c.op, RPMA_OP_RECV);
	assert_ptr_equal(c.op_context, (void *)0x5ecec0de);
}

static void route__main_cq(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = conn_with(NULL, 0, false, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_ptr_equal(id->qp->recv_cq, id->qp->send_cq);
	expect_recv_on(id, cq, NULL);
	fx_conn_delete(&conn);
}

static void route__conn_rcq(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = conn_with(NULL, 8, false, &id);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_ptr_not_equal(id->qp->recv_cq, id->qp->send_cq);
	expect_recv_on(id, rcq, cq);
	fx_conn_delete(&conn);
}

static void route__srq_rcq(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	struct ibv_srq *isrq = ibv_srq_of(srq);
	struct rpma_cq *srq_rcq = NULL;
	assert_int_equal(rpma_srq_get_rcq(srq, &srq_rcq), 0);

	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = conn_with(srq, 0, false, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_ptr_equal(id->qp->srq, isrq);
	assert_ptr_not_equal(id->qp->recv_cq, id->qp->send_cq);
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_non_null(attr);
	assert_int_equal(attr->cap.max_recv_wr, 0);
	/* the SRQ's receive CQ, of librpma 1.x's default size */
	assert_int_equal(id->qp->recv_cq->cqe, 20);
	expect_recv_on(id, srq_rcq, cq);
	fx_conn_delete(&conn);
	srq_delete(&srq);
}

static void route__srq_rcq_before_conn_rcq(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	struct rpma_cq *srq_rcq = NULL;
	assert_int_equal(rpma_srq_get_rcq(srq, &srq_rcq), 0);
	struct rdma_cm_id *id = NULL;
	unsigned cqs = fake_verbs_calls(FAKE_CREATE_CQ);
	struct rpma_conn *conn = conn_with(srq, 8, false, &id);
	/* no receive CQ of the connection's own that nothing would complete on */
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_CQ) - cqs, 1);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	expect_recv_on(id, srq_rcq, cq);
	if (rcq != NULL) {
		struct rpma_completion c;
		assert_int_equal(rpma_cq_get_completion(rcq, &c), RPMA_E_NO_COMPLETION);
	}
	fx_conn_delete(&conn);
	srq_delete(&srq);
}

static void route__srq_without_rcq_conn_rcq(void **state)
{
	(void)state;
	struct rpma_srq_cfg *scfg = srq_cfg(10, 0);
	struct rpma_srq *srq = srq_new(scfg);
	assert_int_equal(rpma_srq_cfg_delete(&scfg), 0);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = conn_with(srq, 8, false, &id);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_non_null(rcq);
	assert_non_null(id->qp->srq);
	expect_recv_on(id, rcq, cq);
	fx_conn_delete(&conn);
	srq_delete(&srq);
}

static void route__srq_without_any_rcq(void **state)
{
	(void)state;
	struct rpma_srq_cfg *scfg = srq_cfg(10, 0);
	struct rpma_srq *srq = srq_new(scfg);
	assert_int_equal(rpma_srq_cfg_delete(&scfg), 0);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = conn_with(srq, 0, false, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_ptr_equal(id->qp->recv_cq, id->qp->send_cq);
	expect_recv_on(id, cq, NULL);
	fx_conn_delete(&conn);
	srq_delete(&srq);
}

static void route__srq_shared_by_two(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	struct ibv_srq *isrq = ibv_srq_of(srq);
	struct rdma_cm_id *id1 = NULL, *id2 = NULL;
	struct rpma_conn *c1 = conn_with(srq, 0, false, &id1);
	struct rpma_conn *c2 = conn_with(srq, 8, false, &id2);
	assert_ptr_equal(id1->qp->srq, isrq);
	assert_ptr_equal(id2->qp->srq, isrq);
	assert_ptr_equal(id1->qp->recv_cq, id2->qp->recv_cq);
	assert_ptr_not_equal(id1->qp->send_cq, id2->qp->send_cq);
	fx_conn_delete(&c2);
	fx_conn_delete(&c1);
	srq_delete(&srq);
}

static void route__passive_srq(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	struct rpma_cq *srq_rcq = NULL;
	assert_int_equal(rpma_srq_get_rcq(srq, &srq_rcq), 0);
	struct rpma_conn_cfg *cfg = fx_cfg(10, 0, false);
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, srq), 0);
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, cfg, NULL, 0, &id);
	assert_non_null(id->qp->srq);
	expect_recv_on(id, srq_rcq, NULL);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
	fx_cfg_delete(&cfg);
	srq_delete(&srq);
}

/*
 * A shared completion channel serves the connection's CQ and RCQ; receives
 * that complete on the SRQ's own CQ would never show on it, and
 * rpma_conn_wait() would wait forever. librpma 1.x refused the
 * configuration with RPMA_E_INVAL.
 */
static struct rpma_conn_cfg *shared_cfg_with(struct rpma_srq *srq)
{
	struct rpma_conn_cfg *cfg = fx_cfg(10, 8, true);
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, srq), 0);
	return cfg;
}

static void shared_channel__srq_rcq_refused_active(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL); /* with its own receive CQ */
	struct rpma_conn_cfg *cfg = shared_cfg_with(srq);
	struct rpma_conn_req *req = FX_POISON;
	fx_log_reset();
	FX_INVAL(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, cfg, &req));
	assert_ptr_equal(req, FX_POISON);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 1);
	fx_cfg_delete(&cfg);
	srq_delete(&srq);
}

static void shared_channel__srq_rcq_refused_passive(void **state)
{
	(void)state;
	struct rpma_srq *srq = srq_new(NULL);
	struct rpma_conn_cfg *cfg = shared_cfg_with(srq);
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, NULL, 0);
	struct rpma_conn_req *req = FX_POISON;
	FX_INVAL(rpma_ep_next_conn_req(ep, cfg, &req));
	assert_ptr_equal(req, FX_POISON);
	/* the client's request is still there for a configuration that fits */
	assert_int_equal(fake_verbs_cm_events_queued(evch), 1);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, false), 0);
	req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, cfg, &req), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
	fx_cfg_delete(&cfg);
	srq_delete(&srq);
}

/* an SRQ without a receive CQ of its own completes on the shared channel */
static void shared_channel__srq_without_rcq(void **state)
{
	(void)state;
	struct rpma_srq_cfg *scfg = srq_cfg(10, 0);
	struct rpma_srq *srq = srq_new(scfg);
	assert_int_equal(rpma_srq_cfg_delete(&scfg), 0);
	struct rpma_conn_cfg *cfg = shared_cfg_with(srq);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct rpma_cq *rcq = NULL;
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_non_null(rcq);
	expect_recv_on(id, rcq, NULL);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
	srq_delete(&srq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(new__null_peer),
		T(new__null_srq_ptr),
		T(new__defaults),
		T(new__cfg),
		T(new__each_provider_failure),
		T(new__each_provider_failure_no_rcq),
		T(delete__null_srq_ptr),
		T(delete__null_srq),
		T(delete__success),
		T(delete__destroy_srq_fails),
		T(recv__null_srq),
		T(recv__null_dst_with_len),
		T(recv__beyond_region),
		T(recv__success),
		T(recv__zero_length),
		T(recv__post_fails),
		T(get_rcq__null_srq),
		T(get_rcq__null_rcq_ptr),
		T(route__main_cq),
		T(route__conn_rcq),
		T(route__srq_rcq),
		T(route__srq_rcq_before_conn_rcq),
		T(route__srq_without_rcq_conn_rcq),
		T(route__srq_without_any_rcq),
		T(route__srq_shared_by_two),
		T(route__passive_srq),
		T(shared_channel__srq_rcq_refused_active),
		T(shared_channel__srq_rcq_refused_passive),
		T(shared_channel__srq_without_rcq),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("srq", tests, NULL, NULL);
}
