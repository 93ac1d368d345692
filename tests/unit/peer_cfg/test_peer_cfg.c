// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_peer_cfg.c -- the peer configuration and its descriptor
 *
 * The librpma 1.x descriptor is one byte, the direct-write-to-PMem flag
 * (0 or 1); the decoder needs at least one byte and ignores the rest.
 */

#include <sys/mman.h>
#include <unistd.h>

#include "crc8_ref.h"
#include "unit_common.h"

static struct rpma_peer_cfg *new_pcfg(void)
{
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_non_null(pcfg);
	return pcfg;
}

static void delete_pcfg(struct rpma_peer_cfg **pcfg)
{
	assert_int_equal(rpma_peer_cfg_delete(pcfg), 0);
	assert_null(*pcfg);
}

static bool get_flag(const struct rpma_peer_cfg *pcfg)
{
	bool v = false;
	/* a bool has no spare value to poison with: ask twice, from either value */
	assert_int_equal(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &v), 0);
	bool w = true;
	assert_int_equal(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &w), 0);
	assert_int_equal(v, w);
	return v;
}

static struct rpma_peer_cfg *decode(const void *desc, size_t size)
{
	struct rpma_peer_cfg *pcfg = UT_POISON;
	assert_int_equal(rpma_peer_cfg_from_descriptor(desc, size, &pcfg), 0);
	assert_ptr_not_equal(pcfg, UT_POISON);
	assert_non_null(pcfg);
	return pcfg;
}

/*
 * new / delete
 */

static void peer_cfg_new_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
}

static void peer_cfg_new_default_false(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	assert_false(get_flag(pcfg));
	assert_int_equal(fake_verbs_live_objects(), 0);
	delete_pcfg(&pcfg);
}

static void peer_cfg_delete_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_cfg_delete(NULL), RPMA_E_INVAL);
}

static void peer_cfg_delete_null_cfg(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
	assert_null(pcfg);
}

/*
 * direct write to PMem
 */

static void peer_cfg_set_true_false(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	assert_true(get_flag(pcfg));
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, false), 0);
	assert_false(get_flag(pcfg));
	delete_pcfg(&pcfg);
}

static void peer_cfg_set_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(NULL, true), RPMA_E_INVAL);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(NULL, false), RPMA_E_INVAL);
}

static void peer_cfg_get_null(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	bool v = true;
	assert_int_equal(rpma_peer_cfg_get_direct_write_to_pmem(NULL, &v), RPMA_E_INVAL);
	assert_true(v);
	v = false;
	assert_int_equal(rpma_peer_cfg_get_direct_write_to_pmem(NULL, &v), RPMA_E_INVAL);
	assert_false(v);
	assert_int_equal(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, NULL), RPMA_E_INVAL);
	delete_pcfg(&pcfg);
}

static void peer_cfg_objects_independent(void **state)
{
	(void)state;
	struct rpma_peer_cfg *a = new_pcfg();
	struct rpma_peer_cfg *b = new_pcfg();
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(a, true), 0);
	assert_true(get_flag(a));
	assert_false(get_flag(b));
	delete_pcfg(&a);
	delete_pcfg(&b);
}

/*
 * descriptor size
 */

static void peer_cfg_descriptor_size(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	assert_int_equal(size, 1);
	/* the same whatever the flag */
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	size = UT_POISON_SIZE;
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	assert_int_equal(size, 1);
	delete_pcfg(&pcfg);
}

static void peer_cfg_descriptor_size_null(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(size, UT_POISON_SIZE);
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, NULL), RPMA_E_INVAL);
	delete_pcfg(&pcfg);
}

/*
 * encoding
 */

