/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.cpp -- the device, its protection domain and its capabilities
 */

#include <cerrno>
#include <cstring>
#include <new>

#include "conn_cfg.hpp"
#include "err.hpp"
#include "gpspm_wire.hpp"
#include "mr.hpp"
#include "peer.hpp"
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

void rpma_peer::gpspm_offer(rpma_mr_local *mr, rpma_persist_fn *persist,
			    rpma_persist_ctx_fn *persist_ctx, void *ctx)
{
	pthread_rwlock_wrlock(&gpspm_lock);
	mr->persist = persist;
	mr->persist_ctx = persist_ctx;
	mr->persist_arg = ctx;
	mr->gpspm_prev = nullptr;
	mr->gpspm_next = gpspm_regions;
	if (gpspm_regions)
		gpspm_regions->gpspm_prev = mr;
	gpspm_regions = mr;
	pthread_rwlock_unlock(&gpspm_lock);
}

void rpma_peer::gpspm_withdraw(rpma_mr_local *mr)
{
	/* waits for a persist of the region in progress */
	pthread_rwlock_wrlock(&gpspm_lock);
	if (mr->gpspm_prev)
		mr->gpspm_prev->gpspm_next = mr->gpspm_next;
	else
		gpspm_regions = mr->gpspm_next;
	if (mr->gpspm_next)
		mr->gpspm_next->gpspm_prev = mr->gpspm_prev;
	mr->gpspm_prev = mr->gpspm_next = nullptr;
	mr->persist = nullptr;
	mr->persist_ctx = nullptr;
	mr->persist_arg = nullptr;
	pthread_rwlock_unlock(&gpspm_lock);
}

rpma_mr_local *rpma_peer::gpspm_region(uint32_t rkey, uint64_t raddr, uint64_t len, uint8_t *status)
{
	for (rpma_mr_local *mr = gpspm_regions; mr != nullptr; mr = mr->gpspm_next) {
		if (mr->mr->rkey != rkey)
			continue;
		const uint64_t base = reinterpret_cast<uintptr_t>(mr->mr->addr);
		if (!rpma::gpspm_range_inside(base, mr->mr->length, raddr, len)) {
			RPMA_LOG_ERROR("GPSPM request for %llu bytes at %#llx: outside the region "
				       "of %zu bytes at %#llx",
				       static_cast<unsigned long long>(len),
				       static_cast<unsigned long long>(raddr), mr->mr->length,
				       static_cast<unsigned long long>(base));
			*status = rpma::GPSPM_OUT_OF_RANGE;
			return nullptr;
		}
		return mr;
	}
	RPMA_LOG_ERROR("GPSPM request for rkey %#x: no region with that key offers GPSPM", rkey);
	*status = rpma::GPSPM_NO_REGION;
	return nullptr;
}

uint8_t rpma_peer::gpspm_persist(uint32_t rkey, uint64_t raddr, uint64_t len)
{
	uint8_t status = rpma::GPSPM_OK;
	pthread_rwlock_rdlock(&gpspm_lock);
	rpma_mr_local *mr = gpspm_region(rkey, raddr, len, &status);
	if (mr != nullptr && len)
		mr->persist_range(reinterpret_cast<const void *>(static_cast<uintptr_t>(raddr)),
				  len);
	pthread_rwlock_unlock(&gpspm_lock);
	return status;
}

uint8_t rpma_peer::gpspm_atomic_write(uint32_t rkey, uint64_t raddr, const uint8_t value[8])
{
	uint8_t status = rpma::GPSPM_OK;
	pthread_rwlock_rdlock(&gpspm_lock);
	rpma_mr_local *mr = gpspm_region(rkey, raddr, sizeof(uint64_t), &status);
	if (mr != nullptr && !(mr->usage & RPMA_MR_USAGE_WRITE_DST)) {
		RPMA_LOG_ERROR("GPSPM atomic write into a region not registered for remote "
			       "writes (RPMA_MR_USAGE_WRITE_DST): refused");
		status = rpma::GPSPM_NOT_WRITABLE;
	} else if (mr != nullptr && raddr % sizeof(uint64_t)) {
		RPMA_LOG_ERROR("GPSPM atomic write at %#llx: not 8-byte aligned, refused",
			       static_cast<unsigned long long>(raddr));
		status = rpma::GPSPM_MISALIGNED;
	} else if (mr != nullptr) {
		/* one aligned store: a reader sees the old word or the new one */
		uint64_t word;
		memcpy(&word, value, sizeof(word));
		__atomic_store_n(reinterpret_cast<uint64_t *>(static_cast<uintptr_t>(raddr)), word,
				 __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&gpspm_lock);
	return status;
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

	auto *peer = new (std::nothrow) rpma_peer;
	if (peer == nullptr) {
		(void)rpma::verbs::dealloc_pd(pd);
		return RPMA_E_NOMEM;
	}

	peer->context = ibv_ctx;
	peer->pd = pd;
	pthread_rwlock_init(&peer->gpspm_lock, nullptr);
	peer->gpspm_regions = nullptr;
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

	pthread_rwlock_destroy(&peer->gpspm_lock);
	delete peer;
	*peer_ptr = nullptr;
	return ret;
}

} /* extern "C" */
