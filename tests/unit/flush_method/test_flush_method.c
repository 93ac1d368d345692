/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_flush_method.c -- the flush method both peers agree on: what
 * rpma_conn_get_flush_method says and what rpma_flush posts, for every
 * combination of region descriptor, target configuration, local connection
 * and flush type; and how the decoders read descriptors whose trailer is
 * damaged, foreign or of an unknown version
 */

#include <string.h>

#include "fixture.h"
#include "versioned.h"

#define RADDR 0x7f0000300000ULL
#define RLEN  8192
#define RKEY  0x0077aa55U
#define USAGE                                                                                      \
	(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |                           \
	 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
#define OFFSET 256
#define LEN    1024

static const enum rpma_flush_type TYPES[] = { RPMA_FLUSH_TYPE_PERSISTENT,
					      RPMA_FLUSH_TYPE_VISIBILITY };

static int ctx;

/* what a target's region descriptor can look like */
enum form {
	LEGACY,		     /* librpma 1.x: 21 bytes */
	VERSIONED,	     /* read-after-write offered */
	VERSIONED_WITH_GPSPM /* read-after-write and GPSPM offered */
};

static const char *form_name(enum form f)
{
	return f == LEGACY ? "legacy" : f == VERSIONED ? "versioned" : "versioned+GPSPM";
}

static struct rpma_mr_remote *region(enum form f, uint8_t usage)
{
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, usage,
		  f == VERSIONED_WITH_GPSPM ? VD_RAW | VD_GPSPM : VD_RAW);
	return vd_decode_region(d, f == LEGACY ? 21 : VD_REGION_SIZE);
}

/* a connection that carries GPSPM (POLLED, 8 receives) or not */
static struct rpma_conn *connection(bool gpspm)
{
	struct rpma_conn_cfg *cfg = gpspm ? vd_gpspm_cfg(RPMA_GPSPM_POLLED, 8) : NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	if (cfg)
		fx_cfg_delete(&cfg);
	return conn;
}

/*
 * The rule: a visibility flush reads after the writes; a persistent one
 * does too where the target declared direct write to PMem, and otherwise
 * asks the target's CPU (GPSPM) where the region offers it and both sides
 * carry it. Nothing else.
 */
static enum rpma_flush_method rule(enum form f, bool direct_write, uint8_t target_depth,
				   bool local_gpspm, enum rpma_flush_type type)
{
	if (type == RPMA_FLUSH_TYPE_VISIBILITY)
		return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	if (direct_write)
		return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	if (f == VERSIONED_WITH_GPSPM && target_depth && local_gpspm)
		return RPMA_FLUSH_METHOD_GPSPM;
	return RPMA_FLUSH_METHOD_NONE;
}

static enum rpma_flush_method method_of(struct rpma_conn *conn, struct rpma_mr_remote *rmr,
					enum rpma_flush_type type)
{
	enum rpma_flush_method m = (enum rpma_flush_method)0x5a;
	int ret = rpma_conn_get_flush_method(conn, rmr, type, &m);
	assert_int_equal(ret, m == RPMA_FLUSH_METHOD_NONE ? RPMA_E_NOSUPP : 0);
	return m;
}

/* what rpma_flush posts must be what the method says */
static void expect_flush_posts(struct rpma_conn *conn, struct rpma_mr_remote *rmr,
			       enum rpma_flush_type type, enum rpma_flush_method method)
{
	unsigned sends = fake_verbs_sends();
	unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	int ret = rpma_flush(conn, rmr, OFFSET, LEN, type, RPMA_F_COMPLETION_ALWAYS, &ctx);
	if (method == RPMA_FLUSH_METHOD_NONE) {
		assert_int_equal(ret, RPMA_E_NOSUPP);
		assert_int_equal(fake_verbs_sends(), sends);
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
		return;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(fake_verbs_sends(), sends + 1);
	const struct fake_send_record *r = fake_verbs_send(sends);
	assert_true(r->wr.send_flags & IBV_SEND_SIGNALED);
	/* the work request names the flush by a slot of the library's */
	assert_true(r->wr.wr_id != (uintptr_t)&ctx);
	if (method == RPMA_FLUSH_METHOD_READ_AFTER_WRITE) {
		assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
		assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
		assert_true(r->wr.wr.rdma.remote_addr >= RADDR + OFFSET);
		assert_true(r->wr.wr.rdma.remote_addr + r->sge[0].length <= RADDR + OFFSET + LEN);
		return;
	}
	assert_int_equal(method, RPMA_FLUSH_METHOD_GPSPM);
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_true(r->wr.send_flags & IBV_SEND_INLINE);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].length, 32);
	const uint8_t *m = r->inline_data;
	assert_int_equal(vd_get_le(m, 2), 0x5047);
	assert_int_equal(m[3], 1); /* a request */
	assert_int_equal(vd_get_le(m + 12, 4), RKEY);
	assert_int_equal(vd_get_le(m + 16, 8), RADDR + OFFSET);
	assert_int_equal(vd_get_le(m + 24, 8), LEN);
}

