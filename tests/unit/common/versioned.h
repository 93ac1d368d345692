/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * versioned.h -- descriptors as a peer would send them, built byte by byte
 * by the test (not by the library), in both forms: librpma 1.x's and the
 * versioned one with its trailer
 *
 * Region: [0..7] address, [8..15] length, [16..19] rkey, [20] usage (all
 * little-endian), then [21] 0xD7, [22] version 1, [23] flush methods,
 * [24] crc8 of bytes 0..23.
 * Peer configuration: [0] direct write to PMem, then [1] 0xD7, [2] version
 * 1, [3] flags (bit 0: GPSPM), [4] GPSPM depth, [5] crc8 of bytes 0..4.
 */

#ifndef CONN_VERSIONED_H
#define CONN_VERSIONED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crc8_ref.h"
#include "fixture.h"

#define VD_REGION_SIZE	  25
#define VD_PEER_CFG_SIZE  6
#define VD_MAGIC	  0xD7
#define VD_VERSION	  1
#define VD_RAW		  0x01 /* read-after-write */
#define VD_GPSPM	  0x02
#define VD_NATIVE_VIS	  0x04
#define VD_NATIVE_PERS	  0x08
#define VD_NATIVE_AW	  0x10 /* the target's device takes RDMA ATOMIC WRITE */
#define VD_PEER_CFG_GPSPM 0x01

static inline void vd_put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t vd_get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* a versioned region descriptor with a valid trailer */
static inline void vd_region(uint8_t d[VD_REGION_SIZE], uint64_t addr, uint64_t len, uint32_t rkey,
			     uint8_t usage, uint8_t methods)
{
	vd_put_le(d, addr, 8);
	vd_put_le(d + 8, len, 8);
	vd_put_le(d + 16, rkey, 4);
	d[20] = usage;
	d[21] = VD_MAGIC;
	d[22] = VD_VERSION;
	d[23] = methods;
	d[24] = crc8_ref(d, 24);
}

/* a versioned peer configuration descriptor with a valid trailer */
static inline void vd_peer_cfg(uint8_t d[VD_PEER_CFG_SIZE], bool direct_write, uint8_t flags,
			       uint8_t depth)
{
	d[0] = direct_write ? 1 : 0;
	d[1] = VD_MAGIC;
	d[2] = VD_VERSION;
	d[3] = flags;
	d[4] = depth;
	d[5] = crc8_ref(d, 5);
}

static inline struct rpma_mr_remote *vd_decode_region(const uint8_t *d, size_t n)
{
	struct rpma_mr_remote *mr = NULL;
	assert_int_equal(rpma_mr_remote_from_descriptor(d, n, &mr), 0);
	assert_non_null(mr);
	return mr;
}

/* decodes n bytes of a peer configuration descriptor and applies them to conn */
static inline void vd_apply(struct rpma_conn *conn, const uint8_t *d, size_t n)
{
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_from_descriptor(d, n, &pcfg), 0);
	assert_int_equal(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	/* the connection keeps what it needs, not the object */
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
}

/* applies what a target announces: direct write or not, a GPSPM depth or none */
static inline void vd_apply_target(struct rpma_conn *conn, bool direct_write, uint8_t depth)
{
	uint8_t d[VD_PEER_CFG_SIZE];
	vd_peer_cfg(d, direct_write, depth ? VD_PEER_CFG_GPSPM : 0, depth);
	vd_apply(conn, d, sizeof(d));
}

/* a connection configuration carrying GPSPM in mode with a receive queue of rq_size */
static inline struct rpma_conn_cfg *vd_gpspm_cfg(enum rpma_gpspm_mode mode, uint32_t rq_size)
{
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, mode), 0);
	assert_int_equal(rpma_conn_cfg_set_rq_size(cfg, rq_size), 0);
	return cfg;
}

#endif /* CONN_VERSIONED_H */
