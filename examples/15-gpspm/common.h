/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 15-gpspm share
 */

#ifndef EXAMPLE_GPSPM_COMMON_H
#define EXAMPLE_GPSPM_COMMON_H 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

/*
 * The server's region: SLOTS slots of SLOT_SIZE bytes. The client writes
 * one NUL-terminated line into each slot it uses, and makes each
 * persistent with a flush of its own.
 */
#define SLOT_SIZE   64
#define SLOTS	    256
#define REGION_SIZE (SLOT_SIZE * SLOTS)

/*
 * GPSPM requests the target takes at a time: its receive queue, which the
 * library keeps posted (at most 255). The client learns it from the
 * versioned peer configuration; more flushes in flight are refused with
 * RPMA_E_AGAIN until an answer comes.
 */
#define GPSPM_DEPTH 8

/*
 * The server's private data: two descriptors, each after its length.
 * Both are the versioned forms: the region's names the flush methods it
 * offers, the peer configuration's says that the server serves GPSPM.
 */
struct server_pdata {
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint8_t descriptors[];
};

#define PDATA_MAX 196
#define WAIT_MS	  10000

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

/* the slots holding a line, from the first; the last one's address */
static inline int used_slots(const char *region, const char **last)
{
	int n = 0;

	*last = NULL;
	while (n < SLOTS) {
		const char *slot = region + (size_t)n * SLOT_SIZE;
		size_t len = strnlen(slot, SLOT_SIZE);

		if (len == 0 || len == SLOT_SIZE)
			break;
		*last = slot;
		n++;
	}
	return n;
}

#endif /* EXAMPLE_GPSPM_COMMON_H */
