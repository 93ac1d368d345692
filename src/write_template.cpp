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
 *
 * The common post (up to PREBUILT_WRITES writes, a read-after-write flush
 * that completes) fills in only what differs between posts: the chain is
 * built when the template is made, and each post claims it. A post of one
 * write, the most common, has a path of its own (rpma_write_template_post),
 * one of several writes another (post_chained). A post that finds the
 * chain claimed by another thread builds its chain on its stack, as every
 * other post does (post_on_stack).
 */

#include <atomic>
#include <cstdint>

#include "conn.hpp"
#include "conn_post.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "runtime.hpp"

namespace
{

/*
 * The most writes of a post that takes the prebuilt chain: a flush every 16
 * writes or more often is the common case; a chain of 63 would make every
 * template 9 KiB.
 */
constexpr int PREBUILT_WRITES = 16;

/* a write of the prebuilt chain: its work request and the memory it names, together */
struct prebuilt_write {
	ibv_send_wr wr;
	ibv_sge sge;
};

} /* namespace */

struct rpma_write_template {
	rpma_conn *conn;
	/* the connection's queue pair and flush slots, which a post reaches through it otherwise */
	ibv_qp *qp;
	rpma::conn_flush *flush;
	const rpma_mr_remote *dst;
	const rpma_mr_local *src;
	rpma_flush_type type;
	/*
	 * The connection's methods of type, which its peer configuration can
	 * change, and what the destination offers for it, which is fixed: a
	 * post ands the two, as rpma_flush() does.
	 */
	const std::atomic<uint8_t> *conn_methods;
	uint8_t dst_offer;
	/* copied from the regions when the template is made */
	uint64_t dst_raddr;
	uint64_t dst_size;
	uint32_t dst_rkey;
	uintptr_t src_addr;
	uint64_t src_size;
	uint32_t src_lkey;
	/* the longest write: what both regions hold and a work request names */
	uint64_t max_len;

	/*
	 * The chain of the common post, every constant field and every link
	 * set: chain[i] links to chain[i + 1], and the last write to the
	 * flush's read (read_wr with read_sge). A post of n writes claims it
	 * whole (chain_busy), fills in the last n writes (their ranges and
	 * contexts) and the read's range, and posts from
	 * chain[PREBUILT_WRITES - n]: no link changes from post to post.
	 */
	std::atomic<bool> chain_busy;
	/*
	 * Where the provider names the work request a post of the chain failed
	 * at: the chain's holder owns it, as it owns the chain, and a post
	 * that keeps it here needs no stack frame of its own.
	 */
	ibv_send_wr *chain_bad_wr;
	ibv_send_wr read_wr;
	ibv_sge read_sge;
	prebuilt_write chain[PREBUILT_WRITES];
};

using namespace rpma;

