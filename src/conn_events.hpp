/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_events.hpp -- a connection's events: its own rdma_cm channel, the
 * events a wait took for the application, the peer's death, and the waits
 * that watch for it
 *
 * A wait for completions must end when the peer is gone, and that is said
 * by a connection event. So the waits of cq.cpp watch the connection's
 * channel too; an event they take goes into a stash, where
 * rpma_conn_next_event() finds it first, in the order the events came.
 *
 * Ownership: every field is this module's. The stash and the reading of
 * the channel are under lock; down and down_at_ms are atomics written
 * only here (bring_down), read by anyone through is_down().
 */

#ifndef RPMA_CONN_EVENTS_HPP
#define RPMA_CONN_EVENTS_HPP

#include <atomic>
#include <cstdint>
#include <cstring>
#include <pthread.h>

#include <rdma/rdma_cma.h>

#include <librpma.h>

namespace rpma
{

struct conn_flush;
struct gpspm_engine;

/*
 * Room for the private data a connection request or a connection keeps:
 * rdma_cm gives its length as a uint8_t (private_data_len), so 255 bytes
 * hold whatever arrives. Peers send less: on InfiniBand and RoCE a
 * connection request carries at most 56 bytes, an accept at most 196.
 */
constexpr size_t CONN_PRIVATE_DATA_MAX = 255;

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

struct conn_events {
	rdma_cm_id *id;		  /* the connection's: its QP goes to error when the peer is gone */
	rdma_event_channel *evch; /* this connection's own: its events only; non-blocking */
	conn_flush *flush;	  /* whose flushes are completed once the connection drained */

	/*
	 * What rpma_conn_get_event_fd() hands out: an epoll fd over the event
	 * channel and stash_fd, so that it is readable while an event waits
	 * either in rdma_cm or in the stash. Its O_NONBLOCK flag (the
	 * application's to set) says whether rpma_conn_next_event() blocks.
	 */
	int event_fd;
	int stash_fd; /* eventfd, readable while the stash holds events */
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	conn_event_stash stash;
	/*
	 * The peer is gone (the connection closed or was lost): the QP was
	 * moved to the error state, so everything outstanding completes.
	 */
	std::atomic<bool> down{ false };
	std::atomic<long long> down_at_ms{ 0 }; /* monotonic_ms() when it went down */

	/* what the peer said: the client's request data, then the server's answer */
	uint8_t private_data[CONN_PRIVATE_DATA_MAX];
	uint8_t private_data_len = 0;

	bool is_down() const
	{
		return down.load(std::memory_order_acquire);
	}

	void set_private_data(const void *data, uint8_t len)
	{
		if (data == nullptr)
			len = 0;
		if (len)
			memcpy(private_data, data, len);
		private_data_len = len;
	}
};

/*
 * Gives the connection of id its own event channel and the fds above, and
 * moves id onto that channel, last. private_data: what the connection
 * knows of its peer so far. On failure nothing is left open and id stays
 * where it was.
 */
int conn_events_open(conn_events *ev, rdma_cm_id *id, conn_flush *flush, const void *private_data,
		     uint8_t private_data_len);

/*
 * Closes what conn_events_open() opened, after the id was destroyed (or
 * could not be: its channel then stays open, as librdmacm requires).
 */
void conn_events_close(conn_events *ev, bool id_destroyed);

/* rpma_conn_next_event(): the stash first, then the channel. */
int conn_events_next(conn_events *ev, rpma_conn_event *event);

/* rpma_conn_is_up(): whether the peer is there, as far as the events say. */
bool conn_events_is_up(conn_events *ev);

/* What conn_watch_events() did. */
enum class watch_result {
	took,  /* events went into the stash */
	none,  /* there was none (another thread took it first) */
	stuck, /* none could be taken: the stash is full, or the channel failed (logged) */
};

/*
 * Takes the connection events waiting on the channel, without blocking,
 * into the stash; one that says the peer is gone brings the connection
 * down. For waits that watch the channel besides a completion channel.
 */
watch_result conn_watch_events(conn_events *ev);

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
bool conn_drained(conn_events *ev);

/*
 * Waits up to timeout_ms (< 0: no limit) for channel_fd to become readable,
 * watching the connection's events meanwhile (ev may be NULL), and, when
 * gpspm is not NULL, for a GPSPM target gone silent (gpspm_watch_while_waiting:
 * the poll that would find it is not made while the thread sleeps).
 * Returns 1 when channel_fd is readable, 0 when it is not (timeout, or the
 * connection went down and CONN_DOWN_DRAIN_MS passed with nothing to
 * read), or a negative RPMA_E_* code.
 */
int wait_channel_or_peer(int channel_fd, conn_events *ev, gpspm_engine *gpspm, int timeout_ms);

/*
 * Before the blocking read of a librpma 1.x wait (rpma_cq_wait,
 * rpma_conn_wait) on channel_fd: waits, watching the connection's events,
 * unless the application made channel_fd non-blocking (blocking false: the
 * caller knows how the application wants the fd). WAIT_1X_EVENT: read
 * the event now; WAIT_1X_ORPHANS: the connection is down and drained, and
 * its main CQ holds the flushes the library completes (no event comes for
 * them); RPMA_E_NO_COMPLETION: it is down and nothing more completes.
 */
constexpr int WAIT_1X_EVENT = 1;
constexpr int WAIT_1X_ORPHANS = 2;
int wait_1x(int channel_fd, conn_events *ev, gpspm_engine *gpspm, bool blocking);

} /* namespace rpma */

#endif /* RPMA_CONN_EVENTS_HPP */
