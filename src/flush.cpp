/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.cpp -- choosing a flush method, read-after-write, flush slots
 */

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <unistd.h>

#include "conn.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

/* bytes a read-after-write flush reads at most */
constexpr size_t FLUSH_READ_MAX = 8;

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t capacity = 1;
	while (capacity < n && capacity < (1U << 31))
		capacity <<= 1;
	return capacity;
}

int conn_flush_new(rpma_peer *peer, uint32_t max_in_flight, conn_flush **flush_ptr)
{
	const uint32_t capacity = pow2_at_least(max_in_flight + 1);
	auto *flush = new (std::nothrow) conn_flush;
	auto *slots = new (std::nothrow) flush_slot[capacity];
	auto *unsignaled = new (std::nothrow) unsignaled_flush[capacity];
	const long page = sysconf(_SC_PAGESIZE);
	void *sink = nullptr;
	if (flush == nullptr || slots == nullptr || unsignaled == nullptr ||
	    posix_memalign(&sink, static_cast<size_t>(page), static_cast<size_t>(page))) {
		delete flush;
		delete[] slots;
		delete[] unsignaled;
		return RPMA_E_NOMEM;
	}

	/* an RDMA read lands locally (and on iWARP, is written remotely) */
	ibv_mr *sink_mr =
	    verbs::reg_mr(peer->pd, sink, FLUSH_READ_MAX,
			  IBV_ACCESS_LOCAL_WRITE | (peer->iwarp ? IBV_ACCESS_REMOTE_WRITE : 0));
	if (sink_mr == nullptr) {
		int ret = RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr");
		free(sink);
		delete flush;
		delete[] slots;
		delete[] unsignaled;
		return ret;
	}

	flush->slots = slots;
	flush->slots_mask = capacity - 1;
	flush->unsignaled = unsignaled;
	flush->gpspm = nullptr;
	flush->sink = static_cast<uint8_t *>(sink);
	flush->sink_mr = sink_mr;
	*flush_ptr = flush;
	return 0;
}

int conn_flush_delete(conn_flush **flush_ptr)
{
	conn_flush *flush = *flush_ptr;
	if (flush == nullptr)
		return 0;
	int ret = 0;
	if (verbs::dereg_mr(flush->sink_mr))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_dereg_mr");
	free(flush->sink);
	delete[] flush->slots;
	delete[] flush->unsignaled;
	delete flush;
	*flush_ptr = nullptr;
	return ret;
}

flush_slot *conn_flush::claim(const void *op_context, bool signaled, uint8_t kind)
{
	/*
	 * Slots are handed out round robin. A connection has at most as many
	 * signaled flushes in flight as its send queue and CQ hold, and there
	 * are more slots than that, so the next slot is free unless the
	 * application overfills its queues; the search after it is for that
	 * case only.
	 */
	const uint32_t capacity = slots_mask + 1;
	const uint32_t first = next_slot.fetch_add(1, std::memory_order_relaxed);
	for (uint32_t i = 0; i < capacity; i++) {
		flush_slot *slot = &slots[(first + i) & slots_mask];
		uint8_t expected = 0;
		if (slot->state.compare_exchange_strong(expected, FLUSH_SLOT_IN_USE | kind,
							std::memory_order_acquire,
							std::memory_order_relaxed)) {
			slot->op_context = op_context;
			slot->signaled = signaled;
			return slot;
		}
	}
	return nullptr;
}

void conn_flush::sweep(completion_out *out, uint32_t qp_num)
{
	for (uint32_t i = 0; i <= slots_mask && !out->full(); i++) {
		flush_slot *slot = &slots[i];
		uint8_t state = slot->state.load(std::memory_order_acquire);
		if (!(state & FLUSH_SLOT_IN_USE))
			continue;
		const void *op_context = slot->op_context;
		/* an answer held for its send's completion, which will not come now */
		const bool held = state & FLUSH_SLOT_ANSWER_HELD;
		const bool report = (slot->signaled && !(state & FLUSH_SLOT_COMPLETED)) || held;
		/* a completion that comes after all finds the slot retired, and is dropped */
		if (!slot->state.compare_exchange_strong(state, FLUSH_SLOT_SWEPT,
							 std::memory_order_acq_rel))
			continue;
		if ((state & FLUSH_SLOT_GPSPM) && !(state & FLUSH_SLOT_COMPLETED) && gpspm)
			gpspm->in_flight.fetch_sub(1, std::memory_order_relaxed);
		if (report) {
			ibv_wc wc;
			const ibv_wc_status status =
			    held ? gpspm_answer_wc_status(slot->answer_status)
				 : IBV_WC_WR_FLUSH_ERR;
			const bool is_flush = library_slot_completion(
			    op_context, state & FLUSH_SLOT_WRITE, status, qp_num, &wc);
			out->put(wc, is_flush);
		}
	}
}

