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

/*
 * What a flush and an atomic write request share: its place in the flow
 * control (RPMA_E_AGAIN when the target's receives are all taken), a slot
 * of kind, its sequence number, and the first 24 bytes of the request in
 * p->msg (the rest, from wire::gpspm_msg::LEN, is the caller's). p->slot is the slot.
 */
static int request_prepare(gpspm_engine *g, conn_flush *flush, const rpma_mr_remote *dst,
			   size_t offset, uint8_t type, uint8_t kind, unsigned send_flags,
			   const void *op_context, prepared_wr *p)
{
	static_assert(GPSPM_REQUEST_SIZE <= PREPARED_MSG_MAX, "a request fits a prepared_wr");

	/* flow control: never more requests than the target has receives posted */
	const uint32_t limit = g->max_in_flight.load(std::memory_order_relaxed);
	if (g->in_flight.fetch_add(1, std::memory_order_acquire) >= limit) {
		g->in_flight.fetch_sub(1, std::memory_order_relaxed);
		return RPMA_E_AGAIN;
	}
	flush_slot *slot = flush->claim(op_context, send_flags & IBV_SEND_SIGNALED, kind);
	if (slot == nullptr) {
		g->in_flight.fetch_sub(1, std::memory_order_relaxed);
		RPMA_LOG_ERROR("more signaled flushes and atomic writes in flight than the "
			       "connection's send queue and CQ can hold");
		return RPMA_E_NOMEM;
	}
	const uint32_t seq = g->next_seq.fetch_add(1, std::memory_order_relaxed);
	slot->seq = seq;
	p->slot = slot;

	gpspm_encode_request(p->msg, type, static_cast<uint32_t>(slot - flush->slots), seq,
			     dst->rkey, dst->raddr + offset);
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
	if (ret) {
		ret = RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
		flush->release(p.slot);
		gpspm_forget(g, 1);
	}
	return ret;
}

} /* namespace rpma */
