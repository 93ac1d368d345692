/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 16-completion-api share
 */

#ifndef EXAMPLE_COMPLETION_API_COMMON_H
#define EXAMPLE_COMPLETION_API_COMMON_H 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

#define CHUNKS	    32
#define CHUNK_SIZE  1024
#define REGION_SIZE (CHUNKS * CHUNK_SIZE)

/* what chunk i holds once written: a byte that differs from its neighbours' */
static inline uint8_t chunk_byte(int i)
{
	return (uint8_t)(i * 7 + 1);
}

struct server_pdata {
	uint8_t mr_desc_size;
	uint8_t mr_desc[];
};

#define PDATA_MAX 196

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_COMPLETION_API_COMMON_H */
