/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_post.cpp -- the data path: one-sided operations, messages, atomic
 * writes and batches, each one work request list and one doorbell (flushes:
 * conn_post_flush.cpp)
 *
 * Nothing here allocates or takes a lock: the work requests live on the
 * caller's stack (post.hpp), and the flush slots are claimed lock-free.
 */

#include <arpa/inet.h>
#include <cstring>

#include "conn.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "conn_post.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

/* GPSPM: the receive queues of both sides belong to the library */
static bool conn_takes_messages(const rpma_conn *conn)
{
	if (conn->queues.gpspm_mode == RPMA_GPSPM_DISABLED)
		return true;
	RPMA_LOG_ERROR("the receive queues of a GPSPM connection belong to the library: no "
		       "sends, receives or writes with immediate data");
	return false;
}

/*
 * The one-sided operations: rpma_read, rpma_write and rpma_write_with_imm.
 * `local` is the read's destination or the write's source.
 */
static int one_sided_prepare(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
			     const rpma_mr_remote *remote, size_t remote_offset, size_t len,
			     unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
			     const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	/* both ends are given, or neither (a zero-length operation) */
	RPMA_CHECK_ARG((local == nullptr) == (remote == nullptr));
	RPMA_CHECK_ARG(opcode != IBV_WR_RDMA_WRITE_WITH_IMM || conn_takes_messages(conn));

	int nsge = local_sge(local, local_offset, len, sge);
	if (nsge < 0)
		return nsge;
	send_wr(wr, sge, nsge, opcode, send_flags, op_context);
	int ret =
	    remote_range(remote, remote_offset, len, &wr->wr.rdma.remote_addr, &wr->wr.rdma.rkey);
	if (ret)
		return ret;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr->imm_data = htonl(imm);
	return 0;
}

static int one_sided(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
		     const rpma_mr_remote *remote, size_t remote_offset, size_t len, int flags,
		     ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	ibv_sge sge;
	ibv_send_wr wr;
	int ret = one_sided_prepare(conn, local, local_offset, remote, remote_offset, len,
				    send_flags, opcode, imm, op_context, &wr, &sge);
	if (ret)
		return ret;
	return conn->post_send(&wr);
}

/*
 * Whether a one-sided operation between two regions passes every check of
 * one_sided_prepare(): all in one expression, as the data path makes them.
 * False also when there is no region (a zero-length operation):
 * one_sided_prepare() then makes the empty operation.
 */
[[gnu::always_inline]] static inline bool
one_sided_fits(const rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
	       const rpma_mr_remote *remote, size_t remote_offset, size_t len, ibv_wr_opcode opcode)
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
[[gnu::always_inline]] static inline void
fill_one_sided(const rpma_mr_local *local, size_t local_offset, const rpma_mr_remote *remote,
	       size_t remote_offset, size_t len, unsigned send_flags, ibv_wr_opcode opcode,
	       uint32_t imm, const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	sge->addr = reinterpret_cast<uintptr_t>(local->mr->addr) + local_offset;
	sge->length = static_cast<uint32_t>(len);
	sge->lkey = local->mr->lkey;
	wr->wr_id = wr_id_of(op_context);
	wr->next = nullptr;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = opcode;
	wr->send_flags = send_flags;
	wr->imm_data = htonl(imm);
	wr->wr.rdma.remote_addr = remote->raddr + remote_offset;
	wr->wr.rdma.rkey = remote->rkey;
}

/* A one-sided operation that one_sided_fits(), filled on the stack and posted */
[[gnu::always_inline]] static inline int
post_one_sided(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
	       const rpma_mr_remote *remote, size_t remote_offset, size_t len, int flags,
	       ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	ibv_sge sge;
	ibv_send_wr wr;
	fill_one_sided(local, local_offset, remote, remote_offset, len, send_flags_of(flags),
		       opcode, imm, op_context, &wr, &sge);
	return conn->post_send(&wr);
}

/*
 * rpma_read() and rpma_write() are their checks, then a jump: to the
 * function that fills and posts (the only one with a frame), or to the
 * checked path, which says what is wrong. Both take the public function's
 * parameters as they are, so that the jump moves none.
 */
