/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_post.hpp -- what the files of the data path (conn_post.cpp,
 * conn_post_flush.cpp, conn_post_batch.cpp) share: the checks and fills of
 * a one-sided operation and a send, and a flush made ready to post by its
 * method, alone or in a batch
 */

#ifndef RPMA_CONN_POST_HPP
#define RPMA_CONN_POST_HPP

#include <librpma.h>

#include "conn.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "post.hpp"

namespace rpma
{

/* Whether the application may send and receive on conn (not with GPSPM), logged when not. */
bool conn_takes_messages(const rpma_conn *conn);

/*
 * A one-sided operation (rpma_read, rpma_write, rpma_write_with_imm, a
 * batch's) checked and filled into wr and sge; `local` is the read's
 * destination or the write's source. RPMA_E_INVAL, logged, for what does
 * not pass.
 */
int one_sided_prepare(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
		      const rpma_mr_remote *remote, size_t remote_offset, size_t len,
		      unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
		      const void *op_context, ibv_send_wr *wr, ibv_sge *sge);

/* A send (rpma_send, rpma_send_with_imm, a batch's) checked and filled into wr and sge. */
int send_prepare(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
		 unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm, const void *op_context,
		 ibv_send_wr *wr, ibv_sge *sge);

/*
 * Whether a one-sided operation between two regions passes every check of
 * one_sided_prepare(): all in one expression, as the data path makes them.
 * False also when there is no region (a zero-length operation):
 * one_sided_prepare() then makes the empty operation.
 */
[[gnu::always_inline]] inline bool one_sided_fits(const rpma_conn *conn, const rpma_mr_local *local,
						  size_t local_offset, const rpma_mr_remote *remote,
						  size_t remote_offset, size_t len,
						  ibv_wr_opcode opcode)
{
	/* a work request's length is 32 bits: (len >> 32) == 0 needs no constant */
	return local != nullptr && remote != nullptr && (len >> 32) == 0 &&
	       (opcode != IBV_WR_RDMA_WRITE_WITH_IMM ||
		conn->queues.gpspm_mode == RPMA_GPSPM_DISABLED) &&
	       range_fits(local->mr->length, local_offset, len) &&
	       range_fits(remote->size, remote_offset, len);
}

/*
 * The fields a provider reads of an RDMA read or write, filled (nothing
 * else of the 128-byte work request is read for these opcodes), for an
 * operation one_sided_fits().
 */
[[gnu::always_inline]] inline void fill_one_sided(const rpma_mr_local *local, size_t local_offset,
						  const rpma_mr_remote *remote,
						  size_t remote_offset, size_t len,
						  unsigned send_flags, ibv_wr_opcode opcode,
						  uint32_t imm, const void *op_context,
						  ibv_send_wr *next, ibv_send_wr *wr, ibv_sge *sge)
{
	sge->addr = reinterpret_cast<uintptr_t>(local->mr->addr) + local_offset;
	sge->length = static_cast<uint32_t>(len);
	sge->lkey = local->mr->lkey;
	wr->wr_id = wr_id_of(op_context);
	wr->next = next;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = opcode;
	wr->send_flags = send_flags;
	wr->imm_data = htonl(imm);
	wr->wr.rdma.remote_addr = remote->raddr + remote_offset;
	wr->wr.rdma.rkey = remote->rkey;
}

/* RPMA_E_NOSUPP for a flush no method carries, with the reason logged. */
[[gnu::cold]] int flush_refused(const rpma_conn *conn, const rpma_mr_remote *dst,
				rpma_flush_type type);

/* Gives back what a prepared work request holds, when it was not posted. */
void flush_unprepare(rpma_conn *conn, prepared_wr *p);

/* The METHOD_* bits of the native flushes, of either type. */
constexpr uint8_t METHODS_NATIVE_FLUSH = METHOD_NATIVE_PERSISTENT | METHOD_NATIVE_VISIBILITY;

/*
 * The methods of a flush of type (checked) to dst that both the region
 * offers and the fast paths of the connection can take
 * (conn->fast_flush_methods: no read-after-write where its read needs a
 * fence).
 */
[[gnu::always_inline]] inline uint8_t
fast_flush_methods_of(const rpma_conn *conn, const rpma_mr_remote *dst, unsigned type)
{
	return conn->fast_flush_methods[type].load(std::memory_order_relaxed) &
	       dst->flush_offer[type];
}

/*
 * Whether best_flush_method() of such methods is read-after-write: what
 * rpma_flush() and rpma_post_batch() post from their fast paths.
 */
[[gnu::always_inline]] inline bool fast_read_after_write(uint8_t methods)
{
	return (methods & (METHODS_NATIVE_FLUSH | METHOD_READ_AFTER_WRITE)) ==
	       METHOD_READ_AFTER_WRITE;
}

/*
 * Whether best_flush_method() of such methods is GPSPM: what rpma_flush()
 * posts through gpspm_flush_signaled(). fast_flush_methods holds no GPSPM
 * where a read-after-write that needs a fence would be chosen before it.
 */
[[gnu::always_inline]] inline bool fast_gpspm(uint8_t methods)
{
	return (methods & (METHODS_NATIVE_FLUSH | METHOD_READ_AFTER_WRITE | METHOD_GPSPM)) ==
	       METHOD_GPSPM;
}

/* The method of a flush of type to dst on conn: pick_flush_method(), inline. */
[[gnu::always_inline]] inline rpma_flush_method
flush_method_of(const rpma_conn *conn, const rpma_mr_remote *dst, rpma_flush_type type)
{
	return pick_flush_method(conn->usable_flush_methods[type].load(std::memory_order_relaxed),
				 dst, type);
}

/*
 * Makes a flush of [offset, offset + len) of dst ready to post by method,
 * the one pick_flush_method() gave for the connection and type: claims
 * its slot (and for GPSPM its place in the flow control). RPMA_E_NOSUPP,
 * with the reason logged, when no method carries it.
 */
[[gnu::always_inline]] inline int flush_prepare(rpma_conn *conn, rpma_flush_method method,
						const rpma_mr_remote *dst, size_t offset,
						size_t len, rpma_flush_type type,
						unsigned send_flags, const void *op_context,
						prepared_wr *p)
{
	conn_flush *flush = conn->queues.flush;
	p->native.placement = 0;
	switch (method) {
	case RPMA_FLUSH_METHOD_NATIVE:
		return flush_native_prepare(flush, dst, offset, len, type, send_flags, op_context,
					    p);
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return flush_read_after_write_prepare(flush, conn->read_fenced, dst, offset, len,
						      send_flags, op_context, p);
	case RPMA_FLUSH_METHOD_GPSPM:
		return gpspm_flush_prepare(conn->queues.gpspm, flush, dst, offset, len, send_flags,
					   op_context, p);
	default:
		return flush_refused(conn, dst, type);
	}
}

} /* namespace rpma */

#endif /* RPMA_CONN_POST_HPP */
