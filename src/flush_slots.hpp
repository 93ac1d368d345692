/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush_slots.hpp -- the flushes of a connection in flight, each named by
 * the wr_id of its work request, so that its completion is told from the
 * completions of other operations
 */

#ifndef RPMA_FLUSH_SLOTS_HPP
#define RPMA_FLUSH_SLOTS_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <infiniband/verbs.h>

#include "completion.hpp"

struct rpma_peer;

namespace rpma
{

/* bytes a read-after-write flush reads at most: the size of the sink */
constexpr size_t FLUSH_SINK_SIZE = 8;

/*
 * A signaled flush in flight. Its address is the wr_id of the work request
 * that carries the flush, so that the completion names the flush by itself:
 * no ordering assumption, no lock, any number of posting and polling
 * threads.
 */
struct flush_slot {
	const void *op_context;
	uint32_t seq; /* GPSPM: the request's sequence number */
	bool signaled;
	/* GPSPM: the place of its request among those sent (gpspm_engine::requests_sent) */
	uint64_t sent_index;
	/* GPSPM: the answer's status, while FLUSH_SLOT_ANSWER_HELD */
	uint8_t answer_status;
	/* FLUSH_SLOT_* bits; 0 when free */
	std::atomic<uint8_t> state{ 0 };
};

enum flush_slot_state : uint8_t {
	FLUSH_SLOT_IN_USE = 1 << 0,
	FLUSH_SLOT_GPSPM = 1 << 1,     /* carried by a GPSPM request (a send) */
	FLUSH_SLOT_SENT = 1 << 2,      /* GPSPM: the request's send completed */
	FLUSH_SLOT_COMPLETED = 1 << 3, /* GPSPM: the application has its completion */
	/*
	 * Completed by the library when the connection went down (sweep): its
	 * work request may still be posted, so the slot is never handed out
	 * again, and a late completion of it is dropped rather than credited
	 * to another flush.
	 */
	FLUSH_SLOT_SWEPT = 1 << 4,
	/* GPSPM: an atomic write, not a flush (its completion is a write's) */
	FLUSH_SLOT_WRITE = 1 << 5,
	/*
	 * GPSPM: the answer came before the request's own send completion; its
	 * completion waits for that one, which comes after the completions of
	 * everything posted before the request (answer_status keeps it)
	 */
	FLUSH_SLOT_ANSWER_HELD = 1 << 6,
	/*
	 * Claimed, its fields not stored yet: no one but the claimer reads
	 * the slot until FLUSH_SLOT_IN_USE shows, with a release after its
	 * op_context and signaled. A sweep in between would report the
	 * previous occupant's context, and the new flush's completion would
	 * then find the slot swept and be dropped.
	 */
	FLUSH_SLOT_CLAIMING = 1 << 7,
};

/*
 * An unsignaled read-after-write or native flush: its work request
 * completes only when it fails, and that completion must still say it is
 * a flush, with the flush's context. pending goes when it is taken, so
 * that a second completion of the same read (siw's) is dropped.
 */
struct unsignaled_flush {
	const void *op_context;
	std::atomic<bool> pending{ false };
};

/*
 * What a connection needs to flush and to tell flushes apart: the sink of
 * read-after-write reads (a page of its own: nothing else of the process
 * shares a page with memory the NIC writes, which keeps fork() harmless),
 * the slots of signaled flushes in flight and, when the connection carries
 * GPSPM, the GPSPM requests in flight too. The connection's main CQ
 * points at it to translate completions.
 *
 * Ownership: the table owns a slot's FLUSH_SLOT_IN_USE and
 * FLUSH_SLOT_SWEPT transitions (claim, release, sweep); from claim to
 * release the claimer owns the slot's other fields and its kind's bits
 * (GPSPM: gpspm.hpp).
 */
struct conn_flush {
	/* read-mostly: what every post and every poll reads */
	flush_slot *slots;
	uint32_t slots_mask; /* capacity - 1, capacity a power of two */
	/*
	 * As many as slots, used round robin: an entry is used again only
	 * after as many unsignaled flushes as the send queue and the CQ hold
	 * together were posted, by when the completion of a failed one has
	 * been taken (or the CQ overflowed).
	 */
	unsignaled_flush *unsignaled;
	uint8_t *sink;
	ibv_mr *sink_mr;
	uint32_t sink_lkey; /* = sink_mr->lkey, one load nearer */

	/* written by every signaled flush: a cache line of its own */
	alignas(64) std::atomic<uint32_t> next_slot{ 0 };
	/* written by every unsignaled read-after-write or native flush */
	std::atomic<uint32_t> next_unsignaled{ 0 };
	char pad[64 - 2 * sizeof(std::atomic<uint32_t>)];

