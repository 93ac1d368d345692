/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.hpp -- the flushes the initiator's device carries: read-after-write
 * and the native RDMA FLUSH (GPSPM is gpspm.hpp's)
 *
 * Each makes one work request ready to post (post.hpp's prepared_wr); a
 * signaled one claims a slot of the connection's flush_slots, whose
 * address becomes its wr_id.
 */

#ifndef RPMA_FLUSH_HPP
#define RPMA_FLUSH_HPP

#include <cstddef>
#include <cstdint>

#include <librpma.h>

#include "flush_slots.hpp"
#include "mr.hpp"
#include "post.hpp"

namespace rpma
{

/* RPMA_E_INVAL, logged: a remote region of 0 bytes has nothing to read back. */
[[gnu::cold]] int flush_of_empty_region();

/* RPMA_E_NOMEM, logged: every slot is in flight. */
[[gnu::cold]] int flush_slots_exhausted();

/*
 * iWARP: the fenced empty write that follows a read-after-write flush's
 * read and carries its completion (flush.cpp says why).
 */
void fence_read(prepared_wr *p);

/*
 * A signaled flush's slot, claimed, and wr named by it and signaled; NULL
 * when every slot is in flight.
 */
inline flush_slot *flush_claim_signaled(conn_flush *flush, const void *op_context, ibv_send_wr *wr)
{
	flush_slot *slot = flush->claim(op_context, true, 0);
	if (__builtin_expect(slot != nullptr, 1)) {
		wr->wr_id = flush->wr_id_of(slot);
		wr->send_flags = IBV_SEND_SIGNALED;
	}
	return slot;
}

/* flush_claim_signaled() without the search: NULL when the next slot is taken */
inline flush_slot *flush_claim_next_signaled(conn_flush *flush, const void *op_context,
					     ibv_send_wr *wr)
{
	flush_slot *slot = flush->claim_next(op_context, true, 0);
	if (__builtin_expect(slot != nullptr, 1)) {
		wr->wr_id = flush->wr_id_of(slot);
		wr->send_flags = IBV_SEND_SIGNALED;
	}
	return slot;
}

/*
 * What every read-after-write or native flush does last: a signaled one
 * claims a slot, whose address becomes its wr_id; an unsignaled one is
 * remembered, to be told as a flush should it fail.
 */
inline int flush_track(conn_flush *flush, unsigned send_flags, const void *op_context,
		       prepared_wr *p)
{
	if (!(send_flags & IBV_SEND_SIGNALED)) {
		p->slot = nullptr;
		p->wr.wr_id = flush->track_unsignaled(op_context);
		p->wr.send_flags = 0;
		return 0;
	}
	p->slot = flush_claim_signaled(flush, op_context, &p->wr);
	if (__builtin_expect(p->slot == nullptr, 0))
		return flush_slots_exhausted();
	return 0;
}

/* The bytes the read of a non-empty range of len reads: a few, from its start. */
inline uint32_t read_after_write_len(size_t len)
{
	return static_cast<uint32_t>(len < FLUSH_SINK_SIZE ? len : FLUSH_SINK_SIZE);
}

/*
 * The read-after-write flush: an RDMA read from the flushed range cannot
 * complete before the writes posted ahead of it on the same queue pair have
 * been placed in the target's memory. Where writes land in the persistent
 * domain (the target declared direct write to PMem) that makes them
 * persistent; otherwise visible to the target's CPU.
 *
 * read_after_write_range() gives the bytes the read of [offset, offset + len)
 * of dst reads: their remote address and their length; false for a region
 * of 0 bytes. The range lies within the region (every caller checked it).
 */
inline bool read_after_write_range(const rpma_mr_remote *dst, size_t offset, size_t len,
				   uint64_t *raddr, uint32_t *read_len)
{
	/*
	 * A few bytes are enough to order the read behind the writes; they are
	 * taken from inside the flushed range, which the target registered for
	 * remote read.
	 */
	size_t read_offset = offset;
	*read_len = read_after_write_len(len);
	if (__builtin_expect(len == 0, 0)) {
		/*
		 * Never none: a zero-length read need not touch the target's
		 * memory, so it would not push the earlier writes anywhere. An
		 * empty range at the very end of the region reads the byte
		 * before.
		 */
		const uint64_t size = dst->size;
		if (size == 0)
			return false;
		read_offset = offset < size ? offset : size - 1;
		*read_len = 1;
	}
	*raddr = dst->raddr + read_offset;
	return true;
}

/*
 * Fills the read of [offset, offset + len) of dst into wr and sge, all but
 * its wr_id and send_flags; false for a region of 0 bytes.
 */
inline bool read_after_write_fill(const conn_flush *flush, const rpma_mr_remote *dst, size_t offset,
				  size_t len, ibv_send_wr *wr, ibv_sge *sge)
{
	if (__builtin_expect(
		!read_after_write_range(dst, offset, len, &wr->wr.rdma.remote_addr, &sge->length),
		0))
		return false;
	sge->addr = reinterpret_cast<uintptr_t>(flush->sink);
	sge->lkey = flush->sink_lkey;
	/* the fields a provider reads of an RDMA read: nothing else is cleared */
	wr->next = nullptr;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_RDMA_READ;
	wr->imm_data = 0;
	wr->wr.rdma.rkey = dst->rkey;
	return true;
}

/* The read-after-write flush made ready to post (iWARP: its fence added). */
inline int flush_read_after_write_prepare(conn_flush *flush, bool iwarp, const rpma_mr_remote *dst,
					  size_t offset, size_t len, unsigned send_flags,
					  const void *op_context, prepared_wr *p)
{
	if (__builtin_expect(!read_after_write_fill(flush, dst, offset, len, &p->wr, &p->sge), 0))
		return flush_of_empty_region();
	const int ret = flush_track(flush, send_flags, op_context, p);
	if (__builtin_expect(iwarp, 0) && ret == 0)
		fence_read(p);
	return ret;
}

/*
 * The native flush's work request, all but its wr_id and send_flags: the
 * fields verbs::post_send_ex() reads of a native flush (nothing else is
 * cleared). A range longer than a FLUSH can name (its RETH's 32-bit
 * length) flushes the whole region, which covers it.
 */
inline void native_flush_fill(const rpma_mr_remote *dst, size_t offset, size_t len,
			      rpma_flush_type type, ibv_send_wr *wr, verbs::native_flush_wr *native)
{
	native->placement = type == RPMA_FLUSH_TYPE_PERSISTENT ? verbs::NATIVE_FLUSH_PERSISTENT
							       : verbs::NATIVE_FLUSH_GLOBAL;
	if (__builtin_expect((len >> 32) == 0, 1)) {
		native->whole_region = false;
		native->len = static_cast<uint32_t>(len);
		wr->wr.rdma.remote_addr = dst->raddr + offset;
	} else {
		native->whole_region = true;
		native->len = 0;
		wr->wr.rdma.remote_addr = dst->raddr;
	}
	wr->next = nullptr;
	wr->wr.rdma.rkey = dst->rkey;
	/* no opcode of ibv_send_wr is a flush: native->placement says what this is */
	wr->opcode = IBV_WR_RDMA_READ;
}

/*
 * The native flush: the RDMA FLUSH verb of IBTA 1.5, executed by the
 * target's device, with the placement of type (persistence or global
 * visibility) for [offset, offset + len) of dst (native_flush_fill),
 * made ready to post.
 */
int flush_native_prepare(conn_flush *flush, const rpma_mr_remote *dst, size_t offset, size_t len,
			 rpma_flush_type type, unsigned send_flags, const void *op_context,
			 prepared_wr *p);

} /* namespace rpma */

#endif /* RPMA_FLUSH_HPP */
