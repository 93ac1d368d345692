/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs.hpp -- the only door from the library to rdma-core
 *
 * Every call the library makes into libibverbs or librdmacm goes through one
 * of these functions. They keep rdma-core's own contract (same arguments, a
 * NULL pointer or a non-zero int on failure with errno set), so the code
 * above reads like ordinary verbs code. verbs.cpp implements them on
 * rdma-core; the unit tests link a fake implementation instead, which can
 * fail any call and produce any completion or connection event.
 */

#ifndef RPMA_VERBS_HPP
#define RPMA_VERBS_HPP

#include <cstdint>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

namespace rpma::verbs
{

/*
 * The IBTA 1.5 operations a device may execute natively. Their rdma-core
 * names (ibv_wr_flush, IBV_ACCESS_FLUSH_*, IBV_QP_EX_WITH_FLUSH,
 * IB_UVERBS_DEVICE_FLUSH_*, ...) are newer than some rdma-core the library
 * builds with: src/meson.build asks the compiler for each, and only this
 * boundary spells them. The library above speaks of these bits.
 */
enum native_op : uint8_t {
	NATIVE_FLUSH_GLOBAL = 1 << 0,	  /* RDMA FLUSH, placement: global visibility */
	NATIVE_FLUSH_PERSISTENT = 1 << 1, /* RDMA FLUSH, placement: persistence */
	NATIVE_ATOMIC_WRITE = 1 << 2,	  /* RDMA ATOMIC WRITE of 8 bytes */
};

/* devices and protection domains */
int query_device_ex(ibv_context *ctx, ibv_device_attr_ex *attr);
/*
 * The native operations (NATIVE_* bits) that a device with attr offers and
 * that this build can post: none where rdma-core lacks the verb's names.
 */
uint8_t native_ops(const ibv_device_attr_ex &attr);
/*
 * What a QP that posts the native operations ops needs in its
 * send_ops_flags besides the ordinary operations; 0 when ops needs nothing.
 */
uint64_t native_send_ops(uint8_t ops);
ibv_pd *alloc_pd(ibv_context *ctx);
int dealloc_pd(ibv_pd *pd);

/* memory registration */
ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, int access);
/*
 * The access flags that let a peer's RDMA FLUSH of the given placements
 * (NATIVE_FLUSH_* bits) into a region; 0 for none.
 */
int native_flush_access(uint8_t placements);
int dereg_mr(ibv_mr *mr);
int advise_mr(ibv_pd *pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge *sg_list,
	      uint32_t num_sge);

/* completion queues and their channels */
ibv_comp_channel *create_comp_channel(ibv_context *ctx);
int destroy_comp_channel(ibv_comp_channel *channel);
ibv_cq *create_cq(ibv_context *ctx, int cqe, void *cq_context, ibv_comp_channel *channel);
int destroy_cq(ibv_cq *cq);
int req_notify_cq(ibv_cq *cq);
int get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context);
void ack_cq_events(ibv_cq *cq, unsigned int nevents);
/* as ibv_poll_cq: the number of completions stored, or negative on failure */
int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc);

/* the name of a completion status, for log lines */
const char *wc_status_str(ibv_wc_status status);

/* shared receive queues */
ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr);
int destroy_srq(ibv_srq *srq);

/* posting: one call, one doorbell */
int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
/* the native 8-byte atomic write (IBV_WR_ATOMIC_WRITE) through ibv_qp_ex */
int post_atomic_write(ibv_qp *qp, uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
		      uint64_t remote_addr, const void *src8);
/*
 * What a struct ibv_send_wr cannot say of a native RDMA FLUSH: its
 * placement (NATIVE_FLUSH_GLOBAL or NATIVE_FLUSH_PERSISTENT; 0 for a work
 * request that is no native flush), its 32-bit length, and whether it
 * flushes the whole region of its rkey instead of a range.
 */
struct native_flush_wr {
	uint8_t placement;
	bool whole_region;
	uint32_t len;
};
/*
 * Posts the chain wr through the ibv_qp_ex work-request API, between one
 * ibv_wr_start() and one ibv_wr_complete(): one doorbell. The i-th work
 * request of the chain is a native flush where flush[i].placement is set
 * (its wr gives the wr_id, send_flags, remote_addr and rkey), else what its
 * opcode says (RDMA read, write, send, with or without immediate data).
 * All or nothing: on failure (the error number returned, errno set too)
 * no work request of the chain was posted.
 */
int post_send_ex(ibv_qp *qp, ibv_send_wr *wr, const native_flush_wr *flush);

/* librdmacm */
rdma_event_channel *create_event_channel();
void destroy_event_channel(rdma_event_channel *channel);
int create_id(rdma_event_channel *channel, rdma_cm_id **id, void *context);
int destroy_id(rdma_cm_id *id);
int migrate_id(rdma_cm_id *id, rdma_event_channel *channel);
int getaddrinfo(const char *node, const char *service, const rdma_addrinfo *hints,
		rdma_addrinfo **res);
void freeaddrinfo(rdma_addrinfo *res);
int bind_addr(rdma_cm_id *id, sockaddr *addr);
int resolve_addr(rdma_cm_id *id, sockaddr *src_addr, sockaddr *dst_addr, int timeout_ms);
int resolve_route(rdma_cm_id *id, int timeout_ms);
/* the local ACK timeout (4.096 us * 2^exponent) its QP will get at RTS */
int set_ack_timeout(rdma_cm_id *id, uint8_t exponent);
int listen(rdma_cm_id *id, int backlog);
int get_cm_event(rdma_event_channel *channel, rdma_cm_event **event);
int ack_cm_event(rdma_cm_event *event);
int create_qp_ex(rdma_cm_id *id, ibv_qp_init_attr_ex *attr);
void destroy_qp(rdma_cm_id *id);
/* moves the QP to the error state: every posted work request completes, flushed */
int modify_qp_to_error(ibv_qp *qp);
int connect(rdma_cm_id *id, rdma_conn_param *param);
int accept(rdma_cm_id *id, rdma_conn_param *param);
int reject(rdma_cm_id *id, const void *private_data, uint8_t private_data_len);
int disconnect(rdma_cm_id *id);

} /* namespace rpma::verbs */

#endif /* RPMA_VERBS_HPP */
