/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.cpp -- completion queues: waiting, polling and translating completions
 */

#include <arpa/inet.h>
#include <cerrno>
#include <climits>
#include <ctime>
#include <fcntl.h>
#include <new>
#include <poll.h>

#include "conn.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "gpspm.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

int cq_new(ibv_context *ctx, int size, ibv_comp_channel *channel, rpma_cq **cq_ptr)
{
	auto *cq = new (std::nothrow) rpma_cq;
	if (cq == nullptr)
		return RPMA_E_NOMEM;
	cq->shared_channel = channel != nullptr;
	cq->served_by_thread = false;
	cq->flush = nullptr;
	cq->conn = nullptr;

	int ret = 0;
	if (channel == nullptr) {
		channel = verbs::create_comp_channel(ctx);
		if (channel == nullptr) {
			ret = RPMA_PROVIDER_FAILED(errno, "ibv_create_comp_channel");
			goto free_cq;
		}
	}
	cq->channel = channel;

	cq->cq = verbs::create_cq(ctx, size, cq, channel);
	if (cq->cq == nullptr) {
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_create_cq");
		goto destroy_channel;
	}

	/* armed from the start, so that the first completion wakes a waiter */
	if (verbs::req_notify_cq(cq->cq)) {
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_req_notify_cq");
		goto destroy_cq;
	}

	*cq_ptr = cq;
	return 0;

destroy_cq:
	(void)verbs::destroy_cq(cq->cq);
destroy_channel:
	if (!cq->shared_channel)
		(void)verbs::destroy_comp_channel(channel);
free_cq:
	delete cq;
	return ret;
}

int cq_delete(rpma_cq **cq_ptr)
{
	rpma_cq *cq = *cq_ptr;
	if (cq == nullptr)
		return 0;

	int ret = 0;
	if (verbs::destroy_cq(cq->cq))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_destroy_cq");
	if (!cq->shared_channel && verbs::destroy_comp_channel(cq->channel) && ret == 0)
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_destroy_comp_channel");

	delete cq;
	*cq_ptr = nullptr;
	return ret;
}

void completion_from_wc(const ibv_wc &wc, bool is_flush, rpma_completion *cmpl)
{
	cmpl->op_context = reinterpret_cast<void *>(static_cast<uintptr_t>(wc.wr_id));
	cmpl->op_status = wc.status;
	cmpl->byte_len = 0;
	cmpl->flags = 0;
	cmpl->imm = 0;
	cmpl->op = is_flush ? RPMA_OP_FLUSH : RPMA_OP_READ;
	/* a flush carries no data; the other fields of a failed completion mean nothing */
	if (is_flush || wc.status != IBV_WC_SUCCESS)
		return;

	cmpl->byte_len = wc.byte_len;
	cmpl->flags = wc.wc_flags;
	if (wc.wc_flags & IBV_WC_WITH_IMM)
		cmpl->imm = ntohl(wc.imm_data);

	switch (wc.opcode) {
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
		RPMA_LOG_WARNING("unexpected completion opcode %d", wc.opcode);
		cmpl->op_status = IBV_WC_GENERAL_ERR;
		break;
	}
}

} /* namespace rpma */

using namespace rpma;

int rpma_cq::poll(int n, ibv_wc *wc)
{
	int got = verbs::poll_cq(cq, n, wc);
	if (got < 0) {
		/*
		 * ibv_poll_cq() sets no errno and its negative value is the
		 * provider's own: keep that value, rather than make an errno up.
		 */
		set_provider_error(got);
		RPMA_LOG_ERROR("ibv_poll_cq failed: returned %d", got);
		return RPMA_E_PROVIDER;
	}
	return got;
}

int rpma_cq::take(int n, ibv_wc *wc, uint64_t *flushes)
{
	*flushes = 0;
	if (flush == nullptr)
		return poll(n, wc); /* receives only: nothing of the library's */
	completion_out out{ wc, flushes, n, 0 };
	gpspm_engine *g = flush->gpspm;
	if (g == nullptr)
		return take_translated(&out);

	/*
	 * GPSPM: a request polled by one thread and served by it while
	 * another polls and serves a later one could be answered second, and
	 * its initiator would take the later answer for both; and the
	 * completions held for their turn are handed out in order: one
	 * poller at a time.
	 */
	gpspm_take_begin(g);
	const int ret = take_ordered(&out);
	gpspm_take_end(g);
	return ret;
}

/*
 * The completion of the work request that carried a read-after-write or
 * native flush, as the application sees it: the flush's context, and the
 * read that librpma 1.x carried every flush with.
 */
static void as_flush(const ibv_wc &w, const void *op_context, ibv_wc *out)
{
	*out = w;
	out->wr_id = wr_id_of(op_context);
	out->opcode = IBV_WC_RDMA_READ;
}

