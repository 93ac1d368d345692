/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 01-connection share
 */

#ifndef EXAMPLE_CONNECTION_COMMON_H
#define EXAMPLE_CONNECTION_COMMON_H 1

#include <stdio.h>
#include <string.h>

#include <librpma.h>

/*
 * rdma_cm carries at most 56 bytes of private data with a connection
 * request and 196 with its acceptance (InfiniBand and RoCE). Our strings
 * stay below the smaller limit, their NUL included.
 */
#define PDATA_STR_MAX 56

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

/*
 * Prints private data that should hold a string. It came from the network:
 * it may lack its NUL, and the transport may have padded it with zeros.
 */
static inline void print_pdata(const char *who, const char *what,
			       const struct rpma_conn_private_data *pdata)
{
	if (pdata->ptr == NULL || pdata->len == 0) {
		printf("%s: %s: none\n", who, what);
		return;
	}
	printf("%s: %s: \"%.*s\"\n", who, what, (int)strnlen(pdata->ptr, pdata->len),
	       (const char *)pdata->ptr);
}

#endif /* EXAMPLE_CONNECTION_COMMON_H */
