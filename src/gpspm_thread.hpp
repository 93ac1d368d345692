/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_thread.hpp -- RPMA_GPSPM_THREAD: a thread of the library polls a
 * connection's CQ, so that GPSPM requests are served without the
 * application polling
 */

#ifndef RPMA_GPSPM_THREAD_HPP
#define RPMA_GPSPM_THREAD_HPP

#include <pthread.h>

struct rpma_cq;

namespace rpma
{

struct gpspm_server {
	rpma_cq *cq; /* the connection's main CQ: the thread's alone */
	pthread_t thread;
	int stop_fd; /* an eventfd: readable once the thread is to stop */
};

/*
 * Starts the thread on cq, the main CQ of a GPSPM connection, which it
 * polls from then on (the CQ refuses the application's calls).
 */
int gpspm_thread_start(rpma_cq *cq, gpspm_server **server_ptr);

/* Stops the thread and waits for it; before anything it polls goes. */
void gpspm_thread_stop(gpspm_server **server_ptr);

} /* namespace rpma */

#endif /* RPMA_GPSPM_THREAD_HPP */
