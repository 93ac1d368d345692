/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_events.cpp -- a connection's events: the channel, the stash, the
 * peer's death, and the waits that watch for it
 */

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.hpp"
#include "conn_events.hpp"
#include "err.hpp"
#include "flush_slots.hpp"
#include "gpspm.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

/*
 * The fd the application waits on for connection events: readable while an
 * event waits in rdma_cm (evch) or in the stash (stash_fd). The channel
 * itself turns non-blocking: the library reads it only when it knows, or
 * may find, an event there.
 */
static int event_fd_new(conn_events *ev)
{
	int flags = fcntl(ev->evch->fd, F_GETFL);
	if (flags < 0 || fcntl(ev->evch->fd, F_SETFL, flags | O_NONBLOCK))
		return RPMA_PROVIDER_FAILED(errno, "fcntl(O_NONBLOCK) on the event channel");

	ev->stash_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ev->stash_fd < 0)
		return RPMA_PROVIDER_FAILED(errno, "eventfd");
	ev->event_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ev->event_fd < 0) {
		const int err = errno;
		close(ev->stash_fd);
		return RPMA_PROVIDER_FAILED(err, "epoll_create1");
	}
	const int watched_fds[] = { ev->evch->fd, ev->stash_fd };
	for (int fd : watched_fds) {
		epoll_event watched{};
		watched.events = EPOLLIN;
		watched.data.fd = fd;
		if (epoll_ctl(ev->event_fd, EPOLL_CTL_ADD, fd, &watched)) {
			const int err = errno;
			close(ev->event_fd);
			close(ev->stash_fd);
			return RPMA_PROVIDER_FAILED(err, "epoll_ctl");
		}
	}
	return 0;
}

int rpma::conn_events_open(conn_events *ev, rdma_cm_id *id, conn_flush *flush,
			   const void *private_data, uint8_t private_data_len)
{
	ev->id = id;
	ev->flush = flush;
	ev->private_data_len = 0;
	ev->set_private_data(private_data, private_data_len);
	ev->evch = verbs::create_event_channel();
	if (ev->evch == nullptr)
		return RPMA_PROVIDER_FAILED(errno, "rdma_create_event_channel");
	int ret = event_fd_new(ev);
	if (ret)
		goto destroy_evch;

	/*
	 * The id moves last: until then it stays on its own channel, through
	 * which the caller rejects the client when this fails. Moving it back
	 * could fail and leave it on a destroyed channel.
	 */
	if (verbs::migrate_id(id, ev->evch)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_migrate_id");
		goto close_fds;
	}
	return 0;

close_fds:
	close(ev->event_fd);
	close(ev->stash_fd);
destroy_evch:
	verbs::destroy_event_channel(ev->evch);
	return ret;
}

void rpma::conn_events_close(conn_events *ev, bool id_destroyed)
{
	if (id_destroyed) {
		verbs::destroy_event_channel(ev->evch);
	} else {
		/* librdmacm forbids destroying a channel that still has an id: leave it */
		RPMA_LOG_WARNING("the event channel of a connection whose id could not be "
				 "destroyed is left open");
	}
	close(ev->event_fd);
	close(ev->stash_fd);
}

static rpma_conn_event conn_event_from(rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		return RPMA_CONN_ESTABLISHED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return RPMA_CONN_UNREACHABLE;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return RPMA_CONN_LOST;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return RPMA_CONN_CLOSED;
	case RDMA_CM_EVENT_REJECTED:
		return RPMA_CONN_REJECTED;
	default:
		return RPMA_CONN_UNDEFINED;
	}
}

/* The events after which the connection carries nothing more. */
static bool event_ends_connection(rpma_conn_event event)
{
	return event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST ||
	       event == RPMA_CONN_REJECTED || event == RPMA_CONN_UNREACHABLE;
}

/*
 * The peer is gone: the QP goes to the error state, so that every work
 * request still posted completes (flushed, with an error status) instead of
 * waiting for an answer that cannot come.
 */
static void bring_down(conn_events *ev, rpma_conn_event why)
{
	if (ev->is_down())
		return;
	ev->down_at_ms.store(monotonic_ms(), std::memory_order_relaxed);
	if (ev->down.exchange(true, std::memory_order_acq_rel))
		return;
	if (ev->id->qp == nullptr)
		return;
	if (int err = verbs::modify_qp_to_error(ev->id->qp)) {
		(void)RPMA_PROVIDER_FAILED(err > 0 ? err : errno, "ibv_modify_qp(IBV_QPS_ERR)");
		return;
	}
	RPMA_LOG_INFO("connection %s: what is still outstanding completes with errors",
		      rpma_utils_conn_event_2str(why));
}

/*
 * Takes one event from the (non-blocking) channel, under the lock:
 * 0 and *event; RPMA_E_AGAIN when none is there yet; RPMA_E_NO_EVENT,
 * RPMA_E_UNKNOWN (an event that means nothing here, taken) or
 * RPMA_E_PROVIDER as librpma 1.x reported them.
 */
