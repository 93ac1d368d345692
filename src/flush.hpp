/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.hpp -- how a flush reaches the target, and how its completion is told
 * from the completions of other operations
 */

#ifndef RPMA_FLUSH_HPP
#define RPMA_FLUSH_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <infiniband/verbs.h>

#include <librpma.h>

#include "cq.hpp"
#include "wire.hpp"
#include "verbs/verbs.hpp"

struct rpma_conn;
struct rpma_mr_remote;
struct rpma_peer;

namespace rpma
{

struct gpspm_engine;

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
 * GPSPM, its GPSPM engine. The connection's main CQ points at it to
 * translate completions.
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
	gpspm_engine *gpspm; /* NULL: the connection carries no GPSPM */
	uint8_t *sink;
	ibv_mr *sink_mr;

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

	/* Takes a free slot; NULL when every slot is in flight. */
	flush_slot *claim(const void *op_context, bool signaled, uint8_t kind);
	void release(flush_slot *slot)
	{
		slot->state.store(0, std::memory_order_release);
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
		const uintptr_t offset =
		    static_cast<uintptr_t>(wr_id) - reinterpret_cast<uintptr_t>(first);
		if (offset >= (static_cast<uintptr_t>(slots_mask) + 1) * sizeof(T) ||
		    offset % sizeof(T) != 0)
			return nullptr;
		return reinterpret_cast<T *>(static_cast<uintptr_t>(wr_id));
	}

	/*
	 * Completes signaled flushes still in flight with IBV_WC_WR_FLUSH_ERR
	 * into out, as many as fit, and retires their slots (and the slots of
	 * unsignaled ones: FLUSH_SLOT_SWEPT).
	 */
	void sweep(completion_out *out, uint32_t qp_num);

	/* Whether a signaled flush is in flight (a scan: for a connection that is down). */
	bool any_in_flight() const;

	uint64_t wr_id_of(const flush_slot *slot) const
	{
		return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(slot));
	}
};

/*
 * The completion the application sees for a flush the library completes
 * itself: it names the connection's queue pair, as every completion does.
 */
inline void library_flush_completion(const void *op_context, ibv_wc_status status, uint32_t qp_num,
				     ibv_wc *out)
{
	*out = ibv_wc{};
	out->wr_id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(op_context));
	out->status = status;
	out->opcode = IBV_WC_RDMA_READ;
	out->qp_num = qp_num;
}

/*
 * The completion of what a slot carried (a flush, or a GPSPM atomic write
 * when write), made by the library, into out; whether it is a flush.
 */
inline bool library_slot_completion(const void *op_context, bool write, ibv_wc_status status,
				    uint32_t qp_num, ibv_wc *out)
{
	library_flush_completion(op_context, status, qp_num, out);
	if (write)
		out->opcode = IBV_WC_RDMA_WRITE;
	return !write;
}

/*
 * Creates what a connection on peer needs to flush, with room for
 * max_in_flight signaled flushes.
 */
int conn_flush_new(rpma_peer *peer, uint32_t max_in_flight, conn_flush **flush_ptr);
int conn_flush_delete(conn_flush **flush_ptr);

/*
 * What a connection knows of its target for choosing a method: the remote
 * peer configuration it applied, and its own abilities.
 */
struct flush_capabilities {
	bool direct_write_to_pmem; /* the target declared it */
	bool gpspm;		   /* both sides carry GPSPM on this connection */
	/*
	 * The placements of RDMA FLUSH (verbs::NATIVE_FLUSH_* bits) that this
	 * side's device and QP can post; the target's side is in the
	 * region's descriptor.
	 */
	uint8_t native;
};

/*
 * The method rpma_flush() uses for dst and type on a connection with caps:
 * the best one both sides support. RPMA_FLUSH_METHOD_NONE when there is
 * none; *why then says why, for the log.
 */
rpma_flush_method choose_flush_method(const flush_capabilities &caps, const rpma_mr_remote *dst,
				      rpma_flush_type type, const char **why);

/* The flush methods the region offers (METHOD_* bits). */
uint8_t remote_flush_methods(const rpma_mr_remote *mr);

/* What conn knows for choosing a flush method. */
flush_capabilities capabilities_of(const rpma_conn *conn);

/*
 * A work request made ready to post, with what it points to: what the
 * posting calls build on their stack, one per element of a batch. No
 * constructor: a batch's array is not cleared as a whole; the prepare
 * functions fill every field they use.
 */
constexpr size_t PREPARED_MSG_MAX = 32; /* the inline bytes of a GPSPM request */
struct prepared_wr {
	ibv_send_wr wr;
	ibv_sge sge;
	flush_slot *slot; /* the flush slot it holds, or NULL */
	uint8_t msg[PREPARED_MSG_MAX];
	/*
	 * A native flush (native.placement set): posted through
	 * verbs::post_send_ex, as ibv_post_send cannot carry it.
	 */
	verbs::native_flush_wr native;
	/*
	 * iWARP: a read-after-write flush is followed by a fenced empty write
	 * (wr.next == &fence), which carries the flush's completion.
	 */
	ibv_send_wr fence;

	/* The last work request of this one: the fence, or wr itself. */
	ibv_send_wr *last()
	{
		return wr.next == &fence ? &fence : &wr;
	}
};

/*
 * Makes a flush of [offset, offset + len) of dst ready to post by the method
 * the connection agreed for type: claims its slot (and for GPSPM its place
 * in the flow control). RPMA_E_NOSUPP when no method carries it.
 */
int flush_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset, size_t len,
		  rpma_flush_type type, unsigned send_flags, const void *op_context,
		  prepared_wr *p);

/* Gives back what a prepared work request holds, when it was not posted. */
void flush_unprepare(rpma_conn *conn, prepared_wr *p);

/*
 * The read-after-write flush: an RDMA read from the flushed range cannot
 * complete before the writes posted ahead of it on the same queue pair have
 * been placed in the target's memory. Where writes land in the persistent
 * domain (the target declared direct write to PMem) that makes them
 * persistent; otherwise visible to the target's CPU.
 */
int flush_read_after_write_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset,
				   size_t len, unsigned send_flags, const void *op_context,
				   prepared_wr *p);

/*
 * The native flush: the RDMA FLUSH verb of IBTA 1.5, executed by the
 * target's device, with the placement of type (persistence or global
 * visibility) for [offset, offset + len) of dst; a range longer than a
 * FLUSH can name (32 bits) flushes the whole region, which covers it.
 */
int flush_native_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset, size_t len,
			 rpma_flush_type type, unsigned send_flags, const void *op_context,
			 prepared_wr *p);

} /* namespace rpma */

#endif /* RPMA_FLUSH_HPP */