	/*
	 * Set once the connection is down and what the error state flushed
	 * has had its time: the flushes still in flight then never complete
	 * by themselves (siw leaves work posted in the error state where it
	 * is), so the polls that find the CQ empty complete them with
	 * IBV_WC_WR_FLUSH_ERR.
	 */
	std::atomic<bool> sweep_orphans{ false };

	/*
	 * When (monotonic ms, 0: never) the connection's CQ first gave a
	 * failed completion. A failed completion leaves the queue pair in
	 * the error state whether or not a connection event follows, and a
	 * program that only polls never reads one: after the drain time
	 * counted from here, the polls sweep too (cq_take.cpp).
	 */
	std::atomic<long long> failed_at_ms{ 0 };

	/* A failed completion was taken at now_ms; the first one counts. */
	void note_failed_completion(long long now_ms)
	{
		long long never = 0;
		(void)failed_at_ms.compare_exchange_strong(never, now_ms,
							   std::memory_order_relaxed);
	}
	long long failed_at() const
	{
		return failed_at_ms.load(std::memory_order_relaxed);
	}

	/* The connection is down and drained (conn_events.cpp): sweep from now on. */
	void mark_orphaned()
	{
		sweep_orphans.store(true, std::memory_order_release);
	}
	bool orphaned() const
	{
		return sweep_orphans.load(std::memory_order_relaxed);
	}

	/*
	 * Takes a free slot; NULL when every slot is in flight. Slots are
	 * handed out round robin: the next one is free unless the application
	 * overfills its queues, and one compare-and-swap takes it. Two threads
	 * that meet on it: the loser searches (claim_searching).
	 */
	flush_slot *claim(const void *op_context, bool signaled, uint8_t kind)
	{
		flush_slot *slot = claim_next(op_context, signaled, kind);
		if (__builtin_expect(slot == nullptr, 0))
			return claim_searching(op_context, signaled, kind);
		return slot;
	}
	/*
	 * Only a GPSPM slot may be unsignaled (an unsignaled read-after-write
	 * or native flush has no slot): the others keep no flag, and
	 * slot_signaled() says true for them. The claim of every flush of a
	 * data path then publishes its slot with no more stores than before.
	 */
	static void set_signaled(flush_slot *slot, bool signaled, uint8_t kind)
	{
		if (kind & FLUSH_SLOT_GPSPM)
			slot->signaled = signaled;
	}
	static bool slot_signaled(const flush_slot *slot, uint8_t state)
	{
		return !(state & FLUSH_SLOT_GPSPM) || slot->signaled;
	}
	/* claim() without the search: NULL when the next slot is taken */
	flush_slot *claim_next(const void *op_context, bool signaled, uint8_t kind)
	{
		const uint32_t next = next_slot.load(std::memory_order_relaxed);
		flush_slot *slot = &slots[next & slots_mask];
		uint8_t expected = 0;
		if (__builtin_expect(!slot->state.compare_exchange_strong(
					 expected, FLUSH_SLOT_CLAIMING | kind,
					 std::memory_order_acquire, std::memory_order_relaxed),
				     0))
			return nullptr;
		/* a racing store may set it back: the next claim then searches, that is all */
		next_slot.store(next + 1, std::memory_order_relaxed);
		set_op_context(slot, op_context);
		set_signaled(slot, signaled, kind);
		/* published with its fields: see FLUSH_SLOT_CLAIMING */
		slot->state.store(FLUSH_SLOT_IN_USE | kind, std::memory_order_release);
		if (slot == nullptr)
			__builtin_unreachable(); /* an element of slots: the caller tests nothing */
		return slot;
	}
	/* claim() when the next slot is taken: every slot is looked at once */
	flush_slot *claim_searching(const void *op_context, bool signaled, uint8_t kind);
	void release(flush_slot *slot)
	{
		slot->state.store(0, std::memory_order_release);
	}

