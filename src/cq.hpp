/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.hpp -- a completion queue, its channel, and what its completions mean
 *
 * Ownership: every field is this module's; the connection sets what it
 * needs through the functions below. event_lock guards the reading of the
 * CQ's own channel.
 */

#ifndef RPMA_CQ_HPP
#define RPMA_CQ_HPP

#include <atomic>
#include <cstdint>
#include <pthread.h>

#include <infiniband/verbs.h>

#include <librpma.h>

#include "completion.hpp"

namespace rpma
{
struct conn_events;
struct conn_flush;
struct gpspm_engine;
} /* namespace rpma */

namespace rpma
{
enum cq_take_path : uint8_t {
	TAKE_GENERAL,	      /* the GPSPM thread's CQ: not the application's */
	TAKE_DIRECT_FLUSHES,  /* direct, with the connection's flushes to translate */
	TAKE_DIRECT_RECEIVES, /* direct, a CQ of receives only: nothing to translate */
	TAKE_GPSPM,	      /* GPSPM's order, polled by the application: rpma_cq::take */
};
} /* namespace rpma */

struct rpma_cq {
	ibv_cq *cq;
	ibv_comp_channel *channel;
	bool shared_channel;   /* channel belongs to the connection, not to this CQ */
	bool served_by_thread; /* RPMA_GPSPM_THREAD: the library's thread polls it */
	/*
	 * How one completion is taken (rpma::cq_take_path): polled straight
	 * into the caller's entry where there is no GPSPM and no thread
	 * (cq_take.cpp's take_one), with or without flushes to tell apart.
	 * One byte the data path compares, kept with flush, gpspm and
	 * served_by_thread.
	 */
	uint8_t take_path;
	/*
	 * The main CQ of a connection: what tells the connection's flushes
	 * (and its GPSPM messages) from the application's operations. NULL
	 * for a CQ of receives only.
	 */
	rpma::conn_flush *flush;
	rpma::gpspm_engine *gpspm; /* NULL: the connection carries no GPSPM */
	/*
	 * The events of the connection whose peer's death ends a wait on this
	 * CQ; NULL for the CQ of a shared receive queue.
	 */
	rpma::conn_events *events;
	uint32_t qp_num; /* named by the completions the library makes */
	/*
	 * Held while an event is read from the channel after poll() said it is
	 * there: of the threads woken for one event, one reads it and the
	 * others find none, rather than block in the read until the next.
	 */
	mutable pthread_mutex_t event_lock =
	    PTHREAD_MUTEX_INITIALIZER; /* mutable: rpma_cq_get_fd() takes a const CQ */
	/*
	 * Whether the application has the channel's fd (rpma_cq_get_fd): from
	 * then on the fd is blocking unless the application makes it not, as
	 * in librpma 1.x. Until then the library keeps it non-blocking, so
	 * that a read says by itself whether an event is there (no look
	 * first: one system call fewer per wait). Changed under event_lock.
	 */
	mutable std::atomic<bool> fd_given{ false };

