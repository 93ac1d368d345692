/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.hpp -- one RDMA device, its protection domain and what it can do
 */

#ifndef RPMA_PEER_HPP
#define RPMA_PEER_HPP

#include <pthread.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <librpma.h>

struct rpma_conn_cfg;
struct rpma_cq;
struct rpma_mr_local;

/* The queues of a queue pair a connection asks for. */
struct qp_shape {
	uint32_t max_send_wr;
	uint32_t max_recv_wr; /* ignored with an SRQ */
	uint32_t max_inline_data;
};

struct rpma_peer {
	ibv_context *context;
	ibv_pd *pd;
	bool odp_capable; /* registration can fall back to on-demand paging */
	bool iwarp;	  /* RDMA read writes its sink remotely on iWARP */
	/*
	 * The IBTA 1.5 operations (rpma::verbs::NATIVE_* bits) that the device
	 * offers and this build can post; the QPs of its connections are
	 * created for them.
	 */
	uint8_t native;

	/*
	 * The regions that GPSPM may flush (those with a persist function),
	 * a list through rpma_mr_local::gpspm_next. Serving a request reads it
	 * and persists under the read lock, so that a region cannot be
	 * deregistered (and its memory unmapped) while it is being persisted.
	 */
	pthread_rwlock_t gpspm_lock;
	rpma_mr_local *gpspm_regions;

	/*
	 * Creates the RC queue pair of a connection on id. recv_cq receives the
	 * receive completions; srq may be NULL.
	 */
	int create_qp(rdma_cm_id *id, const qp_shape &shape, ibv_cq *send_cq, ibv_cq *recv_cq,
		      ibv_srq *srq) const;

	/* Puts mr on (takes it off) the list of regions GPSPM may flush. */
	void gpspm_offer(rpma_mr_local *mr, rpma_persist_fn *persist,
			 rpma_persist_ctx_fn *persist_ctx, void *ctx);
	void gpspm_withdraw(rpma_mr_local *mr);

	/*
	 * Serves a GPSPM request: persists [raddr, raddr + len) of the region
	 * with rkey. Returns the rpma::gpspm_status to answer.
	 */
	uint8_t gpspm_persist(uint32_t rkey, uint64_t raddr, uint64_t len);

	/*
	 * Serves a GPSPM atomic write: stores the 8 bytes of value at raddr of
	 * the region with rkey, as one aligned store (not persisted: as an
	 * RDMA write, it needs a flush). Returns the rpma::gpspm_status.
	 */
	uint8_t gpspm_atomic_write(uint32_t rkey, uint64_t raddr, const uint8_t value[8]);

      private:
	/*
	 * The region with rkey that offers GPSPM, [raddr, raddr + len) inside
	 * it; NULL with *status saying why not. The read lock must be held.
	 */
	rpma_mr_local *gpspm_region(uint32_t rkey, uint64_t raddr, uint64_t len, uint8_t *status);
};

namespace rpma
{
/* Probes whether a device can register memory on demand for RC. */
int query_odp(ibv_context *context, bool *odp_capable);
} /* namespace rpma */

#endif /* RPMA_PEER_HPP */
