/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_post_batch.cpp -- rpma_post_batch: many operations, one work request
 * list and one doorbell
 *
 * Nothing here allocates or takes a lock: the work requests live on the
 * caller's stack, and the flush slots are claimed lock-free.
 */

#include <cstring>

#include "conn.hpp"
#include "conn_post.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

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
				       nullptr, &p->wr, &p->sge);
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
				       op.len, send_flags, opcode, op.imm, op.op_context, nullptr,
				       &p->wr, &p->sge);
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

/*
 * Posts a prepared batch that holds a native flush: through the ibv_qp_ex
 * work-request API, which can say what a flush needs and ibv_post_send
 * cannot. All or nothing, one doorbell.
 */
static int post_batch_ex(rpma_conn *conn, prepared_wr *batch, int count, int *failed)
{
	verbs::native_flush_wr native[RPMA_BATCH_MAX];
	if (count < 1)
		__builtin_unreachable(); /* rpma_post_batch() checked it: native[0] is set */
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

/*
 * The work requests of a batch, on rpma_post_batch()'s stack: one array
 * or the other, as the batch takes one path or the other, so that the
 * stack holds one.
 */
union batch_frame {
	prepared_wr prepared[RPMA_BATCH_MAX]; /* batch_post_general() */
	/* batch_post_direct(): each work request beside its sge, one pointer walks both */
	struct chained {
		ibv_send_wr wr;
		ibv_sge sge;
	} chain[RPMA_BATCH_MAX];
};

/*
 * rpma_post_batch() of anything: every element checked and prepared (with
 * what it claims: a flush slot, GPSPM's flow control), then posted.
 */
RPMA_JUMP_TARGET static int batch_post_general(rpma_conn *conn, const rpma_batch_op *ops, int count,
					       int *failed, batch_frame *frame)
{
	if (failed)
		*failed = -1;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(ops != nullptr);
	RPMA_CHECK_ARG(count >= 1 && count <= RPMA_BATCH_MAX);
	RPMA_CHECK_ARG(conn_takes_posts(conn));
	if (conn_posts_held(conn)) {
		if (failed)
			*failed = 0;
		return RPMA_E_AGAIN;
	}

	/* every element is checked and built before anything is posted */
	prepared_wr *batch = frame->prepared;
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

/*
 * Whether op is the signaled read-after-write flush that rpma_flush()
 * posts from its own fast path (conn_post_flush.cpp): the same test, on
 * an element of a batch, whose fields come from C (stored_value).
 */
[[gnu::always_inline]] static inline bool batch_flush_direct(const rpma_conn *conn,
							     const rpma_batch_op &op)
{
	const unsigned type = static_cast<unsigned>(stored_value(op.flush_type));
	const rpma_mr_remote *dst = op.remote;
	if (type > RPMA_FLUSH_TYPE_VISIBILITY || dst == nullptr || op.local != nullptr ||
	    op.with_imm || send_flags_of(op.flags) != IBV_SEND_SIGNALED || op.len == 0 ||
	    !range_fits(dst->size, op.remote_offset, op.len))
		return false;
	return fast_read_after_write(fast_flush_methods_of(conn, dst, type));
}

/*
 * rpma_post_batch() of reads and writes without immediate data, and at
 * most one flush, the last, that batch_flush_direct() takes: what a data
 * path batches. Each element is checked and filled straight into a
 * compact chain on the stack (only the fields a provider reads, as
 * rpma_read() and rpma_write() fill theirs); the flush's slot is claimed
 * last, so that nothing is to undo until then. Anything else, or a taken
 * next slot, goes to batch_post_general() with nothing done, which says
 * what is wrong or searches.
 */
RPMA_JUMP_TARGET static int batch_post_direct(rpma_conn *conn, const rpma_batch_op *ops, int count,
					      int *failed, batch_frame *frame)
{
	batch_frame::chained *const chain = frame->chain;
	const int last = count - 1;
	const bool with_flush = stored_value(ops[last].op) == RPMA_OP_FLUSH;
	/* one pointer for the element and one for its work request: few registers */
	const rpma_batch_op *const one_sided_end = ops + (with_flush ? last : count);
	batch_frame::chained *c = chain;
	for (const rpma_batch_op *op = ops; op != one_sided_end; op++, c++) {
		/* RPMA_OP_READ 0 and RPMA_OP_WRITE 1: IBV_WR_RDMA_READ and _WRITE without a branch
		 */
		const unsigned kind = static_cast<unsigned>(stored_value(op->op));
		static_assert(RPMA_OP_READ == 0 && RPMA_OP_WRITE == 1 && IBV_WR_RDMA_WRITE == 0 &&
				  IBV_WR_RDMA_READ == 4,
			      "the opcode is computed from the operation");
		const ibv_wr_opcode opcode = static_cast<ibv_wr_opcode>((kind ^ 1) << 2);
		if (__builtin_expect(kind > RPMA_OP_WRITE || op->with_imm || op->flags == 0 ||
					 !one_sided_fits(conn, op->local, op->local_offset,
							 op->remote, op->remote_offset, op->len,
							 opcode),
				     0))
			return batch_post_general(conn, ops, count, failed, frame);
		fill_one_sided(op->local, op->local_offset, op->remote, op->remote_offset, op->len,
			       send_flags_of(op->flags), opcode, 0, op->op_context, &c[1].wr,
			       &c->wr, &c->sge);
	}
	ibv_send_wr *const flush_wr = &chain[last].wr;
	if (with_flush) {
		const rpma_batch_op &op = ops[last];
		if (__builtin_expect(!batch_flush_direct(conn, op), 0))
			return batch_post_general(conn, ops, count, failed, frame);
		conn_flush *flush = conn->queues.flush;
		(void)read_after_write_fill(flush, op.remote, op.remote_offset, op.len, flush_wr,
					    &chain[last].sge);
		if (__builtin_expect(
			flush_claim_next_signaled(flush, op.op_context, flush_wr) == nullptr, 0))
			return batch_post_general(conn, ops, count, failed, frame);
	}
	flush_wr->next = nullptr;

	ibv_send_wr *bad_wr = nullptr;
	const int ret = verbs::post_send(conn->app_qp, &chain[0].wr, &bad_wr);
	if (__builtin_expect(ret == 0, 1))
		return 0;
	/* what was not posted: from bad_wr on; all of it when bad_wr names none */
	int first_unposted = 0;
	for (int i = 0; i < count; i++) {
		if (&chain[i].wr == bad_wr) {
			first_unposted = i;
			break;
		}
	}
	if (with_flush) {
		conn_flush *flush = conn->queues.flush;
		flush->release(flush->slot_of(flush_wr->wr_id));
	}
	if (failed)
		*failed = first_unposted;
	return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
}

extern "C" {

int rpma_post_batch(struct rpma_conn *conn, const struct rpma_batch_op *ops, int count, int *failed)
{
	batch_frame frame;
	if (__builtin_expect(conn != nullptr && ops != nullptr && count >= 1 &&
				 count <= RPMA_BATCH_MAX && conn->app_qp != nullptr &&
				 !conn_posts_held(conn),
			     1)) {
		if (failed)
			*failed = -1;
		return batch_post_direct(conn, ops, count, failed, &frame);
	}
	return batch_post_general(conn, ops, count, failed, &frame);
}

} /* extern "C" */
