/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- the log of 14-atomic-write-log, as both sides see it
 */

#ifndef EXAMPLE_ATOMIC_WRITE_LOG_COMMON_H
#define EXAMPLE_ATOMIC_WRITE_LOG_COMMON_H 1

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

/*
 * The log: a header, then entries back to back. An entry is a line of
 * text ending in '\n'. The header's `used` says how many bytes of entries
 * are committed: bytes past it are garbage, whatever they hold. A client
 * appends by writing its entry past `used`, flushing it, then replacing
 * `used` with one 8-byte atomic write, flushed in turn. A crash at any
 * moment leaves either the old `used` or the new one, never a torn value,
 * and never a `used` that covers bytes not yet flushed.
 */
#define LOG_SIGNATURE	"RPMALOG"
#define LOG_SIZE	(64 * 1024)
#define LOG_DATA_OFFSET 64
#define LOG_DATA_SIZE	(LOG_SIZE - LOG_DATA_OFFSET)

struct log_header {
	char signature[8]; /* LOG_SIGNATURE, NUL included */
	uint64_t used;	   /* committed bytes of entries, little-endian */
};

#define LOG_USED_OFFSET 8 /* offsetof(struct log_header, used): 8-aligned */

/* the server's private data: its region's and its peer configuration's descriptors */
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

#endif /* EXAMPLE_ATOMIC_WRITE_LOG_COMMON_H */