RPMA_JUMP_TARGET static int read_post(rpma_conn *conn, rpma_mr_local *dst, size_t dst_offset,
				      const rpma_mr_remote *src, size_t src_offset, size_t len,
				      int flags, const void *op_context)
{
	return post_one_sided(conn, dst, dst_offset, src, src_offset, len, flags, IBV_WR_RDMA_READ,
			      0, op_context);
}

RPMA_JUMP_TARGET static int write_post(rpma_conn *conn, rpma_mr_remote *dst, size_t dst_offset,
				       const rpma_mr_local *src, size_t src_offset, size_t len,
				       int flags, const void *op_context)
{
	return post_one_sided(conn, src, src_offset, dst, dst_offset, len, flags, IBV_WR_RDMA_WRITE,
			      0, op_context);
}

RPMA_JUMP_TARGET static int read_checked(rpma_conn *conn, rpma_mr_local *dst, size_t dst_offset,
					 const rpma_mr_remote *src, size_t src_offset, size_t len,
					 int flags, const void *op_context)
{
	return one_sided(conn, dst, dst_offset, src, src_offset, len, flags, IBV_WR_RDMA_READ, 0,
			 op_context);
}

RPMA_JUMP_TARGET static int write_checked(rpma_conn *conn, rpma_mr_remote *dst, size_t dst_offset,
					  const rpma_mr_local *src, size_t src_offset, size_t len,
					  int flags, const void *op_context)
{
	return one_sided(conn, src, src_offset, dst, dst_offset, len, flags, IBV_WR_RDMA_WRITE, 0,
			 op_context);
}

static int send_prepare(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
			unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
			const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	RPMA_CHECK_ARG(conn_takes_messages(conn));
	int nsge = local_sge(src, offset, len, sge);
	if (nsge < 0)
		return nsge;
	send_wr(wr, sge, nsge, opcode, send_flags, op_context);
	if (opcode == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(imm);
	return 0;
}

static int send_common(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
		       int flags, ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));

	ibv_sge sge;
	ibv_send_wr wr;
	int ret =
	    send_prepare(conn, src, offset, len, send_flags, opcode, imm, op_context, &wr, &sge);
	if (ret)
		return ret;
	return conn->post_send(&wr);
}

/*
 * The value a C caller stored in an enum field, read as the int it is: an
 * enum object of C++ holding a value none of its enumerators can reach
 * must not be read as the enum (undefined behaviour), and the fields of a
 * batch come from C.
 */
template <typename Enum> static int stored_value(const Enum &field)
{
	static_assert(sizeof(Enum) == sizeof(int), "C stores an enum as an int");
	int value;
	memcpy(&value, &field, sizeof(value));
	return value;
}

