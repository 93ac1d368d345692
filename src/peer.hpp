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

#include "gpspm_registry.hpp"

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

	/* the regions that GPSPM may flush: mr.cpp's (gpspm_registry.hpp) */
	rpma::gpspm_registry gpspm_regions;

	/*
	 * Creates the RC queue pair of a connection on id. recv_cq receives the
	 * receive completions; srq may be NULL.
	 */
	int create_qp(rdma_cm_id *id, const qp_shape &shape, ibv_cq *send_cq, ibv_cq *recv_cq,
		      ibv_srq *srq) const;
};

namespace rpma
{
/* Probes whether a device can register memory on demand for RC. */
int query_odp(ibv_context *context, bool *odp_capable);
} /* namespace rpma */

#endif /* RPMA_PEER_HPP */
