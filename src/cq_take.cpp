/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq_take.cpp -- what a connection's completions are for the application:
 * the library's own work done and dropped, flushes told by their slots,
 * GPSPM's completions kept in post order
 */

#include <arpa/inet.h>

#include "clock.hpp"
#include "conn_events.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush_slots.hpp"
#include "gpspm.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

void completion_of_operation(ibv_wc_opcode opcode, uint32_t byte_len, unsigned wc_flags,
			     __be32 imm_data, rpma_completion *cmpl)
{
	cmpl->byte_len = byte_len;
	cmpl->flags = wc_flags;
	cmpl->imm = (wc_flags & IBV_WC_WITH_IMM) ? ntohl(imm_data) : 0;

	switch (opcode) {
	case IBV_WC_RDMA_READ:
		cmpl->op = RPMA_OP_READ;
		break;
	case IBV_WC_RDMA_WRITE:
#ifdef HAVE_IBV_WC_ATOMIC_WRITE
	case IBV_WC_ATOMIC_WRITE:
#endif
		cmpl->op = RPMA_OP_WRITE;
		break;
#ifdef HAVE_IBV_WC_FLUSH
	case IBV_WC_FLUSH:
		/* the library's flushes come with is_flush; this is for completeness */
		cmpl->op = RPMA_OP_FLUSH;
		break;
#endif
	case IBV_WC_SEND:
		cmpl->op = RPMA_OP_SEND;
		break;
	case IBV_WC_RECV:
		cmpl->op = RPMA_OP_RECV;
		break;
	case IBV_WC_RECV_RDMA_WITH_IMM:
		cmpl->op = RPMA_OP_RECV_RDMA_WITH_IMM;
		break;
	default:
		/* nothing the library posts completes with another opcode */
		RPMA_LOG_WARNING("unexpected completion opcode %d", opcode);
		cmpl->op = RPMA_OP_READ;
		cmpl->op_status = IBV_WC_GENERAL_ERR;
		break;
	}
}

} /* namespace rpma */

using namespace rpma;

int rpma_cq::take(int n, ibv_wc *wc, uint64_t *flushes)
{
	*flushes = 0;
	if (flush == nullptr)
		return poll(n, wc); /* receives only: nothing of the library's */
	completion_out out{ wc, flushes, n, 0 };
	if (gpspm == nullptr)
		return take_translated(&out);
	return take_ordered(&out);
}

/* What a polled completion is for the application, GPSPM's own work aside. */
enum class translated {
	none,	   /* nothing: the library's own */
	operation, /* an operation of the application, as polled */
	flush,	   /* a read-after-write or native flush */
};

/*
 * w as the application sees it, in place. A read-after-write flush
 * (IBV_WC_RDMA_READ) or a native one (IBV_WC_FLUSH) shows as the read
 * librpma 1.x carried every flush with, and with the flush's context: only
 * those two fields change.
 */
static inline translated translate_in_place(conn_flush *flush, ibv_wc *w)
{
	const void *op_context;
	if (flush_slot *slot = flush->slot_of(w->wr_id)) {
		if (!flush->finish(slot, &op_context))
			return translated::none;
	} else if (unsignaled_flush *u = flush->unsignaled_of(w->wr_id)) {
		/* an unsignaled flush failed */
		if (!flush->finish_unsignaled(u, &op_context))
			return translated::none;
	} else {
		return translated::operation;
	}
	w->wr_id = wr_id_of(op_context);
	w->opcode = IBV_WC_RDMA_READ;
	return translated::flush;
}

/* translate_in_place() of a copy of w into c: the take that compacts its entries */
static translated translate(conn_flush *flush, const ibv_wc &w, ibv_wc *c)
{
	*c = w;
	return translate_in_place(flush, c);
}

/*
 * A failed completion was taken: the queue pair is in the error state,
 * with or without a connection event. Cold: a connection fails once.
 */
[[gnu::cold, gnu::noinline]] static void failed_completion_taken(conn_flush *flush)
{
	flush->note_failed_completion(monotonic_ms());
}

/*
 * Whether the polls of an empty CQ complete the flushes still in flight:
 * the connection went down (its event) or its queue pair failed (a failed
 * completion), and the device has had its drain time to flush what was
 * posted; some devices (siw) never complete what the error state holds.
 * Marks the connection orphaned when the failure's drain time is over.
 */
