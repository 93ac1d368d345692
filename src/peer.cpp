/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.cpp -- the device, its protection domain and its capabilities
 */

#include <cerrno>
#include <cstring>

#include "conn_cfg.hpp"
#include "err.hpp"
#include "peer.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

static bool odp_capable_from(const ibv_device_attr_ex &attr)
{
	/* one-sided reads and writes must be able to fault pages in */
	const uint32_t needed = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;
	return (attr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (attr.odp_caps.per_transport_caps.rc_odp_caps & needed) == needed;
}

int query_odp(ibv_context *context, bool *odp_capable)
{
	ibv_device_attr_ex attr{};
	if (verbs::query_device_ex(context, &attr))
		return RPMA_PROVIDER_FAILED(errno, "ibv_query_device_ex");
	*odp_capable = odp_capable_from(attr);
	return 0;
}

} /* namespace rpma */

int rpma_peer::create_qp(rdma_cm_id *id, const qp_shape &shape, ibv_cq *send_cq, ibv_cq *recv_cq,
			 ibv_srq *srq) const
{
	ibv_qp_init_attr_ex attr{};
	attr.qp_context = nullptr;
	attr.send_cq = send_cq;
	attr.recv_cq = recv_cq;
	attr.srq = srq;
	attr.cap.max_send_wr = shape.max_send_wr;
	attr.cap.max_recv_wr = srq ? 0 : shape.max_recv_wr;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = shape.max_inline_data;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 0;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr.pd = pd;
	/* the native operations are posted through ibv_qp_ex, which must know them */
	if (const uint64_t native_send_ops = rpma::verbs::native_send_ops(native)) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
				      IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
				      native_send_ops;
	}

	if (rpma::verbs::create_qp_ex(id, &attr))
		return RPMA_PROVIDER_FAILED(errno, "rdma_create_qp_ex");
	return 0;
}

extern "C" {

int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr)
{
	RPMA_CHECK_ARG(ibv_ctx != nullptr);
	RPMA_CHECK_ARG(peer_ptr != nullptr);

	ibv_device_attr_ex attr{};
	if (rpma::verbs::query_device_ex(ibv_ctx, &attr))
		return RPMA_PROVIDER_FAILED(errno, "ibv_query_device_ex");

	ibv_pd *pd = rpma::verbs::alloc_pd(ibv_ctx);
	if (pd == nullptr)
		return RPMA_PROVIDER_FAILED(errno, "ibv_alloc_pd");

	auto *peer = rpma::make<rpma_peer>();
	if (peer == nullptr) {
		(void)rpma::verbs::dealloc_pd(pd);
		return RPMA_E_NOMEM;
	}

	peer->context = ibv_ctx;
	peer->pd = pd;
	gpspm_registry_init(&peer->gpspm_regions);
	peer->odp_capable = rpma::odp_capable_from(attr);
	peer->native = rpma::verbs::native_ops(attr);
	peer->iwarp = ibv_ctx->device && ibv_ctx->device->transport_type == IBV_TRANSPORT_IWARP;

	using rpma::verbs::NATIVE_ATOMIC_WRITE;
	using rpma::verbs::NATIVE_FLUSH_GLOBAL;
	using rpma::verbs::NATIVE_FLUSH_PERSISTENT;
	RPMA_LOG_INFO("peer on %s: odp %s, native flush: global %s, persistent %s, native atomic "
		      "write %s",
		      ibv_ctx->device ? ibv_ctx->device->name : "?",
		      peer->odp_capable ? "yes" : "no",
		      (peer->native & NATIVE_FLUSH_GLOBAL) ? "yes" : "no",
		      (peer->native & NATIVE_FLUSH_PERSISTENT) ? "yes" : "no",
		      (peer->native & NATIVE_ATOMIC_WRITE) ? "yes" : "no");
	*peer_ptr = peer;
	return 0;
}

int rpma_peer_delete(struct rpma_peer **peer_ptr)
{
	RPMA_CHECK_ARG(peer_ptr != nullptr);
	rpma_peer *peer = *peer_ptr;
	if (peer == nullptr)
		return 0;

	/*
	 * As librpma 1.x did, the peer goes even when rdma-core keeps its
	 * protection domain (still holding regions or queue pairs): programs
	 * written for it never retry, so a kept peer would only leak.
	 */
	int ret = 0;
	if (rpma::verbs::dealloc_pd(peer->pd))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_dealloc_pd");

	gpspm_registry_fini(&peer->gpspm_regions);
	rpma::destroy(peer);
	*peer_ptr = nullptr;
	return ret;
}

} /* extern "C" */
