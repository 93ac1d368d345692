// SPDX-License-Identifier: BSD-3-Clause
/*
 * hooks-1x.c -- the interop programs as any librpma 1.x application: no
 * options of their own, the 1.x descriptors
 */

#include "interop.h"

const char io_hook_usage[] = "";

bool io_hook_option(const char *name, const char *value)
{
	(void)name;
	(void)value;
	return false;
}

void io_hook_client_cfg(struct rpma_conn_cfg *cfg)
{
	(void)cfg;
}

void io_hook_client_connected(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			      const struct io_plan *plan)
{
	(void)conn;
	(void)dst;
	(void)plan;
}

void io_hook_server_describe(struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
			     struct io_pdata *pd)
{
	io_describe_1x(mr, pcfg, pd);
}