[[gnu::noinline]] static bool sweeps_after_failure(conn_flush *flush, long long failed)
{
	if (monotonic_ms() < failed + CONN_DOWN_DRAIN_MS)
		return false;
	flush->mark_orphaned();
	return true;
}

static inline bool sweeps(conn_flush *flush)
{
	if (flush->orphaned())
		return true;
	const long long failed = flush->failed_at();
	if (__builtin_expect(failed == 0, 1))
		return false;
	/* out of line: the clock would cost the polls of a healthy connection registers */
	return sweeps_after_failure(flush, failed);
}

/* take_one(): the CQ was empty, with nothing left for the library to complete */
constexpr int TAKE_EMPTY = 0;
/* take_one(): what was polled was the library's own, or the CQ needs a sweep */
constexpr int TAKE_LOOK_AGAIN = 2;

/*
 * One completion of a CQ without GPSPM, polled straight into the caller's
 * wc: 1 and *is_flush; TAKE_EMPTY; TAKE_LOOK_AGAIN, for take() to look
 * again (what was polled was the library's own) or to sweep what a
 * connection that is down leaves; or RPMA_E_PROVIDER. What nearly every
 * poll of a data path is.
 */
template <bool with_flushes>
[[gnu::always_inline]] static inline int take_one(rpma_cq *cq, ibv_wc *wc, bool *is_flush,
						  int one = 1)
{
	*is_flush = false;
	const int got = verbs::poll_cq(cq->cq, one, wc);
	if (!with_flushes) {
		/* a CQ of receives only: nothing of the library's, nothing to sweep */
		if (__builtin_expect(got < 0, 0))
			return cq_poll_failed(got);
		return got == 1 ? 1 : TAKE_EMPTY;
	}
	conn_flush *flush = cq->flush;
	if (flush == nullptr)
		__builtin_unreachable(); /* TAKE_DIRECT_FLUSHES: cq_serve_flushes() */
	if (__builtin_expect(got <= 0, 0)) {
		if (got < 0)
			return cq_poll_failed(got);
		return sweeps(flush) ? TAKE_LOOK_AGAIN : TAKE_EMPTY;
	}
	if (__builtin_expect(wc->status != IBV_WC_SUCCESS, 0)) {
		failed_completion_taken(flush);
		/* read again, not kept across the call: the common path saves no register for it */
		flush = cq->flush;
	}
	const translated t = translate_in_place(flush, wc);
	*is_flush = t == translated::flush;
	return t == translated::none ? TAKE_LOOK_AGAIN : 1;
}

int rpma_cq::take_translated(completion_out *out)
{
	while (!out->full()) {
		const int want = out->n - out->count;
		ibv_wc *polled = out->wc + out->count;
		int got = poll(want, polled);
		if (got < 0)
			return out->count ? out->count : got;

		/* compacted in place: what is stored never passes the entry being read */
		for (int i = 0; i < got; i++) {
			const ibv_wc w = polled[i];
			if (__builtin_expect(w.status != IBV_WC_SUCCESS, 0))
				failed_completion_taken(flush);
			ibv_wc c;
			const translated t = translate(flush, w, &c);
			if (t != translated::none)
				out->put(c, t == translated::flush);
		}
		if (got < want)
			break; /* the CQ is empty */
	}
	/* the connection is down and drained: what is still in flight never completes */
	if (!out->full() && sweeps(flush))
		(void)flush->sweep(out, qp_num); /* no GPSPM: no request to forget */
	return out->count;
}