	/*
	 * The completion of the read-after-write or native flush that slot
	 * carried: frees the slot and gives its op_context. False when the
	 * slot is not in use (a second completion of a flush's read: siw
	 * flushes a read that is both on its send queue and on its outbound
	 * read queue from both; or a late one of a flush the library completed
	 * when the connection went down) or the sweep was first: the
	 * completion is dropped.
	 */
	bool finish(flush_slot *slot, const void **op_context)
	{
		/*
		 * A read-after-write or native flush in flight is FLUSH_SLOT_IN_USE
		 * alone: guessed, so that one compare-and-swap both checks the
		 * slot and frees it. op_context is read before, while the slot is
		 * still the flush's; for a completion that comes late the slot
		 * may be claimed meanwhile, and what was read is dropped.
		 */
		uint8_t state = FLUSH_SLOT_IN_USE;
		*op_context = op_context_of(slot);
		if (__builtin_expect(
			slot->state.compare_exchange_strong(state, 0, std::memory_order_acq_rel),
			1))
			return true;
		const finished f = finish_in_state(slot, state);
		*op_context = f.op_context;
		return f.taken;
	}
	/* what finish_in_state() found: returned in two registers */
	struct finished {
		const void *op_context;
		bool taken;
	};
	/*
	 * finish() of a slot found in state, not FLUSH_SLOT_IN_USE alone: out
	 * of line, and nothing of it through memory, so that the common path
	 * keeps no frame for it
	 */
	[[gnu::noinline]] static finished finish_in_state(flush_slot *slot, uint8_t state)
	{
		if (!(state & FLUSH_SLOT_IN_USE))
			return { nullptr, false };
		const void *op_context = op_context_of(slot);
		return { op_context,
			 slot->state.compare_exchange_strong(state, 0, std::memory_order_acq_rel) };
	}

	/*
	 * A slot's op_context, as claim() stores it and finish() reads it:
	 * relaxed atomics, as finish() may read the slot of a late completion
	 * while another thread claims it. Both are plain moves on x86-64.
	 */
	static void set_op_context(flush_slot *slot, const void *op_context)
	{
		__atomic_store_n(&slot->op_context, op_context, __ATOMIC_RELAXED);
	}
	static const void *op_context_of(const flush_slot *slot)
	{
		return __atomic_load_n(&slot->op_context, __ATOMIC_RELAXED);
	}

	/*
	 * The failed completion of an unsignaled flush: its op_context, once
	 * (a second completion of the same read, siw's, is dropped).
	 */
	bool finish_unsignaled(unsignaled_flush *u, const void **op_context)
	{
		if (!u->pending.exchange(false, std::memory_order_acquire))
			return false;
		*op_context = u->op_context;
		return true;
	}

	/* The wr_id of an unsignaled flush of op_context, remembered. */
	uint64_t track_unsignaled(const void *op_context)
	{
		const uint32_t index = next_unsignaled.fetch_add(1, std::memory_order_relaxed);
		unsignaled_flush *u = &unsignaled[index & slots_mask];
		u->op_context = op_context;
		u->pending.store(true, std::memory_order_release);
		return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(u));
	}

	/* Whether wr_id names an unsignaled flush. */
	unsignaled_flush *unsignaled_of(uint64_t wr_id) const
	{
		return element_named(unsignaled, wr_id);
	}

	/* Whether wr_id names one of the slots. */
	flush_slot *slot_of(uint64_t wr_id) const
	{
		return element_named(slots, wr_id);
	}

	/* The element of first[0 .. slots_mask] whose address wr_id is, or NULL. */
	template <typename T> T *element_named(T *first, uint64_t wr_id) const
	{
		static_assert((sizeof(T) & (sizeof(T) - 1)) == 0, "a power of two");
		constexpr unsigned shift = __builtin_ctz(sizeof(T));
		const uintptr_t offset =
		    static_cast<uintptr_t>(wr_id) - reinterpret_cast<uintptr_t>(first);
		/*
		 * The offset turned right by the element's size: the index when the
		 * offset is a multiple of it, and beyond any index when it is not
		 * (its low bits turn into the high ones). One comparison for both.
		 */
		const uintptr_t index =
		    shift ? (offset >> shift) | (offset << (sizeof(uintptr_t) * 8 - shift))
			  : offset;
		if (index > slots_mask)
			return nullptr;
		/* wr_id is &first[index], and first a table of the connection: never NULL */
		if (wr_id == 0)
			__builtin_unreachable();
		return reinterpret_cast<T *>(static_cast<uintptr_t>(wr_id));
	}

	/*
	 * Completes signaled flushes still in flight with IBV_WC_WR_FLUSH_ERR
	 * into out, as many as fit, and retires their slots (and the slots of
	 * unsignaled ones: FLUSH_SLOT_SWEPT). Returns how many GPSPM requests
	 * without an answer it retired, for GPSPM's flow control.
	 */
	uint32_t sweep(completion_out *out, uint32_t qp_num);

	/* Whether a signaled flush is in flight (a scan: for a connection that is down). */
	bool any_in_flight() const;

	uint64_t wr_id_of(const flush_slot *slot) const
	{
		return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(slot));
	}
};

/*
 * Creates what a connection on peer needs to flush, with room for
 * max_in_flight signaled flushes.
 */
int conn_flush_new(rpma_peer *peer, uint32_t max_in_flight, conn_flush **flush_ptr);
int conn_flush_delete(conn_flush **flush_ptr);

} /* namespace rpma */

#endif /* RPMA_FLUSH_SLOTS_HPP */
