/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 03-read-to-pmem share
 */

#ifndef EXAMPLE_READ_TO_PMEM_COMMON_H
#define EXAMPLE_READ_TO_PMEM_COMMON_H 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

/* the server's text, its NUL included, fits in this many bytes */
#define TEXT_SIZE 256

/*
 * The private data the server accepts the connection with: the length of
 * its text and the descriptor of the region that holds it. All bytes, so
 * that the layout has no padding.
 */
struct server_pdata {
	uint8_t text_len;     /* bytes to read, the NUL included */
	uint8_t mr_desc_size; /* rpma_mr_get_descriptor_size() */
	uint8_t mr_desc[];    /* rpma_mr_get_descriptor() */
};

#define PDATA_MAX 196 /* rdma_cm's limit for an acceptance (InfiniBand, RoCE) */

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_READ_TO_PMEM_COMMON_H */
