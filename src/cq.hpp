/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.hpp -- a completion queue, its channel, and what its completions mean
 */

#ifndef RPMA_CQ_HPP
#define RPMA_CQ_HPP

#include <atomic>
#include <cstdint>
#include <mutex>

#include <infiniband/verbs.h>

#include <librpma.h>

namespace rpma
{
struct conn_flush;
}
struct rpma_conn;

namespace rpma
{
/*
 * Where one take() puts the completions it hands to the application, and
 * which of them are flushes.
 */
struct completion_out {
	ibv_wc *wc;
	uint64_t *flushes; /* bit i set: wc[i] is a flush */
	int n;		   /* room in wc, at most 64 */
	int count;	   /* stored so far */

	bool full() const
	{
		return count == n;
	}
	void put(const ibv_wc &c, bool is_flush)
	{
		wc[count] = c;
		if (is_flush)
			*flushes |= 1ULL << count;
		count++;
	}
};
} /* namespace rpma */

struct rpma_cq {
	ibv_cq *cq;
	ibv_comp_channel *channel;
	bool shared_channel;   /* channel belongs to the connection, not to this CQ */
	bool served_by_thread; /* RPMA_GPSPM_THREAD: the library's thread polls it */
	/*
	 * The main CQ of a connection: what tells the connection's flushes
	 * (and its GPSPM messages) from the application's operations. NULL
	 * for a CQ of receives only.
	 */
	rpma::conn_flush *flush;
	/*
	 * The connection whose events a wait on this CQ watches (the peer's
	 * death ends the wait); NULL for the CQ of a shared receive queue.
	 */
	rpma_conn *conn;
	/*
	 * Held while an event is read from the channel after poll() said it is
	 * there: of the threads woken for one event, one reads it and the
	 * others find none, rather than block in the read until the next.
	 */
	std::mutex event_lock;

	/* Polls up to n work completions, translating nothing. */
	int poll(int n, ibv_wc *wc);

	/*
	 * Polls up to n (<= 64) completions for the application: the library's
	 * own work is done and dropped, flushes get their op_context back and
	 * bit i of *flushes is set when wc[i] is a flush. Returns the number of
	 * completions stored (0: the CQ is empty) or RPMA_E_PROVIDER.
	 */
	int take(int n, ibv_wc *wc, uint64_t *flushes);
	/* take() for the main CQ of a connection without GPSPM */
	int take_translated(rpma::completion_out *out);
	/* take() for the main CQ of a GPSPM connection, its poller's lock held */
	int take_ordered(rpma::completion_out *out);
	/*
	 * Polls and handles completions of a GPSPM connection's CQ into out,
	 * until out is full, or with max, up to max of them whatever out holds
	 * (the rest is held for a later take). 0 or RPMA_E_PROVIDER.
	 */
	int poll_ordered(rpma::completion_out *out, int max);
	/*
	 * Handles what a GPSPM connection's CQ holds now (the answers that free
	 * places in the flow control) and keeps the application's completions,
	 * in order, for its next take. 0 or RPMA_E_PROVIDER.
	 */
	int absorb();

	/* Acknowledges one completion event and re-arms the CQ. */
	int ack_and_rearm();

	/* ack_and_rearm() for an event that names this CQ; RPMA_E_UNKNOWN otherwise. */
	int ack_event_of(ibv_cq *ev_cq);
};

namespace rpma
{

/*
 * Creates a CQ of size entries. channel == NULL: the CQ gets a completion
 * channel of its own; otherwise it uses the given shared one.
 */
int cq_new(ibv_context *ctx, int size, ibv_comp_channel *channel, rpma_cq **cq_ptr);
int cq_delete(rpma_cq **cq_ptr);

/*
 * Takes one completion event from channel as librpma 1.x did: any failure
 * is RPMA_E_NO_COMPLETION (logged, unless the fd is merely non-blocking
 * and empty), with the errno kept as the provider error.
 */
int get_cq_event_1x(ibv_comp_channel *channel, ibv_cq **ev_cq);

/* The one translation from a work completion to an rpma_completion. */
void completion_from_wc(const ibv_wc &wc, bool is_flush, rpma_completion *cmpl);

} /* namespace rpma */

#endif /* RPMA_CQ_HPP */
