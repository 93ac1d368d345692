/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs.cpp -- the verbs boundary on rdma-core
 */

#include <cerrno>
#include <cstring>

#include "verbs/verbs.hpp"

/*
 * NATIVE_ATOMIC_WRITE_VERBS and NATIVE_FLUSH_VERBS (src/meson.build): this
 * rdma-core has every name the verb needs, each HAVE_<name> is defined.
 */
#if defined(NATIVE_ATOMIC_WRITE_VERBS) || defined(NATIVE_FLUSH_VERBS)
#include <rdma/ib_user_verbs.h>
#endif

namespace rpma::verbs
{

int query_device_ex(ibv_context *ctx, ibv_device_attr_ex *attr)
{
	int ret = ibv_query_device_ex(ctx, nullptr, attr);
	if (ret) {
		errno = ret > 0 ? ret : errno;
		return -1;
	}
	return 0;
}

uint8_t native_ops(const ibv_device_attr_ex &attr)
{
	uint8_t ops = 0;
	(void)attr;
#ifdef NATIVE_FLUSH_VERBS
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_GLOBAL)
		ops |= NATIVE_FLUSH_GLOBAL;
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_FLUSH_PERSISTENT)
		ops |= NATIVE_FLUSH_PERSISTENT;
#endif
#ifdef NATIVE_ATOMIC_WRITE_VERBS
	if (attr.device_cap_flags_ex & IB_UVERBS_DEVICE_ATOMIC_WRITE)
		ops |= NATIVE_ATOMIC_WRITE;
#endif
	return ops;
}

uint64_t native_send_ops(uint8_t ops)
{
	uint64_t send_ops = 0;
	(void)ops;
#ifdef NATIVE_FLUSH_VERBS
	if (ops & (NATIVE_FLUSH_GLOBAL | NATIVE_FLUSH_PERSISTENT))
		send_ops |= IBV_QP_EX_WITH_FLUSH;
#endif
#ifdef NATIVE_ATOMIC_WRITE_VERBS
	if (ops & NATIVE_ATOMIC_WRITE)
		send_ops |= IBV_QP_EX_WITH_ATOMIC_WRITE;
#endif
	return send_ops;
}

int native_flush_access(uint8_t placements)
{
	int access = 0;
	(void)placements;
#ifdef NATIVE_FLUSH_VERBS
	if (placements & NATIVE_FLUSH_GLOBAL)
		access |= IBV_ACCESS_FLUSH_GLOBAL;
	if (placements & NATIVE_FLUSH_PERSISTENT)
		access |= IBV_ACCESS_FLUSH_PERSISTENT;
#endif
	return access;
}

ibv_pd *alloc_pd(ibv_context *ctx)
{
	return ibv_alloc_pd(ctx);
}

int dealloc_pd(ibv_pd *pd)
{
	int ret = ibv_dealloc_pd(pd);
	if (ret > 0)
		errno = ret;
	return ret;
}

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr(pd, addr, length, access);
}

int dereg_mr(ibv_mr *mr)
{
	int ret = ibv_dereg_mr(mr);
	if (ret > 0)
		errno = ret;
	return ret;
}

int advise_mr(ibv_pd *pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge *sg_list,
	      uint32_t num_sge)
{
	int ret = ibv_advise_mr(pd, advice, flags, sg_list, num_sge);
	if (ret > 0)
		errno = ret;
	return ret;
}

ibv_comp_channel *create_comp_channel(ibv_context *ctx)
{
	return ibv_create_comp_channel(ctx);
}

int destroy_comp_channel(ibv_comp_channel *channel)
{
	int ret = ibv_destroy_comp_channel(channel);
	if (ret > 0)
		errno = ret;
	return ret;
}

ibv_cq *create_cq(ibv_context *ctx, int cqe, void *cq_context, ibv_comp_channel *channel)
{
	return ibv_create_cq(ctx, cqe, cq_context, channel, 0);
}

int destroy_cq(ibv_cq *cq)
{
	int ret = ibv_destroy_cq(cq);
	if (ret > 0)
		errno = ret;
	return ret;
}

int req_notify_cq(ibv_cq *cq)
{
	int ret = ibv_req_notify_cq(cq, 0);
	if (ret > 0)
		errno = ret;
	return ret;
}

int get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context)
{
	return ibv_get_cq_event(channel, cq, cq_context);
}

void ack_cq_events(ibv_cq *cq, unsigned int nevents)
{
	ibv_ack_cq_events(cq, nevents);
}

int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc)
{
	return ibv_poll_cq(cq, num_entries, wc);
}

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	return ibv_create_srq(pd, attr);
}

int destroy_srq(ibv_srq *srq)
{
	int ret = ibv_destroy_srq(srq);
	if (ret > 0)
		errno = ret;
	return ret;
}

int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr)
{
	return ibv_post_send(qp, wr, bad_wr);
}

int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	return ibv_post_recv(qp, wr, bad_wr);
}

int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	return ibv_post_srq_recv(srq, wr, bad_wr);
}

int post_atomic_write(ibv_qp *qp, uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
		      uint64_t remote_addr, const void *src8)
{
#ifdef NATIVE_ATOMIC_WRITE_VERBS
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	if (qpx == nullptr) {
		errno = EOPNOTSUPP;
		return EOPNOTSUPP;
	}
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = send_flags;
	ibv_wr_atomic_write(qpx, rkey, remote_addr, src8);
	return ibv_wr_complete(qpx);
#else
	(void)qp;
	(void)wr_id;
	(void)send_flags;
	(void)rkey;
	(void)remote_addr;
	(void)src8;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
#endif
}

