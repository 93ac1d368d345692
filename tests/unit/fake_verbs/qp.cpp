// SPDX-License-Identifier: BSD-3-Clause
/*
 * qp.cpp -- shared receive queues and queue pairs
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

using namespace fake;

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_SRQ); err != GO_ON)
		return fail_null<ibv_srq>(err);
	if (!attr || !pd_ok(pd, "ibv_create_srq"))
		return fail_null<ibv_srq>(EINVAL);
	if (attr->attr.max_wr < 1 || attr->attr.max_wr > 32767 || attr->attr.max_sge < 1 ||
	    attr->attr.max_sge > 31)
		return fail_null<ibv_srq>(EINVAL);
	auto *srq = new fake_srq();
	srq->srq.context = pd->context;
	srq->srq.srq_context = attr->srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = s.next_handle++;
	pthread_mutex_init(&srq->srq.mutex, nullptr);
	pthread_cond_init(&srq->srq.cond, nullptr);
	srq->attr = *attr;
	srq->pd = pd_of(pd);
	pd_get(srq->pd);
	add_live(srq, kind::srq);
	return &srq->srq;
}

int destroy_srq(ibv_srq *srq)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_SRQ); err != GO_ON)
		return fail_ret(err);
	if (!is_live(srq, kind::srq, "ibv_destroy_srq"))
		return fail_ret(EINVAL);
	auto *q = as<fake_srq>(srq);
	if (q->qps)
		return fail_ret(EBUSY);
	pd_put(q->pd);
	pthread_mutex_destroy(&q->srq.mutex);
	pthread_cond_destroy(&q->srq.cond);
	drop_live(q);
	delete q;
	return 0;
}

int create_qp_ex(rdma_cm_id *id, ibv_qp_init_attr_ex *attr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_QP_EX); err != GO_ON)
		return fail_minus1(err);
	if (!attr || !is_live(id, kind::id, "rdma_create_qp_ex"))
		return fail_minus1(EINVAL);
	if (id->qp)
		return fail_minus1(EINVAL);
	if (!id->verbs) {
		misuse("rdma_create_qp_ex: the id has no device (neither bound nor resolved)");
		return fail_minus1(EINVAL);
	}
	ibv_pd *pd = (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : nullptr;
	if (!pd)
		pd = id->pd;
	if (!pd || !pd_ok(pd, "rdma_create_qp_ex") || pd->context != id->verbs)
		return fail_minus1(EINVAL);
	if (!attr->send_cq || !attr->recv_cq) {
		misuse("rdma_create_qp_ex: send_cq %p recv_cq %p (the library must give both)",
		       (void *)attr->send_cq, (void *)attr->recv_cq);
		return fail_minus1(EINVAL);
	}
	if (!is_live(attr->send_cq, kind::cq, "rdma_create_qp_ex") ||
	    !is_live(attr->recv_cq, kind::cq, "rdma_create_qp_ex"))
		return fail_minus1(EINVAL);
	if (attr->srq && !is_live(attr->srq, kind::srq, "rdma_create_qp_ex"))
		return fail_minus1(EINVAL);
	if (attr->qp_type != IBV_QPT_RC)
		return fail_minus1(EINVAL);
	if (attr->cap.max_send_wr > 32768 || (!attr->srq && attr->cap.max_recv_wr > 32768) ||
	    attr->cap.max_send_sge > 30 || attr->cap.max_recv_sge > 30 ||
	    attr->cap.max_inline_data > 1024)
		return fail_minus1(EINVAL);
	bool atomic_write = false;
	bool flush = false;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		if ((attr->send_ops_flags & FAKE_QP_EX_WITH_ATOMIC_WRITE) && !s.atomic_write)
			return fail_minus1(EOPNOTSUPP);
		if ((attr->send_ops_flags & FAKE_QP_EX_WITH_FLUSH) && !s.flush)
			return fail_minus1(EOPNOTSUPP);
		atomic_write = attr->send_ops_flags & FAKE_QP_EX_WITH_ATOMIC_WRITE;
		flush = attr->send_ops_flags & FAKE_QP_EX_WITH_FLUSH;
	}

	auto *qp = new fake_qp();
	qp->attr = *attr;
	qp->attr.pd = pd;
	qp->qp.context = id->verbs;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	qp->qp.handle = s.next_handle++;
	qp->qp.qp_num = s.next_qp_num++;
	qp->qp.state = IBV_QPS_INIT;
	qp->qp.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qp.mutex, nullptr);
	pthread_cond_init(&qp->qp.cond, nullptr);
	qp->pd = pd_of(pd);
	qp->send_cq = as<fake_cq>(attr->send_cq);
	qp->recv_cq = as<fake_cq>(attr->recv_cq);
	qp->srq = attr->srq ? as<fake_srq>(attr->srq) : nullptr;
	qp->atomic_write = atomic_write;
	qp->flush = flush;
	pd_get(qp->pd);
	qp->send_cq->qps++;
	qp->recv_cq->qps++;
	if (qp->srq)
		qp->srq->qps++;
	add_live(qp, kind::qp);

	/* as librdmacm: the id remembers the QP and what it was built on */
	id->qp = &qp->qp;
	id->send_cq = attr->send_cq;
	id->recv_cq = attr->recv_cq;
	id->send_cq_channel = attr->send_cq->channel;
	id->recv_cq_channel = attr->recv_cq->channel;
	id->srq = attr->srq;
	return 0;
}

void destroy_qp(rdma_cm_id *id)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_DESTROY_QP);
	if (!is_live(id, kind::id, "rdma_destroy_qp"))
		return;
	if (!id->qp) {
		misuse("rdma_destroy_qp: the id has no QP");
		return;
	}
	auto *qp = as<fake_qp>(id->qp);
	if (is_live(qp, kind::qp, "rdma_destroy_qp")) {
		pd_put(qp->pd);
		qp->send_cq->qps--;
		qp->recv_cq->qps--;
		if (qp->srq)
			qp->srq->qps--;
		pthread_mutex_destroy(&qp->qp.mutex);
		pthread_cond_destroy(&qp->qp.cond);
		drop_live(qp);
		delete qp;
	}
	id->qp = nullptr;
	id->send_cq = id->recv_cq = nullptr;
	id->send_cq_channel = id->recv_cq_channel = nullptr;
	id->srq = nullptr;
}

int modify_qp_to_error(ibv_qp *qp)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_MODIFY_QP_TO_ERROR); err != GO_ON)
		return fail_ret(err);
	if (!is_live(qp, kind::qp, "ibv_modify_qp"))
		return EINVAL;
	as<fake_qp>(qp)->in_error = true;
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

bool fake_verbs_qp_in_error(struct ibv_qp *qp)
{
	guard g(st().lock);
	return is_live(qp, kind::qp, "fake_verbs_qp_in_error") && as<fake_qp>(qp)->in_error;
}

const struct ibv_qp_init_attr_ex *fake_verbs_qp_init_attr(struct ibv_qp *qp)
{
	guard g(st().lock);
	auto it = st().live.find(qp);
	if (it == st().live.end() || it->second != kind::qp)
		return nullptr;
	return &as<fake_qp>(qp)->attr;
}

const struct ibv_srq_init_attr *fake_verbs_srq_init_attr(struct ibv_srq *srq)
{
	guard g(st().lock);
	auto it = st().live.find(srq);
	if (it == st().live.end() || it->second != kind::srq)
		return nullptr;
	return &as<fake_srq>(srq)->attr;
}

} /* extern "C" */
