/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm.cpp -- the GPSPM engine at work: receives, answers, serving, and the
 * completions kept in post order (the engine is made in gpspm_setup.cpp, the
 * requests are gpspm_request.cpp's, the thread gpspm_thread.cpp's)
 */

#include <cerrno>

#include "clock.hpp"
#include "err.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"
#include "wire.hpp"

namespace rpma
{

namespace
{

uint64_t wr_id_at(const gpspm_engine *g, uint32_t index)
{
	return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(g->buffers) +
				     static_cast<uintptr_t>(index) * GPSPM_SLOT_SIZE);
}

/* the wr_id of answers: the buffer after the receive buffers */
uint64_t answer_wr_id(const gpspm_engine *g)
{
	return wr_id_at(g, g->depth);
}

uint32_t index_of(const gpspm_engine *g, uint64_t wr_id)
{
	return static_cast<uint32_t>(
	    (static_cast<uintptr_t>(wr_id) - reinterpret_cast<uintptr_t>(g->buffers)) /
	    GPSPM_SLOT_SIZE);
}

/* inline: every request served and every answer taken posts its buffer again */
[[gnu::always_inline]] inline int post_receive(gpspm_engine *g, uint32_t index)
{
	/* every field of both is set: nothing to clear first */
	ibv_sge sge;
	sge.addr = wr_id_at(g, index);
	sge.length = GPSPM_SLOT_SIZE;
	sge.lkey = g->buffers_mr->lkey;
	ibv_recv_wr wr;
	wr.wr_id = sge.addr;
	wr.next = nullptr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ibv_recv_wr *bad_wr;
	int ret = verbs::post_recv(g->qp, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_recv");
	return 0;
}

/* A decoded message's receive buffer, posted again: a failure is logged and costs one buffer */
[[gnu::always_inline]] inline void repost_receive(gpspm_engine *g, uint64_t wr_id)
{
	if (post_receive(g, index_of(g, wr_id)))
		RPMA_LOG_ERROR("a GPSPM receive buffer could not be posted again");
}

int post_message(gpspm_engine *g, const uint8_t *msg, uint32_t len, uint64_t wr_id)
{
	ibv_sge sge;
	ibv_send_wr wr;
	gpspm_prepare_message(msg, len, wr_id, &wr, &sge);
	ibv_send_wr *bad_wr;
	int ret = verbs::post_send(g->qp, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
	return 0;
}

/*
 * An answer did not reach the initiator, whose flush would wait for it
 * forever and keep its place in the flow control: the connection is
 * closed, so that the initiator's outstanding flushes fail instead.
 */
void answer_lost(gpspm_engine *g)
{
	RPMA_LOG_ERROR("a GPSPM answer did not go out: closing the connection, so that the "
		       "initiator's flush fails rather than waits");
	if (verbs::disconnect(g->id))
		(void)RPMA_PROVIDER_FAILED(errno, "rdma_disconnect");
}

void answer_as(gpspm_engine *g, uint32_t slot, uint32_t seq, uint8_t status, uint64_t wr_id)
{
	uint8_t msg[GPSPM_ANSWER_SIZE];
	gpspm_encode_answer(msg, slot, seq, status);
	if (post_message(g, msg, sizeof(msg), wr_id))
		answer_lost(g);
}

inline void answer(gpspm_engine *g, uint32_t slot, uint32_t seq, uint8_t status)
{
	answer_as(g, slot, seq, status, answer_wr_id(g));
}

/*
 * A request of the peer's not served, for whatever reason (logged where it
 * was found). The last refusal the peer gets closes the connection once
 * its answer went out (handle_sent_or_failed()): a disconnect now would
 * move the queue pair to the error state, and the answer still in the
 * send queue would be flushed, never sent.
 */
[[gnu::cold, gnu::noinline]] void refuse(gpspm_engine *g, uint32_t slot, uint32_t seq)
{
	const bool last = gpspm_count_refusal(g);
	answer_as(g, slot, seq, GPSPM_REFUSED, last ? g->closing_answer_wr_id() : answer_wr_id(g));
}

/* A flush request from the peer, decoded. */
void serve(gpspm_engine *g, const gpspm_message &m)
{
	const uint8_t status =
	    gpspm_registry_persist(&g->peer->gpspm_regions, &g->scope, m.rkey, m.raddr, m.len);
	if (__builtin_expect(status != GPSPM_OK, 0)) {
		/* what the peer commits from now on would cover a range that is not durable */
		g->serving_fenced = true;
		refuse(g, m.slot, m.seq);
		return;
	}
	answer(g, m.slot, m.seq, GPSPM_OK);
}

/* An atomic write request from the peer, decoded: after every request before it. */
void serve_atomic_write(gpspm_engine *g, const gpspm_message &m)
{
	uint8_t status = GPSPM_FENCED;
	if (g->serving_fenced)
		RPMA_LOG_ERROR("GPSPM atomic write after a refused flush: refused");
	else
		status = gpspm_registry_atomic_write(&g->peer->gpspm_regions, &g->scope, m.rkey,
						     m.raddr, m.value);
	status == GPSPM_OK ? answer(g, m.slot, m.seq, GPSPM_OK) : refuse(g, m.slot, m.seq);
}

/* Keeps c until its turn comes, among the others in key order. */
void hold(gpspm_engine *g, const ibv_wc &c, bool is_flush, uint64_t key)
{
	if (g->held_count == g->held_capacity) {
		/* cannot happen: posts stop at hold_limit, room is kept beyond it */
		RPMA_LOG_FATAL("no room to hold a completion for its turn: it is lost");
		return;
	}
	uint32_t at = g->held_count;
	while (at > 0 && g->held[at - 1].key > key)
		at--;
	memmove(&g->held[at + 1], &g->held[at], (g->held_count - at) * sizeof(g->held[0]));
	g->held[at].wc = c;
	g->held[at].key = key;
	g->held[at].is_flush = is_flush;
	g->held_count++;
	if (__builtin_expect(g->held_count >= g->hold_limit, 0))
		gpspm_gate_update(g);
}

/* Whether a completion with key goes to out now: nothing held before it, room, its turn. */
[[gnu::always_inline]] inline bool emits_now(const gpspm_engine *g, uint64_t key,
					     const completion_out *out)
{
	return g->held_count == 0 && !out->full() && gpspm_turn_has_come(g, key);
}

/* c, whose place in post order key says, to the application now or later. */
void emit(gpspm_engine *g, const ibv_wc &c, bool is_flush, uint64_t key, completion_out *out)
{
	if (emits_now(g, key, out)) {
		out->put(c, is_flush);
		return;
	}
	hold(g, c, is_flush, key);
}

/* emit_slot_completion() of a completion whose turn has not come: held */
[[gnu::noinline]] void hold_slot_completion(gpspm_engine *g, const void *op_context, bool write,
					    ibv_wc_status status, uint64_t key)
{
	ibv_wc c;
	const bool is_flush = library_slot_completion(op_context, write, status, g->qp->qp_num, &c);
	hold(g, c, is_flush, key);
}

/*
 * The completion of what a slot carried (library_slot_completion()), whose
 * place in post order key says: made where out keeps it when it may go to
 * the application now, rather than copied there, or held for its turn.
 * Inline: an answer makes one for nearly every flush of an initiator.
 */
[[gnu::always_inline]] inline void emit_slot_completion(gpspm_engine *g, const void *op_context,
							bool write, ibv_wc_status status,
							uint64_t key, completion_out *out)
{
	if (__builtin_expect(emits_now(g, key, out), 1)) {
		out->made(
		    library_slot_completion(op_context, write, status, g->qp->qp_num, out->next()));
		return;
	}
	hold_slot_completion(g, op_context, write, status, key);
}

/* the key of a request's own completion: after what was posted before it */
uint64_t request_key(uint64_t sent_index)
{
	return 2 * sent_index + 1;
}

/*
 * The queue pair failed: every request that went out and whose answer has
 * not come gets an error completion now, since no answer can come any
 * more. A request whose send has not completed yet gets its error from
 * that completion.
 */
void fail_in_flight(gpspm_engine *g, conn_flush *flush, ibv_wc_status status, completion_out *out)
{
	g->broken.store(true, std::memory_order_release);
	const uint8_t waiting = FLUSH_SLOT_IN_USE | FLUSH_SLOT_GPSPM | FLUSH_SLOT_SENT;
	/* in post order: from the oldest claim of the round robin (flush_slots.cpp's sweep) */
	const uint32_t oldest = flush->next_slot.load(std::memory_order_relaxed);
	for (uint32_t i = 0; i <= flush->slots_mask; i++) {
		flush_slot *slot = &flush->slots[(oldest + i) & flush->slots_mask];
		const uint8_t state = slot->state.load(std::memory_order_acquire);
		if ((state & (waiting | FLUSH_SLOT_COMPLETED)) != waiting)
			continue;
		const void *op_context = slot->op_context;
		const uint64_t key = request_key(slot->sent_index);
		const uint8_t prev = slot->state.fetch_or(FLUSH_SLOT_COMPLETED);
		if (prev & FLUSH_SLOT_COMPLETED)
			continue;
		g->in_flight.fetch_sub(1, std::memory_order_relaxed);
		flush->release(slot);
		emit_slot_completion(g, op_context, state & FLUSH_SLOT_WRITE, status, key, out);
	}
}

/*
 * A request whose answer came before its send's completion, now that the
 * send has completed: its completion, if the answer made one, then the slot.
 */
void emit_held_answer(gpspm_engine *g, conn_flush *flush, flush_slot *slot, uint8_t prev,
		      uint64_t key, completion_out *out)
{
	const void *op_context = slot->op_context;
	const uint8_t status = slot->answer_status;
	flush->release(slot);
	if (!(prev & FLUSH_SLOT_ANSWER_HELD))
		return;
	emit_slot_completion(g, op_context, prev & FLUSH_SLOT_WRITE, gpspm_answer_wc_status(status),
			     key, out);
}

/*
 * An answer to one of this side's requests, decoded: the slot and sequence
 * number it echoes, the target's status. Inline: gpspm_handle()'s path of
 * an answer, what every flush of an initiator takes.
 */
[[gnu::always_inline]] inline void on_answer(gpspm_engine *g, conn_flush *flush, uint32_t index,
					     uint32_t seq, uint8_t status, completion_out *out)
{
	/* answers come in the order their requests were posted: one more is in */
	g->answers_in++;
	const uint8_t asked = FLUSH_SLOT_IN_USE | FLUSH_SLOT_GPSPM;
	flush_slot *slot = index <= flush->slots_mask ? &flush->slots[index] : nullptr;
	const uint8_t state = slot ? slot->state.load(std::memory_order_acquire) : 0;
	if ((state & asked) != asked || slot->seq != seq) {
		RPMA_LOG_ERROR("GPSPM answer to no request in flight (slot %u, seq %u): ignored",
			       index, seq);
		return;
	}

	const void *op_context = slot->op_context;
	const bool signaled = slot->signaled;
	const bool write = state & FLUSH_SLOT_WRITE;
	if (status != GPSPM_OK && !write) {
		RPMA_LOG_ERROR("the target refused a GPSPM flush (status %u): no atomic write on "
			       "this connection can land behind it any more",
			       status);
		/* before in_flight drops: rpma_atomic_write reads the two in that order */
		g->fenced.store(true, std::memory_order_release);
	} else if (status != GPSPM_OK) {
		RPMA_LOG_ERROR("the target refused a GPSPM atomic write (status %u)", status);
	}
	const bool report = signaled || status != GPSPM_OK;
	/*
	 * Its send's completion not taken yet: operations posted before the
	 * request may not have completed either, so its completion waits for
	 * that send completion, which comes after theirs.
	 */
	if (!(state & FLUSH_SLOT_SENT) && report) {
		slot->answer_status = status;
		slot->state.fetch_or(FLUSH_SLOT_ANSWER_HELD, std::memory_order_relaxed);
	}
	const uint8_t prev = slot->state.fetch_or(FLUSH_SLOT_COMPLETED);
	if (prev & FLUSH_SLOT_COMPLETED)
		return; /* its error completion went out already */
	g->in_flight.fetch_sub(1, std::memory_order_release);
	if (!(prev & FLUSH_SLOT_SENT))
		return; /* the send's completion releases the slot, and completes it */
	flush->release(slot);

	if (!report)
		return;
	/* the answer of nearly every request: OK, told without a call */
	const ibv_wc_status wc_status =
	    status == GPSPM_OK ? IBV_WC_SUCCESS : gpspm_answer_wc_status(status);
	emit_slot_completion(g, op_context, write, wc_status, request_key(slot->sent_index), out);
}

} /* namespace */

int gpspm_start(gpspm_engine *g, rdma_cm_id *id)
{
	g->id = id;
	g->qp = id->qp;
	for (uint32_t i = 0; i < g->depth; i++) {
		int ret = post_receive(g, i);
		if (ret)
			return ret;
	}
	return 0;
}

namespace
{

/*
 * gpspm_handle() of a failed completion, or of an answer sent: apart, so
 * that a message received, what nearly every call handles, is reached
 * with one test.
 */
[[gnu::noinline]] void handle_sent_or_failed(gpspm_engine *g, conn_flush *flush, const ibv_wc &wc,
					     completion_out *out)
{
	/* any failure: the queue pair is in the error state, and its drain clock starts */
	if (wc.status != IBV_WC_SUCCESS)
		flush->note_failed_completion(monotonic_ms());
	if (wc.wr_id == g->probe_wr_id()) {
		g->probe_posted = false;
		/* the target is there: another silence starts with the next empty poll */
		g->silent_since_ms = 0;
		if (wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR)
			return; /* (flushed: the queue pair is down already, the receives say so) */
		RPMA_LOG_ERROR("a probe of a GPSPM target silent for %u ms failed: %s",
			       g->probe_after_ms, verbs::wc_status_str(wc.status));
		/* the flushes waiting fail as the probe did: the transport gave up */
		fail_in_flight(g, flush, wc.status, out);
		gpspm_release(g, false, out);
		return;
	}
	if (wc.wr_id == answer_wr_id(g) || wc.wr_id == g->closing_answer_wr_id()) {
		/* flushed: the queue pair is down already, by a disconnect or a failure seen */
		if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR) {
			RPMA_LOG_ERROR("a GPSPM answer could not be sent: %s",
				       verbs::wc_status_str(wc.status));
			answer_lost(g);
		} else if (wc.wr_id == g->closing_answer_wr_id() && wc.status == IBV_WC_SUCCESS &&
			   verbs::disconnect(g->id)) {
			/* the last refusal's answer went out: now the connection closes */
			(void)RPMA_PROVIDER_FAILED(errno, "rdma_disconnect");
		}
		return;
	}
	if (wc.status == IBV_WC_SUCCESS) {
		/* a send naming a receive buffer: the library posts none */
		RPMA_LOG_ERROR("GPSPM completion of a send it never made (opcode %d): ignored",
			       wc.opcode);
		return;
	}

	/* a receive buffer: the queue pair failed */
	if (!g->broken.load(std::memory_order_relaxed) && wc.status != IBV_WC_WR_FLUSH_ERR)
		RPMA_LOG_ERROR("GPSPM receive failed: %s", verbs::wc_status_str(wc.status));
	fail_in_flight(g, flush, wc.status, out);
	gpspm_release(g, false, out);
}

} /* namespace */

void gpspm_handle(gpspm_engine *g, conn_flush *flush, const ibv_wc &wc, completion_out *out)
{
	/* a receive buffer that held a message, unless it failed or is the answers' or a probe's */
	if (__builtin_expect(wc.status != IBV_WC_SUCCESS || wc.opcode == IBV_WC_SEND ||
				 wc.opcode == IBV_WC_RDMA_WRITE,
			     0)) {
		handle_sent_or_failed(g, flush, wc, out);
		return;
	}

	/*
	 * Decoded where it landed: the decoder copies out every field, so the
	 * buffer goes back before the request is served, however long the
	 * persist function takes.
	 */
	const uint32_t len = wc.byte_len < GPSPM_SLOT_SIZE ? wc.byte_len : GPSPM_SLOT_SIZE;
	const bool is_message = wc.opcode == IBV_WC_RECV;
	const uint8_t *msg = reinterpret_cast<const uint8_t *>(static_cast<uintptr_t>(wc.wr_id));

	/*
	 * What nearly every message is, without the general decoder: an
	 * answer (what an initiator receives) or a flush request (what a
	 * target serves).
	 */
	uint32_t answer_slot;
	uint32_t answer_seq;
	uint8_t answer_status;
	gpspm_message m;
	if (__builtin_expect(is_message, 1)) {
		if (gpspm_decode_answer(msg, len, &answer_slot, &answer_seq, &answer_status)) {
			repost_receive(g, wc.wr_id);
			on_answer(g, flush, answer_slot, answer_seq, answer_status, out);
			/* the completions held behind the answered request */
			gpspm_release_held(g, false, out);
			return;
		}
		if (gpspm_decode_request(msg, len, &m)) {
			repost_receive(g, wc.wr_id);
			serve(g, m);
			return;
		}
	}

	const gpspm_kind kind = gpspm_decode(msg, len, &m);
	repost_receive(g, wc.wr_id);
	if (!is_message || kind == GPSPM_KIND_FOREIGN) {
		RPMA_LOG_ERROR("not a GPSPM message (%u bytes, opcode %d): ignored", wc.byte_len,
			       wc.opcode);
		return;
	}
	switch (kind) {
	case GPSPM_KIND_ATOMIC_WRITE:
		serve_atomic_write(g, m);
		return;
	case GPSPM_KIND_REQUEST:
	case GPSPM_KIND_ANSWER:
		/* gpspm_decode_answer() or _request() took it above: the decoders disagree */
		RPMA_LOG_FATAL("a GPSPM message of type %u that its own decoder did not take: "
			       "ignored",
			       m.type);
		return;
	case GPSPM_KIND_SHORT_REQUEST:
		RPMA_LOG_ERROR("GPSPM request of %u bytes, need %u: refused", len,
			       GPSPM_REQUEST_SIZE);
		refuse(g, m.slot, m.seq);
		return;
	case GPSPM_KIND_SHORT_ANSWER:
		RPMA_LOG_ERROR("GPSPM answer of %u bytes, need %u: ignored", len,
			       GPSPM_ANSWER_SIZE);
		/* still the answer to the next request: it keeps the count */
		g->answers_in++;
		gpspm_release(g, false, out);
		return;
	default:
		RPMA_LOG_ERROR("GPSPM message of unknown type %u", m.type);
		refuse(g, m.slot, m.seq);
		return;
	}
}

void gpspm_request_sent_late(gpspm_engine *g, conn_flush *flush, flush_slot *slot, const ibv_wc &wc,
			     uint8_t sent_prev, completion_out *out)
{
	const void *op_context = slot->op_context;
	const bool sent = wc.status == IBV_WC_SUCCESS;
	/* the queue pair failed: its drain clock starts (an orphan sweep may follow) */
	if (!sent)
		flush->note_failed_completion(monotonic_ms());
	/* a send that failed has no place among those sent: it comes before the next */
	const uint64_t key = request_key(sent ? slot->sent_index : g->requests_sent);
	if (sent && (sent_prev & FLUSH_SLOT_COMPLETED)) {
		emit_held_answer(g, flush, slot, sent_prev, key, out);
		return;
	}
	/* the send failed, or the connection failed before it was seen: no answer will come */
	const uint8_t prev = slot->state.fetch_or(FLUSH_SLOT_SENT | FLUSH_SLOT_COMPLETED);
	if (prev & FLUSH_SLOT_COMPLETED) {
		/* answered already: the answer says what became of it */
		emit_held_answer(g, flush, slot, prev, key, out);
		return;
	}
	flush->release(slot);
	g->in_flight.fetch_sub(1, std::memory_order_release);
	emit_slot_completion(g, op_context, prev & FLUSH_SLOT_WRITE,
			     wc.status == IBV_WC_SUCCESS ? IBV_WC_WR_FLUSH_ERR : wc.status, key,
			     out);
}

void gpspm_fail_orphans(gpspm_engine *g, conn_flush *flush, completion_out *out)
{
	if (!g->broken.load(std::memory_order_relaxed)) /* once: broken stays */
		fail_in_flight(g, flush, IBV_WC_WR_FLUSH_ERR, out);
	gpspm_release(g, false, out);
}

void gpspm_deliver(gpspm_engine *g, const ibv_wc &c, bool is_flush, completion_out *out)
{
	/* after every request whose send completed before it */
	emit(g, c, is_flush, 2 * g->requests_sent, out);
}

void gpspm_release(gpspm_engine *g, bool ready_all, completion_out *out)
{
	uint32_t taken = 0;
	while (taken < g->held_count && !out->full() &&
	       (ready_all || gpspm_turn_has_come(g, g->held[taken].key))) {
		out->put(g->held[taken].wc, g->held[taken].is_flush);
		taken++;
	}
	if (taken == 0)
		return;
	g->held_count -= taken;
	memmove(&g->held[0], &g->held[taken], g->held_count * sizeof(g->held[0]));
	gpspm_gate_update(g);
}

} /* namespace rpma */
