// SPDX-License-Identifier: BSD-3-Clause
/*
 * pmem.c -- persistent memory for the rdma tests: the device DAX the VM
 * provides (RPMA_TEST_PMEM) mapped with libpmem2, or DRAM without one
 */

#include "common.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef T_HAVE_PMEM2
#include <libpmem2.h>
#endif

struct t_persist_log t_persist_log;

static unsigned char *pmem_base;
static void (*pmem_persist)(const void *ptr, size_t len);

static void recording_persist(const void *ptr, size_t len)
{
	t_persist_log.calls++;
	t_persist_log.offset = (size_t)((const unsigned char *)ptr - pmem_base);
	t_persist_log.len = len;
	t_persist_log.total += len;
	if (pmem_persist)
		pmem_persist(ptr, len);
}

bool t_pmem_is_device(void)
{
#ifdef T_HAVE_PMEM2
	const char *path = getenv("RPMA_TEST_PMEM");
	return path && *path;
#else
	return false;
#endif
}

void *t_pmem_map(size_t size, rpma_persist_fn **persist)
{
	const char *path = getenv("RPMA_TEST_PMEM");
	memset(&t_persist_log, 0, sizeof(t_persist_log));
	*persist = recording_persist;
#ifdef T_HAVE_PMEM2
	if (path && *path) {
		int fd = open(path, O_RDWR);
		if (fd < 0)
			T_FAIL("cannot open %s", path);
		struct pmem2_config *cfg = NULL;
		struct pmem2_source *src = NULL;
		struct pmem2_map *map = NULL;
		if (pmem2_config_new(&cfg) ||
		    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
		    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&map, cfg, src))
			T_FAIL("cannot map %s: %s", path, pmem2_errormsg());
		if (pmem2_map_get_size(map) < size)
			T_FAIL("%s is smaller than %zu bytes", path, size);
		pmem_base = pmem2_map_get_address(map);
		pmem_persist = pmem2_get_persist_fn(map);
		/* the mapping lives as long as the process */
		memset(pmem_base, 0, size);
		pmem_persist(pmem_base, size);
		t_log("persistent memory: %s", path);
		return pmem_base;
	}
#else
	(void)path;
#endif
	pmem_base = t_alloc(size);
	pmem_persist = NULL;
	t_log("persistent memory: none, DRAM stands in");
	return pmem_base;
}