static void peer_cfg_descriptor_false_is_0(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	uint8_t desc[8];
	memset(desc, 0xee, sizeof(desc));
	assert_int_equal(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	assert_int_equal(desc[0], 0);
	delete_pcfg(&pcfg);
}

static void peer_cfg_descriptor_true_is_1(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	uint8_t desc[8];
	memset(desc, 0xee, sizeof(desc));
	assert_int_equal(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	assert_int_equal(desc[0], 1);
	delete_pcfg(&pcfg);
}

/* the encoder writes the descriptor size and not a byte more */
static void peer_cfg_descriptor_no_overflow(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	size_t size = 0;
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	uint8_t desc[64];
	memset(desc, 0xee, sizeof(desc));
	assert_int_equal(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
	for (size_t i = size; i < sizeof(desc); i++)
		assert_int_equal(desc[i], 0xee);
	delete_pcfg(&pcfg);
}

static void peer_cfg_descriptor_null(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	uint8_t desc[4] = { 0xee, 0xee, 0xee, 0xee };
	assert_int_equal(rpma_peer_cfg_get_descriptor(NULL, desc), RPMA_E_INVAL);
	assert_int_equal(desc[0], 0xee);
	assert_int_equal(rpma_peer_cfg_get_descriptor(pcfg, NULL), RPMA_E_INVAL);
	delete_pcfg(&pcfg);
}

/*
 * decoding
 */

static void peer_cfg_from_descriptor_0(void **state)
{
	(void)state;
	const uint8_t desc[1] = { 0 };
	struct rpma_peer_cfg *pcfg = decode(desc, 1);
	assert_false(get_flag(pcfg));
	delete_pcfg(&pcfg);
}

static void peer_cfg_from_descriptor_1(void **state)
{
	(void)state;
	const uint8_t desc[1] = { 1 };
	struct rpma_peer_cfg *pcfg = decode(desc, 1);
	assert_true(get_flag(pcfg));
	delete_pcfg(&pcfg);
}

static void peer_cfg_from_descriptor_null_desc(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = UT_POISON;
	assert_int_equal(rpma_peer_cfg_from_descriptor(NULL, 1, &pcfg), RPMA_E_INVAL);
	assert_ptr_equal(pcfg, UT_POISON);
}

static void peer_cfg_from_descriptor_null_ptr(void **state)
{
	(void)state;
	const uint8_t desc[1] = { 1 };
	assert_int_equal(rpma_peer_cfg_from_descriptor(desc, 1, NULL), RPMA_E_INVAL);
}

static void peer_cfg_from_descriptor_empty(void **state)
{
	(void)state;
	const uint8_t desc[1] = { 1 };
	struct rpma_peer_cfg *pcfg = UT_POISON;
	assert_int_equal(rpma_peer_cfg_from_descriptor(desc, 0, &pcfg), RPMA_E_INVAL);
	assert_ptr_equal(pcfg, UT_POISON);
}

/* bytes after the first do not matter, whatever they hold */
static void peer_cfg_from_descriptor_ignores_rest(void **state)
{
	(void)state;
	uint8_t desc[200];
	for (int flag = 0; flag <= 1; flag++) {
		for (int fill = 0; fill < 3; fill++) {
			memset(desc, fill == 0 ? 0x00 : fill == 1 ? 0x01 : 0xff, sizeof(desc));
			desc[0] = (uint8_t)flag;
			const size_t sizes[] = { 2, 3, 21, 56, 196, 200 };
			for (size_t i = 0; i < UT_ARRAY_SIZE(sizes); i++) {
				struct rpma_peer_cfg *pcfg = decode(desc, sizes[i]);
				assert_int_equal(get_flag(pcfg), flag);
				delete_pcfg(&pcfg);
			}
		}
	}
}

/* encode, decode: the flag survives the trip, both ways */
static void peer_cfg_round_trip(void **state)
{
	(void)state;
	for (int flag = 0; flag <= 1; flag++) {
		struct rpma_peer_cfg *pcfg = new_pcfg();
		assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, flag), 0);
		size_t size = 0;
		assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
		uint8_t desc[64];
		assert_true(size <= sizeof(desc));
		assert_int_equal(rpma_peer_cfg_get_descriptor(pcfg, desc), 0);
		struct rpma_peer_cfg *copy = decode(desc, size);
		assert_ptr_not_equal(copy, pcfg);
		assert_int_equal(get_flag(copy), flag);
		delete_pcfg(&copy);
		delete_pcfg(&pcfg);
	}
}

/* the decoded configuration is a new object of its own */
static void peer_cfg_decoded_is_independent(void **state)
{
	(void)state;
	const uint8_t desc[1] = { 1 };
	struct rpma_peer_cfg *a = decode(desc, 1);
	struct rpma_peer_cfg *b = decode(desc, 1);
	assert_ptr_not_equal(a, b);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(a, false), 0);
	assert_true(get_flag(b));
	delete_pcfg(&a);
	delete_pcfg(&b);
}

