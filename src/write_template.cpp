/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_template.cpp -- writes and their flush between two regions, checked
 * once when the template is made and posted with one doorbell
 *
 * What rpma_write() and rpma_flush() check and look up on every call (the
 * connection's mode, the regions, their keys and addresses) is checked and
 * copied once here; a post checks only its ranges. The flush method is
 * picked at every post, as rpma_flush() does, so a peer configuration
 * applied after the template was made counts.
 */

#include <cstdint>
#include <new>

#include "conn.hpp"
#include "conn_post.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"

struct rpma_write_template {
	rpma_conn *conn;
	const rpma_mr_remote *dst;
	const rpma_mr_local *src;
	rpma_flush_type type;
	/* copied from the regions: a post reads the template only */
	uint64_t dst_raddr;
	uint64_t dst_size;
	uint32_t dst_rkey;
	uintptr_t src_addr;
	uint64_t src_size;
	uint32_t src_lkey;
	/* the longest write: what both regions hold and a work request names */
	uint64_t max_len;
};

using namespace rpma;

namespace
{

/* A range of a post that does not fit its region: RPMA_E_INVAL, logged. */
[[gnu::cold]] [[gnu::noinline]] int range_refused(int i, const rpma_write_range &w,
						  const rpma_write_template *t)
{
	RPMA_LOG_ERROR("write %d of the post does not fit: [%zu, +%zu) of the source (%llu "
		       "bytes), [%zu, +%zu) of the destination (%llu bytes): nothing posted",
		       i, w.src_offset, w.len, static_cast<unsigned long long>(t->src_size),
		       w.dst_offset, w.len, static_cast<unsigned long long>(t->dst_size));
	return RPMA_E_INVAL;
}

/*
 * Every other case (a native or GPSPM flush, iWARP, an unsignaled flush):
 * the same writes and flush as one rpma_post_batch(), which makes each of
 * them ready by the general path. The ranges were checked.
 */
[[gnu::noinline]] int post_as_batch(rpma_write_template *t, const rpma_write_range *writes,
				    int count, int flags, const void *op_context)
{
	rpma_batch_op ops[RPMA_BATCH_MAX];
	/* the flush covers every write: from the lowest offset to the highest end */
	size_t low = SIZE_MAX;
	size_t high = 0;
	for (int i = 0; i < count; i++) {
		if (writes[i].dst_offset < low)
			low = writes[i].dst_offset;
		if (writes[i].dst_offset + writes[i].len > high)
			high = writes[i].dst_offset + writes[i].len;
		ops[i] = rpma_batch_op{};
		ops[i].op = RPMA_OP_WRITE;
		ops[i].flags = RPMA_F_COMPLETION_ON_ERROR;
		ops[i].op_context = op_context;
		ops[i].local = t->src;
		ops[i].local_offset = writes[i].src_offset;
		ops[i].remote = t->dst;
		ops[i].remote_offset = writes[i].dst_offset;
		ops[i].len = writes[i].len;
	}
	rpma_batch_op &flush = ops[count];
	flush = rpma_batch_op{};
	flush.op = RPMA_OP_FLUSH;
	flush.flags = flags;
	flush.op_context = op_context;
	flush.remote = t->dst;
	flush.remote_offset = low;
	flush.len = high - low;
	flush.flush_type = t->type;
	return rpma_post_batch(t->conn, ops, count + 1, nullptr);
}

} /* namespace */

extern "C" {

int rpma_write_template_new(struct rpma_conn *conn, const struct rpma_mr_remote *dst,
			    const struct rpma_mr_local *src, enum rpma_flush_type type,
			    struct rpma_write_template **tmpl_ptr)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(src != nullptr);
	RPMA_CHECK_ARG(type == RPMA_FLUSH_TYPE_PERSISTENT || type == RPMA_FLUSH_TYPE_VISIBILITY);
	RPMA_CHECK_ARG(tmpl_ptr != nullptr);
	if (!conn_takes_posts(conn))
		return RPMA_E_INVAL;

	auto *t = new (std::nothrow) rpma_write_template;
	if (t == nullptr)
		return RPMA_E_NOMEM;
	t->conn = conn;
	t->dst = dst;
	t->src = src;
	t->type = type;
	t->dst_raddr = dst->raddr;
	t->dst_size = dst->size;
	t->dst_rkey = dst->rkey;
	t->src_addr = reinterpret_cast<uintptr_t>(src->mr->addr);
	t->src_size = src->mr->length;
	t->src_lkey = src->mr->lkey;
	t->max_len = t->src_size < t->dst_size ? t->src_size : t->dst_size;
	if (t->max_len > UINT32_MAX)
		t->max_len = UINT32_MAX;
	*tmpl_ptr = t;
	return 0;
}

int rpma_write_template_delete(struct rpma_write_template **tmpl_ptr)
{
	RPMA_CHECK_ARG(tmpl_ptr != nullptr);
	delete *tmpl_ptr;
	*tmpl_ptr = nullptr;
	return 0;
}

int rpma_write_template_post(struct rpma_write_template *tmpl,
			     const struct rpma_write_range *writes, int count, int flags,
			     const void *op_context)
{
	rpma_write_template *t = tmpl;
	if (__builtin_expect(t == nullptr || writes == nullptr || count < 1 ||
				 count > RPMA_BATCH_MAX - 1 || flags == 0,
			     0)) {
		RPMA_CHECK_ARG(t != nullptr);
		RPMA_CHECK_ARG(writes != nullptr);
		RPMA_CHECK_ARG(count >= 1 && count <= RPMA_BATCH_MAX - 1);
		RPMA_CHECK_ARG(flags != 0);
	}

	/* every write checked and filled before anything is posted */
	ibv_sge sge[RPMA_BATCH_MAX];
	ibv_send_wr wr[RPMA_BATCH_MAX];
	const uint64_t wr_id = wr_id_of(op_context);
	for (int i = 0; i < count; i++) {
		const rpma_write_range &w = writes[i];
		/* len first: then neither subtraction wraps */
		if (__builtin_expect(w.len > t->max_len || w.src_offset > t->src_size - w.len ||
					 w.dst_offset > t->dst_size - w.len,
				     0))
			return range_refused(i, w, t);
		sge[i].addr = t->src_addr + w.src_offset;
		sge[i].length = static_cast<uint32_t>(w.len);
		sge[i].lkey = t->src_lkey;
		wr[i].wr_id = wr_id;
		wr[i].next = &wr[i + 1];
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = w.len ? 1 : 0; /* an empty write names no memory */
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = 0; /* a failed write completes all the same */
		wr[i].wr.rdma.remote_addr = t->dst_raddr + w.dst_offset;
		wr[i].wr.rdma.rkey = t->dst_rkey;
	}

	/* one flush of the range that covers every write */
	rpma_conn *conn = t->conn;
	/* read-after-write without a fence: what rpma_flush() posts from its fast path */
	if (__builtin_expect(!fast_read_after_write(fast_flush_methods_of(conn, t->dst, t->type)) ||
				 send_flags_of(flags) != IBV_SEND_SIGNALED,
			     0))
		return post_as_batch(t, writes, count, flags, op_context);

	/*
	 * A read anywhere in the covering range orders itself behind every
	 * write of the chain: the first write's range is inside it.
	 */
	if (__builtin_expect(!read_after_write_fill(conn->queues.flush, t->dst,
						    writes[0].dst_offset, writes[0].len, &wr[count],
						    &sge[count]),
			     0))
		return flush_of_empty_region();
	/* the flush is last: a post that fails anywhere leaves it unposted */
	return conn->post_signaled_flush(&wr[0], &wr[count], op_context);
}

} /* extern "C" */
