/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_post_flush.cpp -- rpma_flush(): its checks, and the path of each
 * method; a signaled read-after-write or native flush, what nearly every
 * data path posts, in a function of its own
 *
 * Nothing here allocates or takes a lock: the work requests live on the
 * caller's stack (post.hpp), and the flush slots are claimed lock-free.
 */

#include "conn.hpp"
#include "conn_post.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "mr.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

int rpma::flush_refused(const rpma_conn *conn, const rpma_mr_remote *dst, rpma_flush_type type)
{
	const char *why = "no method carries it";
	(void)choose_flush_method(conn_flush_capabilities(conn), dst, type, &why);
	RPMA_LOG_ERROR("%s", why);
	return RPMA_E_NOSUPP;
}

void rpma::flush_unprepare(rpma_conn *conn, prepared_wr *p)
{
	if (p->slot == nullptr)
		return;
	if ((p->slot->state.load(std::memory_order_relaxed) & FLUSH_SLOT_GPSPM) &&
	    conn->queues.gpspm)
		gpspm_forget(conn->queues.gpspm, 1);
	conn->queues.flush->release(p->slot);
	p->slot = nullptr;
}

/* A checked flush, made ready and posted; its slot given back if the post fails. */
[[gnu::always_inline]] static inline int flush_post(rpma_conn *conn, rpma_flush_method method,
						    const rpma_mr_remote *dst, size_t offset,
						    size_t len, rpma_flush_type type,
						    unsigned send_flags, const void *op_context)
{
	if (conn_posts_held(conn))
		return RPMA_E_AGAIN;
	prepared_wr p;
	int ret = flush_prepare(conn, method, dst, offset, len, type, send_flags, op_context, &p);
	if (__builtin_expect(ret != 0, 0))
		return ret;
	if (__builtin_expect(p.native.placement != 0, 0)) {
		ret = verbs::post_send_ex(conn->app_qp, &p.wr, &p.native);
		if (ret)
			ret = post_failed(ret, "ibv_wr_flush");
	} else {
		ret = conn->post_send(&p.wr);
	}
	if (__builtin_expect(ret != 0, 0))
		flush_unprepare(conn, &p);
	return ret;
}

/* rpma_flush() with every check that can fail spelled out: what is wrong is logged */
[[gnu::noinline]] static int flush_checked(rpma_conn *conn, rpma_mr_remote *dst, size_t dst_offset,
					   size_t len, rpma_flush_type type, int flags,
					   const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(type == RPMA_FLUSH_TYPE_PERSISTENT || type == RPMA_FLUSH_TYPE_VISIBILITY);
	RPMA_CHECK_ARG(range_fits(dst->size, dst_offset, len));
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	return flush_post(conn, flush_method_of(conn, dst, type), dst, dst_offset, len, type,
			  send_flags, op_context);
}

/* A signaled flush's post failed: its slot, which names its work request, given back. */
[[gnu::cold]] [[gnu::noinline]] static int signaled_flush_post_failed(int ret, uint64_t wr_id,
								      const char *call)
{
	flush_slot *slot = reinterpret_cast<flush_slot *>(static_cast<uintptr_t>(wr_id));
	slot->state.store(0, std::memory_order_release);
	return post_failed(ret, call);
}

/*
 * A signaled flush filled in wr (native: and in *native), whose next slot
 * was taken: a slot searched for, and the flush posted. Out of line, so
 * that the common path keeps nothing across a call.
 */
[[gnu::noinline]] static int signaled_flush_post_searching(rpma_conn *conn, ibv_send_wr *wr,
							   const verbs::native_flush_wr *native,
							   const void *op_context)
{
	if (flush_claim_signaled(conn->queues.flush, op_context, wr) == nullptr)
		return flush_slots_exhausted();
	ibv_send_wr *bad_wr;
	const int ret = native ? verbs::post_send_ex(conn->app_qp, wr, native)
			       : verbs::post_send(conn->app_qp, wr, &bad_wr);
	if (__builtin_expect(ret != 0, 0))
		return signaled_flush_post_failed(ret, wr->wr_id,
						  native ? "ibv_wr_flush" : "ibv_post_send");
	return 0;
}

/*
 * The two flushes of nearly every data path, each a function of its own
 * that rpma_flush() enters by a jump once its checks passed: the work
 * request filled on the stack, the slot claimed, one post. Nothing lives
 * across the post but the work request, whose wr_id names the slot to give
 * back if the post fails, so no register is saved for it. Each takes
 * rpma_flush()'s first parameters where they are, and op_context in a
 * register: the jump moves one.
 *
 * The signaled read-after-write flush of a non-empty range, not on iWARP
 * (no fence).
 */
