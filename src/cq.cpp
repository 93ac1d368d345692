/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.cpp -- completion queues: their channels, their events, the waits and
 * rpma_cq_get_completions() (what their completions mean is cq_take.cpp's)
 */

#include <cerrno>
#include <fcntl.h>
#include <poll.h>

#include "clock.hpp"
#include "conn_events.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush_slots.hpp"
#include "gpspm.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

int cq_new(ibv_context *ctx, int size, ibv_comp_channel *channel, rpma_cq **cq_ptr)
{
	auto *cq = rpma::make<rpma_cq>();
	if (cq == nullptr)
		return RPMA_E_NOMEM;
	cq->shared_channel = channel != nullptr;
	cq->served_by_thread = false;
	cq->take_path = TAKE_DIRECT_RECEIVES;
	cq->flush = nullptr;
	cq->gpspm = nullptr;
	cq->events = nullptr;
	cq->qp_num = 0;
	cq->unread_first = 0;
	cq->unread_count = 0;

	int ret = 0;
	if (channel == nullptr) {
		channel = verbs::create_comp_channel(ctx);
		if (channel == nullptr) {
			ret = RPMA_PROVIDER_FAILED(errno, "ibv_create_comp_channel");
			goto free_cq;
		}
	}
	cq->channel = channel;
	/* a channel of its own is read without a look first while it is the library's alone */
	if (!cq->shared_channel) {
		const int flags = fcntl(channel->fd, F_GETFL);
		if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK)) {
			ret = RPMA_PROVIDER_FAILED(errno,
						   "fcntl(O_NONBLOCK) on the completion channel");
			goto destroy_channel;
		}
	}

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
	rpma::destroy(cq);
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

	rpma::destroy(cq);
	*cq_ptr = nullptr;
	return ret;
}

} /* namespace rpma */

using namespace rpma;

void rpma::cq_serve_flushes(rpma_cq *cq, conn_flush *flush, gpspm_engine *gpspm)
{
	cq->flush = flush;
	cq->gpspm = gpspm;
	if (cq->served_by_thread)
		cq->take_path = TAKE_GENERAL;
	else if (gpspm != nullptr)
		cq->take_path = TAKE_GPSPM;
	else
		cq->take_path = flush ? TAKE_DIRECT_FLUSHES : TAKE_DIRECT_RECEIVES;
}

void rpma::cq_give_to_thread(rpma_cq *cq)
{
	cq->served_by_thread = true;
	cq->take_path = TAKE_GENERAL;
}

void rpma::cq_watch(rpma_cq *cq, conn_events *events, uint32_t qp_num)
{
	cq->events = events;
	cq->qp_num = qp_num;
}

int rpma::cq_poll_failed(int got)
{
	/*
	 * ibv_poll_cq() sets no errno and its negative value is the
	 * provider's own: keep that value, rather than make an errno up.
	 */
	set_provider_error(got);
	RPMA_LOG_ERROR("ibv_poll_cq failed: returned %d", got);
	return RPMA_E_PROVIDER;
}

