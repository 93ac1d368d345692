/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_thread.cpp -- the thread that serves GPSPM on a connection's CQ
 */

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "gpspm_thread.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

namespace
{

/*
 * The channel of the connection's CQ is gone for good (the device was
 * removed): it would stay readable, and the thread would spin. The thread
 * stops watching it and waits for its stop only; the connection is dead
 * and its application learns that from its own calls.
 */
void channel_lost(pollfd fds[2], const char *why)
{
	RPMA_LOG_ERROR("the GPSPM thread stops serving: %s", why);
	fds[0].fd = -1;
}

/*
 * Serves what the CQ holds; how many entries that was (0 when the CQ was
 * empty or cannot be polled any more).
 */
int serve_all(rpma_cq *cq)
{
	int dropped;
	const int polled = cq->serve(&dropped);
	if (dropped)
		RPMA_LOG_WARNING("%d completions of the application's own operations on a "
				 "connection served by a GPSPM thread: dropped",
				 dropped);
	if (polled < 0) {
		RPMA_LOG_ERROR("the GPSPM thread cannot poll its CQ any more");
		return 0;
	}
	return polled;
}

/* A pause in a busy wait: the sibling hyperthread gets the core meanwhile. */
inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	asm volatile("yield");
#endif
}

void *serving_thread(void *arg)
{
	auto *server = static_cast<gpspm_server *>(arg);
	rpma_cq *cq = server->cq;
	pollfd fds[2] = { { cq->channel->fd, POLLIN, 0 }, { server->stop_fd, POLLIN, 0 } };
	/*
	 * Everything there is, then polling on for spin_ns after the last
	 * entry (a request that comes meanwhile is served without a wake-up),
	 * then sleeping until the CQ's next event.
	 */
	long long last_entry = monotonic_ns();
	while (!server->stopping.load(std::memory_order_relaxed)) {
		if (serve_all(cq) > 0) {
			if (server->spin_ns)
				last_entry = monotonic_ns();
			continue;
		}
		if (server->spin_ns && fds[0].fd >= 0 &&
		    monotonic_ns() - last_entry < server->spin_ns) {
			cpu_relax();
			continue;
		}

		if (::poll(fds, 2, -1) < 0 && errno != EINTR) {
			RPMA_PROVIDER_FAILED(errno, "poll in the GPSPM thread");
			break;
		}
		if (fds[1].revents)
			break;
		if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			channel_lost(fds, "the completion channel reports an error");
			continue;
		}
		if (fds[0].revents) {
			ibv_cq *ev_cq = nullptr;
			void *ev_ctx = nullptr;
			if (verbs::get_cq_event(cq->channel, &ev_cq, &ev_ctx) == 0) {
				(void)cq->ack_event_of(ev_cq);
			} else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
				RPMA_PROVIDER_FAILED(errno, "ibv_get_cq_event in the GPSPM thread");
				channel_lost(fds, "its events cannot be read");
			}
		}
		last_entry = server->spin_ns ? monotonic_ns() : 0;
	}
	return nullptr;
}

} /* namespace */

int gpspm_thread_start(rpma_cq *cq, uint32_t spin_us, gpspm_server **server_ptr)
{
	auto *server = rpma::make<gpspm_server>();
	if (server == nullptr)
		return RPMA_E_NOMEM;
	server->cq = cq;
	server->spin_ns = static_cast<long long>(spin_us) * 1000;
	server->stop_fd = eventfd(0, EFD_CLOEXEC);
	int ret = 0;
	if (server->stop_fd < 0) {
		ret = RPMA_PROVIDER_FAILED(errno, "eventfd");
		goto free_server;
	}
	/* the thread never blocks in ibv_get_cq_event: it polls the fd first */
	{
		const int flags = fcntl(cq->channel->fd, F_GETFL);
		if (flags < 0 || fcntl(cq->channel->fd, F_SETFL, flags | O_NONBLOCK)) {
			ret = RPMA_PROVIDER_FAILED(errno, "fcntl on the completion channel");
			goto close_fd;
		}
	}
	cq_give_to_thread(cq);
	if (int err = pthread_create(&server->thread, nullptr, serving_thread, server)) {
		ret = RPMA_PROVIDER_FAILED(err, "pthread_create");
		goto close_fd;
	}
	*server_ptr = server;
	return 0;

close_fd:
	close(server->stop_fd);
free_server:
	rpma::destroy(server);
	return ret;
}

void gpspm_thread_stop(gpspm_server **server_ptr)
{
	gpspm_server *server = *server_ptr;
	if (server == nullptr)
		return;
	server->stopping.store(true, std::memory_order_relaxed);
	const uint64_t one = 1;
	if (write(server->stop_fd, &one, sizeof(one)) != sizeof(one))
		RPMA_LOG_WARNING("eventfd write failed: errno %d", errno);
	pthread_join(server->thread, nullptr);
	close(server->stop_fd);
	rpma::destroy(server);
	*server_ptr = nullptr;
}

} /* namespace rpma */