static int take_cm_event(conn_events *ev, rpma_conn_event *event)
{
	rdma_cm_event *cm_event = nullptr;
	if (verbs::get_cm_event(ev->evch, &cm_event)) {
		const int err = errno;
		/* no provider error for these: a watching wait must not leave one behind */
		if (err == EAGAIN || err == EWOULDBLOCK)
			return RPMA_E_AGAIN;
		if (err == ENODATA)
			return RPMA_E_NO_EVENT;
		return RPMA_PROVIDER_FAILED(err, "rdma_get_cm_event");
	}

	const rdma_cm_event_type type = cm_event->event;
	const rpma_conn_event conn_event = conn_event_from(type);
	if (conn_event == RPMA_CONN_ESTABLISHED && cm_event->param.conn.private_data &&
	    cm_event->param.conn.private_data_len) {
		/*
		 * The server's answer (active side). The bytes are gone once the
		 * event is acknowledged: keep them. On the passive side the event
		 * carries nothing and the client's request data stays.
		 */
		ev->set_private_data(cm_event->param.conn.private_data,
				     cm_event->param.conn.private_data_len);
	}
	if (conn_event == RPMA_CONN_REJECTED && ev->private_data_len == 0 &&
	    cm_event->param.conn.private_data && cm_event->param.conn.private_data_len) {
		/*
		 * A server that refused with an answer (rpma_conn_req_reject).
		 * On InfiniBand and RoCE the REJ always carries 148 bytes, the
		 * answer and zeros after it. What the connection already knows
		 * (a client's request data, on the passive side) stays.
		 */
		ev->set_private_data(cm_event->param.conn.private_data,
				     cm_event->param.conn.private_data_len);
	}
	if (event_ends_connection(conn_event))
		bring_down(ev, conn_event);

	if (verbs::ack_cm_event(cm_event))
		return RPMA_PROVIDER_FAILED(errno, "rdma_ack_cm_event");

	if (conn_event == RPMA_CONN_UNDEFINED) {
		RPMA_LOG_WARNING("unexpected connection event %d", static_cast<int>(type));
		return RPMA_E_UNKNOWN;
	}
	*event = conn_event;
	return 0;
}

/* The stash, under the lock; stash_fd is readable while it holds events. */
static void stash_push(conn_events *ev, rpma_conn_event event)
{
	conn_event_stash &st = ev->stash;
	st.events[(st.head + st.count) % conn_event_stash::CAPACITY] = event;
	if (st.count++ == 0) {
		const uint64_t one = 1;
		if (write(ev->stash_fd, &one, sizeof(one)) != sizeof(one))
			RPMA_LOG_WARNING("eventfd write failed: errno %d", errno);
	}
}

static bool stash_pop(conn_events *ev, rpma_conn_event *event)
{
	conn_event_stash &st = ev->stash;
	if (st.count == 0)
		return false;
	*event = st.events[st.head];
	st.head = (st.head + 1) % conn_event_stash::CAPACITY;
	if (--st.count == 0) {
		uint64_t value;
		if (read(ev->stash_fd, &value, sizeof(value)) != sizeof(value))
			RPMA_LOG_WARNING("eventfd read failed: errno %d", errno);
	}
	return true;
}

watch_result rpma::conn_watch_events(conn_events *ev)
{
	rpma::mutex_guard guard(ev->lock);
	watch_result result = watch_result::none;
	for (;;) {
		if (ev->stash.count == conn_event_stash::CAPACITY)
			return result == watch_result::took ? result : watch_result::stuck;
		rpma_conn_event event = RPMA_CONN_UNDEFINED;
		const int ret = take_cm_event(ev, &event);
		if (ret == RPMA_E_AGAIN)
			return result; /* none left */
		if (ret != 0 && ret != RPMA_E_UNKNOWN)
			return result == watch_result::took ? result : watch_result::stuck;
		stash_push(ev, event);
		result = watch_result::took;
	}
}

bool rpma::conn_drained(conn_events *ev)
{
	if (!ev->is_down())
		return false;
	if (monotonic_ms() < ev->down_at_ms.load(std::memory_order_relaxed) + CONN_DOWN_DRAIN_MS)
		return false;
	ev->flush->mark_orphaned();
	return true;
}