/* a one-byte descriptor at the very end of a mapping: no byte beyond is read */
static void peer_cfg_from_descriptor_reads_only_size(void **state)
{
	(void)state;
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	uint8_t *last = map + page - 1;
	*last = 1;
	struct rpma_peer_cfg *pcfg = decode(last, 1);
	assert_true(get_flag(pcfg));
	delete_pcfg(&pcfg);
	munmap(map, (size_t)page * 2);
}

/* librpma 1.x's descriptor and a region's fit in 56 bytes of private data */
static void peer_cfg_descriptor_fits_private_data(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	size_t size = 0;
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	assert_true(size + 21 <= 56);
	delete_pcfg(&pcfg);
}

/*
 * versioned descriptor (rpma-ng extension): the librpma 1.x byte, then the
 * trailer [0xD7 magic][version 1][flags: bit 0 GPSPM][GPSPM depth][crc8 of
 * bytes 0..4]
 */

#define VDESC_SIZE 6

static struct rpma_conn_cfg *new_conn_cfg(enum rpma_gpspm_mode mode, uint32_t rq_size)
{
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, mode), 0);
	assert_int_equal(rpma_conn_cfg_set_rq_size(cfg, rq_size), 0);
	return cfg;
}

/* the versioned descriptor, checked to stop at 6 bytes */
static void vdesc_of(const struct rpma_peer_cfg *pcfg, const struct rpma_conn_cfg *cfg,
		     uint8_t d[VDESC_SIZE])
{
	uint8_t wide[VDESC_SIZE + 8];
	memset(wide, 0xee, sizeof(wide));
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, wide), 0);
	for (size_t i = VDESC_SIZE; i < sizeof(wide); i++)
		assert_int_equal(wide[i], 0xee);
	memcpy(d, wide, VDESC_SIZE);
}

static void expect_vdesc(const uint8_t d[VDESC_SIZE], bool direct, bool gpspm, uint8_t depth)
{
	uint8_t expected[VDESC_SIZE] = { direct ? 1 : 0, 0xD7, 1, gpspm ? 1 : 0, depth, 0 };
	expected[5] = crc8_ref(expected, 5);
	assert_memory_equal(d, expected, VDESC_SIZE);
}

static void peer_cfg_vdesc_reference_crc(void **state)
{
	(void)state;
	assert_true(crc8_ref_is_sound());
}

static void peer_cfg_vdesc_size(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &size), 0);
	assert_int_equal(size, VDESC_SIZE);
	/* the default form stays librpma's */
	assert_int_equal(rpma_peer_cfg_get_descriptor_size(pcfg, &size), 0);
	assert_int_equal(size, 1);
	delete_pcfg(&pcfg);
}

static void peer_cfg_vdesc_size_null(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(size, UT_POISON_SIZE);
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, NULL), RPMA_E_INVAL);
	delete_pcfg(&pcfg);
}

static void peer_cfg_vdesc_null(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	uint8_t d[VDESC_SIZE];
	memset(d, 0xee, sizeof(d));
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(NULL, NULL, d), RPMA_E_INVAL);
	for (size_t i = 0; i < sizeof(d); i++)
		assert_int_equal(d[i], 0xee);
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, NULL, NULL), RPMA_E_INVAL);
	delete_pcfg(&pcfg);
}

