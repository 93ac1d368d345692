/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.hpp -- one RDMA device, its protection domain and what it can do
 */

#ifndef RPMA_PEER_HPP
#define RPMA_PEER_HPP

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <librpma.h>

struct rpma_conn_cfg;
struct rpma_cq;

struct rpma_peer {
	ibv_context *context;
	ibv_pd *pd;
	bool odp_capable;	  /* registration can fall back to on-demand paging */
	bool native_atomic_write; /* IBV_WR_ATOMIC_WRITE is offered */
	bool iwarp;		  /* RDMA read writes its sink remotely on iWARP */

	/*
	 * Creates the RC queue pair of a connection on id. recv_cq receives the
	 * receive completions; srq may be NULL.
	 */
	int create_qp(rdma_cm_id *id, const rpma_conn_cfg *cfg, ibv_cq *send_cq, ibv_cq *recv_cq,
		      ibv_srq *srq) const;
};

namespace rpma
{
/* Probes whether a device can register memory on demand for RC. */
int query_odp(ibv_context *context, bool *odp_capable);
} /* namespace rpma */

#endif /* RPMA_PEER_HPP */
