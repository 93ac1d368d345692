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

extern "C" {

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

} /* extern "C" */