/* What a polled completion is for the application, GPSPM's own work aside. */
enum class translated {
	none,	   /* nothing: the library's own */
	operation, /* an operation of the application, as polled */
	flush,	   /* a read-after-write or native flush */
};

static translated translate(conn_flush *flush, const ibv_wc &w, ibv_wc *c)
{
	flush_slot *slot = flush->slot_of(w.wr_id);
	if (slot != nullptr) {
		uint8_t state = slot->state.load(std::memory_order_acquire);
		/*
		 * Not in use: a second completion of a flush's read (siw flushes
		 * a read that is both on its send queue and on its outbound read
		 * queue from both), or a late one of a flush the library
		 * completed when the connection went down.
		 */
		if (!(state & FLUSH_SLOT_IN_USE))
			return translated::none;
		/*
		 * A read-after-write flush (IBV_WC_RDMA_READ) or a native one
		 * (IBV_WC_FLUSH): either shows as the read librpma 1.x carried
		 * every flush with.
		 */
		const void *op_context = slot->op_context;
		/* a connection gone down: its sweep may be first */
		if (!slot->state.compare_exchange_strong(state, 0, std::memory_order_acq_rel))
			return translated::none;
		as_flush(w, op_context, c);
		return translated::flush;
	}
	if (unsignaled_flush *u = flush->unsignaled_of(w.wr_id)) {
		/* an unsignaled flush failed (or a second completion of its read, siw's: dropped)
		 */
		if (!u->pending.exchange(false, std::memory_order_acquire))
			return translated::none;
		as_flush(w, u->op_context, c);
		return translated::flush;
	}
	*c = w;
	return translated::operation;
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
			ibv_wc c;
			const translated t = translate(flush, w, &c);
			if (t != translated::none)
				out->put(c, t == translated::flush);
		}
		if (got < want)
			break; /* the CQ is empty */
	}
	/* the connection is down and drained: what is still in flight never completes */
	if (!out->full() && flush->sweep_orphans.load(std::memory_order_relaxed))
		flush->sweep(out, conn ? conn->id->qp->qp_num : 0);
	return out->count;
}

int rpma_cq::poll_ordered(completion_out *out, int max)
{
	gpspm_engine *g = flush->gpspm;
	int polled_total = 0;
	while (!out->full() || max) {
		/*
		 * Through a buffer of its own: an answer can release held
		 * completions into out faster than entries are read.
		 */
		ibv_wc polled[16];
		const int room = max ? max - polled_total : out->n - out->count;
		const int want = room < 16 ? room : 16;
		if (want <= 0)
			break;
		int got = poll(want, polled);
		if (got < 0)
			return got;
		polled_total += got;

		for (int i = 0; i < got; i++) {
			const ibv_wc &w = polled[i];
			flush_slot *slot = flush->slot_of(w.wr_id);
			const uint8_t gpspm_request = FLUSH_SLOT_IN_USE | FLUSH_SLOT_GPSPM;
			if (slot != nullptr && (slot->state.load(std::memory_order_acquire) &
						gpspm_request) == gpspm_request) {
				gpspm_request_sent(g, flush, slot, w, out);
			} else if (g->owns(w.wr_id)) {
				gpspm_handle(g, flush, w, out);
			} else {
				ibv_wc c;
				const translated t = translate(flush, w, &c);
				if (t != translated::none)
					gpspm_deliver(g, c, t == translated::flush, out);
			}
		}
		if (got < want)
			break; /* the CQ is empty */
	}
	return 0;
}

int rpma_cq::take_ordered(completion_out *out)
{
	gpspm_engine *g = flush->gpspm;
	const bool drained = flush->sweep_orphans.load(std::memory_order_relaxed);
	gpspm_release(g, drained, out);
	const int ret = poll_ordered(out, 0);
	if (ret < 0 && out->count == 0)
		return ret;
	/* the connection is down and drained: what is still in flight never completes */
	if (!out->full() && drained && !gpspm_holds(g))
		flush->sweep(out, conn ? conn->id->qp->qp_num : 0);
	return out->count;
}

int rpma_cq::absorb()
{
	gpspm_engine *g = flush->gpspm;
	uint64_t none = 0;
	completion_out nowhere{ nullptr, &none, 0, 0 };
	gpspm_take_begin(g);
	/* every completion taken is held: never more than there is room for */
	const int room = gpspm_hold_room(g);
	const int ret = room > 0 ? poll_ordered(&nowhere, room) : 0;
	gpspm_take_end(g);
	return ret;
}

