/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req.hpp -- a connection being set up, on either side
 */

#ifndef RPMA_CONN_REQ_HPP
#define RPMA_CONN_REQ_HPP

#include <rdma/rdma_cma.h>

#include "conn.hpp"
#include "conn_cfg.hpp"
#include "conn_events.hpp"
#include "conn_queues.hpp"

struct rpma_conn_req {
	rpma_peer *peer;
	rdma_cm_id *id;
	bool passive;	   /* made from a client's request: connect accepts it */
	rpma_conn_cfg cfg; /* what the request was made with: its queues' shape */
	/*
	 * A client's request gets its queues only when the application needs
	 * them: a receive posted, GPSPM offered, the request connected. A
	 * request that is rejected or deleted never had a queue pair, and a
	 * flood of requests costs the server no queues and no GPSPM thread.
	 * An outgoing request has them from the start: rdma_connect needs its
	 * queue pair.
	 */
	bool queues_made;
	rpma::conn_queues queues;

	/*
	 * The client's queue pair number as its request carried it (passive
	 * side; 0 where the connection manager carries none: iWARP)
	 */
	uint32_t peer_qp_num;

	/* the client's private data (passive side only) */
	uint8_t private_data[rpma::CONN_PRIVATE_DATA_MAX];
	uint8_t private_data_len;
};

namespace rpma
{

/*
 * RPMA_E_INVAL, logged, when cfg shares one completion channel between the
 * connection's CQs and names an SRQ with a receive CQ of its own (the
 * receives would complete where that channel never reports them), or asks
 * for GPSPM with queues it cannot work with. Checked before anything is
 * created or taken: a passive side keeps the client's request.
 */
int check_conn_cfg(const rpma_conn_cfg *cfg);

/* Makes a passive request from an RDMA_CM_EVENT_CONNECT_REQUEST event. */
int conn_req_from_cm_event(rpma_peer *peer, rdma_cm_event *event, const rpma_conn_cfg *cfg,
			   rpma_conn_req **req_ptr);

} /* namespace rpma */

#endif /* RPMA_CONN_REQ_HPP */
