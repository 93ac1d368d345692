/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.cpp -- the read-after-write and native flushes, made ready to post
 */

#include <cstdint>

#include "err.hpp"
#include "flush.hpp"
#include "mr.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

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
void fence_read(prepared_wr *p)
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

int flush_of_empty_region()
{
	RPMA_LOG_ERROR("a remote region of 0 bytes cannot be flushed");
	return RPMA_E_INVAL;
}

int flush_slots_exhausted()
{
	RPMA_LOG_ERROR("more signaled flushes in flight than the connection's send queue and CQ "
		       "can hold");
	return RPMA_E_NOMEM;
}

int flush_native_prepare(conn_flush *flush, const rpma_mr_remote *dst, size_t offset, size_t len,
			 rpma_flush_type type, unsigned send_flags, const void *op_context,
			 prepared_wr *p)
{
	p->wr = ibv_send_wr{};
	native_flush_fill(dst, offset, len, type, &p->wr, &p->native);
	return flush_track(flush, send_flags, op_context, p);
}

} /* namespace rpma */
