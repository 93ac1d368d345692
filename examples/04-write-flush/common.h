/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 04-write-flush agree on
 */

#ifndef EXAMPLE_WRITE_FLUSH_COMMON_H
#define EXAMPLE_WRITE_FLUSH_COMMON_H 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

/*
 * The server exposes this many bytes at the start of its persistent memory;
 * the client writes a NUL-terminated message there.
 */
#define MSG_AREA_SIZE 4096

/*
 * The server's private data, sent with its answer to the connection request:
 * two descriptors packed one after the other. rdma_cm carries at most 196
 * bytes of private data when accepting an RC connection over InfiniBand or
 * RoCE, which is far more than both descriptors need.
 */
struct server_pdata {
	uint8_t mr_desc_size;	/* rpma_mr_get_descriptor_size() */
	uint8_t pcfg_desc_size; /* rpma_peer_cfg_get_descriptor_size() */
	uint8_t descriptors[];	/* the region's, then the peer configuration's */
};

#define PDATA_MAX 196

/* report a failed librpma call; the rdma-core errno too, when there is one */
static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_WRITE_FLUSH_COMMON_H */