int rpma_cq::ack_event_of(ibv_cq *ev_cq)
{
	if (ev_cq != cq) {
		RPMA_LOG_ERROR("ibv_get_cq_event returned an unknown CQ");
		return RPMA_E_UNKNOWN;
	}
	return ack_and_rearm();
}

int rpma::get_cq_event_1x(ibv_comp_channel *channel, ibv_cq **ev_cq)
{
	void *ev_ctx = nullptr;
	if (verbs::get_cq_event(channel, ev_cq, &ev_ctx)) {
		const int err = errno;
		set_provider_error(err);
		/* a non-blocking fd with no event pending is not worth an error line */
		if (err != EAGAIN && err != EWOULDBLOCK)
			RPMA_LOG_ERROR("ibv_get_cq_event failed: errno %d", err);
		return RPMA_E_NO_COMPLETION;
	}
	return 0;
}

int rpma_cq::ack_and_rearm()
{
	verbs::ack_cq_events(cq, 1);
	if (verbs::req_notify_cq(cq))
		return RPMA_PROVIDER_FAILED(errno, "ibv_req_notify_cq");
	return 0;
}

/* Whether fd can be read now, without waiting. */
static bool readable_now(int fd)
{
	pollfd pfd = { fd, POLLIN, 0 };
	return ::poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
}

/*
 * Reads one event of the CQ's own channel if one is there now, and
 * acknowledges it and re-arms the CQ; RPMA_E_NO_COMPLETION when there is
 * none. Under the CQ's event lock, after a look that does not wait: two
 * threads that poll() woke for one event would otherwise both read, and
 * the second would block in ibv_get_cq_event() until the next event, for
 * ever when none comes.
 */
static int take_event_now(rpma_cq *cq)
{
	std::lock_guard<std::mutex> guard(cq->event_lock);
	if (!readable_now(cq->channel->fd))
		return RPMA_E_NO_COMPLETION;
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	if (verbs::get_cq_event(cq->channel, &ev_cq, &ev_ctx)) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return RPMA_E_NO_COMPLETION;
		return RPMA_PROVIDER_FAILED(errno, "ibv_get_cq_event");
	}
	return cq->ack_event_of(ev_cq);
}

/*
 * Waits up to timeout_ms (< 0: no limit) for one event on the CQ's own
 * channel, then acknowledges it and re-arms the CQ. RPMA_E_NO_COMPLETION
 * when none came, or another thread took it. poll() first, so that a
 * non-blocking fd does not spin.
 */
static int wait_for_event(rpma_cq *cq, int timeout_ms)
{
	/* the connection's events too: a peer that is gone ends the wait */
	const int ready = wait_channel_or_peer(cq->channel->fd, cq->conn, timeout_ms);
	if (ready < 0)
		return ready;
	if (ready == 0)
		return RPMA_E_NO_COMPLETION;
	return take_event_now(cq);
}

/* The milliseconds from now to deadline (monotonic_ms()), 0 once it passed. */
static int ms_until(long long deadline)
{
	const long long remaining = deadline - monotonic_ms();
	if (remaining <= 0)
		return 0;
	return remaining > INT_MAX ? INT_MAX : static_cast<int>(remaining);
}

/* A CQ that the library's GPSPM thread polls is not the application's. */
static bool application_may_use(const rpma_cq *cq)
{
	if (!cq->served_by_thread)
		return true;
	RPMA_LOG_ERROR("the CQ of a connection served by a GPSPM thread (RPMA_GPSPM_THREAD) "
		       "belongs to that thread");
	return false;
}

extern "C" {

int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(fd != nullptr);
	RPMA_CHECK_ARG(application_may_use(cq));
	*fd = cq->channel->fd;
	return 0;
}

int rpma_cq_wait(struct rpma_cq *cq)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(application_may_use(cq));
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;

	const int fd = cq->channel->fd;
	const int fl = fcntl(fd, F_GETFL);
	const bool blocking = fl >= 0 && !(fl & O_NONBLOCK);
	for (;;) {
		int ret = wait_1x(fd, cq->conn);
		if (ret < 0)
			return ret;
		if (ret == WAIT_1X_ORPHANS)
			return cq->flush ? 0 : RPMA_E_NO_COMPLETION; /* no event: poll for them */
		if (!blocking) {
			/* the application's non-blocking fd: the read says at once, as in 1.x */
			ibv_cq *ev_cq = nullptr;
			ret = get_cq_event_1x(cq->channel, &ev_cq);
			if (ret)
				return ret;
			return cq->ack_event_of(ev_cq);
		}
		/* a CQ of no connection: wait_1x() watched nothing */
		if (cq->conn == nullptr) {
			pollfd pfd = { fd, POLLIN, 0 };
			if (::poll(&pfd, 1, -1) < 0 && errno != EINTR)
				return RPMA_PROVIDER_FAILED(errno,
							    "poll on the completion channel");
		}
		/* another thread took this event: wait for the next, as 1.x would */
		ret = take_event_now(cq);
		if (ret == RPMA_E_PROVIDER)
			return RPMA_E_NO_COMPLETION; /* a failed read, as librpma 1.x reported it */
		if (ret != RPMA_E_NO_COMPLETION)
			return ret;
	}
}