#ifdef NATIVE_FLUSH_VERBS
/* one work request of post_send_ex(), built on qpx; false for what it cannot build */
static bool build_wr_ex(ibv_qp_ex *qpx, const ibv_send_wr *wr, const native_flush_wr &flush)
{
	qpx->wr_id = wr->wr_id;
	qpx->wr_flags = wr->send_flags;
	if (flush.placement) {
		ibv_wr_flush(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, flush.len,
			     flush.placement == NATIVE_FLUSH_PERSISTENT ? IBV_FLUSH_PERSISTENT
									: IBV_FLUSH_GLOBAL,
			     flush.whole_region ? IBV_FLUSH_MR : IBV_FLUSH_RANGE);
		return true;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(qpx, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, wr->imm_data);
		break;
	case IBV_WR_SEND:
		ibv_wr_send(qpx);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(qpx, wr->imm_data);
		break;
	default:
		return false;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		/* the library inlines one buffer at most */
		if (wr->num_sge > 1)
			return false;
		if (wr->num_sge == 1)
			ibv_wr_set_inline_data(qpx, reinterpret_cast<void *>(wr->sg_list[0].addr),
					       wr->sg_list[0].length);
		else
			ibv_wr_set_inline_data(qpx, nullptr, 0);
	} else {
		ibv_wr_set_sge_list(qpx, static_cast<size_t>(wr->num_sge), wr->sg_list);
	}
	return true;
}
#endif

int post_send_ex(ibv_qp *qp, ibv_send_wr *wr, const native_flush_wr *flush)
{
#ifdef NATIVE_FLUSH_VERBS
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	if (qpx == nullptr) {
		errno = EOPNOTSUPP;
		return EOPNOTSUPP;
	}
	ibv_wr_start(qpx);
	for (size_t i = 0; wr != nullptr; wr = wr->next, i++) {
		if (!build_wr_ex(qpx, wr, flush[i])) {
			ibv_wr_abort(qpx);
			errno = EINVAL;
			return EINVAL;
		}
	}
	const int ret = ibv_wr_complete(qpx);
	if (ret)
		errno = ret;
	return ret;
#else
	(void)qp;
	(void)wr;
	(void)flush;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
#endif
}

rdma_event_channel *create_event_channel()
{
	return rdma_create_event_channel();
}

void destroy_event_channel(rdma_event_channel *channel)
{
	rdma_destroy_event_channel(channel);
}

int create_id(rdma_event_channel *channel, rdma_cm_id **id, void *context)
{
	return rdma_create_id(channel, id, context, RDMA_PS_TCP);
}

int destroy_id(rdma_cm_id *id)
{
	return rdma_destroy_id(id);
}

int migrate_id(rdma_cm_id *id, rdma_event_channel *channel)
{
	return rdma_migrate_id(id, channel);
}

int getaddrinfo(const char *node, const char *service, const rdma_addrinfo *hints,
		rdma_addrinfo **res)
{
	errno = 0;
	int ret = rdma_getaddrinfo(node, service, hints, res);
	/* older librdmacm return a getaddrinfo EAI_* code and leave errno alone */
	if (ret && errno == 0)
		errno = EINVAL;
	return ret;
}

void freeaddrinfo(rdma_addrinfo *res)
{
	if (res)
		rdma_freeaddrinfo(res);
}

int bind_addr(rdma_cm_id *id, sockaddr *addr)
{
	return rdma_bind_addr(id, addr);
}

int resolve_addr(rdma_cm_id *id, sockaddr *src_addr, sockaddr *dst_addr, int timeout_ms)
{
	return rdma_resolve_addr(id, src_addr, dst_addr, timeout_ms);
}

int resolve_route(rdma_cm_id *id, int timeout_ms)
{
	return rdma_resolve_route(id, timeout_ms);
}

int set_ack_timeout(rdma_cm_id *id, uint8_t exponent)
{
	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &exponent,
			       sizeof(exponent));
}

int listen(rdma_cm_id *id, int backlog)
{
	return rdma_listen(id, backlog);
}

int get_cm_event(rdma_event_channel *channel, rdma_cm_event **event)
{
	return rdma_get_cm_event(channel, event);
}

int ack_cm_event(rdma_cm_event *event)
{
	return rdma_ack_cm_event(event);
}

int create_qp_ex(rdma_cm_id *id, ibv_qp_init_attr_ex *attr)
{
	return rdma_create_qp_ex(id, attr);
}

const char *wc_status_str(ibv_wc_status status)
{
	return ibv_wc_status_str(status);
}

int modify_qp_to_error(ibv_qp *qp)
{
	ibv_qp_attr attr{};
	attr.qp_state = IBV_QPS_ERR;
	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

void destroy_qp(rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
}

int connect(rdma_cm_id *id, rdma_conn_param *param)
{
	return rdma_connect(id, param);
}

int accept(rdma_cm_id *id, rdma_conn_param *param)
{
	return rdma_accept(id, param);
}

int reject(rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}

int disconnect(rdma_cm_id *id)
{
	return rdma_disconnect(id);
}

} /* namespace rpma::verbs */
