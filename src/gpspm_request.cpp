/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_request.cpp -- the initiator's GPSPM requests: a flush or an atomic
 * write, its place in the flow control, its slot and its bytes
 */

#include <cstring>

#include "err.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "verbs/verbs.hpp"
#include "wire.hpp"

namespace rpma
{

/* No slot was free for a request: its place in the flow control given back. */
[[gnu::cold]] [[gnu::noinline]] static int no_slot_for_request(gpspm_engine *g)
{
	g->in_flight.fetch_sub(1, std::memory_order_relaxed);
	RPMA_LOG_ERROR("more signaled flushes and atomic writes in flight than the "
		       "connection's send queue and CQ can hold");
	return RPMA_E_NOMEM;
}

/*
 * What every request takes first: its place in the flow control, a slot
 * of kind and its sequence number, in the slot. NULL and *err when there
 * is none: RPMA_E_AGAIN when the target's receives are all taken,
 * RPMA_E_NOMEM when no slot is free. Inline: a flush's post makes no other
 * call before its own.
 */
[[gnu::always_inline]] static inline flush_slot *request_claim(gpspm_engine *g, conn_flush *flush,
							       uint8_t kind, bool signaled,
							       const void *op_context, int *err)
{
	/* flow control: never more requests than the target has receives posted */
	const uint32_t limit = g->max_in_flight.load(std::memory_order_relaxed);
	if (__builtin_expect(g->in_flight.fetch_add(1, std::memory_order_acquire) >= limit, 0)) {
		g->in_flight.fetch_sub(1, std::memory_order_relaxed);
		*err = RPMA_E_AGAIN;
		return nullptr;
	}
	flush_slot *slot = flush->claim(op_context, signaled, kind);
	if (__builtin_expect(slot == nullptr, 0)) {
		*err = no_slot_for_request(g);
		return nullptr;
	}
	slot->seq = g->next_seq.fetch_add(1, std::memory_order_relaxed);
	return slot;
}

/*
 * The first 24 bytes of a request of type for slot into msg: the rest,
 * from wire::gpspm_msg::LEN, is the caller's.
 */
static inline void request_encode(uint8_t *msg, uint8_t type, const conn_flush *flush,
				  const flush_slot *slot, const rpma_mr_remote *dst, size_t offset)
{
	gpspm_encode_request(msg, type, static_cast<uint32_t>(slot - flush->slots), slot->seq,
			     dst->rkey, dst->raddr + offset);
}

/*
 * A request's post failed: its slot and its place in the flow control given
 * back, the provider's failure logged
 */
[[gnu::cold]] [[gnu::noinline]] static int request_post_failed(gpspm_engine *g, conn_flush *flush,
							       flush_slot *slot, int ret)
{
	ret = RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
	flush->release(slot);
	gpspm_forget(g, 1);
	return ret;
}

/*
 * What a flush prepared for rpma_post_batch and an atomic write share: the
 * request's claim and its first 24 bytes in p->msg, p->slot its slot.
 */
static int request_prepare(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst,
			   size_t offset, uint8_t type, uint8_t kind, unsigned send_flags,
			   const void *op_context, prepared_wr *p)
{
	static_assert(GPSPM_REQUEST_SIZE <= PREPARED_MSG_MAX, "a request fits a prepared_wr");

	int err;
	flush_slot *slot =
	    request_claim(g, flush, kind, send_flags & IBV_SEND_SIGNALED, op_context, &err);
	if (slot == nullptr)
		return err;
	p->slot = slot;
	request_encode(p->msg, type, flush, slot, dst, offset);
	return 0;
}

int gpspm_flush_prepare(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst,
			size_t offset, size_t len, unsigned send_flags, const void *op_context,
			prepared_wr *p)
{
	int ret = request_prepare(g, flush, dst, offset, GPSPM_REQUEST, FLUSH_SLOT_GPSPM,
				  send_flags, op_context, p);
	if (ret)
		return ret;
	gpspm_encode_len(p->msg, len);
	gpspm_prepare_message(p->msg, GPSPM_REQUEST_SIZE, flush->wr_id_of(p->slot), &p->wr,
			      &p->sge);
	return 0;
}

int gpspm_flush_signaled(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst,
			 size_t offset, size_t len, const void *op_context)
{
	int ret;
	flush_slot *slot = request_claim(g, flush, FLUSH_SLOT_GPSPM, true, op_context, &ret);
	if (__builtin_expect(slot == nullptr, 0))
		return ret;
	/* sent inline: the bytes are copied at the post */
	uint8_t msg[GPSPM_REQUEST_SIZE];
	request_encode(msg, GPSPM_REQUEST, flush, slot, dst, offset);
	gpspm_encode_len(msg, len);
	ibv_sge sge;
	ibv_send_wr wr;
	gpspm_prepare_message(msg, GPSPM_REQUEST_SIZE, flush->wr_id_of(slot), &wr, &sge);
	ibv_send_wr *bad_wr;
	ret = verbs::post_send(g->qp, &wr, &bad_wr);
	if (__builtin_expect(ret != 0, 0))
		return request_post_failed(g, flush, slot, ret);
	return 0;
}

int gpspm_atomic_write(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst, size_t offset,
		       const char src[8], unsigned send_flags, const void *op_context)
{
	if (g->fenced.load(std::memory_order_acquire)) {
		RPMA_LOG_ERROR("the target refused a GPSPM flush of this connection: an atomic "
			       "write would commit what never became durable, refused");
		return RPMA_E_NOSUPP;
	}
	if (!(remote_flush_methods(dst) & METHOD_GPSPM)) {
		RPMA_LOG_WARNING("an atomic write must land after the GPSPM flushes before it, "
				 "whose answers have not come, and its region offers no GPSPM to "
				 "carry it behind them: take their completions and post it again");
		return RPMA_E_AGAIN;
	}

	prepared_wr p;
	int ret = request_prepare(g, flush, dst, offset, GPSPM_ATOMIC_WRITE,
				  FLUSH_SLOT_GPSPM | FLUSH_SLOT_WRITE, send_flags, op_context, &p);
	if (ret)
		return ret;
	memcpy(p.msg + wire::gpspm_msg::VALUE, src, 8);
	gpspm_prepare_message(p.msg, GPSPM_REQUEST_SIZE, flush->wr_id_of(p.slot), &p.wr, &p.sge);
	ibv_send_wr *bad_wr;
	ret = verbs::post_send(g->qp, &p.wr, &bad_wr);
	if (ret)
		return request_post_failed(g, flush, p.slot, ret);
	return 0;
}

} /* namespace rpma */
