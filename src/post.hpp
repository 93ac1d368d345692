/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * post.hpp -- building work requests: shared by connections, requests, SRQs,
 * the flush methods and GPSPM
 *
 * Everything here is on the data path: no allocation, no lock, the work
 * request lives on the caller's stack.
 */

#ifndef RPMA_POST_HPP
#define RPMA_POST_HPP

#include <cerrno>
#include <cstdint>

#include <infiniband/verbs.h>

#include "err.hpp"
#include "mr.hpp"
#include "verbs/verbs.hpp"

/*
 * A function that an entry point of the data path jumps to with the
 * entry's own parameters: never inlined into it and, with GCC, never
 * cloned with other parameters, which would turn the jump into a call
 * that moves them (clang has no such attribute, nor such clones).
 */
#if defined(__clang__)
#define RPMA_JUMP_TARGET [[gnu::noinline]]
#else
#define RPMA_JUMP_TARGET [[gnu::noinline, gnu::noclone]]
#endif

namespace rpma
{

struct flush_slot;

/*
 * ibv_post_send() and friends return the error number itself: positive on
 * most providers, negative on some (siw returns -EINVAL), and leave errno
 * alone; -1 with errno set has been seen too.
 */
inline int post_errno(int ret)
{
	if (ret > 0)
		return ret;
	if (ret < -1)
		return -ret;
	return errno ? errno : EIO;
}

/*
 * A post that failed with ret (as ibv_post_send returns it) by call:
 * RPMA_E_PROVIDER, logged. Out of line: the data path only branches here.
 */
[[gnu::cold]] int post_failed(int ret, const char *call);

/* The ibv send flags of flags that send_flags_from() accepted. */
inline unsigned send_flags_of(int flags)
{
	return (flags & (RPMA_F_COMPLETION_ALWAYS & ~RPMA_F_COMPLETION_ON_ERROR))
		   ? IBV_SEND_SIGNALED
		   : 0;
}

/*
 * RPMA_F_COMPLETION_* to ibv send flags; false for 0. As in librpma 1.x,
 * only 0 is refused and the (1 << 1) bit of RPMA_F_COMPLETION_ALWAYS alone
 * decides whether the work request is signaled.
 */
inline bool send_flags_from(int flags, unsigned *send_flags)
{
	if (flags == 0)
		return false;
	*send_flags = send_flags_of(flags);
	return true;
}

inline uint64_t wr_id_of(const void *op_context)
{
	return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(op_context));
}

/*
 * Fills sge for [offset, offset + len) of a local region. A NULL region is
 * allowed only as an empty buffer (offset 0, len 0): zero-length operations
 * need no memory. Returns the number of sges (0 or 1) or RPMA_E_INVAL.
 */
inline int local_sge(const rpma_mr_local *mr, size_t offset, size_t len, ibv_sge *sge)
{
	if (mr == nullptr) {
		if (offset != 0 || len != 0) {
			RPMA_LOG_ERROR("no region given for %zu bytes at offset %zu", len, offset);
			return RPMA_E_INVAL;
		}
		return 0;
	}
	if (!range_fits(mr->size(), offset, len)) {
		RPMA_LOG_ERROR("%zu bytes at offset %zu do not fit the local region of %zu bytes",
			       len, offset, mr->size());
		return RPMA_E_INVAL;
	}
	/* a work request's length is 32 bits: cut, it would move other bytes */
	if (len > UINT32_MAX) {
		RPMA_LOG_ERROR("%zu bytes in one operation: an operation carries at most %u bytes",
			       len, static_cast<unsigned>(UINT32_MAX));
		return RPMA_E_INVAL;
	}
	sge->addr = mr->addr_at(offset);
	sge->length = static_cast<uint32_t>(len);
	sge->lkey = mr->mr->lkey;
	return 1;
}

/* Checks [offset, offset + len) of a remote region; NULL only when empty. */
inline int remote_range(const rpma_mr_remote *mr, size_t offset, size_t len, uint64_t *raddr,
			uint32_t *rkey)
{
	if (mr == nullptr) {
		if (offset != 0 || len != 0) {
			RPMA_LOG_ERROR("no remote region given for %zu bytes at offset %zu", len,
				       offset);
			return RPMA_E_INVAL;
		}
		*raddr = 0;
		*rkey = 0;
		return 0;
	}
	if (!range_fits(mr->size, offset, len)) {
		RPMA_LOG_ERROR("%zu bytes at offset %zu do not fit the remote region of %llu bytes",
			       len, offset, static_cast<unsigned long long>(mr->size));
		return RPMA_E_INVAL;
	}
	*raddr = mr->raddr + offset;
	*rkey = mr->rkey;
	return 0;
}

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

/* Fills a send work request: the fields every one-sided or send operation sets. */
inline void send_wr(ibv_send_wr *wr, ibv_sge *sge, int nsge, ibv_wr_opcode opcode,
		    unsigned send_flags, const void *op_context)
{
	/* what a provider reads of these opcodes; the rest is never read */
	wr->wr_id = wr_id_of(op_context);
	wr->next = nullptr;
	wr->sg_list = nsge ? sge : nullptr;
	wr->num_sge = nsge;
	wr->opcode = opcode;
	wr->send_flags = send_flags;
	wr->imm_data = 0;
}

/* A receive work request into [offset, offset + len) of dst. */
inline int prepare_recv(const rpma_mr_local *dst, size_t offset, size_t len, const void *op_context,
			ibv_recv_wr *wr, ibv_sge *sge)
{
	int nsge = local_sge(dst, offset, len, sge);
	if (nsge < 0)
		return nsge;
	*wr = ibv_recv_wr{};
	wr->wr_id = wr_id_of(op_context);
	wr->sg_list = nsge ? sge : nullptr;
	wr->num_sge = nsge;
	return 0;
}

} /* namespace rpma */

#endif /* RPMA_POST_HPP */
