/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm.hpp -- GPSPM: the target's CPU persists what the client flushes
 *
 * On a connection that carries GPSPM (rpma_conn_cfg_set_gpspm on both
 * sides) the receive queue belongs to the library. A GPSPM flush is a small
 * request sent behind the writes it covers; the target persists the range
 * with the function its application gave for the region and answers; the
 * answer completes the flush. Requests and answers are inline sends into
 * receive buffers the library keeps posted (the wire format is in
 * doc/wire-format.md). Flow control: a client has at most as many requests
 * in flight as the target keeps receives posted (the depth its versioned
 * peer configuration announced) and as it keeps itself for the answers.
 *
 * Everything here runs where completions are polled: in the application's
 * own rpma_cq_* calls (RPMA_GPSPM_POLLED) or in the library's thread of the
 * connection (RPMA_GPSPM_THREAD, gpspm_thread.hpp).
 *
 * Ownership: the engine's atomics (the flow control, the sequence
 * numbers, broken, fenced) are written here only; everything under
 * take_lock too. The GPSPM bits of a flush slot are this module's while it
 * holds the slot (flush_slots.hpp).
 */

#ifndef RPMA_GPSPM_HPP
#define RPMA_GPSPM_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <pthread.h>

#include <rdma/rdma_cma.h>

#include <infiniband/verbs.h>

#include <librpma.h>

#include "completion.hpp"
#include "flush_slots.hpp"
#include "gpspm_registry.hpp"
#include "gpspm_wire.hpp"
#include "post.hpp"

struct rpma_conn_cfg;
struct rpma_mr_remote;
struct rpma_peer;

namespace rpma
{

/* a receive buffer: room for a later, longer message */
constexpr uint32_t GPSPM_SLOT_SIZE = 64;
/* inline bytes a queue pair needs to send GPSPM messages */
constexpr uint32_t GPSPM_INLINE_SIZE = GPSPM_REQUEST_SIZE;
/*
 * The peer's refused requests after which a target closes the connection:
 * a program that flushes what it was given is never refused, and one
 * that looks for what it was not given gets this many tries.
 */
constexpr uint32_t GPSPM_REFUSALS_MAX = 4;

struct gpspm_engine {
	rpma_peer *peer;
	rdma_cm_id *id; /* the connection's: closed when an answer cannot go out */
	ibv_qp *qp;
	rpma_gpspm_mode mode;
	uint32_t depth; /* receive buffers kept posted */

	/*
	 * depth + 3 buffers of GPSPM_SLOT_SIZE: the receive buffers, then one
	 * whose address is the wr_id of the answers this side sends, one
	 * whose address is the wr_id of the probes (gpspm_watch), and one
	 * whose address is the wr_id of the answer after which this side
	 * closes the connection (GPSPM_REFUSALS_MAX).
	 */
	uint8_t *buffers;
	ibv_mr *buffers_mr;
	uint64_t closing_wr_id; /* the last buffer's address: every answer's completion meets it */

	/*
	 * The requests this side may have in flight: 0 until the target
	 * announced GPSPM. in_flight counts requests without an answer (and
	 * without a failure); an rpma_atomic_write posted while it is not 0
	 * goes to the target's CPU, behind them.
	 */
	std::atomic<uint32_t> max_in_flight{ 0 };
	std::atomic<uint32_t> in_flight{ 0 };
	std::atomic<uint32_t> next_seq{ 0 };
	/* the queue pair failed: no answer will come any more */
	std::atomic<bool> broken{ false };
	/*
	 * The target refused a flush of this side: the range never became
	 * durable, so no atomic write may land behind it (the target refuses
	 * those it has, this side those to come). Set once, before in_flight
	 * drops.
	 */
	std::atomic<bool> fenced{ false };
	/* this side refused a request of the peer's: its atomic writes from then on too */
	bool serving_fenced;
	/* the peer's requests this side refused, and the regions it may reach */
	uint32_t refused;
	gpspm_scope scope;

