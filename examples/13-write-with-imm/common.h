/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 13-write-with-imm share
 */

#ifndef EXAMPLE_WRITE_WITH_IMM_COMMON_H
#define EXAMPLE_WRITE_WITH_IMM_COMMON_H 1

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

#define REGION_SIZE 4096 /* the server's region, the client's writes' target */
#define WRITES	    3	 /* the client writes three pieces: see client.c */
#define WAIT_MS	    10000

/*
 * The immediate value of each write says where it wrote: the offset in
 * the high 16 bits, the length in the low 16 bits.
 */
#define IMM_OF(offset, len) ((uint32_t)(offset) << 16 | (uint32_t)(len))
#define IMM_OFFSET(imm)	    ((imm) >> 16)
#define IMM_LEN(imm)	    ((imm)&0xffff)

/* the server's private data: the descriptor of its region */
struct server_pdata {
	uint8_t mr_desc_size;
	uint8_t mr_desc[];
};

#define PDATA_MAX 196

/*
 * Immediate data is an InfiniBand (and RoCE) feature: iWARP, the
 * transport of siw, has none. Say so instead of failing later.
 */
static inline bool has_immediate_data(const char *who, struct ibv_context *ibv_ctx)
{
	if (ibv_ctx->device->transport_type != IBV_TRANSPORT_IWARP)
		return true;
	fprintf(stderr,
		"%s: %s is an iWARP device (siw is one): iWARP has no immediate data, which this "
		"example is about; run it over RoCE or InfiniBand\n",
		who, ibv_get_device_name(ibv_ctx->device));
	return false;
}

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_WRITE_WITH_IMM_COMMON_H */