RPMA_JUMP_TARGET static int flush_read_after_write_signaled(rpma_conn *conn,
							    const rpma_mr_remote *dst,
							    size_t offset, size_t len,
							    const void *op_context)
{
	ibv_sge sge;
	ibv_send_wr wr;
	conn_flush *flush = conn->queues.flush;
	ibv_qp *qp = conn->app_qp;
	if (len == 0)
		__builtin_unreachable(); /* rpma_flush() sends an empty range elsewhere */
	(void)read_after_write_fill(flush, dst, offset, len, &wr, &sge);
	if (__builtin_expect(flush_claim_next_signaled(flush, op_context, &wr) == nullptr, 0))
		return signaled_flush_post_searching(conn, &wr, nullptr, op_context);
	ibv_send_wr *bad_wr;
	const int ret = verbs::post_send(qp, &wr, &bad_wr);
	if (__builtin_expect(ret != 0, 0))
		return signaled_flush_post_failed(ret, wr.wr_id, "ibv_post_send");
	return 0;
}

/* The signaled native flush: what verbs::post_send_ex() reads of it, filled. */
RPMA_JUMP_TARGET static int flush_native_signaled(rpma_conn *conn, const rpma_mr_remote *dst,
						  size_t offset, size_t len, rpma_flush_type type,
						  const void *op_context)
{
	ibv_send_wr wr;
	verbs::native_flush_wr native;
	conn_flush *flush = conn->queues.flush;
	ibv_qp *qp = conn->app_qp;
	native_flush_fill(dst, offset, len, type, &wr, &native);
	if (__builtin_expect(flush_claim_next_signaled(flush, op_context, &wr) == nullptr, 0))
		return signaled_flush_post_searching(conn, &wr, &native, op_context);
	const int ret = verbs::post_send_ex(qp, &wr, &native);
	if (__builtin_expect(ret != 0, 0))
		return signaled_flush_post_failed(ret, wr.wr_id, "ibv_wr_flush");
	return 0;
}

/*
 * The signaled GPSPM flush, where fast_flush_methods says GPSPM is the
 * method: its request built and posted by the engine (gpspm_flush_signaled()).
 */
RPMA_JUMP_TARGET static int flush_gpspm_signaled(rpma_conn *conn, const rpma_mr_remote *dst,
						 size_t offset, size_t len, const void *op_context)
{
	if (conn_posts_held(conn))
		return RPMA_E_AGAIN;
	return gpspm_flush_signaled(conn->queues.gpspm, conn->queues.flush, dst, offset, len,
				    op_context);
}

/*
 * Every other flush that passed rpma_flush()'s checks: out of line, for the
 * two above. A flush no method carries is refused, and logged, by the
 * checked path.
 */
RPMA_JUMP_TARGET static int flush_general(rpma_conn *conn, rpma_mr_remote *dst, size_t offset,
					  size_t len, rpma_flush_type type, int flags,
					  const void *op_context)
{
	const rpma_flush_method method = flush_method_of(conn, dst, type);
	if (method == RPMA_FLUSH_METHOD_NONE)
		return flush_checked(conn, dst, offset, len, type, flags, op_context);
	return flush_post(conn, method, dst, offset, len, type, send_flags_of(flags), op_context);
}

extern "C" {

int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
	       enum rpma_flush_type type, int flags, const void *op_context)
{
	/*
	 * The checks of flush_checked(), in one expression: every flush makes
	 * them. conn_takes_posts() is in the methods: none where the
	 * application may not post.
	 */
	if (__builtin_expect(
		conn == nullptr || dst == nullptr || flags == 0 ||
		    (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY) ||
		    !range_fits(dst->size, dst_offset, len),
		0))
		return flush_checked(conn, dst, dst_offset, len, type, flags, op_context);

	const uint8_t both = fast_flush_methods_of(conn, dst, type);
	/*
	 * signaled, and best_flush_method() is read-after-write, and nothing of
	 * it needs more (no fenced write: fast_flush_methods, no empty range)
	 */
	if (__builtin_expect(send_flags_of(flags) == IBV_SEND_SIGNALED &&
				 fast_read_after_write(both) && len != 0,
			     1))
		return flush_read_after_write_signaled(conn, dst, dst_offset, len, op_context);
	if (send_flags_of(flags) == IBV_SEND_SIGNALED && (both & METHODS_NATIVE_FLUSH))
		return flush_native_signaled(conn, dst, dst_offset, len, type, op_context);
	if (send_flags_of(flags) == IBV_SEND_SIGNALED && fast_gpspm(both))
		return flush_gpspm_signaled(conn, dst, dst_offset, len, op_context);
	return flush_general(conn, dst, dst_offset, len, type, flags, op_context);
}

int rpma_conn_get_flush_method(const struct rpma_conn *conn, const struct rpma_mr_remote *dst,
			       enum rpma_flush_type type, enum rpma_flush_method *method)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(type == RPMA_FLUSH_TYPE_PERSISTENT || type == RPMA_FLUSH_TYPE_VISIBILITY);
	RPMA_CHECK_ARG(method != nullptr);

	const char *why = nullptr;
	*method = choose_flush_method(conn_flush_capabilities(conn), dst, type, &why);
	return *method == RPMA_FLUSH_METHOD_NONE ? RPMA_E_NOSUPP : 0;
}

} /* extern "C" */
