/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_queues.hpp -- the queues of a connection: what a connection request
 * builds and its connection takes over
 *
 * Ownership: made and destroyed here only; the connection and the request
 * read the pointers, and talk to each object through its own module.
 */

#ifndef RPMA_CONN_QUEUES_HPP
#define RPMA_CONN_QUEUES_HPP

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <librpma.h>

struct rpma_cq;
struct rpma_peer;

namespace rpma
{

struct conn_flush;
struct gpspm_engine;
struct gpspm_server;

struct conn_queues {
	rpma_cq *cq = nullptr;
	rpma_cq *rcq = nullptr;			    /* NULL: receives complete elsewhere */
	ibv_comp_channel *shared_channel = nullptr; /* NULL: each CQ has its own */
	conn_flush *flush = nullptr;		    /* flushes in flight */
	gpspm_engine *gpspm = nullptr;		    /* NULL: the connection carries no GPSPM */
	gpspm_server *server = nullptr;		    /* RPMA_GPSPM_THREAD's thread */
	/*
	 * GPSPM takes the receive queue (no application messages on it), and
	 * RPMA_GPSPM_THREAD the whole connection (nothing the application posts).
	 */
	rpma_gpspm_mode gpspm_mode = RPMA_GPSPM_DISABLED;
};

/* Sets up the CQs and the QP of a connection on id, as cfg says. */
int conn_queues_create(rpma_peer *peer, rdma_cm_id *id, const rpma_conn_cfg *cfg,
		       conn_queues *queues);
/* Destroys them, and the QP of id; the first failure is reported. */
int conn_queues_destroy(rdma_cm_id *id, conn_queues *queues);

} /* namespace rpma */

#endif /* RPMA_CONN_QUEUES_HPP */
