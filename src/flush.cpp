/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.cpp -- flushing by read-after-write
 */

#include "conn.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "mr.hpp"
#include "post.hpp"

int rpma::post_read(rpma_conn *conn, ibv_send_wr *wr, bool is_flush)
{
	if (!(wr->send_flags & IBV_SEND_SIGNALED))
		return conn->post_send(wr); /* no completion to tell apart */

	rpma_cq *cq = conn->queues.cq;
	cq->lock_reads();
	const bool noted = cq->note_read(is_flush);
	int ret = conn->post_send(wr);
	if (ret && noted)
		cq->unnote_read();
	cq->unlock_reads();
	if (!noted)
		RPMA_LOG_WARNING("more signaled reads outstanding than the send queue and CQ can "
				 "hold: this one may complete as a plain read");
	return ret;
}

int rpma::flush_read_after_write(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset,
				 size_t len, unsigned send_flags, const void *op_context)
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
	size_t read_len = len < sizeof(conn->flush_sink) ? len : sizeof(conn->flush_sink);
	if (read_len == 0)
		read_len = 1;
	if (read_len > dst->size - read_offset)
		read_len = dst->size - read_offset;

	ibv_sge sge{};
	sge.addr = reinterpret_cast<uintptr_t>(conn->flush_sink);
	sge.length = static_cast<uint32_t>(read_len);
	sge.lkey = conn->flush_sink_mr->lkey;

	ibv_send_wr wr{};
	wr.wr_id = wr_id_of(op_context);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = send_flags;
	wr.wr.rdma.remote_addr = dst->raddr + read_offset;
	wr.wr.rdma.rkey = dst->rkey;
	return post_read(conn, &wr, true);
}