int rpma::wait_channel_or_peer(int channel_fd, conn_events *ev, gpspm_engine *gpspm, int timeout_ms)
{
	/* when to make the GPSPM watch again; -1: nothing to watch */
	long long gpspm_look_at = gpspm ? 0 : -1;
	const long long deadline = timeout_ms >= 0 ? monotonic_ms() + timeout_ms : -1;
	long long drain_deadline = -1;
	bool watch = ev != nullptr;
	/* when the channel's events could not be taken: when to try again */
	long long watch_again_at = -1;
	for (;;) {
		const bool down = ev && ev->is_down();
		if (watch_again_at >= 0 && monotonic_ms() >= watch_again_at) {
			watch = true;
			watch_again_at = -1;
		}
		long long until = deadline;
		/*
		 * A failed completion was taken and no event came: the queue
		 * pair is in the error state all the same, and a device that
		 * never flushes what it holds there (siw) sends no completion
		 * of it. The wait ends at the failure's drain time, once, so
		 * that the caller's polls sweep (cq_take.cpp's sweeps()).
		 */
		const long long failed = ev ? ev->flush->failed_at() : 0;
		if (failed != 0 && !down && !ev->flush->orphaned()) {
			const long long failed_deadline = failed + CONN_DOWN_DRAIN_MS;
			if (until < 0 || failed_deadline < until)
				until = failed_deadline;
		}
		if (down) {
			/* the events after this are the application's to read */
			watch = false;
			watch_again_at = -1;
			if (drain_deadline < 0)
				drain_deadline = ev->down_at_ms.load(std::memory_order_relaxed) +
						 CONN_DOWN_DRAIN_MS;
			if (until < 0 || drain_deadline < until)
				until = drain_deadline;
		}
		if (gpspm_look_at >= 0 && monotonic_ms() >= gpspm_look_at) {
			const int next = gpspm_watch_while_waiting(gpspm);
			gpspm_look_at = next < 0 ? -1 : monotonic_ms() + next;
		}
		long long wake_at = until;
		if (watch_again_at >= 0 && (wake_at < 0 || watch_again_at < wake_at))
			wake_at = watch_again_at;
		if (gpspm_look_at >= 0 && (wake_at < 0 || gpspm_look_at < wake_at))
			wake_at = gpspm_look_at;
		int wait_ms = -1;
		if (wake_at >= 0) {
			const long long left = wake_at - monotonic_ms();
			wait_ms =
			    left <= 0 ? 0 : (left > INT_MAX ? INT_MAX : static_cast<int>(left));
		}

		pollfd pfd[2] = { { channel_fd, POLLIN, 0 }, { -1, POLLIN, 0 } };
		if (watch)
			pfd[1].fd = ev->evch->fd;
		const int ready = ::poll(pfd, 2, wait_ms);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return RPMA_PROVIDER_FAILED(errno, "poll on the completion channel");
		}
		if (pfd[0].revents)
			return 1;
		if (pfd[1].revents) {
			/*
			 * None there: another thread took it; keep watching. A
			 * full stash or a failing channel: stop for a while rather
			 * than spin, then look again (the application may have
			 * read its events meanwhile).
			 */
			if (conn_watch_events(ev) == watch_result::stuck) {
				watch = false;
				watch_again_at = monotonic_ms() + WATCH_AGAIN_MS;
			}
			continue;
		}
		if (until >= 0 && monotonic_ms() >= until) {
			if (down)
				(void)conn_drained(ev);
			else if (failed != 0 && monotonic_ms() >= failed + CONN_DOWN_DRAIN_MS)
				ev->flush->mark_orphaned();
			return 0;
		}
	}
}

int rpma::wait_1x(int channel_fd, conn_events *ev, gpspm_engine *gpspm, bool blocking)
{
	if (ev == nullptr || !blocking)
		return WAIT_1X_EVENT; /* the read says at once whether an event is there */
	for (;;) {
		const int ret = wait_channel_or_peer(channel_fd, ev, gpspm, -1);
		if (ret < 0)
			return RPMA_E_NO_COMPLETION; /* as librpma 1.x reported a failed wait */
		if (ret > 0)
			return WAIT_1X_EVENT;
		if (ev->flush->any_in_flight())
			return WAIT_1X_ORPHANS;
		if (ev->is_down())
			break;
		/* a failed completion's drain time, with nothing left to sweep: wait on */
	}
	RPMA_LOG_ERROR("the connection is down and nothing more completes");
	return RPMA_E_NO_COMPLETION;
}

int rpma::conn_events_next(conn_events *ev, rpma_conn_event *event)
{
	for (;;) {
		{
			rpma::mutex_guard guard(ev->lock);
			rpma_conn_event taken = RPMA_CONN_UNDEFINED;
			/* what a wait for completions took first comes first */
			if (stash_pop(ev, &taken)) {
				if (taken == RPMA_CONN_UNDEFINED)
					return RPMA_E_UNKNOWN; /* logged when taken */
				*event = taken;
				return 0;
			}
			int ret = take_cm_event(ev, &taken);
			if (ret == 0)
				*event = taken;
			else if (ret == RPMA_E_NO_EVENT)
				set_provider_error(ENODATA); /* as librpma 1.x kept it */
			if (ret != RPMA_E_AGAIN)
				return ret;
		}

		/* none yet: the fd handed out says whether to wait for one */
		const int fl = fcntl(ev->event_fd, F_GETFL);
		if (fl < 0)
			return RPMA_PROVIDER_FAILED(errno, "fcntl(F_GETFL) on the event fd");
		if (fl & O_NONBLOCK) {
			set_provider_error(EAGAIN);
			return RPMA_E_NO_EVENT;
		}
		pollfd pfd{ ev->event_fd, POLLIN, 0 };
		if (::poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return RPMA_PROVIDER_FAILED(errno, "poll on the event fd");
	}
}

bool rpma::conn_events_is_up(conn_events *ev)
{
	if (!ev->is_down())
		(void)conn_watch_events(ev);
	const bool up = !ev->is_down();
	/* a poller that asks learns of the flushes that cannot complete any more */
	if (!up)
		(void)conn_drained(ev);
	return up;
}