/* every combination, one connection each */
static void method__every_combination(void **state)
{
	(void)state;
	static const uint8_t depths[] = { 0, 4 };
	unsigned seen[4] = { 0 };
	for (int f = LEGACY; f <= VERSIONED_WITH_GPSPM; f++)
		for (int direct = 0; direct <= 1; direct++)
			for (size_t d = 0; d < 2; d++)
				for (int local = 0; local <= 1; local++)
					for (size_t t = 0; t < 2; t++) {
						struct rpma_conn *conn = connection(local);
						struct rpma_mr_remote *rmr =
						    region((enum form)f, USAGE);
						vd_apply_target(conn, direct, depths[d]);
						enum rpma_flush_method want =
						    rule((enum form)f, direct, depths[d], local,
							 TYPES[t]);
						enum rpma_flush_method got =
						    method_of(conn, rmr, TYPES[t]);
						if (got != want)
							fail_msg("%s region, direct write %d, "
								 "target depth %u, local GPSPM %d, "
								 "%s: method %d, expected %d",
								 form_name((enum form)f), direct,
								 depths[d], local,
								 t ? "visibility" : "persistent",
								 got, want);
						expect_flush_posts(conn, rmr, TYPES[t], want);
						seen[want]++;
						fx_mr_remote_delete(&rmr);
						fx_conn_delete(&conn);
					}
	/* the combinations reach every method this device can use */
	assert_true(seen[RPMA_FLUSH_METHOD_NONE] > 0);
	assert_true(seen[RPMA_FLUSH_METHOD_READ_AFTER_WRITE] > 0);
	assert_int_equal(seen[RPMA_FLUSH_METHOD_GPSPM], 1);
	assert_int_equal(seen[RPMA_FLUSH_METHOD_NATIVE], 0);
}

/* the same, with a target that also answers as librpma 1.x (a 1-byte descriptor) */
static void method__legacy_target(void **state)
{
	(void)state;
	for (int f = LEGACY; f <= VERSIONED_WITH_GPSPM; f++)
		for (int direct = 0; direct <= 1; direct++)
			for (int local = 0; local <= 1; local++) {
				struct rpma_conn *conn = connection(local);
				struct rpma_mr_remote *rmr = region((enum form)f, USAGE);
				const uint8_t byte = (uint8_t)direct;
				vd_apply(conn, &byte, 1);
				for (size_t t = 0; t < 2; t++) {
					enum rpma_flush_method want =
					    rule((enum form)f, direct, 0, local, TYPES[t]);
					assert_int_equal(method_of(conn, rmr, TYPES[t]), want);
				}
				fx_mr_remote_delete(&rmr);
				fx_conn_delete(&conn);
			}
}