/* NULL connection configuration: the defaults, which carry no GPSPM */
static void peer_cfg_vdesc_default_cfg(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	uint8_t d[VDESC_SIZE];
	vdesc_of(pcfg, NULL, d);
	expect_vdesc(d, false, false, 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	vdesc_of(pcfg, NULL, d);
	expect_vdesc(d, true, false, 0);
	delete_pcfg(&pcfg);
}

/* a configuration without GPSPM announces none, whatever its receive queue */
static void peer_cfg_vdesc_gpspm_disabled(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	struct rpma_conn_cfg *cfg = new_conn_cfg(RPMA_GPSPM_DISABLED, 50);
	uint8_t d[VDESC_SIZE];
	vdesc_of(pcfg, cfg, d);
	expect_vdesc(d, false, false, 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	delete_pcfg(&pcfg);
}

/* the depth is the receive queue's size, at most 255 */
static void peer_cfg_vdesc_gpspm_depth(void **state)
{
	(void)state;
	static const struct {
		uint32_t rq_size;
		uint8_t depth;
	} cases[] = {
		{ 1, 1 },     { 10, 10 },   { 37, 37 },	     { 254, 254 },
		{ 255, 255 }, { 256, 255 }, { 100000, 255 },
	};
	struct rpma_peer_cfg *pcfg = new_pcfg();
	for (size_t i = 0; i < UT_ARRAY_SIZE(cases); i++) {
		for (int mode = RPMA_GPSPM_POLLED; mode <= RPMA_GPSPM_THREAD; mode++) {
			struct rpma_conn_cfg *cfg =
			    new_conn_cfg((enum rpma_gpspm_mode)mode, cases[i].rq_size);
			uint8_t d[VDESC_SIZE];
			vdesc_of(pcfg, cfg, d);
			expect_vdesc(d, false, true, cases[i].depth);
			assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
		}
	}
	delete_pcfg(&pcfg);
}

/* the default configuration has a receive queue of 10 */
static void peer_cfg_vdesc_gpspm_default_depth(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED), 0);
	uint8_t d[VDESC_SIZE];
	vdesc_of(pcfg, cfg, d);
	expect_vdesc(d, true, true, 10);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	delete_pcfg(&pcfg);
}

/* no receive queue, no GPSPM (such a configuration cannot make a connection either) */
static void peer_cfg_vdesc_gpspm_without_rq(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	struct rpma_conn_cfg *cfg = new_conn_cfg(RPMA_GPSPM_POLLED, 0);
	uint8_t d[VDESC_SIZE];
	vdesc_of(pcfg, cfg, d);
	expect_vdesc(d, false, false, 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	delete_pcfg(&pcfg);
}

/* the librpma 1.x form does not change with the connection's GPSPM */
static void peer_cfg_vdesc_legacy_unchanged(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	struct rpma_conn_cfg *cfg = new_conn_cfg(RPMA_GPSPM_POLLED, 12);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	/* the versioned form announces GPSPM... */
	uint8_t v[VDESC_SIZE];
	vdesc_of(pcfg, cfg, v);
	expect_vdesc(v, true, true, 12);
	/* ...and the 1.x form is still the one byte, nothing after it */
	uint8_t d[4];
	memset(d, 0xee, sizeof(d));
	assert_int_equal(rpma_peer_cfg_get_descriptor(pcfg, d), 0);
	assert_int_equal(d[0], 1);
	for (size_t i = 1; i < sizeof(d); i++)
		assert_int_equal(d[i], 0xee);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	delete_pcfg(&pcfg);
}

/* the flag reads the same from either form, the trailer valid or not */
static void peer_cfg_vdesc_decodes_flag(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	struct rpma_conn_cfg *cfg = new_conn_cfg(RPMA_GPSPM_POLLED, 12);
	for (int direct = 0; direct <= 1; direct++) {
		assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, direct), 0);
		uint8_t d[VDESC_SIZE];
		vdesc_of(pcfg, cfg, d);
		for (size_t n = 1; n <= VDESC_SIZE; n++) {
			struct rpma_peer_cfg *got = decode(d, n);
			assert_int_equal(get_flag(got), direct);
			delete_pcfg(&got);
		}
		d[5] ^= 0x40; /* a bad checksum */
		struct rpma_peer_cfg *got = decode(d, VDESC_SIZE);
		assert_int_equal(get_flag(got), direct);
		delete_pcfg(&got);
	}
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	delete_pcfg(&pcfg);
}