int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(num_entries >= 1);
	RPMA_CHECK_ARG(wc != nullptr);
	RPMA_CHECK_ARG(num_entries_got != nullptr || num_entries == 1);
	RPMA_CHECK_ARG(application_may_use(cq));

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

int rpma_cq_get_completion(struct rpma_cq *cq, struct rpma_completion *cmpl)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cmpl != nullptr);
	RPMA_CHECK_ARG(application_may_use(cq));

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

int rpma_cq_get_completions(struct rpma_cq *cq, struct rpma_completion *cmpls, int max_cmpls)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cmpls != nullptr);
	RPMA_CHECK_ARG(max_cmpls >= 1);
	RPMA_CHECK_ARG(application_may_use(cq));

	/*
	 * One ibv_poll_cq per batch of up to BATCH completions, through a stack
	 * buffer; another poll only when the previous one came back full.
	 */
	constexpr int BATCH = 32;
	ibv_wc wc[BATCH];
	int filled = 0;
	while (filled < max_cmpls) {
		const int want = max_cmpls - filled < BATCH ? max_cmpls - filled : BATCH;
		uint64_t flushes;
		int got = cq->take(want, wc, &flushes);
		if (got < 0)
			return filled ? filled : got;
		for (int i = 0; i < got; i++)
			completion_from_wc(wc[i], (flushes >> i) & 1, &cmpls[filled + i]);
		filled += got;
		if (got < want)
			break; /* the CQ is empty now */
	}
	return filled;
}
int rpma_conn_wait_flush_room(struct rpma_conn *conn, int timeout_ms)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(application_may_use(conn->queues.cq));
	gpspm_engine *g = conn->flush->gpspm;
	/* no GPSPM on the connection, or not agreed: nothing limits the flushes */
	if (g == nullptr || g->max_in_flight.load(std::memory_order_relaxed) == 0)
		return 0;
	rpma_cq *cq = conn->queues.cq;
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;

	const long long deadline = timeout_ms >= 0 ? monotonic_ms() + timeout_ms : 0;
	for (;;) {
		/* the answers wait in the CQ: handle them, keep the rest for later */
		int ret = cq->absorb();
		if (ret < 0)
			return ret;
		if (gpspm_has_room(g))
			return 0;

		const int left = timeout_ms >= 0 ? ms_until(deadline) : -1;
		ret = wait_for_event(cq, left);
		if (ret == RPMA_E_NO_COMPLETION && (left == 0 || conn->down.load())) {
			ret = cq->absorb();
			if (ret < 0)
				return ret;
			if (gpspm_has_room(g))
				return 0;
			if (conn->down.load(std::memory_order_acquire))
				RPMA_LOG_ERROR(
				    "the connection is down and no GPSPM answer will come");
			return RPMA_E_NO_COMPLETION;
		}
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return ret;
	}
}

int rpma_cq_wait_completion(struct rpma_cq *cq, struct rpma_completion *cmpl, int timeout_ms)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cmpl != nullptr);
	RPMA_CHECK_ARG(application_may_use(cq));
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;

	const long long deadline = timeout_ms >= 0 ? monotonic_ms() + timeout_ms : 0;
	for (;;) {
		/*
		 * Poll first: completions that arrived before the CQ was last
		 * armed raise no event. The CQ is re-armed after every event,
		 * before polling again, so no completion can slip through.
		 */
		int ret = rpma_cq_get_completion(cq, cmpl);
		if (ret != RPMA_E_NO_COMPLETION)
			return ret;

		const int left = timeout_ms >= 0 ? ms_until(deadline) : -1;
		ret = wait_for_event(cq, left);
		if (ret == RPMA_E_NO_COMPLETION && timeout_ms >= 0 && left == 0)
			return rpma_cq_get_completion(cq, cmpl);
		if (ret == RPMA_E_NO_COMPLETION && cq->conn &&
		    cq->conn->down.load(std::memory_order_acquire)) {
			/* what the error state flushed has been taken: nothing more comes */
			ret = rpma_cq_get_completion(cq, cmpl);
			if (ret == RPMA_E_NO_COMPLETION)
				RPMA_LOG_ERROR("the connection is down and nothing more completes");
			return ret;
		}
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return ret;
	}
}

} /* extern "C" */