/* the reasons a flush is refused are logged, each its own */
static void method__refusals_are_logged(void **state)
{
	(void)state;
	struct rpma_conn *plain = connection(false);
	struct rpma_mr_remote *gpspm = region(VERSIONED_WITH_GPSPM, USAGE);
	struct rpma_mr_remote *legacy = region(LEGACY, USAGE);
	vd_apply_target(plain, false, 4);

	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(plain, gpspm, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_non_null(strstr(fx_log_last(), "GPSPM"));
	assert_non_null(strstr(fx_log_last(), "rpma_conn_cfg_set_gpspm"));

	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(plain, legacy, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_non_null(strstr(fx_log_last(), "direct write"));

	fx_mr_remote_delete(&legacy);
	fx_mr_remote_delete(&gpspm);
	fx_conn_delete(&plain);
}

/* the usage bits of the region still rule, whatever methods it offers */
static void method__usage_rules(void **state)
{
	(void)state;
	struct rpma_conn *conn = connection(true);
	vd_apply_target(conn, true, 4);
	struct rpma_mr_remote *vis_only =
	    region(VERSIONED_WITH_GPSPM, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_mr_remote *pers_only =
	    region(VERSIONED_WITH_GPSPM, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_mr_remote *none = region(VERSIONED_WITH_GPSPM, RPMA_MR_USAGE_WRITE_DST);

	assert_int_equal(method_of(conn, vis_only, RPMA_FLUSH_TYPE_PERSISTENT),
			 RPMA_FLUSH_METHOD_NONE);
	assert_int_equal(method_of(conn, vis_only, RPMA_FLUSH_TYPE_VISIBILITY),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	assert_int_equal(method_of(conn, pers_only, RPMA_FLUSH_TYPE_PERSISTENT),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	assert_int_equal(method_of(conn, pers_only, RPMA_FLUSH_TYPE_VISIBILITY),
			 RPMA_FLUSH_METHOD_NONE);
	assert_int_equal(method_of(conn, none, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	assert_int_equal(method_of(conn, none, RPMA_FLUSH_TYPE_VISIBILITY), RPMA_FLUSH_METHOD_NONE);
	expect_flush_posts(conn, pers_only, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_FLUSH_METHOD_NONE);
	assert_non_null(strstr(fx_log_last(), "visibility"));

	fx_mr_remote_delete(&none);
	fx_mr_remote_delete(&pers_only);
	fx_mr_remote_delete(&vis_only);
	fx_conn_delete(&conn);
}

/* a region that offers GPSPM only: persistent flushes through it, nothing else */
static void method__gpspm_only_region(void **state)
{
	(void)state;
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, USAGE, VD_GPSPM);
	struct rpma_mr_remote *rmr = vd_decode_region(d, sizeof(d));

	struct rpma_conn *conn = connection(true);
	/* even where writes land in PMem: the region grants no remote read */
	vd_apply_target(conn, true, 4);
	assert_int_equal(method_of(conn, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_GPSPM);
	assert_int_equal(method_of(conn, rmr, RPMA_FLUSH_TYPE_VISIBILITY), RPMA_FLUSH_METHOD_NONE);
	expect_flush_posts(conn, rmr, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_FLUSH_METHOD_GPSPM);
	expect_flush_posts(conn, rmr, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_FLUSH_METHOD_NONE);
	fx_conn_delete(&conn);

	struct rpma_conn *plain = connection(false);
	vd_apply_target(plain, true, 4);
	assert_int_equal(method_of(plain, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	fx_conn_delete(&plain);
	fx_mr_remote_delete(&rmr);
}

/* native flush offered by the region is no use on a device without it */
static void method__native_only_region(void **state)
{
	(void)state;
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, USAGE, VD_NATIVE_VIS | VD_NATIVE_PERS);
	struct rpma_mr_remote *rmr = vd_decode_region(d, sizeof(d));
	struct rpma_conn *conn = connection(true);
	vd_apply_target(conn, true, 4);
	for (size_t t = 0; t < 2; t++) {
		assert_int_equal(method_of(conn, rmr, TYPES[t]), RPMA_FLUSH_METHOD_NONE);
		expect_flush_posts(conn, rmr, TYPES[t], RPMA_FLUSH_METHOD_NONE);
	}
	fx_conn_delete(&conn);
	fx_mr_remote_delete(&rmr);
}

/* until the target's configuration is applied, no GPSPM; applying again replaces it */
static void method__apply_replaces(void **state)
{
	(void)state;
	struct rpma_conn *conn = connection(true);
	struct rpma_mr_remote *rmr = region(VERSIONED_WITH_GPSPM, USAGE);
	const enum rpma_flush_type P = RPMA_FLUSH_TYPE_PERSISTENT;

	assert_int_equal(method_of(conn, rmr, P), RPMA_FLUSH_METHOD_NONE);
	assert_int_equal(method_of(conn, rmr, RPMA_FLUSH_TYPE_VISIBILITY),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	vd_apply_target(conn, false, 4);
	assert_int_equal(method_of(conn, rmr, P), RPMA_FLUSH_METHOD_GPSPM);
	vd_apply_target(conn, true, 4);
	assert_int_equal(method_of(conn, rmr, P), RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	vd_apply_target(conn, false, 0);
	assert_int_equal(method_of(conn, rmr, P), RPMA_FLUSH_METHOD_NONE);
	vd_apply_target(conn, false, 2);
	assert_int_equal(method_of(conn, rmr, P), RPMA_FLUSH_METHOD_GPSPM);
	const uint8_t legacy = 0;
	vd_apply(conn, &legacy, 1);
	assert_int_equal(method_of(conn, rmr, P), RPMA_FLUSH_METHOD_NONE);

	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&conn);
}

static void method__args(void **state)
{
	(void)state;
	struct rpma_conn *conn = connection(false);
	struct rpma_mr_remote *rmr = region(LEGACY, USAGE);
	enum rpma_flush_method m = (enum rpma_flush_method)0x5a;
	FX_INVAL(rpma_conn_get_flush_method(NULL, rmr, RPMA_FLUSH_TYPE_VISIBILITY, &m));
	FX_INVAL(rpma_conn_get_flush_method(conn, NULL, RPMA_FLUSH_TYPE_VISIBILITY, &m));
	FX_INVAL(rpma_conn_get_flush_method(conn, rmr, (enum rpma_flush_type)2, &m));
	FX_INVAL(rpma_conn_get_flush_method(conn, rmr, (enum rpma_flush_type) - 1, &m));
	assert_int_equal(m, 0x5a);
	FX_INVAL(rpma_conn_get_flush_method(conn, rmr, RPMA_FLUSH_TYPE_VISIBILITY, NULL));
	/* and it posts nothing when it answers */
	FX_REFUSED(0, rpma_conn_get_flush_method(conn, rmr, RPMA_FLUSH_TYPE_VISIBILITY, &m));
	assert_int_equal(m, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	FX_REFUSED(RPMA_E_NOSUPP,
		   rpma_conn_get_flush_method(conn, rmr, RPMA_FLUSH_TYPE_PERSISTENT, &m));
	assert_int_equal(m, RPMA_FLUSH_METHOD_NONE);
	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&conn);
}

/*
 * The decoders. Two connections tell the forms apart: A carries GPSPM and
 * its target offers it without direct write; B does not, and its target
 * declared direct write. A region read as librpma's (read-after-write
 * only) flushes persistently on B only; a versioned one offering GPSPM on
 * A too.
 */
struct ab {
	struct rpma_conn *a, *b;
};

static struct ab two_connections(void)
{
	struct ab c = { connection(true), connection(false) };
	vd_apply_target(c.a, false, 4);
	vd_apply_target(c.b, true, 0);
	return c;
}

static void two_delete(struct ab *c)
{
	fx_conn_delete(&c->a);
	fx_conn_delete(&c->b);
}

enum reading { AS_LEGACY, AS_GPSPM, AS_NOTHING };

static void expect_reading(const struct ab *c, const uint8_t *d, size_t n, enum reading how)
{
	struct rpma_mr_remote *rmr = vd_decode_region(d, n);
	/* the 1.x part reads the same whatever the trailer */
	size_t size = 0;
	int flush_type = 0;
	assert_int_equal(rpma_mr_remote_get_size(rmr, &size), 0);
	assert_int_equal(size, vd_get_le(d + 8, 8));
	assert_int_equal(rpma_mr_remote_get_flush_type(rmr, &flush_type), 0);
	assert_int_equal(flush_type,
			 RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);

	enum rpma_flush_method a_p = method_of(c->a, rmr, RPMA_FLUSH_TYPE_PERSISTENT);
	enum rpma_flush_method b_p = method_of(c->b, rmr, RPMA_FLUSH_TYPE_PERSISTENT);
	enum rpma_flush_method a_v = method_of(c->a, rmr, RPMA_FLUSH_TYPE_VISIBILITY);
	switch (how) {
	case AS_LEGACY:
		assert_int_equal(a_p, RPMA_FLUSH_METHOD_NONE);
		assert_int_equal(b_p, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
		assert_int_equal(a_v, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
		break;
	case AS_GPSPM:
		assert_int_equal(a_p, RPMA_FLUSH_METHOD_GPSPM);
		assert_int_equal(b_p, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
		assert_int_equal(a_v, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
		break;
	case AS_NOTHING:
		assert_int_equal(a_p, RPMA_FLUSH_METHOD_NONE);
		assert_int_equal(b_p, RPMA_FLUSH_METHOD_NONE);
		assert_int_equal(a_v, RPMA_FLUSH_METHOD_NONE);
		break;
	}
	fx_mr_remote_delete(&rmr);
}

static void good_region(uint8_t d[VD_REGION_SIZE + 1])
{
	vd_region(d, RADDR, RLEN, RKEY, USAGE, VD_RAW | VD_GPSPM);
	d[VD_REGION_SIZE] = 0x99; /* a byte that follows in the application's buffer */
}

static void region__well_formed(void **state)
{
	(void)state;
	struct ab c = two_connections();
	uint8_t d[VD_REGION_SIZE + 1];
	good_region(d);
	expect_reading(&c, d, VD_REGION_SIZE, AS_GPSPM);
	/* bytes after the trailer are ignored */
	expect_reading(&c, d, VD_REGION_SIZE + 1, AS_GPSPM);
	/* the same bytes without the trailer: a librpma 1.x peer */
	expect_reading(&c, d, 21, AS_LEGACY);
	two_delete(&c);
}

static void region__one_byte_short(void **state)
{
	(void)state;
	struct ab c = two_connections();
	uint8_t d[VD_REGION_SIZE + 1];
	good_region(d);
	for (size_t n = 21; n < VD_REGION_SIZE; n++)
		expect_reading(&c, d, n, AS_LEGACY);
	two_delete(&c);
}

/* any byte changed after the checksum was made: the trailer does not count */
static void region__bad_crc(void **state)
{
	(void)state;
	struct ab c = two_connections();
	for (size_t at = 0; at < VD_REGION_SIZE; at++) {
		/* the usage byte must stay valid, and so must the magic and the version */
		if (at == 20 || at == 21 || at == 22)
			continue;
		uint8_t d[VD_REGION_SIZE + 1];
		good_region(d);
		d[at] ^= 0x10;
		expect_reading(&c, d, VD_REGION_SIZE, AS_LEGACY);
	}
	two_delete(&c);
}

static void region__wrong_magic(void **state)
{
	(void)state;
	struct ab c = two_connections();
	static const uint8_t magics[] = { 0x00, 0xD6, 0xFF, 0x7D };
	for (size_t i = 0; i < sizeof(magics); i++) {
		uint8_t d[VD_REGION_SIZE + 1];
		good_region(d);
		d[21] = magics[i];
		d[24] = crc8_ref(d, 24); /* a consistent trailer, of someone else's */
		expect_reading(&c, d, VD_REGION_SIZE, AS_LEGACY);
	}
	two_delete(&c);
}

static void region__unknown_version(void **state)
{
	(void)state;
	struct ab c = two_connections();
	static const uint8_t versions[] = { 0, 2, 3, 0xFF };
	for (size_t i = 0; i < sizeof(versions); i++) {
		uint8_t d[VD_REGION_SIZE + 1];
		good_region(d);
		d[22] = versions[i];
		d[24] = crc8_ref(d, 24);
		expect_reading(&c, d, VD_REGION_SIZE, AS_LEGACY);
	}
	two_delete(&c);
}

/* methods this library does not know are not used, the known ones are */
static void region__unknown_methods(void **state)
{
	(void)state;
	struct ab c = two_connections();
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, USAGE, 0xF0 | VD_RAW | VD_GPSPM);
	expect_reading(&c, d, sizeof(d), AS_GPSPM);
	/* a versioned descriptor that offers nothing known: not even read-after-write */
	vd_region(d, RADDR, RLEN, RKEY, USAGE, 0xF0);
	expect_reading(&c, d, sizeof(d), AS_NOTHING);
	vd_region(d, RADDR, RLEN, RKEY, USAGE, 0xF0 | VD_RAW);
	struct rpma_mr_remote *rmr = vd_decode_region(d, sizeof(d));
	assert_int_equal(method_of(c.a, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	assert_int_equal(method_of(c.b, rmr, RPMA_FLUSH_TYPE_PERSISTENT),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	fx_mr_remote_delete(&rmr);
	two_delete(&c);
}

static void persist_nothing(const void *ptr, size_t len)
{
	(void)ptr;
	(void)len;
}

/* what the library itself encodes reads back as it was meant */
static void region__round_trip(void **state)
{
	(void)state;
	struct ab c = two_connections();
	static char mem[4096];
	struct rpma_mr_local *mr = fx_mr(mem, sizeof(mem), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	uint8_t d[VD_REGION_SIZE];
	assert_int_equal(rpma_mr_get_versioned_descriptor(mr, d), 0);
	struct rpma_mr_remote *rmr = vd_decode_region(d, sizeof(d));
	assert_int_equal(method_of(c.a, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	fx_mr_remote_delete(&rmr);

	assert_int_equal(rpma_mr_set_persist_fn(mr, persist_nothing), 0);
	assert_int_equal(rpma_mr_get_versioned_descriptor(mr, d), 0);
	rmr = vd_decode_region(d, sizeof(d));
	assert_int_equal(method_of(c.a, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_GPSPM);
	fx_mr_remote_delete(&rmr);

	assert_int_equal(rpma_mr_set_persist_fn(mr, NULL), 0);
	assert_int_equal(rpma_mr_get_versioned_descriptor(mr, d), 0);
	rmr = vd_decode_region(d, sizeof(d));
	assert_int_equal(method_of(c.a, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	assert_int_equal(method_of(c.b, rmr, RPMA_FLUSH_TYPE_PERSISTENT),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	two_delete(&c);
}

/*
 * The peer configuration's trailer, seen through a connection that carries
 * GPSPM flushing a region that offers it: GPSPM only when the trailer is
 * valid and announces it with a depth.
 */
static void expect_peer_cfg(const uint8_t *d, size_t n, bool gpspm, bool direct_write)
{
	struct rpma_conn *conn = connection(true);
	struct rpma_mr_remote *rmr = region(VERSIONED_WITH_GPSPM, USAGE);
	/* a region that grants no remote read: only GPSPM can persist it */
	uint8_t only[VD_REGION_SIZE];
	vd_region(only, RADDR, RLEN, RKEY, USAGE, VD_GPSPM);
	struct rpma_mr_remote *gpspm_only = vd_decode_region(only, sizeof(only));
	vd_apply(conn, d, n);
	enum rpma_flush_method want = direct_write ? RPMA_FLUSH_METHOD_READ_AFTER_WRITE
				      : gpspm	   ? RPMA_FLUSH_METHOD_GPSPM
						   : RPMA_FLUSH_METHOD_NONE;
	assert_int_equal(method_of(conn, rmr, RPMA_FLUSH_TYPE_PERSISTENT), want);
	assert_int_equal(method_of(conn, gpspm_only, RPMA_FLUSH_TYPE_PERSISTENT),
			 gpspm ? RPMA_FLUSH_METHOD_GPSPM : RPMA_FLUSH_METHOD_NONE);
	fx_mr_remote_delete(&gpspm_only);
	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&conn);
}

static void peer_cfg__forms(void **state)
{
	(void)state;
	uint8_t d[VD_PEER_CFG_SIZE + 1];
	vd_peer_cfg(d, false, VD_PEER_CFG_GPSPM, 4);
	d[VD_PEER_CFG_SIZE] = 0x99;
	expect_peer_cfg(d, VD_PEER_CFG_SIZE, true, false);
	expect_peer_cfg(d, VD_PEER_CFG_SIZE + 1, true, false);
	for (size_t n = 1; n < VD_PEER_CFG_SIZE; n++)
		expect_peer_cfg(d, n, false, false);
	/* direct write wins over GPSPM, in either form */
	vd_peer_cfg(d, true, VD_PEER_CFG_GPSPM, 4);
	expect_peer_cfg(d, VD_PEER_CFG_SIZE, true, true);
	expect_peer_cfg(d, 1, false, true);
}

static void peer_cfg__bad_crc(void **state)
{
	(void)state;
	for (size_t at = 1; at < VD_PEER_CFG_SIZE; at++) {
		if (at == 1 || at == 2)
			continue; /* magic and version: tests of their own */
		uint8_t d[VD_PEER_CFG_SIZE];
		vd_peer_cfg(d, false, VD_PEER_CFG_GPSPM, 4);
		d[at] ^= at == 3 ? 0x02 : 0x10; /* the flag stays set */
		expect_peer_cfg(d, sizeof(d), false, false);
	}
	/* the first byte is covered too */
	uint8_t d[VD_PEER_CFG_SIZE];
	vd_peer_cfg(d, false, VD_PEER_CFG_GPSPM, 4);
	d[0] = 2; /* still "direct write" to a librpma 1.x reader, but not what was summed */
	expect_peer_cfg(d, sizeof(d), false, true);
}

static void peer_cfg__wrong_magic_or_version(void **state)
{
	(void)state;
	uint8_t d[VD_PEER_CFG_SIZE];
	vd_peer_cfg(d, false, VD_PEER_CFG_GPSPM, 4);
	d[1] = 0xD6;
	d[5] = crc8_ref(d, 5);
	expect_peer_cfg(d, sizeof(d), false, false);
	for (int version = 0; version <= 3; version += 2) {
		vd_peer_cfg(d, false, VD_PEER_CFG_GPSPM, 4);
		d[2] = (uint8_t)version;
		d[5] = crc8_ref(d, 5);
		expect_peer_cfg(d, sizeof(d), false, false);
	}
}

static void peer_cfg__flag_and_depth(void **state)
{
	(void)state;
	uint8_t d[VD_PEER_CFG_SIZE];
	/* a depth without the flag, the flag without a depth: no GPSPM */
	vd_peer_cfg(d, false, 0, 4);
	expect_peer_cfg(d, sizeof(d), false, false);
	vd_peer_cfg(d, false, VD_PEER_CFG_GPSPM, 0);
	expect_peer_cfg(d, sizeof(d), false, false);
	/* flags this library does not know are ignored */
	vd_peer_cfg(d, false, 0xFE, 4);
	expect_peer_cfg(d, sizeof(d), false, false);
	vd_peer_cfg(d, false, 0xFF, 4);
	expect_peer_cfg(d, sizeof(d), true, false);
}

/* what the library itself encodes for a configuration reads back as it was meant */
static void peer_cfg__round_trip(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	struct rpma_conn_cfg *target = vd_gpspm_cfg(RPMA_GPSPM_POLLED, 3);
	uint8_t d[VD_PEER_CFG_SIZE];
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, target, d), 0);
	expect_peer_cfg(d, sizeof(d), true, false);
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, NULL, d), 0);
	expect_peer_cfg(d, sizeof(d), false, false);
	assert_int_equal(rpma_conn_cfg_set_gpspm(target, RPMA_GPSPM_DISABLED), 0);
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, target, d), 0);
	expect_peer_cfg(d, sizeof(d), false, false);
	fx_cfg_delete(&target);
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
}

/* the worked examples of doc/wire-format.md read as the document says */
static void doc__wire_format_examples(void **state)
{
	(void)state;
	static const uint8_t region_example[VD_REGION_SIZE] = {
		0x00, 0x00, 0x40, 0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
		0x00, 0x00, 0x00, 0xee, 0xff, 0xc0, 0x00, 0x28, 0xd7, 0x01, 0x03, 0x33,
	};
	static const uint8_t peer_cfg_example[VD_PEER_CFG_SIZE] = { 0x00, 0xd7, 0x01,
								    0x01, 0x10, 0xa1 };
	uint8_t built[VD_REGION_SIZE];
	vd_region(built, 0x7f0000400000ULL, 65536, 0x00c0ffeeU,
		  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, VD_RAW | VD_GPSPM);
	assert_memory_equal(region_example, built, VD_REGION_SIZE);

	/* no direct write, GPSPM with a depth of 16: what the library makes, too */
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_THREAD, 16);
	uint8_t made[VD_PEER_CFG_SIZE];
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, made), 0);
	assert_memory_equal(peer_cfg_example, made, VD_PEER_CFG_SIZE);
	fx_cfg_delete(&cfg);
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);

	/* and the two together give GPSPM, the versioned region its checksum right */
	expect_peer_cfg(peer_cfg_example, sizeof(peer_cfg_example), true, false);
	struct rpma_conn *conn = connection(true);
	vd_apply(conn, peer_cfg_example, sizeof(peer_cfg_example));
	struct rpma_mr_remote *rmr = vd_decode_region(region_example, sizeof(region_example));
	assert_int_equal(method_of(conn, rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_GPSPM);
	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&conn);
}

/*
 * iWARP completes a write when it is handed to the transport and goes on
 * while a read waits: a read-after-write flush is followed, in the same
 * post, by an empty fenced write that carries its completion, so nothing
 * posted after it completes before the read did.
 */
static void iwarp__flush_read_is_fenced(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_delete(&fx_peer), 0);
	fake_verbs_set_iwarp(true);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &fx_peer), 0);
	/* every operation may take two work requests, and complete twice when it fails */
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, 7), 0);
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, 9), 0);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	fx_cfg_delete(&cfg);
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_int_equal(attr->cap.max_send_wr, 14);
	assert_int_equal(attr->send_cq->cqe, 9 + 7);
	struct ibv_cq *icq = id->qp->send_cq;
	struct rpma_mr_remote *rmr = region(VERSIONED, USAGE);
	vd_apply_target(conn, true, 0);
	for (int signaled = 0; signaled <= 1; signaled++) {
		const int flags = signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
		unsigned sends = fake_verbs_sends();
		unsigned posts = fake_verbs_calls(FAKE_POST_SEND);
		assert_int_equal(
		    rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT, flags, &ctx), 0);
		/* two work requests, one doorbell */
		assert_int_equal(fake_verbs_sends(), sends + 2);
		assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), posts + 1);
		const struct fake_send_record *rd = fake_verbs_send(sends);
		const struct fake_send_record *wr = fake_verbs_send(sends + 1);
		assert_int_equal(rd->wr.opcode, IBV_WR_RDMA_READ);
		assert_int_equal(rd->wr.send_flags & IBV_SEND_SIGNALED, 0);
		assert_int_equal(wr->wr.opcode, IBV_WR_RDMA_WRITE);
		assert_int_equal(wr->wr.num_sge, 0);
		assert_true(wr->wr.send_flags & IBV_SEND_FENCE);
		assert_int_equal(!!(wr->wr.send_flags & IBV_SEND_SIGNALED), signaled);
		/* the same flush: either completion names it */
		assert_int_equal(wr->wr.wr_id, rd->wr.wr_id);
		assert_int_equal(wr->wr.wr.rdma.rkey, RKEY);
		assert_int_equal(wr->wr.wr.rdma.remote_addr, rd->wr.wr.rdma.remote_addr);

		/* the flush completes with the write's completion, as a flush */
		struct rpma_cq *cq = NULL;
		assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
		struct ibv_wc w = fx_wc(wr->wr.wr_id, IBV_WC_RDMA_WRITE,
					signaled ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR);
		fake_verbs_push_wc(icq, &w);
		if (!signaled) {
			/* failed: the read's own completion and the write's, one flush */
			struct ibv_wc r =
			    fx_wc(rd->wr.wr_id, IBV_WC_RDMA_READ, IBV_WC_REM_ACCESS_ERR);
			fake_verbs_push_wc(icq, &r);
		}
		struct rpma_completion c;
		assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
		assert_ptr_equal(c.op_context, &ctx);
		assert_int_equal(c.op, RPMA_OP_FLUSH);
		assert_int_equal(c.op_status, signaled ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR);
		assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
	}
	/* a batch chains after the fence */
	struct rpma_batch_op ops[2];
	memset(ops, 0, sizeof(ops));
	for (int i = 0; i < 2; i++) {
		ops[i].op = RPMA_OP_FLUSH;
		ops[i].flags = RPMA_F_COMPLETION_ALWAYS;
		ops[i].op_context = &ctx;
		ops[i].remote = rmr;
		ops[i].remote_offset = OFFSET;
		ops[i].len = 8;
		ops[i].flush_type = RPMA_FLUSH_TYPE_VISIBILITY;
	}
	unsigned sends = fake_verbs_sends();
	assert_int_equal(rpma_post_batch(conn, ops, 2, NULL), 0);
	assert_int_equal(fake_verbs_sends(), sends + 4);
	static const enum ibv_wr_opcode want[] = { IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE,
						   IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE };
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(fake_verbs_send(sends + i)->wr.opcode, want[i]);
	/* one flush alone, signaled (what a batch most often ends with): fenced too */
	assert_int_equal(rpma_post_batch(conn, ops, 1, NULL), 0);
	assert_int_equal(fake_verbs_sends(), sends + 6);
	assert_int_equal(fake_verbs_send(sends + 4)->wr.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(fake_verbs_send(sends + 5)->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_true(fake_verbs_send(sends + 5)->wr.send_flags & IBV_SEND_FENCE);
	fx_mr_remote_delete(&rmr);
	fx_conn_delete(&conn);
}

/*
 * On iWARP, where the target takes direct writes and offers GPSPM too, a
 * persistent flush is the fenced read-after-write that is preferred to
 * GPSPM, not GPSPM, whichever path rpma_flush() takes; a region that
 * offers GPSPM alone is flushed by GPSPM.
 */
static void iwarp__read_after_write_before_gpspm(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_delete(&fx_peer), 0);
	fake_verbs_set_iwarp(true);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &fx_peer), 0);
	struct rpma_conn *conn = connection(true);
	vd_apply_target(conn, true, 4);
	struct rpma_mr_remote *both = region(VERSIONED_WITH_GPSPM, USAGE);
	assert_int_equal(method_of(conn, both, RPMA_FLUSH_TYPE_PERSISTENT),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	unsigned sends = fake_verbs_sends();
	assert_int_equal(rpma_flush(conn, both, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	assert_int_equal(fake_verbs_sends(), sends + 2);
	assert_int_equal(fake_verbs_send(sends)->wr.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(fake_verbs_send(sends + 1)->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_true(fake_verbs_send(sends + 1)->wr.send_flags & IBV_SEND_FENCE);

	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, USAGE, VD_GPSPM);
	struct rpma_mr_remote *gpspm_only = vd_decode_region(d, sizeof(d));
	expect_flush_posts(conn, gpspm_only, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_FLUSH_METHOD_GPSPM);
	fx_mr_remote_delete(&gpspm_only);
	fx_mr_remote_delete(&both);
	fx_conn_delete(&conn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(method__every_combination),
		T(iwarp__flush_read_is_fenced),
		T(iwarp__read_after_write_before_gpspm),
		T(method__legacy_target),
		T(method__refusals_are_logged),
		T(method__usage_rules),
		T(method__gpspm_only_region),
		T(method__native_only_region),
		T(method__apply_replaces),
		T(method__args),
		T(region__well_formed),
		T(region__one_byte_short),
		T(region__bad_crc),
		T(region__wrong_magic),
		T(region__unknown_version),
		T(region__unknown_methods),
		T(region__round_trip),
		T(peer_cfg__forms),
		T(peer_cfg__bad_crc),
		T(peer_cfg__wrong_magic_or_version),
		T(peer_cfg__flag_and_depth),
		T(peer_cfg__round_trip),
		T(doc__wire_format_examples),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("flush_method", tests, NULL, NULL);
}