/* a versioned descriptor at the very end of a mapping: nothing beyond is read */
static void peer_cfg_vdesc_decode_reads_only_size(void **state)
{
	(void)state;
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	uint8_t d[VDESC_SIZE] = { 1, 0xD7, 1, 1, 9, 0 };
	d[5] = crc8_ref(d, 5);
	for (size_t n = 1; n <= VDESC_SIZE; n++) {
		uint8_t *at = map + page - n;
		memcpy(at, d, n);
		struct rpma_peer_cfg *pcfg = decode(at, n);
		assert_true(get_flag(pcfg));
		delete_pcfg(&pcfg);
	}
	munmap(map, (size_t)page * 2);
}

/* a region's versioned descriptor and this one still fit in 56 bytes of private data */
static void peer_cfg_vdesc_fits_private_data(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = new_pcfg();
	size_t size = 0;
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &size), 0);
	assert_true(size + 25 <= 56);
	delete_pcfg(&pcfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(peer_cfg_new_null),
		UT_TEST(peer_cfg_new_default_false),
		UT_TEST(peer_cfg_delete_null_ptr),
		UT_TEST(peer_cfg_delete_null_cfg),
		UT_TEST(peer_cfg_set_true_false),
		UT_TEST(peer_cfg_set_null),
		UT_TEST(peer_cfg_get_null),
		UT_TEST(peer_cfg_objects_independent),
		UT_TEST(peer_cfg_descriptor_size),
		UT_TEST(peer_cfg_descriptor_size_null),
		UT_TEST(peer_cfg_descriptor_false_is_0),
		UT_TEST(peer_cfg_descriptor_true_is_1),
		UT_TEST(peer_cfg_descriptor_no_overflow),
		UT_TEST(peer_cfg_descriptor_null),
		UT_TEST(peer_cfg_from_descriptor_0),
		UT_TEST(peer_cfg_from_descriptor_1),
		UT_TEST(peer_cfg_from_descriptor_null_desc),
		UT_TEST(peer_cfg_from_descriptor_null_ptr),
		UT_TEST(peer_cfg_from_descriptor_empty),
		UT_TEST(peer_cfg_from_descriptor_ignores_rest),
		UT_TEST(peer_cfg_round_trip),
		UT_TEST(peer_cfg_decoded_is_independent),
		UT_TEST(peer_cfg_from_descriptor_reads_only_size),
		UT_TEST(peer_cfg_descriptor_fits_private_data),
		UT_TEST(peer_cfg_vdesc_reference_crc),
		UT_TEST(peer_cfg_vdesc_size),
		UT_TEST(peer_cfg_vdesc_size_null),
		UT_TEST(peer_cfg_vdesc_null),
		UT_TEST(peer_cfg_vdesc_default_cfg),
		UT_TEST(peer_cfg_vdesc_gpspm_disabled),
		UT_TEST(peer_cfg_vdesc_gpspm_depth),
		UT_TEST(peer_cfg_vdesc_gpspm_default_depth),
		UT_TEST(peer_cfg_vdesc_gpspm_without_rq),
		UT_TEST(peer_cfg_vdesc_legacy_unchanged),
		UT_TEST(peer_cfg_vdesc_decodes_flag),
		UT_TEST(peer_cfg_vdesc_decode_reads_only_size),
		UT_TEST(peer_cfg_vdesc_fits_private_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