/* inline: each caller gives max as a constant, and a GPSPM take makes no other call */
[[gnu::always_inline]] inline int rpma_cq::poll_ordered(completion_out *out, int max)
{
	gpspm_engine *g = gpspm;
	/*
	 * Up to UNREAD_MAX entries a poll, whatever out's room (never more
	 * than out and the held completions take): nearly all of them are the
	 * library's own, so a flush's send and its answer come with one poll.
	 * A side that sends no request (a target) handles them all, holding
	 * the application's beyond out's room. An initiator handles only what
	 * out has room for and leaves the rest unread: an answer gives its
	 * flush's place in the flow control back, and with its completion
	 * held the application could have more flushes posted and not taken
	 * than the target takes at a time.
	 */
	const bool up_to_room = max == 0 && gpspm_agreed(g);
	conn_flush *const flush_of_cq = flush;
	/* locals, stored back once: what the handlers call never reads them */
	const ibv_wc *next = unread;
	const ibv_wc *end = unread;
	if (__builtin_expect(unread_count != 0, 0)) {
		next += unread_first;
		end = next + unread_count;
	}
	bool cq_empty = false;
	int handled = 0;
	for (;;) {
		if (next == end) {
			/* nothing left unread: a full out polls no more, an empty CQ neither */
			if (cq_empty || (!max && out->full()))
				break;
			const int room =
			    max ? max - handled : out->n - out->count + gpspm_hold_room(g);
			const int want = room < static_cast<int>(UNREAD_MAX)
					     ? room
					     : static_cast<int>(UNREAD_MAX);
			if (want <= 0)
				break;
			const int got = verbs::poll_cq(cq, want, unread);
			if (__builtin_expect(got < 0, 0)) {
				unread_count = 0;
				return cq_poll_failed(got);
			}
			next = unread;
			end = unread + got;
			if (got == 0)
				break;
			cq_empty = got < want;
		}

		const ibv_wc &w = *next++;
		handled++;
		flush_slot *slot = flush_of_cq->slot_of(w.wr_id);
		const uint8_t gpspm_request = FLUSH_SLOT_IN_USE | FLUSH_SLOT_GPSPM;
		if (slot != nullptr && (slot->state.load(std::memory_order_acquire) &
					gpspm_request) == gpspm_request) {
			gpspm_request_sent(g, flush_of_cq, slot, w, out);
		} else if (g->owns(w.wr_id)) {
			if (!g->answer_went_out(w))
				gpspm_handle(g, flush_of_cq, w, out);
		} else {
			/*
			 * The queue pair is in the error state: the drain clock
			 * starts (sweeps()). GPSPM's own failures start it
			 * where they are handled.
			 */
			if (__builtin_expect(w.status != IBV_WC_SUCCESS, 0))
				failed_completion_taken(flush_of_cq);
			ibv_wc c;
			const translated t = translate(flush_of_cq, w, &c);
			if (t != translated::none)
				gpspm_deliver(g, c, t == translated::flush, out);
		}

		if (max ? handled >= max : out->full() && (up_to_room || next == end))
			break;
	}
	if (__builtin_expect(next != end, 0)) {
		unread_first = static_cast<uint32_t>(next - unread);
		unread_count = static_cast<uint32_t>(end - next);
	} else {
		unread_count = 0;
	}
	return handled;
}

/*
 * rpma_cq::take_ordered(), also storing in *polled how many entries it
 * polled (for the GPSPM thread's spin). Inline: where *polled is not read,
 * nothing is spent on it.
 */
[[gnu::always_inline]] static inline int take_ordered_counting(rpma_cq *cq, completion_out *out,
							       int *polled)
{
	gpspm_engine *g = cq->gpspm;
	conn_flush *flush = cq->flush;
	/*
	 * Down and drained, by an event or by a failed completion's drain
	 * time: the requests awaiting answers fail first, in their places
	 * among the completions held.
	 */
	const bool drained = sweeps(flush);
	if (__builtin_expect(drained, 0))
		gpspm_fail_orphans(g, flush, out);
	gpspm_release_held(g, drained, out);
	const int ret = cq->poll_ordered(out, 0);
	*polled = ret > 0 ? ret : 0;
	if (ret == 0 && gpspm_awaits_answers(g))
		gpspm_watch(g); /* out of line: a target that may have gone silent */
	if (ret < 0 && out->count == 0)
		return ret;
	/* the connection is down and drained: what is still in flight never completes */
	if (!out->full() && drained && !gpspm_holds(g))
		gpspm_forget(g, flush->sweep(out, cq->qp_num));
	return out->count;
}

/*
 * take_ordered_counting() under the GPSPM lock. One poller at a time: a
 * request polled by one thread and served by it while another polls and
 * serves a later one could be answered second, and its initiator would
 * take the later answer for both; and the completions held for their turn
 * are handed out in order.
 */
[[gnu::always_inline]] static inline int take_ordered_locked(rpma_cq *cq, completion_out *out,
							     int *polled)
{
	gpspm_engine *g = cq->gpspm;
	gpspm_take_begin(g);
	const int ret = take_ordered_counting(cq, out, polled);
	gpspm_take_end(g);
	return ret;
}

int rpma_cq::take_ordered(completion_out *out)
{
	int polled;
	return take_ordered_locked(this, out, &polled);
}