/* One element of rpma_post_batch(), made ready to post. */
[[gnu::always_inline]] static inline int batch_prepare(rpma_conn *conn, const rpma_batch_op &op,
						       prepared_wr *p)
{
	p->slot = nullptr;
	p->native.placement = 0;
	unsigned send_flags;
	RPMA_CHECK_ARG(send_flags_from(op.flags, &send_flags));
	const int kind = stored_value(op.op);
	switch (kind) {
	case RPMA_OP_READ:
		RPMA_CHECK_ARG(!op.with_imm);
		if (one_sided_fits(conn, op.local, op.local_offset, op.remote, op.remote_offset,
				   op.len, IBV_WR_RDMA_READ)) {
			fill_one_sided(op.local, op.local_offset, op.remote, op.remote_offset,
				       op.len, send_flags, IBV_WR_RDMA_READ, 0, op.op_context,
				       &p->wr, &p->sge);
			return 0;
		}
		return one_sided_prepare(conn, op.local, op.local_offset, op.remote,
					 op.remote_offset, op.len, send_flags, IBV_WR_RDMA_READ, 0,
					 op.op_context, &p->wr, &p->sge);
	case RPMA_OP_WRITE: {
		const ibv_wr_opcode opcode =
		    op.with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		if (one_sided_fits(conn, op.local, op.local_offset, op.remote, op.remote_offset,
				   op.len, opcode)) {
			fill_one_sided(op.local, op.local_offset, op.remote, op.remote_offset,
				       op.len, send_flags, opcode, op.imm, op.op_context, &p->wr,
				       &p->sge);
			return 0;
		}
		return one_sided_prepare(conn, op.local, op.local_offset, op.remote,
					 op.remote_offset, op.len, send_flags, opcode, op.imm,
					 op.op_context, &p->wr, &p->sge);
	}
	case RPMA_OP_SEND:
		RPMA_CHECK_ARG(op.remote == nullptr);
		return send_prepare(conn, op.local, op.local_offset, op.len, send_flags,
				    op.with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, op.imm,
				    op.op_context, &p->wr, &p->sge);
	case RPMA_OP_FLUSH:
		RPMA_CHECK_ARG(op.remote != nullptr);
		RPMA_CHECK_ARG(op.local == nullptr && !op.with_imm);
		RPMA_CHECK_ARG(stored_value(op.flush_type) == RPMA_FLUSH_TYPE_PERSISTENT ||
			       stored_value(op.flush_type) == RPMA_FLUSH_TYPE_VISIBILITY);
		RPMA_CHECK_ARG(range_fits(op.remote->size, op.remote_offset, op.len));
		return flush_prepare(conn, flush_method_of(conn, op.remote, op.flush_type),
				     op.remote, op.remote_offset, op.len, op.flush_type, send_flags,
				     op.op_context, p);
	default:
		RPMA_LOG_ERROR("operation %d cannot be batched: reads, writes, flushes and sends "
			       "can",
			       kind);
		return RPMA_E_INVAL;
	}
}

