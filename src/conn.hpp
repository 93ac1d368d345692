/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.hpp -- an RC connection: its id, queues, events and data path
 */

#ifndef RPMA_CONN_HPP
#define RPMA_CONN_HPP

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <mutex>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <librpma.h>

struct rpma_cq;
struct rpma_peer;

/*
 * Room for the private data a connection request or a connection keeps:
 * rdma_cm gives its length as a uint8_t (private_data_len), so 255 bytes
 * hold whatever arrives. Peers send less: on InfiniBand and RoCE a
 * connection request carries at most 56 bytes, an accept at most 196.
 */
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

/*
 * Connection events the library took from the channel while it waited for
 * completions, kept for rpma_conn_next_event() in the order they came.
 */
struct conn_event_stash {
	static constexpr unsigned CAPACITY = 8;
	rpma_conn_event events[CAPACITY];
	unsigned head = 0;
	unsigned count = 0;
};

struct rpma_conn {
	rpma_peer *peer;
	rdma_cm_id *id;
	rdma_event_channel *evch; /* this connection's own: its events only; non-blocking */
	conn_queues queues;

	/*
	 * What rpma_conn_get_event_fd() hands out: an epoll fd over the event
	 * channel and stash_fd, so that it is readable while an event waits
	 * either in rdma_cm or in the stash. Its O_NONBLOCK flag (the
	 * application's to set) says whether rpma_conn_next_event() blocks.
	 */
	int event_fd;
	int stash_fd; /* eventfd, readable while the stash holds events */
	std::mutex events_lock;
	conn_event_stash stash;
	/*
	 * The peer is gone (the connection closed or was lost): the QP was
	 * moved to the error state, so everything outstanding completes.
	 */
	std::atomic<bool> down{ false };
	std::atomic<long long> down_at_ms{ 0 }; /* monotonic_ms() when it went down */

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

/* What conn_watch_events() did. */
enum class watch_result {
	took,  /* events went into the stash */
	none,  /* there was none (another thread took it first) */
	stuck, /* none could be taken: the stash is full, or the channel failed (logged) */
};

/*
 * Takes the connection events waiting on conn's channel, without blocking,
 * into its stash; one that says the peer is gone brings the connection down.
 * For waits that watch the channel besides a completion channel.
 */
watch_result conn_watch_events(rpma_conn *conn);

/*
 * How long after the connection went down the device has to flush what is
 * posted. After that the library completes the flushes still in flight
 * itself (IBV_WC_WR_FLUSH_ERR), nothing more can complete, and a wait
 * ends with RPMA_E_NO_COMPLETION.
 */
constexpr int CONN_DOWN_DRAIN_MS = 250;

/*
 * How long a wait that could not take the connection's events (a full
 * stash, a failing channel) waits on the completion channel alone before
 * it looks again.
 */
constexpr int WATCH_AGAIN_MS = 100;

/*
 * Whether the connection is down and its drain time over; if so, the polls
 * of its CQ complete the orphaned flushes from now on.
 */
bool conn_drained(rpma_conn *conn);

/*
 * Waits up to timeout_ms (< 0: no limit) for channel_fd to become readable,
 * watching conn's events meanwhile (conn may be NULL). Returns 1 when
 * channel_fd is readable, 0 when it is not (timeout, or the connection went
 * down and CONN_DOWN_DRAIN_MS passed with nothing to read), or a negative
 * RPMA_E_* code.
 */
int wait_channel_or_peer(int channel_fd, rpma_conn *conn, int timeout_ms);

/*
 * Before the blocking read of a librpma 1.x wait (rpma_cq_wait,
 * rpma_conn_wait) on channel_fd: waits, watching conn's events, unless the
 * application made channel_fd non-blocking. WAIT_1X_EVENT: read the event
 * now; WAIT_1X_ORPHANS: the connection is down and drained, and its main CQ
 * holds the flushes the library completes (no event comes for them);
 * RPMA_E_NO_COMPLETION: it is down and nothing more completes.
 */
constexpr int WAIT_1X_EVENT = 1;
constexpr int WAIT_1X_ORPHANS = 2;
int wait_1x(int channel_fd, rpma_conn *conn);

inline long long monotonic_ms()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

} /* namespace rpma */

#endif /* RPMA_CONN_HPP */