namespace
{

/* Whether a write of a post goes past a region, or past what one work request names. */
[[gnu::always_inline]] inline bool range_too_far(const rpma_write_template *t,
						 const rpma_write_range &w)
{
	/* len first: then neither subtraction wraps */
	return w.len > t->max_len || w.src_offset > t->src_size - w.len ||
	       w.dst_offset > t->dst_size - w.len;
}

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
 * Whether a post's flush is the read-after-write that the template's chain
 * ends with: fast_flush_methods_of() of the template's connection,
 * destination and type.
 */
[[gnu::always_inline]] inline bool chain_method_holds(const rpma_write_template *t)
{
	return fast_read_after_write(t->conn_methods->load(std::memory_order_relaxed) &
				     t->dst_offer);
}

/*
 * Sets up a write of a chain: every field that is the same for each post
 * of the template (prebuilt_fill() does the rest), linked to next.
 */
inline void write_init(const rpma_write_template *t, prebuilt_write *p, ibv_send_wr *next)
{
	p->sge.lkey = t->src_lkey;
	p->wr.next = next;
	p->wr.sg_list = &p->sge;
	p->wr.opcode = IBV_WR_RDMA_WRITE;
	p->wr.send_flags = 0; /* a failed write completes all the same */
	p->wr.wr.rdma.rkey = t->dst_rkey;
}

/*
 * Fills in what changes from post to post of a write that write_init() set
 * up, of a range that fits; the write's remote address.
 */
[[gnu::always_inline]] inline uint64_t prebuilt_set(const rpma_write_template *t, prebuilt_write *p,
						    const rpma_write_range &w, uint64_t wr_id)
{
	const uint64_t raddr = t->dst_raddr + w.dst_offset;
	p->sge.addr = t->src_addr + w.src_offset;
	p->sge.length = static_cast<uint32_t>(w.len);
	p->wr.wr_id = wr_id;
	p->wr.num_sge = w.len ? 1 : 0; /* an empty write names no memory */
	p->wr.wr.rdma.remote_addr = raddr;
	return raddr;
}

/* prebuilt_set() of a range checked first: false, and nothing filled, for a range too far */
[[gnu::always_inline]] inline bool prebuilt_fill(const rpma_write_template *t, prebuilt_write *p,
						 const rpma_write_range &w, uint64_t wr_id)
{
	if (__builtin_expect(range_too_far(t, w), 0))
		return false;
	(void)prebuilt_set(t, p, w, wr_id);
	return true;
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

/*
 * Every post that does not take the template's chain: its arguments
 * checked, its chain built on the stack; the writes and a read-after-write
 * flush posted as one chain, any other case as a batch.
 */
[[gnu::noinline]] int post_on_stack(rpma_write_template *t, const rpma_write_range *writes,
				    int count, int flags, const void *op_context)
{
	RPMA_CHECK_ARG(t != nullptr);
	RPMA_CHECK_ARG(writes != nullptr);
	RPMA_CHECK_ARG(count >= 1 && count <= RPMA_BATCH_MAX - 1);
	RPMA_CHECK_ARG(flags != 0);

	/* every write checked and filled before anything is posted, the read after the last */
	prebuilt_write chain[RPMA_BATCH_MAX - 1];
	ibv_send_wr read_wr;
	ibv_sge read_sge;
	const uint64_t wr_id = wr_id_of(op_context);
	for (int i = 0; i < count; i++) {
		write_init(t, &chain[i], i + 1 < count ? &chain[i + 1].wr : &read_wr);
		if (__builtin_expect(!prebuilt_fill(t, &chain[i], writes[i], wr_id), 0))
			return range_refused(i, writes[i], t);
	}

	/* one flush of the range that covers every write */
	rpma_conn *conn = t->conn;
	/* read-after-write without a fence: what rpma_flush() posts from its fast path */
	if (__builtin_expect(!chain_method_holds(t) || send_flags_of(flags) != IBV_SEND_SIGNALED,
			     0))
		return post_as_batch(t, writes, count, flags, op_context);

	/*
	 * A read anywhere in the covering range orders itself behind every
	 * write of the chain: the first write's range is inside it.
	 */
	if (__builtin_expect(!read_after_write_fill(t->flush, t->dst, writes[0].dst_offset,
						    writes[0].len, &read_wr, &read_sge),
			     0))
		return flush_of_empty_region();
	/* the flush is last: a post that fails anywhere leaves it unposted */
	return conn->post_signaled_flush(&chain[0].wr, &read_wr, op_context);
}

/*
 * The chain of the common post, built when the template is made: every
 * field a post does not fill in (rpma_write_template_post()).
 */
void chain_build(rpma_write_template *t)
{
	const conn_flush *flush = t->flush;
	for (int i = 0; i < PREBUILT_WRITES; i++) {
		t->chain[i] = prebuilt_write{};
		write_init(t, &t->chain[i],
			   i + 1 < PREBUILT_WRITES ? &t->chain[i + 1].wr : &t->read_wr);
	}
	t->read_sge = ibv_sge{};
	t->read_sge.addr = reinterpret_cast<uintptr_t>(flush->sink);
	t->read_sge.lkey = flush->sink_lkey;
	t->read_wr = ibv_send_wr{};
	t->read_wr.sg_list = &t->read_sge;
	t->read_wr.num_sge = 1;
	t->read_wr.opcode = IBV_WR_RDMA_READ;
	t->read_wr.send_flags = IBV_SEND_SIGNALED;
	t->read_wr.wr.rdma.rkey = t->dst_rkey;
	t->chain_busy.store(false, std::memory_order_relaxed);
}

/* The common post gives the chain back: posted or not. */
inline void chain_release(rpma_write_template *t)
{
	t->chain_busy.store(false, std::memory_order_release);
}

/* range_refused() of a post that holds the chain: the chain given back first */
[[gnu::cold]] [[gnu::noinline]] int chain_range_refused(int i, const rpma_write_range &w,
							rpma_write_template *t)
{
	chain_release(t);
	return range_refused(i, w, t);
}

/* The post of a chain failed: its read's slot, which its wr_id names, and the chain given back. */
[[gnu::cold]] [[gnu::noinline]] int chain_post_failed(rpma_write_template *t, int ret)
{
	t->flush->release(reinterpret_cast<flush_slot *>(static_cast<uintptr_t>(t->read_wr.wr_id)));
	chain_release(t);
	return post_failed(ret, "ibv_post_send");
}

/* The chain posted from head, its read's slot taken; the chain given back. */
[[gnu::always_inline]] inline int chain_post_claimed(rpma_write_template *t, ibv_send_wr *head,
						     flush_slot *slot)
{
	t->read_wr.wr_id = t->flush->wr_id_of(slot);
	/* the flush is last: a post that fails anywhere leaves it unposted */
	const int ret = verbs::post_send(t->qp, head, &t->chain_bad_wr);
	if (__builtin_expect(ret != 0, 0))
		return chain_post_failed(t, ret);
	chain_release(t);
	return 0;
}

/* chain_post() whose next slot was taken: every slot looked at. Out of line, for its sake. */
[[gnu::noinline]] int chain_post_searching(rpma_write_template *t, ibv_send_wr *head,
					   const void *op_context)
{
	flush_slot *slot = t->flush->claim_searching(op_context, true, 0);
	if (slot == nullptr) {
		chain_release(t);
		return flush_slots_exhausted();
	}
	return chain_post_claimed(t, head, slot);
}

/*
 * The chain, filled in from head to the read, posted with its read's slot
 * claimed: nothing but the template lives across the post, whose read's
 * wr_id names the slot to give back if it fails.
 */
[[gnu::always_inline]] inline int chain_post(rpma_write_template *t, ibv_send_wr *head,
					     const void *op_context)
{
	flush_slot *slot = t->flush->claim_next(op_context, true, 0);
	if (__builtin_expect(slot == nullptr, 0))
		return chain_post_searching(t, head, op_context);
	return chain_post_claimed(t, head, slot);
}

/*
 * A post of up to PREBUILT_WRITES writes and a read-after-write flush that
 * completes, through the prebuilt chain when no other post holds it; every
 * other post is post_on_stack()'s. Out of line, for the single write's sake.
 */
[[gnu::noinline]] int post_chained(rpma_write_template *t, const rpma_write_range *writes,
				   int count, int flags, const void *op_context)
{
	if (__builtin_expect(t == nullptr || writes == nullptr ||
				 static_cast<unsigned>(count - 1) >= PREBUILT_WRITES ||
				 flags != RPMA_F_COMPLETION_ALWAYS || !chain_method_holds(t) ||
				 t->chain_busy.exchange(true, std::memory_order_acquire),
			     0))
		return post_on_stack(t, writes, count, flags, op_context);

	/* every write checked and filled in before anything is posted: the chain's last count */
	const uint64_t wr_id = wr_id_of(op_context);
	prebuilt_write *head = &t->chain[PREBUILT_WRITES - count];
	for (int i = 0; i < count; i++)
		if (__builtin_expect(!prebuilt_fill(t, &head[i], writes[i], wr_id), 0))
			return chain_range_refused(i, writes[i], t);

	/*
	 * A read anywhere in the covering range orders itself behind every
	 * write of the chain: the first write's range is inside it.
	 */
	if (__builtin_expect(!read_after_write_range(t->dst, writes[0].dst_offset, writes[0].len,
						     &t->read_wr.wr.rdma.remote_addr,
						     &t->read_sge.length),
			     0)) {
		chain_release(t);
		return flush_of_empty_region();
	}
	return chain_post(t, &head->wr, op_context);
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

	auto *t = rpma::make<rpma_write_template>();
	if (t == nullptr)
		return RPMA_E_NOMEM;
	t->conn = conn;
	t->qp = conn->app_qp;
	t->flush = conn->queues.flush;
	t->dst = dst;
	t->src = src;
	t->type = type;
	t->conn_methods = &conn->fast_flush_methods[type];
	t->dst_offer = dst->flush_offer[type];
	t->dst_raddr = dst->raddr;
	t->dst_size = dst->size;
	t->dst_rkey = dst->rkey;
	t->src_addr = reinterpret_cast<uintptr_t>(src->mr->addr);
	t->src_size = src->mr->length;
	t->src_lkey = src->mr->lkey;
	t->max_len = t->src_size < t->dst_size ? t->src_size : t->dst_size;
	if (t->max_len > UINT32_MAX)
		t->max_len = UINT32_MAX;
	chain_build(t);
	*tmpl_ptr = t;
	return 0;
}

int rpma_write_template_delete(struct rpma_write_template **tmpl_ptr)
{
	RPMA_CHECK_ARG(tmpl_ptr != nullptr);
	rpma::destroy(*tmpl_ptr);
	*tmpl_ptr = nullptr;
	return 0;
}

/*
 * The common post: one write and a read-after-write flush that completes,
 * through the prebuilt chain when no other post holds it. Every other post
 * is post_chained()'s or post_on_stack()'s.
 */
int rpma_write_template_post(struct rpma_write_template *tmpl,
			     const struct rpma_write_range *writes, int count, int flags,
			     const void *op_context)
{
	rpma_write_template *t = tmpl;
	if (__builtin_expect(t == nullptr || writes == nullptr || count != 1 ||
				 flags != RPMA_F_COMPLETION_ALWAYS || !chain_method_holds(t),
			     0))
		return post_chained(t, writes, count, flags, op_context);
	/*
	 * Read before the chain is claimed, whose exchange would have them
	 * read again. An empty write (whose flush reads a byte beside it) or
	 * one that does not fit (logged) is post_on_stack()'s.
	 */
	const rpma_write_range w = writes[0];
	if (__builtin_expect(w.len == 0 || range_too_far(t, w) ||
				 t->chain_busy.exchange(true, std::memory_order_acquire),
			     0))
		return post_on_stack(t, writes, count, flags, op_context);

	prebuilt_write *head = &t->chain[PREBUILT_WRITES - 1];
	/* the read orders itself behind the write from inside its range */
	t->read_wr.wr.rdma.remote_addr = prebuilt_set(t, head, w, wr_id_of(op_context));
	t->read_sge.length = read_after_write_len(w.len);
	return chain_post(t, &head->wr, op_context);
}

} /* extern "C" */
