// SPDX-License-Identifier: BSD-3-Clause
/*
 * usage.c -- see usage.h
 */

#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#include "common.h"
#include "usage.h"

static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	T_ASSERT(d != NULL);
	long n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	T_ASSERT(f != NULL);
	long size = 0, resident = 0;
	T_EQ(fscanf(f, "%ld %ld", &size, &resident), 2);
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void t_usage_now(struct t_usage *u)
{
	struct mallinfo2 mi = mallinfo2();
	u->heap = mi.uordblks + mi.hblkhd;
	u->fds = count_fds();
	u->rss_kib = rss_kib();
}

void t_usage_flat(const struct t_usage *before, size_t max_heap_growth, long max_rss_growth_kib,
		  const char *what)
{
	struct t_usage now;
	t_usage_now(&now);
	t_log("%s: %ld -> %ld descriptors, heap %zu -> %zu bytes, RSS %ld -> %ld KiB", what,
	      before->fds, now.fds, before->heap, now.heap, before->rss_kib, now.rss_kib);
	if (now.fds > before->fds)
		T_FAIL("%s: %ld descriptors more", what, now.fds - before->fds);
	if (now.heap > before->heap + max_heap_growth)
		T_FAIL("%s: the heap grew by %zu bytes (at most %zu)", what,
		       now.heap - before->heap, max_heap_growth);
	if (now.rss_kib > before->rss_kib + max_rss_growth_kib)
		T_FAIL("%s: RSS grew by %ld KiB (at most %ld)", what, now.rss_kib - before->rss_kib,
		       max_rss_growth_kib);
}
