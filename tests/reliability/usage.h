/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * usage.h -- what a process holds, to check that repeating something does
 * not make it hold more
 */

#ifndef RELIABILITY_USAGE_H
#define RELIABILITY_USAGE_H 1

#include <stddef.h>

struct t_usage {
	long fds;     /* open file descriptors */
	long rss_kib; /* resident memory */
	size_t heap;  /* bytes malloc has handed out and not got back */
};

void t_usage_now(struct t_usage *u);

/*
 * Fails the test unless the process holds no more descriptors than at
 * `before`, and its heap and resident memory grew by at most the bounds;
 * logs the figures either way.
 */
void t_usage_flat(const struct t_usage *before, size_t max_heap_growth, long max_rss_growth_kib,
		  const char *what);

#endif /* RELIABILITY_USAGE_H */
