/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * completion.hpp -- where the completions handed to the application go, and
 * the ones the library makes itself
 *
 * The flush slots, GPSPM and the completion queue all fill the same
 * completion_out during one take: this is the one place that says what
 * it holds.
 */

#ifndef RPMA_COMPLETION_HPP
#define RPMA_COMPLETION_HPP

#include <cstdint>

#include <infiniband/verbs.h>

namespace rpma
{

/*
 * Where one take puts the completions it hands to the application, and
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
		*next() = c;
		made(is_flush);
	}
	/* where the next completion goes, when it is made there rather than put */
	ibv_wc *next()
	{
		return &wc[count];
	}
	/* the completion made at next() is stored */
	void made(bool is_flush)
	{
		if (is_flush)
			*flushes |= 1ULL << count;
		count++;
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

} /* namespace rpma */

#endif /* RPMA_COMPLETION_HPP */