int rpma_cq::absorb()
{
	gpspm_engine *g = gpspm;
	uint64_t none = 0;
	completion_out nowhere{ nullptr, &none, 0, 0 };
	gpspm_take_begin(g);
	/* a connection down and drained: no answer will come, the places come back */
	if (__builtin_expect(sweeps(flush), 0))
		gpspm_fail_orphans(g, flush, &nowhere);
	/*
	 * Every completion of the application's that is read is held, and
	 * the CQ is read to its end, whatever is held already: an answer
	 * behind the application's completions is what frees their places.
	 * The store has room for all of them (gpspm.hpp, hold_limit): posts
	 * stop before it could fill.
	 */
	int ret;
	do
		ret = poll_ordered(&nowhere, static_cast<int>(UNREAD_MAX));
	while (ret == static_cast<int>(UNREAD_MAX));
	const bool take_first = ret >= 0 && gpspm_full_of_ready(g);
	gpspm_take_end(g);
	if (ret < 0)
		return ret;
	return take_first ? ABSORB_TAKE_FIRST : 0;
}

int rpma_cq::serve(int *dropped)
{
	int polled = 0;
	*dropped = 0;
	for (;;) {
		ibv_wc wc[16];
		uint64_t flushes = 0;
		completion_out out{ wc, &flushes, 16, 0 };
		int polled_now;
		const int ret = take_ordered_locked(this, &out, &polled_now);
		if (ret < 0)
			return polled ? polled : ret;
		polled += polled_now;
		*dropped += ret;
		/* an out that is not full means the CQ was found empty */
		if (!out.full())
			return polled;
	}
}

/*
 * rpma_cq_get_wc() but for its path of one completion without GPSPM: out of
 * line, for that path's sake (it saves fewer registers).
 */
[[gnu::noinline]] static int get_wc_general(rpma_cq *cq, int num_entries, ibv_wc *wc,
					    int *num_entries_got)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(num_entries >= 1);
	RPMA_CHECK_ARG(wc != nullptr);
	RPMA_CHECK_ARG(num_entries_got != nullptr || num_entries == 1);
	RPMA_CHECK_ARG(cq_application_may_use(cq));

	/*
	 * In chunks the translation can mark; a flush shows as the RDMA read
	 * that librpma 1.x carried it with, whatever carries it here.
	 */
	int got = 0;
	while (got < num_entries) {
		const int want = num_entries - got < 64 ? num_entries - got : 64;
		uint64_t flushes;
		int n = cq->take(want, wc + got, &flushes);
		if (n < 0) {
			if (got)
				break;
			return n;
		}
		got += n;
		if (n < want)
			break; /* the CQ is empty */
	}
	if (got == 0)
		return RPMA_E_NO_COMPLETION;
	if (num_entries_got)
		*num_entries_got = got;
	return 0;
}

/*
 * rpma_cq_get_wc() of one completion on a CQ without GPSPM (the direct
 * take paths): the only path with a frame, so that the others (GPSPM's,
 * many entries) are entered without one. It takes rpma_cq_get_wc()'s
 * parameters as they are, so that the jump moves none.
 */
template <bool with_flushes>
RPMA_JUMP_TARGET static int get_wc_direct(rpma_cq *cq, int num_entries, ibv_wc *wc,
					  int *num_entries_got)
{
	bool is_flush;
	/* num_entries is 1 (rpma_cq_get_wc), and already where the poll takes it */
	const int got = take_one<with_flushes>(cq, wc, &is_flush, num_entries);
	if (got == 1) {
		if (num_entries_got)
			*num_entries_got = 1;
		return 0;
	}
	if (got == TAKE_EMPTY)
		return RPMA_E_NO_COMPLETION;
	if (got < 0)
		return got;
	return get_wc_general(cq, 1, wc, num_entries_got);
}

/* rpma_cq_get_completion() but for its path without GPSPM: out of line, for that path's sake */
[[gnu::noinline]] static int get_completion_general(rpma_cq *cq, rpma_completion *cmpl)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cmpl != nullptr);
	RPMA_CHECK_ARG(cq_application_may_use(cq));

	ibv_wc wc;
	uint64_t flushes;
	int got = cq->take(1, &wc, &flushes);
	if (got < 0)
		return got;
	if (got == 0)
		return RPMA_E_NO_COMPLETION;
	completion_from_wc(wc, flushes & 1, cmpl);
	return 0;
}

