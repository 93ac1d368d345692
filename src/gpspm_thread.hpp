/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_thread.hpp -- RPMA_GPSPM_THREAD: a thread of the library polls a
 * connection's CQ, so that GPSPM requests are served without the
 * application polling
 */

#ifndef RPMA_GPSPM_THREAD_HPP
#define RPMA_GPSPM_THREAD_HPP

#include <atomic>
#include <cstdint>
#include <pthread.h>

struct rpma_cq;

namespace rpma
{

struct gpspm_server {
	rpma_cq *cq; /* the connection's main CQ: the thread's alone */
	pthread_t thread;
	int stop_fd; /* an eventfd: readable once the thread is to stop */
	/* set with stop_fd: a thread busy serving or spinning looks at this */
	std::atomic<bool> stopping{ false };
	/* how long the thread polls after its last request before it sleeps */
	long long spin_ns;
};

/*
 * Starts the thread on cq, the main CQ of a GPSPM connection, which it
 * polls from then on (the CQ refuses the application's calls); it keeps
 * polling for spin_us microseconds after the last entry it found before
 * it sleeps on the CQ's channel (rpma_conn_cfg_set_gpspm_spin).
 */
int gpspm_thread_start(rpma_cq *cq, uint32_t spin_us, gpspm_server **server_ptr);

/* Stops the thread and waits for it; before anything it polls goes. */
void gpspm_thread_stop(gpspm_server **server_ptr);

} /* namespace rpma */

#endif /* RPMA_GPSPM_THREAD_HPP */