bool conn_flush::any_in_flight() const
{
	for (uint32_t i = 0; i <= slots_mask; i++) {
		const uint8_t state = slots[i].state.load(std::memory_order_acquire);
		if ((state & FLUSH_SLOT_IN_USE) && !(state & FLUSH_SLOT_COMPLETED) &&
		    slots[i].signaled)
			return true;
	}
	return false;
}

uint8_t remote_flush_methods(const rpma_mr_remote *mr)
{
	if (mr->versioned)
		return mr->methods;
	/* librpma 1.x registered every flushable region for remote reads */
	const int flush_usage =
	    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	return (mr->usage & flush_usage) ? METHOD_READ_AFTER_WRITE : 0;
}

rpma_flush_method choose_flush_method(const flush_capabilities &caps, const rpma_mr_remote *dst,
				      rpma_flush_type type, const char **why)
{
	const uint8_t offered = remote_flush_methods(dst);

	if (type == RPMA_FLUSH_TYPE_PERSISTENT) {
		if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
			*why = "the remote region was not registered for persistent flush";
			return RPMA_FLUSH_METHOD_NONE;
		}
		if ((caps.native & verbs::NATIVE_FLUSH_PERSISTENT) &&
		    (offered & METHOD_NATIVE_PERSISTENT))
			return RPMA_FLUSH_METHOD_NATIVE;
		if (caps.direct_write_to_pmem && (offered & METHOD_READ_AFTER_WRITE))
			return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
		if (caps.gpspm && (offered & METHOD_GPSPM))
			return RPMA_FLUSH_METHOD_GPSPM;
		if (offered & METHOD_GPSPM)
			*why = "the target offers GPSPM for this region, but the connection does "
			       "not carry it (rpma_conn_cfg_set_gpspm on both sides)";
		else
			*why = "the target did not declare direct write to PMem "
			       "(rpma_conn_apply_remote_peer_cfg) and offers no GPSPM for this "
			       "region";
		return RPMA_FLUSH_METHOD_NONE;
	}

	if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)) {
		*why = "the remote region was not registered for visibility flush";
		return RPMA_FLUSH_METHOD_NONE;
	}
	if ((caps.native & verbs::NATIVE_FLUSH_GLOBAL) && (offered & METHOD_NATIVE_VISIBILITY))
		return RPMA_FLUSH_METHOD_NATIVE;
	if (offered & METHOD_READ_AFTER_WRITE)
		return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	*why = "the target offers no method for a visibility flush of this region";
	return RPMA_FLUSH_METHOD_NONE;
}

/*
 * iWARP completes a write or a send when it is handed to the transport,
 * and goes on with the send queue while a read waits for its response: a
 * write posted after the flush's read would complete first, and the
 * application would take the flush as done. So the read is followed by an
 * empty write with IBV_SEND_FENCE, which does not start before the read
 * completed, and which carries the flush's completion (the read's wr_id
 * and signaling; the read itself completes only when it fails). Everything
 * posted after it goes after it. One doorbell for both.
 */
static void fence_read(prepared_wr *p)
{
	p->fence = ibv_send_wr{};
	p->fence.wr_id = p->wr.wr_id;
	p->fence.opcode = IBV_WR_RDMA_WRITE;
	p->fence.send_flags = IBV_SEND_FENCE | p->wr.send_flags;
	p->fence.wr.rdma.remote_addr = p->wr.wr.rdma.remote_addr;
	p->fence.wr.rdma.rkey = p->wr.wr.rdma.rkey;
	p->wr.send_flags = 0;
	p->wr.next = &p->fence;
}

