/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 12-send-with-imm share
 */

#ifndef EXAMPLE_SEND_WITH_IMM_COMMON_H
#define EXAMPLE_SEND_WITH_IMM_COMMON_H 1

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

#define MSG_SIZE 64
#define MESSAGES 3 /* the client sends three: see client.c */
#define WAIT_MS	 10000

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

#endif /* EXAMPLE_SEND_WITH_IMM_COMMON_H */