	/*
	 * A GPSPM connection's entries polled and not handled yet, in the
	 * CQ's order, from unread[unread_first]: a take polls up to
	 * UNREAD_MAX entries at a time, and an initiator's handles only as
	 * many as its caller has room for (poll_ordered); the next take
	 * handles the rest before it polls again. Under the GPSPM take lock.
	 */
	static constexpr uint32_t UNREAD_MAX = 16;
	ibv_wc unread[UNREAD_MAX];
	uint32_t unread_first;
	uint32_t unread_count;

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
	/* take() for the main CQ of a GPSPM connection: takes the poller's lock */
	int take_ordered(rpma::completion_out *out);
	/*
	 * Handles entries of a GPSPM connection's CQ into out, those left
	 * unread first: until out is full, or with max, up to max of them
	 * whatever out holds (the rest is held for a later take). How many
	 * entries it handled, or RPMA_E_PROVIDER. Inline in cq_take.cpp,
	 * whose takes alone call it.
	 */
	int poll_ordered(rpma::completion_out *out, int max);
	/*
	 * Handles what a GPSPM connection's CQ holds now, to its end (the
	 * answers that free places in the flow control), and keeps the
	 * application's completions, in order, for its next take. 0,
	 * ABSORB_TAKE_FIRST when the completions held keep the posts back and
	 * the application may take them now, or RPMA_E_PROVIDER.
	 */
	int absorb();
	static constexpr int ABSORB_TAKE_FIRST = 1;
	/*
	 * RPMA_GPSPM_THREAD: serves what the CQ holds now (the peer's requests,
	 * the answers to this side's) until it is empty. How many entries it
	 * polled, or RPMA_E_PROVIDER; *dropped counts the completions of the
	 * application's own operations, which nobody takes on such a
	 * connection.
	 */
	int serve(int *dropped);

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
 * What the connection tells its CQs, once, before anything completes
 * there: the main CQ translates the completions of flush (and of gpspm,
 * when not NULL); a CQ of the connection watches its events in waits.
 */
void cq_serve_flushes(rpma_cq *cq, conn_flush *flush, gpspm_engine *gpspm);
void cq_watch(rpma_cq *cq, conn_events *events, uint32_t qp_num);
/* The library's GPSPM thread polls cq from now on: the application may not. */
void cq_give_to_thread(rpma_cq *cq);
/* RPMA_E_PROVIDER, logged, for an ibv_poll_cq() that returned got < 0. */
[[gnu::cold]] int cq_poll_failed(int got);

/* Whether the application may call on cq (not its GPSPM thread's); logged if not. */
bool cq_application_may_use(const rpma_cq *cq);

/*
 * Waits up to timeout_ms (< 0: no limit) for one event on the CQ's own
 * channel, then acknowledges it and re-arms the CQ. RPMA_E_NO_COMPLETION
 * when none came, or another thread took it, or the connection went down.
 */
int cq_wait_event(rpma_cq *cq, int timeout_ms);

/*
 * Whether a take of cq would hand out a completion that no event of its
 * channel announces any more: one its GPSPM connection read from the CQ
 * and left unread, or holds with its turn come. A wait returns at once
 * then, rather than sleep for an event that already went.
 */
bool cq_taken_not_handed(rpma_cq *cq);

/*
 * Takes one completion event from channel as librpma 1.x did: any failure
 * is RPMA_E_NO_COMPLETION (logged, unless the fd is merely non-blocking
 * and empty), with the errno kept as the provider error.
 */
int get_cq_event_1x(ibv_comp_channel *channel, ibv_cq **ev_cq);

/*
 * completion_from_wc() of a successful completion that is no flush: what
 * its opcode says. Out of line: the flushes of a data path need none of it.
 * The fields it reads come by value, not the ibv_wc's address: a caller
 * whose ibv_wc is on its stack then keeps no register for that address
 * across its poll.
 */
void completion_of_operation(ibv_wc_opcode opcode, uint32_t byte_len, unsigned wc_flags,
			     __be32 imm_data, rpma_completion *cmpl);

/* The one translation from a work completion to an rpma_completion. */
inline void completion_from_wc(const ibv_wc &wc, bool is_flush, rpma_completion *cmpl)
{
	cmpl->op_context = reinterpret_cast<void *>(static_cast<uintptr_t>(wc.wr_id));
	cmpl->op_status = wc.status;
	/*
	 * A flush carries no data; the other fields of a failed completion
	 * mean nothing but its op. Two branches, not one: a flush's op and byte_len are
	 * then two constants side by side, stored at once.
	 */
	if (is_flush) {
		cmpl->op = RPMA_OP_FLUSH;
		cmpl->byte_len = 0;
		cmpl->flags = 0;
		cmpl->imm = 0;
		return;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		/*
		 * A provider's opcode of a failed completion means nothing;
		 * the library's own completion of an atomic write (GPSPM's,
		 * refused or failed) names the write, and so says what it is.
		 */
		cmpl->op = wc.opcode == IBV_WC_RDMA_WRITE ? RPMA_OP_WRITE : RPMA_OP_READ;
		cmpl->byte_len = 0;
		cmpl->flags = 0;
		cmpl->imm = 0;
		return;
	}
	completion_of_operation(wc.opcode, wc.byte_len, wc.wc_flags, wc.imm_data, cmpl);
}

} /* namespace rpma */

#endif /* RPMA_CQ_HPP */