extern "C" {

int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context)
{
	if (__builtin_expect(
		conn != nullptr && flags != 0 && conn->app_qp != nullptr &&
		    one_sided_fits(conn, dst, dst_offset, src, src_offset, len, IBV_WR_RDMA_READ),
		1))
		return read_post(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
	return read_checked(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
}

int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context)
{
	if (__builtin_expect(
		conn != nullptr && flags != 0 && conn->app_qp != nullptr &&
		    one_sided_fits(conn, src, src_offset, dst, dst_offset, len, IBV_WR_RDMA_WRITE),
		1))
		return write_post(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
	return write_checked(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
}

int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context)
{
	if (__builtin_expect(conn != nullptr && flags != 0 && conn->app_qp != nullptr &&
				 one_sided_fits(conn, src, src_offset, dst, dst_offset, len,
						IBV_WR_RDMA_WRITE_WITH_IMM),
			     1))
		return post_one_sided(conn, src, src_offset, dst, dst_offset, len, flags,
				      IBV_WR_RDMA_WRITE_WITH_IMM, imm, op_context);
	return one_sided(conn, src, src_offset, dst, dst_offset, len, flags,
			 IBV_WR_RDMA_WRITE_WITH_IMM, imm, op_context);
}

int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(src != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT == 0);
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	uint64_t raddr;
	uint32_t rkey;
	int ret = remote_range(dst, dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, &raddr, &rkey);
	if (ret)
		return ret;

	/*
	 * A GPSPM flush is done when its answer comes, not when its send
	 * does: behind one still unanswered, the target's CPU makes the write,
	 * once it has persisted what came before.
	 */
	gpspm_engine *g = conn->queues.gpspm;
	if (g != nullptr && gpspm_atomic_write_waits(g))
		return gpspm_atomic_write(g, conn->queues.flush, dst, dst_offset, src, send_flags,
					  op_context);

	/*
	 * The fence keeps the write behind the reads (flushes) posted before
	 * it, so that e.g. a commit flag lands only after the data it covers
	 * was flushed.
	 */
	send_flags |= IBV_SEND_FENCE;
	/*
	 * Natively only where both devices have ATOMIC WRITE: a target that
	 * cannot execute it would fail the request and the connection, where
	 * the inline write works.
	 */
	if ((conn->peer->native & verbs::NATIVE_ATOMIC_WRITE) &&
	    (remote_flush_methods(dst) & METHOD_NATIVE_ATOMIC_WRITE)) {
		ret = verbs::post_atomic_write(conn->app_qp, wr_id_of(op_context), send_flags, rkey,
					       raddr, src);
		if (ret)
			return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_wr_atomic_write");
		return 0;
	}

	/* an 8-byte aligned write placed by one inline packet is not torn */
	ibv_sge sge{};
	sge.addr = reinterpret_cast<uintptr_t>(src);
	sge.length = RPMA_ATOMIC_WRITE_ALIGNMENT;
	ibv_send_wr wr;
	send_wr(&wr, &sge, 1, IBV_WR_RDMA_WRITE, send_flags | IBV_SEND_INLINE, op_context);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return conn->post_send(&wr);
}

/*
 * Posts a prepared batch that holds a native flush: through the ibv_qp_ex
 * work-request API, which can say what a flush needs and ibv_post_send
 * cannot. All or nothing, one doorbell.
 */
static int post_batch_ex(rpma_conn *conn, prepared_wr *batch, int count, int *failed)
{
	verbs::native_flush_wr native[RPMA_BATCH_MAX];
	for (int i = 0; i < count; i++)
		native[i] = batch[i].native;
	int ret = verbs::post_send_ex(conn->app_qp, &batch[0].wr, native);
	if (ret == 0)
		return 0;
	for (int i = 0; i < count; i++)
		flush_unprepare(conn, &batch[i]);
	/* ibv_wr_complete() posts nothing when it fails: the batch failed as a whole */
	if (failed)
		*failed = 0;
	return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_wr_complete");
}

int rpma_post_batch(struct rpma_conn *conn, const struct rpma_batch_op *ops, int count, int *failed)
{
	if (failed)
		*failed = -1;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(ops != nullptr);
	RPMA_CHECK_ARG(count >= 1 && count <= RPMA_BATCH_MAX);
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	/* every element is checked and built before anything is posted */
	prepared_wr batch[RPMA_BATCH_MAX];
	bool native = false;
	for (int i = 0; i < count; i++) {
		int ret = batch_prepare(conn, ops[i], &batch[i]);
		if (ret) {
			/* GPSPM's flow control is no error: take completions, post again */
			if (ret != RPMA_E_AGAIN)
				RPMA_LOG_ERROR("batch element %d refused: nothing posted", i);
			for (int j = 0; j < i; j++)
				flush_unprepare(conn, &batch[j]);
			if (failed)
				*failed = i;
			return ret;
		}
		if (batch[i].native.placement)
			native = true;
		if (i)
			batch[i - 1].last()->next = &batch[i].wr;
	}
	if (native)
		return post_batch_ex(conn, batch, count, failed);

	/* one chain, one doorbell */
	ibv_send_wr *bad_wr = nullptr;
	int ret = verbs::post_send(conn->app_qp, &batch[0].wr, &bad_wr);
	if (ret == 0)
		return 0;
	int first_unposted = 0;
	for (int i = 0; i < count; i++) {
		/* an element whose fence was not posted did not go as a whole */
		if (&batch[i].wr == bad_wr || batch[i].last() == bad_wr) {
			first_unposted = i;
			break;
		}
	}
	for (int i = first_unposted; i < count; i++)
		flush_unprepare(conn, &batch[i]);
	if (failed)
		*failed = first_unposted;
	return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
}

int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context)
{
	return send_common(conn, src, offset, len, flags, IBV_WR_SEND, 0, op_context);
}

int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context)
{
	return send_common(conn, src, offset, len, flags, IBV_WR_SEND_WITH_IMM, imm, op_context);
}

int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(conn_takes_messages(conn));
	ibv_recv_wr wr;
	ibv_sge sge;
	int ret = prepare_recv(dst, offset, len, op_context, &wr, &sge);
	if (ret)
		return ret;
	ibv_recv_wr *bad_wr;
	ret = verbs::post_recv(conn->app_qp, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_recv");
	return 0;
}

} /* extern "C" */
