/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.hpp -- an RC connection: its id, queues, events and data path
 */

#ifndef RPMA_CONN_HPP
#define RPMA_CONN_HPP

#include <atomic>
#include <cstdint>
#include <cstring>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <librpma.h>

struct rpma_cq;
struct rpma_peer;

/* rdma_cm carries at most 196 bytes of private data (accept on IB/RoCE). */
constexpr size_t CONN_PRIVATE_DATA_MAX = 255;

namespace rpma
{
struct conn_flush;
}

/* The queues a request builds and its connection takes over. */
struct conn_queues {
	rpma_cq *cq = nullptr;
	rpma_cq *rcq = nullptr;			    /* NULL: receives complete elsewhere */
	ibv_comp_channel *shared_channel = nullptr; /* NULL: each CQ has its own */
	rpma::conn_flush *flush = nullptr;	    /* flushes in flight, GPSPM */
	rpma_gpspm_mode gpspm = RPMA_GPSPM_DISABLED;
};

struct rpma_conn {
	rpma_peer *peer;
	rdma_cm_id *id;
	rdma_event_channel *evch; /* this connection's own: its events only */
	conn_queues queues;

	uint8_t private_data[CONN_PRIVATE_DATA_MAX];
	uint8_t private_data_len;

	/* = queues.flush: what every flush needs, one load away */
	rpma::conn_flush *flush;
	/*
	 * GPSPM takes the receive queue (no application messages on it), and
	 * RPMA_GPSPM_THREAD the whole connection (nothing the application posts).
	 */
	rpma_gpspm_mode gpspm;

	/* from the peer configuration the target declared */
	std::atomic<bool> direct_write_to_pmem{ false };

	void set_private_data(const void *data, uint8_t len)
	{
		if (data == nullptr)
			len = 0;
		if (len)
			memcpy(private_data, data, len);
		private_data_len = len;
	}

	/* Posts one send work request: one doorbell. */
	int post_send(ibv_send_wr *wr);
};

namespace rpma
{

/* Sets up the CQs and the QP of a connection on id, as cfg says. */
int conn_queues_create(rpma_peer *peer, rdma_cm_id *id, const rpma_conn_cfg *cfg,
		       conn_queues *queues);
int conn_queues_destroy(rdma_cm_id *id, conn_queues *queues);

/*
 * Wraps id (with its QP) and queues into a connection with its own event
 * channel. private_data: what the connection knows of its peer so far (the
 * client's request data, on the passive side). On failure the caller still
 * owns id and queues.
 */
int conn_new(rpma_peer *peer, rdma_cm_id *id, const conn_queues &queues, const void *private_data,
	     uint8_t private_data_len, rpma_conn **conn_ptr);

} /* namespace rpma */

#endif /* RPMA_CONN_HPP */