int flush_read_after_write_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset,
				   size_t len, unsigned send_flags, const void *op_context,
				   prepared_wr *p)
{
	/*
	 * A few bytes are enough to order the read behind the writes; they are
	 * taken from inside the flushed range, which the target registered for
	 * remote read. Never none: a zero-length read need not touch the
	 * target's memory, so it would not push the earlier writes anywhere.
	 * An empty range at the very end of the region reads the byte before.
	 */
	if (dst->size == 0) {
		RPMA_LOG_ERROR("a remote region of 0 bytes cannot be flushed");
		return RPMA_E_INVAL;
	}
	size_t read_offset = offset < dst->size ? offset : dst->size - 1;
	size_t read_len = len < FLUSH_READ_MAX ? len : FLUSH_READ_MAX;
	if (read_len == 0)
		read_len = 1;
	if (read_len > dst->size - read_offset)
		read_len = dst->size - read_offset;

	conn_flush *flush = conn->flush;
	const bool iwarp = conn->peer->iwarp;
	p->sge.addr = reinterpret_cast<uintptr_t>(flush->sink);
	p->sge.length = static_cast<uint32_t>(read_len);
	p->sge.lkey = flush->sink_mr->lkey;

	p->wr = ibv_send_wr{};
	p->wr.sg_list = &p->sge;
	p->wr.num_sge = 1;
	p->wr.opcode = IBV_WR_RDMA_READ;
	p->wr.wr.rdma.remote_addr = dst->raddr + read_offset;
	p->wr.wr.rdma.rkey = dst->rkey;
	p->slot = nullptr;

	if (!(send_flags & IBV_SEND_SIGNALED)) {
		/* only a failure completes: remembered, to be told as a flush */
		p->wr.wr_id = flush->track_unsignaled(op_context);
	} else {
		p->slot = flush->claim(op_context, true, 0);
		if (p->slot == nullptr) {
			RPMA_LOG_ERROR("more signaled flushes in flight than the connection's send "
				       "queue and CQ can hold");
			return RPMA_E_NOMEM;
		}
		p->wr.wr_id = flush->wr_id_of(p->slot);
		p->wr.send_flags = IBV_SEND_SIGNALED;
	}
	if (iwarp)
		fence_read(p);
	return 0;
}

int flush_native_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset, size_t len,
			 rpma_flush_type type, unsigned send_flags, const void *op_context,
			 prepared_wr *p)
{
	/* a FLUSH names its range with a 32-bit length (its RETH) */
	const bool whole_region = len > UINT32_MAX;
	p->native.placement = type == RPMA_FLUSH_TYPE_PERSISTENT ? verbs::NATIVE_FLUSH_PERSISTENT
								 : verbs::NATIVE_FLUSH_GLOBAL;
	p->native.whole_region = whole_region;
	p->native.len = whole_region ? 0 : static_cast<uint32_t>(len);

	p->wr = ibv_send_wr{};
	p->wr.wr.rdma.remote_addr = whole_region ? dst->raddr : dst->raddr + offset;
	p->wr.wr.rdma.rkey = dst->rkey;
	/* no opcode of ibv_send_wr is a flush: native.placement says what this is */
	p->wr.opcode = IBV_WR_RDMA_READ;
	p->slot = nullptr;

	conn_flush *flush = conn->flush;
	if (!(send_flags & IBV_SEND_SIGNALED)) {
		/* only a failure completes: remembered, to be told as a flush */
		p->wr.wr_id = flush->track_unsignaled(op_context);
		return 0;
	}

	/* its completion is told from the application's by the slot */
	p->slot = flush->claim(op_context, true, 0);
	if (p->slot == nullptr) {
		RPMA_LOG_ERROR("more signaled flushes in flight than the connection's send queue "
			       "and CQ can hold");
		return RPMA_E_NOMEM;
	}
	p->wr.wr_id = flush->wr_id_of(p->slot);
	p->wr.send_flags = IBV_SEND_SIGNALED;
	return 0;
}

/* What the connection knows for choosing a flush method. */
flush_capabilities capabilities_of(const rpma_conn *conn)
{
	flush_capabilities caps;
	caps.direct_write_to_pmem = conn->direct_write_to_pmem.load(std::memory_order_relaxed);
	caps.gpspm = conn->flush->gpspm != nullptr &&
		     conn->flush->gpspm->max_in_flight.load(std::memory_order_relaxed) != 0;
	caps.native =
	    conn->peer->native & (verbs::NATIVE_FLUSH_GLOBAL | verbs::NATIVE_FLUSH_PERSISTENT);
	return caps;
}

int flush_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset, size_t len,
		  rpma_flush_type type, unsigned send_flags, const void *op_context, prepared_wr *p)
{
	const char *why = nullptr;
	p->native.placement = 0;
	switch (choose_flush_method(capabilities_of(conn), dst, type, &why)) {
	case RPMA_FLUSH_METHOD_NATIVE:
		return flush_native_prepare(conn, dst, offset, len, type, send_flags, op_context,
					    p);
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return flush_read_after_write_prepare(conn, dst, offset, len, send_flags,
						      op_context, p);
	case RPMA_FLUSH_METHOD_GPSPM:
		return gpspm_flush_prepare(conn, dst, offset, len, send_flags, op_context, p);
	default:
		RPMA_LOG_ERROR("%s", why);
		return RPMA_E_NOSUPP;
	}
}

void flush_unprepare(rpma_conn *conn, prepared_wr *p)
{
	if (p->slot == nullptr)
		return;
	conn_flush *flush = conn->flush;
	if ((p->slot->state.load(std::memory_order_relaxed) & FLUSH_SLOT_GPSPM) && flush->gpspm)
		flush->gpspm->in_flight.fetch_sub(1, std::memory_order_relaxed);
	flush->release(p->slot);
	p->slot = nullptr;
}

} /* namespace rpma */