	/*
	 * Ordering (doc/persistence.md, "Ordering"). A send queue completes in
	 * post order, but a GPSPM flush is done only when its answer comes,
	 * a receive: a completion of a later operation is held until the
	 * answers to every request posted before it are in. Requests are
	 * answered in the order they were posted, so counting is enough:
	 * a completion polled after requests_sent request sends needs
	 * answers_in >= requests_sent. Everything here is under take_lock.
	 */
	uint64_t requests_sent;
	uint64_t answers_in;
	/*
	 * Completions waiting for their turn, in post order (by key): an
	 * operation's is 2 * the requests posted before it, a GPSPM
	 * request's own 2 * its place + 1, so that it comes after what was
	 * posted before it and before what was posted after it.
	 */
	struct held_completion {
		ibv_wc wc;
		uint64_t key;
		bool is_flush;
	};
	held_completion *held;
	uint32_t held_count;
	uint32_t held_capacity;
	/*
	 * Back-pressure (doc/persistence.md, "Flow control"): once hold_limit
	 * completions are held, *posts_held says so and the application's
	 * posts on the connection return RPMA_E_AGAIN. The held store has
	 * room beyond the limit for everything that may still complete
	 * without another post: the send queue's entries, the requests
	 * awaiting answers (whose failures a single receive may bring) and
	 * what one poll reads while a post that raced with it went out.
	 * Written under take_lock; posts_held is read by posters.
	 */
	uint32_t hold_limit;
	std::atomic<bool> *posts_held;
	std::atomic<bool> own_posts_held{ false }; /* posts_held until a connection gives its own */

	/*
	 * The watch over a target gone silent (a partition, a machine that
	 * stopped). Once a request's send has completed, the transport has
	 * nothing of it left to retransmit: an answer lost with the network
	 * would be waited for with no error ever coming. So when polls find
	 * the CQ empty for probe_after_ms while answers are awaited, this
	 * side posts a probe, a zero-length RDMA write that the transport
	 * retransmits like any other: a target that is there acknowledges it,
	 * one that is not fails it, and with it the flushes waiting. Only
	 * polls that find the CQ empty look at it: the data path pays
	 * nothing. Under take_lock.
	 */
	long long silent_since_ms;  /* an empty poll with answers awaited; 0: none yet */
	uint64_t silent_answers_in; /* answers_in then: another answer ends the silence */
	uint32_t probe_after_ms;
	bool probe_posted;

	/*
	 * Held by whoever polls the connection's CQ (take_begin/take_end):
	 * requests are served one at a time in the order they arrived, so
	 * their answers go back in that order too, whatever the number of
	 * threads polling.
	 */
	pthread_mutex_t take_lock;

	/* the wr_id of the probes of a silent target: the buffer after the answers' */
	uint64_t probe_wr_id() const
	{
		return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(buffers) +
					     static_cast<uintptr_t>(depth + 1) * GPSPM_SLOT_SIZE);
	}
	/*
	 * The wr_id of the answer to the last refused request: the connection
	 * is closed once it went out, not before, so that the peer has it
	 */
	uint64_t closing_answer_wr_id() const
	{
		return closing_wr_id;
	}

	bool owns(uint64_t wr_id) const
	{
		const uintptr_t offset =
		    static_cast<uintptr_t>(wr_id) - reinterpret_cast<uintptr_t>(buffers);
		return offset <= static_cast<uintptr_t>(depth + 2) * GPSPM_SLOT_SIZE &&
		       offset % GPSPM_SLOT_SIZE == 0;
	}

	/*
	 * Whether wc, one of owns(), is an answer of this side sent without
	 * error: nothing to do, the case of every other completion a target
	 * polls. The only sends the library's buffers name are answers (a
	 * failed completion's opcode means nothing: its status comes first).
	 * The last refused request's answer is not: the connection closes
	 * once it went out.
	 */
	bool answer_went_out(const ibv_wc &wc) const
	{
		return wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND &&
		       wc.wr_id != closing_answer_wr_id();
	}
};