/* rpma_cq_get_completion() on a CQ without GPSPM: as get_wc_direct() */
template <bool with_flushes>
RPMA_JUMP_TARGET static int get_completion_direct(rpma_cq *cq, rpma_completion *cmpl)
{
	ibv_wc wc;
	bool is_flush;
	const int got = take_one<with_flushes>(cq, &wc, &is_flush);
	if (got == 1) {
		completion_from_wc(wc, is_flush, cmpl);
		return 0;
	}
	if (got == TAKE_EMPTY)
		return RPMA_E_NO_COMPLETION;
	if (got < 0)
		return got;
	return get_completion_general(cq, cmpl);
}

/*
 * One completion of a CQ that GPSPM orders (TAKE_GPSPM: its flush and
 * gpspm are set), taken as rpma_cq::take() of one would take it, without
 * that function's tests of what the take path already says: 1 (and
 * *is_flush, unless NULL), 0 or RPMA_E_PROVIDER.
 */
[[gnu::always_inline]] static inline int take_one_gpspm(rpma_cq *cq, ibv_wc *wc, bool *is_flush)
{
	uint64_t flushes = 0;
	completion_out out{ wc, &flushes, 1, 0 };
	int polled;
	const int got = take_ordered_locked(cq, &out, &polled);
	if (is_flush)
		*is_flush = flushes & 1;
	return got;
}

/*
 * rpma_cq_get_wc() of one completion on a CQ that GPSPM orders and the
 * application polls (TAKE_GPSPM: the CQ is the application's): the take
 * without the general path's checks and chunks, what every poll of a
 * GPSPM initiator or target makes.
 */
RPMA_JUMP_TARGET static int get_wc_gpspm(rpma_cq *cq, int num_entries, ibv_wc *wc,
					 int *num_entries_got)
{
	(void)num_entries; /* 1: rpma_cq_get_wc()'s parameters, so that its jump moves none */
	int got = take_one_gpspm(cq, wc, nullptr);
	if (got == 1) {
		if (num_entries_got)
			*num_entries_got = 1;
		return 0;
	}
	return got == 0 ? RPMA_E_NO_COMPLETION : got;
}

/* rpma_cq_get_completion() on a CQ that GPSPM orders and the application polls */
[[gnu::noinline]] static int get_completion_gpspm(rpma_cq *cq, rpma_completion *cmpl)
{
	ibv_wc wc;
	bool is_flush;
	const int got = take_one_gpspm(cq, &wc, &is_flush);
	if (got == 1) {
		completion_from_wc(wc, is_flush, cmpl);
		return 0;
	}
	return got == 0 ? RPMA_E_NO_COMPLETION : got;
}

/*
 * rpma_cq_get_wc() of any other kind: one completion of a CQ of receives
 * only or of a GPSPM connection, or the general path. Apart, so that the
 * entry compares the take path once.
 */
RPMA_JUMP_TARGET static int get_wc_other(rpma_cq *cq, int num_entries, ibv_wc *wc,
					 int *num_entries_got)
{
	if (num_entries == 1) {
		if (cq->take_path == TAKE_GPSPM)
			return get_wc_gpspm(cq, num_entries, wc, num_entries_got);
		if (cq->take_path == TAKE_DIRECT_RECEIVES)
			return get_wc_direct<false>(cq, num_entries, wc, num_entries_got);
	}
	return get_wc_general(cq, num_entries, wc, num_entries_got);
}

extern "C" {

int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got)
{
	/* one completion, no GPSPM and nothing wrong: what a data path asks most */
	if (__builtin_expect(cq == nullptr || wc == nullptr, 0))
		return get_wc_general(cq, num_entries, wc, num_entries_got);
	if (__builtin_expect(num_entries == 1 && cq->take_path == TAKE_DIRECT_FLUSHES, 1))
		return get_wc_direct<true>(cq, num_entries, wc, num_entries_got);
	return get_wc_other(cq, num_entries, wc, num_entries_got);
}

int rpma_cq_get_completion(struct rpma_cq *cq, struct rpma_completion *cmpl)
{
	/* no GPSPM and nothing wrong: what a data path asks most */
	if (__builtin_expect(cq == nullptr || cmpl == nullptr, 0))
		return get_completion_general(cq, cmpl);
	if (__builtin_expect(cq->take_path == TAKE_DIRECT_FLUSHES, 1))
		return get_completion_direct<true>(cq, cmpl);
	if (cq->take_path == TAKE_DIRECT_RECEIVES)
		return get_completion_direct<false>(cq, cmpl);
	if (cq->take_path == TAKE_GPSPM)
		return get_completion_gpspm(cq, cmpl);
	return get_completion_general(cq, cmpl);
}

} /* extern "C" */