int rpma_cq::poll(int n, ibv_wc *wc)
{
	int got = verbs::poll_cq(cq, n, wc);
	if (__builtin_expect(got < 0, 0))
		return cq_poll_failed(got);
	return got;
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
	rpma::mutex_guard guard(cq->event_lock);
	/* the library's non-blocking fd: the read itself says there is none */
	if (cq->fd_given.load(std::memory_order_relaxed) && !readable_now(cq->channel->fd))
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

bool rpma::cq_taken_not_handed(rpma_cq *cq)
{
	gpspm_engine *g = cq->gpspm;
	if (g == nullptr || cq->served_by_thread)
		return false;
	gpspm_take_begin(g);
	/* a connection down and drained hands out everything it holds */
	const bool ready =
	    cq->unread_count != 0 ||
	    (gpspm_holds(g) && (cq->flush->orphaned() || gpspm_turn_has_come(g, g->held[0].key)));
	gpspm_take_end(g);
	return ready;
}

/*
 * Waits up to timeout_ms (< 0: no limit) for one event on the CQ's own
 * channel, then acknowledges it and re-arms the CQ. RPMA_E_NO_COMPLETION
 * when none came, or another thread took it. poll() first, so that a
 * non-blocking fd does not spin.
 */
int rpma::cq_wait_event(rpma_cq *cq, int timeout_ms)
{
	/* the connection's events too: a peer that is gone ends the wait */
	const int ready = wait_channel_or_peer(cq->channel->fd, cq->events, cq->gpspm, timeout_ms);
	if (ready < 0)
		return ready;
	if (ready == 0)
		return RPMA_E_NO_COMPLETION;
	return take_event_now(cq);
}

/* A CQ that the library's GPSPM thread polls is not the application's. */
bool rpma::cq_application_may_use(const rpma_cq *cq)
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
	RPMA_CHECK_ARG(cq_application_may_use(cq));
	/*
	 * The application's from now on, blocking as librpma 1.x gave it: it may
	 * make it non-blocking itself, and rpma_cq_wait() then returns at once.
	 */
	rpma::mutex_guard guard(cq->event_lock);
	if (!cq->fd_given.load(std::memory_order_relaxed) && !cq->shared_channel) {
		const int flags = fcntl(cq->channel->fd, F_GETFL);
		if (flags < 0 || fcntl(cq->channel->fd, F_SETFL, flags & ~O_NONBLOCK))
			return RPMA_PROVIDER_FAILED(errno, "fcntl on the completion channel");
		cq->fd_given.store(true, std::memory_order_relaxed);
	}
	*fd = cq->channel->fd;
	return 0;
}

int rpma_cq_wait(struct rpma_cq *cq)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cq_application_may_use(cq));
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;
	/* the event of completions already read from the CQ went: no need to wait for it */
	if (cq_taken_not_handed(cq))
		return 0;

	/*
	 * An event already there is taken at once: the read and the re-arm,
	 * with a look first only where the application has the fd (it may be
	 * blocking). Only a wait that must sleep asks how the application set
	 * the fd, and watches the connection (a peer that dies sends no event
	 * to this channel).
	 */
	const int fd = cq->channel->fd;
	bool taken_by_another = false;
	bool given;
	{
		rpma::mutex_guard guard(cq->event_lock);
		given = cq->fd_given.load(std::memory_order_relaxed);
		if (!given || readable_now(fd)) {
			ibv_cq *ev_cq = nullptr;
			void *ev_ctx = nullptr;
			if (verbs::get_cq_event(cq->channel, &ev_cq, &ev_ctx) == 0)
				return cq->ack_event_of(ev_cq);
			const int err = errno;
			const bool none = err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
			/* the library's fd found empty: no error, the wait sleeps */
			if (given || !none)
				set_provider_error(err);
			if (!none) {
				/* a failed read, as librpma 1.x reported it */
				RPMA_LOG_ERROR("ibv_get_cq_event failed: errno %d", err);
				return RPMA_E_NO_COMPLETION;
			}
			taken_by_another = given;
		}
	}

	/* the library's own fd is non-blocking for itself: the application asked to wait */
	bool blocking = true;
	if (given) {
		const int fl = fcntl(fd, F_GETFL);
		blocking = fl >= 0 && !(fl & O_NONBLOCK);
	}
	/* the application's non-blocking fd: that read said it, as in 1.x */
	if (taken_by_another && !blocking)
		return RPMA_E_NO_COMPLETION;
	for (;;) {
		int ret = wait_1x(fd, cq->events, cq->gpspm, blocking);
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
		if (cq->events == nullptr) {
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

int rpma_cq_wait_completion(struct rpma_cq *cq, struct rpma_completion *cmpl, int timeout_ms)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cmpl != nullptr);
	RPMA_CHECK_ARG(cq_application_may_use(cq));
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
		ret = cq_wait_event(cq, left);
		if (ret == RPMA_E_NO_COMPLETION && timeout_ms >= 0 && left == 0)
			return rpma_cq_get_completion(cq, cmpl);
		if (ret == RPMA_E_NO_COMPLETION && cq->events && cq->events->is_down()) {
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

int rpma_cq_get_completions(struct rpma_cq *cq, struct rpma_completion *cmpls, int max_cmpls)
{
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(cmpls != nullptr);
	RPMA_CHECK_ARG(max_cmpls >= 1);
	RPMA_CHECK_ARG(cq_application_may_use(cq));

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

} /* extern "C" */
