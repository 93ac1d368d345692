/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.cpp -- shared receive queues
 */

#include <cerrno>

#include "cq.hpp"
#include "err.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "runtime.hpp"
#include "srq.hpp"
#include "srq_cfg.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

extern "C" {

int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr)
{
	RPMA_CHECK_ARG(peer != nullptr);
	RPMA_CHECK_ARG(srq_ptr != nullptr);
	const rpma_srq_cfg &c = cfg ? *cfg : rpma_srq_cfg::defaults;
	const uint32_t rq_size = c.rq_size.load();
	const uint32_t rcq_size = c.rcq_size.load();

	auto *srq = rpma::make_zeroed<rpma_srq>();
	if (srq == nullptr)
		return RPMA_E_NOMEM;

	int ret = 0;
	if (rcq_size) {
		ret = cq_new(peer->context, static_cast<int>(rcq_size), nullptr, &srq->rcq);
		if (ret)
			goto free_srq;
	}

	{
		ibv_srq_init_attr attr{};
		attr.attr.max_wr = rq_size;
		attr.attr.max_sge = 1;
		srq->srq = verbs::create_srq(peer->pd, &attr);
		if (srq->srq == nullptr) {
			ret = RPMA_PROVIDER_FAILED(errno, "ibv_create_srq");
			goto delete_rcq;
		}
	}

	*srq_ptr = srq;
	return 0;

delete_rcq:
	(void)cq_delete(&srq->rcq);
free_srq:
	rpma::destroy(srq);
	return ret;
}

int rpma_srq_delete(struct rpma_srq **srq_ptr)
{
	RPMA_CHECK_ARG(srq_ptr != nullptr);
	rpma_srq *srq = *srq_ptr;
	if (srq == nullptr)
		return 0;

	int ret = 0;
	if (verbs::destroy_srq(srq->srq))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_destroy_srq");
	int cq_ret = cq_delete(&srq->rcq);
	if (ret == 0)
		ret = cq_ret;
	rpma::destroy(srq);
	*srq_ptr = nullptr;
	return ret;
}

int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context)
{
	RPMA_CHECK_ARG(srq != nullptr);
	ibv_recv_wr wr;
	ibv_sge sge;
	int ret = prepare_recv(dst, offset, len, op_context, &wr, &sge);
	if (ret)
		return ret;
	ibv_recv_wr *bad_wr;
	ret = verbs::post_srq_recv(srq->srq, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_srq_recv");
	return 0;
}

int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr)
{
	RPMA_CHECK_ARG(srq != nullptr);
	RPMA_CHECK_ARG(rcq_ptr != nullptr);
	*rcq_ptr = srq->rcq;
	return 0;
}

} /* extern "C" */