/*
 * RPMA_E_INVAL, logged, when cfg asks for GPSPM with queues it cannot work
 * with: a receive CQ or a shared receive queue (the library's receives
 * must complete where it polls), no receive queue at all, or, for
 * RPMA_GPSPM_THREAD, a completion channel shared with the application.
 */
int gpspm_check_cfg(const rpma_conn_cfg &cfg);

/*
 * Creates the GPSPM engine of a connection on peer: depth receive buffers;
 * posts refused once hold_limit completions are held, and room to hold
 * max_held (all that may complete once posts stop); a silent target is
 * probed after probe_after_ms (gpspm_watch).
 */
int gpspm_new(rpma_peer *peer, rpma_gpspm_mode mode, uint32_t depth, uint32_t hold_limit,
	      uint32_t max_held, uint32_t probe_after_ms, gpspm_engine **gpspm_ptr);

/*
 * The flag the connection's posts test (rpma_conn's posts_held): set while
 * hold_limit completions or more are held. Before the application can
 * post, while nothing polls.
 */
inline void gpspm_gate_posts(gpspm_engine *g, std::atomic<bool> *posts_held)
{
	g->posts_held = posts_held;
}
/*
 * Posts every receive buffer on the queue pair of id: before the
 * connection can carry requests.
 */
int gpspm_start(gpspm_engine *g, rdma_cm_id *id);
/* Frees everything; the queue pair must be gone, and no thread polling for it. */
int gpspm_delete(gpspm_engine **gpspm_ptr);
/*
 * Lets the connection of g reach the region with id (of the peer's
 * gpspm_registry) by GPSPM; from the first, it reaches no other.
 * RPMA_E_INVAL, logged, when GPSPM_SCOPE_MAX regions are offered already.
 * Before the connection is made: the serving side reads the scope freely.
 */
int gpspm_offer(gpspm_engine *g, uint64_t id);
/*
 * Counts a request of the peer's that g refused; true (logged) when the
 * connection is to be closed, after GPSPM_REFUSALS_MAX of them: every
 * refusal has one and the same answer, and a peer trying keys and ranges
 * gets no more tries than that.
 */
bool gpspm_count_refusal(gpspm_engine *g);

/*
 * A completion of the library's own GPSPM work (g->owns(wc.wr_id)): a
 * request to serve, an answer to a request of this side (which completes
 * a flush or an atomic write into out), the completion of an answer sent.
 */
void gpspm_handle(gpspm_engine *g, conn_flush *flush, const ibv_wc &wc, completion_out *out);

/*
 * gpspm_request_sent() of a send that failed (sent_prev unused), or that
 * completed when the request's answer was in already or the queue pair
 * had failed (sent_prev: the slot's state before FLUSH_SLOT_SENT).
 */
void gpspm_request_sent_late(gpspm_engine *g, conn_flush *flush, flush_slot *slot, const ibv_wc &wc,
			     uint8_t sent_prev, completion_out *out);

/*
 * The completion of the send that carried a GPSPM request of this side
 * (its slot): its place among the requests sent, and the answer completes
 * it. Inline: every flush of an initiator has one, and nearly all of
 * them come before their answer, on a queue pair that works.
 */
inline void gpspm_request_sent(gpspm_engine *g, conn_flush *flush, flush_slot *slot,
			       const ibv_wc &wc, completion_out *out)
{
	uint8_t prev = 0;
	if (__builtin_expect(wc.status == IBV_WC_SUCCESS, 1)) {
		slot->sent_index = g->requests_sent++;
		prev = slot->state.fetch_or(FLUSH_SLOT_SENT);
		if (__builtin_expect(!(prev & FLUSH_SLOT_COMPLETED) &&
					 !g->broken.load(std::memory_order_acquire),
				     1))
			return; /* the answer completes it */
	}
	gpspm_request_sent_late(g, flush, slot, wc, prev, out);
}

