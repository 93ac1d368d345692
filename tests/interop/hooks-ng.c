// SPDX-License-Identifier: BSD-3-Clause
/*
 * hooks-ng.c -- the interop programs with the rpma-ng extensions, facing a
 * librpma 1.x peer
 *
 * server --versioned: the region offers GPSPM as well as read-after-write
 *     and goes out as the versioned descriptor (25 bytes), the peer
 *     configuration as the versioned one (6 bytes); a 1.x client must read
 *     them as its own forms.
 * client --gpspm: connect with RPMA_GPSPM_POLLED, which a 1.x server does
 *     not know; it must never be used.
 * client --expect-method=read-after-write|none: what
 *     rpma_conn_get_flush_method() must say for a persistent flush of the
 *     server's region; with none, rpma_flush() must refuse it, and the
 *     session flushes for visibility instead.
 */

#include "interop.h"

#include <string.h>

#ifndef RPMA_NG_EXTENSIONS
#error "hooks-ng.c needs this tree's librpma.h"
#endif

const char io_hook_usage[] = ", --versioned (server), --gpspm and "
			     "--expect-method=read-after-write|none (client)";

static bool versioned;
static bool gpspm;
static const char *expect_method;

bool io_hook_option(const char *name, const char *value)
{
	if (strcmp(name, "--versioned") == 0 && value == NULL)
		versioned = true;
	else if (strcmp(name, "--gpspm") == 0 && value == NULL)
		gpspm = true;
	else if (strcmp(name, "--expect-method") == 0 && value &&
		 (strcmp(value, "read-after-write") == 0 || strcmp(value, "none") == 0))
		expect_method = value;
	else
		return false;
	return true;
}

void io_hook_client_cfg(struct rpma_conn_cfg *cfg)
{
	if (gpspm)
		IO_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
}

static const char *method_str(enum rpma_flush_method m)
{
	switch (m) {
	case RPMA_FLUSH_METHOD_NONE:
		return "none";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "read-after-write";
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "native";
	}
	return "?";
}

void io_hook_client_connected(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			      const struct io_plan *plan)
{
	if (expect_method == NULL)
		return;
	enum rpma_flush_method persistent = RPMA_FLUSH_METHOD_GPSPM;
	enum rpma_flush_method visibility = RPMA_FLUSH_METHOD_GPSPM;
	if (strcmp(expect_method, "read-after-write") == 0) {
		IO_ASSERT(plan->flags & IO_PLAN_PERSISTENT);
		IO_OK(
		    rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &persistent));
		IO_EQ(persistent, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	} else {
		IO_ASSERT(!(plan->flags & IO_PLAN_PERSISTENT));
		IO_RET(
		    rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &persistent),
		    RPMA_E_NOSUPP);
		IO_EQ(persistent, RPMA_FLUSH_METHOD_NONE);
		/* refused before anything is posted: no GPSPM request goes out */
		io_log("a persistent flush must be refused (the library logs why):");
		IO_RET(rpma_flush(conn, dst, IO_WRITE_OFF, IO_WRITE_LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				  RPMA_F_COMPLETION_ALWAYS, NULL),
		       RPMA_E_NOSUPP);
	}
	/* every flushable region of a 1.x peer can be read after a write */
	IO_OK(rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_VISIBILITY, &visibility));
	IO_EQ(visibility, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	io_log("flush methods agreed%s: persistent %s, visibility %s",
	       gpspm ? " (GPSPM asked for on this side only)" : "", method_str(persistent),
	       method_str(visibility));
}

/* DRAM in this test: the persistence a GPSPM flush would call is a fence */
static void persist_fence(const void *ptr, size_t len)
{
	(void)ptr;
	(void)len;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void io_hook_server_describe(struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
			     struct io_pdata *pd)
{
	if (!versioned) {
		io_describe_1x(mr, pcfg, pd);
		return;
	}
	uint8_t plain[64], desc[64];
	size_t size = 0;
	IO_OK(rpma_mr_set_persist_fn(mr, persist_fence));
	IO_OK(rpma_mr_get_descriptor(mr, plain));
	IO_OK(rpma_mr_get_versioned_descriptor_size(mr, &size));
	IO_EQ(size, 25);
	IO_OK(rpma_mr_get_versioned_descriptor(mr, desc));
	/* the 1.x descriptor, then the trailer: magic, version, methods, crc */
	IO_ASSERT(memcmp(desc, plain, 21) == 0);
	IO_EQ(desc[21], 0xD7);
	IO_EQ(desc[22], 1);
	IO_EQ(desc[23], 1 | 2); /* read-after-write and GPSPM */
	io_pdata_add(pd, desc, size);

	IO_OK(rpma_peer_cfg_get_descriptor(pcfg, plain));
	IO_OK(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &size));
	IO_EQ(size, 6);
	IO_OK(rpma_peer_cfg_get_versioned_descriptor(pcfg, NULL, desc));
	IO_EQ(desc[0], plain[0]);
	IO_EQ(desc[1], 0xD7);
	IO_EQ(desc[2], 1);
	io_pdata_add(pd, desc, size);
	io_log("descriptors: the versioned forms, %d and %d bytes", 25, 6);
}