/*
 * Another completion of the connection (an operation of the application,
 * a flush by another method), c as the application sees it: into out now,
 * or held until the answers to the requests posted before it are in.
 */
void gpspm_deliver(gpspm_engine *g, const ibv_wc &c, bool is_flush, completion_out *out);

/*
 * The connection is down and drained (an orphan sweep): the requests
 * whose sends completed will never be answered, even where the device
 * never flushes the receives (siw). They fail now, with
 * IBV_WC_WR_FLUSH_ERR, in post order among the completions held, which
 * then go to out.
 */
void gpspm_fail_orphans(gpspm_engine *g, conn_flush *flush, completion_out *out);

/*
 * Moves the held completions whose turn has come into out: at the start
 * of every take and after every answer. ready_all: the connection is down
 * and drained, nothing more will be answered.
 */
void gpspm_release(gpspm_engine *g, bool ready_all, completion_out *out);

/* Whether requests whose sends completed wait for their answers; under take_lock. */
inline bool gpspm_awaits_answers(const gpspm_engine *g)
{
	return g->answers_in < g->requests_sent;
}

/*
 * A poll found the CQ empty while answers are awaited: the silence (no
 * answer, no probe completed) timed, and a probe posted once it lasted
 * probe_after_ms. Under take_lock.
 */
void gpspm_watch(gpspm_engine *g);

/*
 * For a thread about to sleep until the CQ's next event: the watch of a
 * poll that found the CQ empty, made now (it takes take_lock), and how
 * many ms later to make it again; -1 when no answer is awaited, so
 * nothing needs watching.
 */
int gpspm_watch_while_waiting(gpspm_engine *g);

/* Whether completions are held (a connection that is down: still to be taken). */
inline bool gpspm_holds(const gpspm_engine *g)
{
	return g->held_count != 0;
}

/* gpspm_release() where completions are held: nearly every take holds none */
inline void gpspm_release_held(gpspm_engine *g, bool ready_all, completion_out *out)
{
	if (__builtin_expect(gpspm_holds(g), 0))
		gpspm_release(g, ready_all, out);
}

/* Whether a completion with key may go to the application now; under take_lock. */
inline bool gpspm_turn_has_come(const gpspm_engine *g, uint64_t key)
{
	/* odd: a request's own, whose answer (or failure) is in */
	return (key & 1) || key <= 2 * g->answers_in || g->broken.load(std::memory_order_relaxed);
}

/*
 * The connection's posts told whether they may go: refused while the held
 * completions reach the limit. Stored only when it changes, so that the
 * posters' line is not written at every hold. Under take_lock.
 */
inline void gpspm_gate_update(gpspm_engine *g)
{
	const bool full = g->held_count >= g->hold_limit;
	if (g->posts_held->load(std::memory_order_relaxed) != full)
		g->posts_held->store(full, std::memory_order_relaxed);
}

/*
 * Whether the held completions are as many as the posts allow and the
 * first of them may go to the application: a take frees a place, no
 * answer needs to come first. Under take_lock.
 */
inline bool gpspm_full_of_ready(const gpspm_engine *g)
{
	return g->held_count >= g->hold_limit && gpspm_turn_has_come(g, g->held[0].key);
}

/* How many more completions may be held now; under take_lock. */
inline int gpspm_hold_room(const gpspm_engine *g)
{
	return static_cast<int>(g->held_capacity - g->held_count);
}

/*
 * The target's peer configuration says it takes target_depth requests at
 * a time (0: it serves no GPSPM): the flow control allows as many as both
 * sides can take. Only an RPMA_GPSPM_POLLED initiator sends requests;
 * false when g is not one.
 */
bool gpspm_agree(gpspm_engine *g, uint32_t target_depth);

/* Whether the target agreed: this side may send GPSPM requests. */
inline bool gpspm_agreed(const gpspm_engine *g)
{
	return g->max_in_flight.load(std::memory_order_relaxed) != 0;
}

/*
 * n requests will never be answered (the sweep of a connection that is
 * down retired them; one prepared was not posted): they leave the flow
 * control.
 */
inline void gpspm_forget(gpspm_engine *g, uint32_t n)
{
	if (n)
		g->in_flight.fetch_sub(n, std::memory_order_relaxed);
}

/* Whether a GPSPM request could be posted now, as far as the flow control goes. */
inline bool gpspm_has_room(const gpspm_engine *g)
{
	return g->in_flight.load(std::memory_order_acquire) <
	       g->max_in_flight.load(std::memory_order_relaxed);
}

/*
 * Brackets every poll of the connection's CQ and the handling of what it
 * polled: one poller at a time (take_lock). The persist functions run
 * inside, so they must not poll that CQ themselves. Inline: every GPSPM
 * poll takes the lock, and a call of its own would cost more than it.
 */
inline void gpspm_take_begin(gpspm_engine *g)
{
	pthread_mutex_lock(&g->take_lock);
}

inline void gpspm_take_end(gpspm_engine *g)
{
	pthread_mutex_unlock(&g->take_lock);
}

/*
 * A GPSPM message of len bytes at msg, sent inline (the library keeps no
 * send buffer, the bytes may live on the poster's stack) and signaled,
 * with wr_id. Inline: every request and answer is one.
 */
inline void gpspm_prepare_message(const uint8_t *msg, uint32_t len, uint64_t wr_id, ibv_send_wr *wr,
				  ibv_sge *sge)
{
	sge->addr = reinterpret_cast<uintptr_t>(msg);
	sge->length = len;
	sge->lkey = 0; /* inline: no region */
	/* what a provider reads of a send; the rest is never read */
	wr->wr_id = wr_id;
	wr->next = nullptr;
	wr->imm_data = 0;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	/*
	 * Signaled: the send queue reclaims its entries only at completions,
	 * and a GPSPM connection may carry nothing else that is signaled.
	 * Inline: the bytes are copied at the post, so they may live on the
	 * poster's stack.
	 */
	wr->send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
}

/*
 * Posts a signaled GPSPM flush of [offset, offset + len) of dst:
 * rpma_flush()'s path, gpspm_flush_prepare() and the post in one, its
 * request built on the stack. RPMA_E_AGAIN when the target's receives are
 * all taken, RPMA_E_NOMEM when no slot is free, RPMA_E_PROVIDER when the
 * post fails (logged; nothing is left claimed).
 */
int gpspm_flush_signaled(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst,
			 size_t offset, size_t len, const void *op_context);

/*
 * Makes a GPSPM flush of [offset, offset + len) of dst ready to post: its
 * place in the flow control (RPMA_E_AGAIN when the target's receives are
 * all taken), its slot, and its request, an inline send.
 */
int gpspm_flush_prepare(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst,
			size_t offset, size_t len, unsigned send_flags, const void *op_context,
			prepared_wr *p);

/*
 * Whether an rpma_atomic_write on the connection of g must go to the
 * target's CPU: a GPSPM request of this side has no answer yet, or the
 * target refused one (doc/persistence.md, "Ordering").
 */
inline bool gpspm_atomic_write_waits(const gpspm_engine *g)
{
	return g->in_flight.load(std::memory_order_acquire) != 0 ||
	       g->fenced.load(std::memory_order_acquire);
}

/*
 * Posts an rpma_atomic_write of the 8 bytes at src to [offset, offset + 8)
 * of dst as a GPSPM request: the target stores them once it has served
 * every request before it. RPMA_E_AGAIN when the region offers no GPSPM
 * (the application takes the flushes' completions and posts again) or the
 * flow control is full; RPMA_E_NOSUPP after a refused flush.
 */
int gpspm_atomic_write(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst, size_t offset,
		       const char src[8], unsigned send_flags, const void *op_context);

} /* namespace rpma */

#endif /* RPMA_GPSPM_HPP */
