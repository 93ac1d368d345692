// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_mr.c -- local memory regions, region descriptors, remote regions
 *
 * The librpma 1.x region descriptor: 21 bytes, little-endian, packed:
 * [0..7] u64 address, [8..15] u64 length, [16..19] u32 rkey, [20] u8 usage.
 */

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc8_ref.h"
#include "unit_common.h"

#define DESC_SIZE 21

static struct rpma_peer *peer;
static char buf[4096] __attribute__((aligned(64)));

static int make_peer(void)
{
	peer = NULL;
	if (rpma_peer_new(fake_verbs_context(), &peer))
		return -1;
	return 0;
}

static int mr_setup(void **state)
{
	ut_setup(state);
	return make_peer();
}

static int mr_setup_iwarp(void **state)
{
	ut_setup(state);
	fake_verbs_set_iwarp(true);
	return make_peer();
}

static int mr_setup_odp(void **state)
{
	ut_setup(state);
	fake_verbs_set_odp(true);
	return make_peer();
}

/* the peer goes last; a region left behind keeps its domain busy */
static int mr_teardown(void **state)
{
	int ret = rpma_peer_delete(&peer);
	if (ret)
		fail_msg("rpma_peer_delete: %s (a region was left registered?)",
			 rpma_err_2str(ret));
	if (fake_verbs_live_objects() != 0)
		fail_msg("%d rdma-core object(s) leaked", fake_verbs_live_objects());
	return ut_teardown(state);
}

#define MR_TEST(f)	 cmocka_unit_test_setup_teardown(f, mr_setup, mr_teardown)
#define MR_TEST_IWARP(f) cmocka_unit_test_setup_teardown(f, mr_setup_iwarp, mr_teardown)
#define MR_TEST_ODP(f)	 cmocka_unit_test_setup_teardown(f, mr_setup_odp, mr_teardown)

static struct rpma_mr_local *reg(void *ptr, size_t size, int usage)
{
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_reg(peer, ptr, size, usage, &mr), 0);
	assert_non_null(mr);
	return mr;
}

static void dereg(struct rpma_mr_local **mr)
{
	assert_int_equal(rpma_mr_dereg(mr), 0);
	assert_null(*mr);
}

/* the access flags the library asked rdma-core for, registering with usage */
static int access_for(int usage)
{
	unsigned before = fake_verbs_reg_mrs();
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), usage);
	assert_int_equal(fake_verbs_reg_mrs(), before + 1);
	int access = fake_verbs_reg_mr(before)->access;
	dereg(&mr);
	return access;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void make_desc(uint8_t *d, uint64_t addr, uint64_t len, uint32_t rkey, uint8_t usage)
{
	put_le(d, addr, 8);
	put_le(d + 8, len, 8);
	put_le(d + 16, rkey, 4);
	d[20] = usage;
}

static struct rpma_mr_remote *decode(const void *desc, size_t size)
{
	struct rpma_mr_remote *mr = UT_POISON;
	assert_int_equal(rpma_mr_remote_from_descriptor(desc, size, &mr), 0);
	assert_ptr_not_equal(mr, UT_POISON);
	assert_non_null(mr);
	return mr;
}

static void remote_delete(struct rpma_mr_remote **mr)
{
	assert_int_equal(rpma_mr_remote_delete(mr), 0);
	assert_null(*mr);
}

static size_t remote_size(const struct rpma_mr_remote *mr)
{
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_remote_get_size(mr, &size), 0);
	return size;
}

static int remote_flush_type(const struct rpma_mr_remote *mr)
{
	int ft = 0x5a5a;
	assert_int_equal(rpma_mr_remote_get_flush_type(mr, &ft), 0);
	return ft;
}

/* a region of the given bytes at the very end of a readable mapping */
struct edge {
	uint8_t *map;
	size_t len;
	long page;
};

static uint8_t *edge_place(struct edge *e, const void *bytes, size_t n)
{
	e->page = sysconf(_SC_PAGESIZE);
	e->len = (size_t)e->page * 2;
	e->map = mmap(NULL, e->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(e->map != MAP_FAILED);
	assert_int_equal(mprotect(e->map + e->page, (size_t)e->page, PROT_NONE), 0);
	uint8_t *at = e->map + e->page - n;
	if (n)
		memcpy(at, bytes, n);
	return at;
}

static void edge_free(struct edge *e)
{
	munmap(e->map, e->len);
}

/*
 * rpma_mr_reg: arguments
 */

static void reg_null_peer(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	assert_int_equal(rpma_mr_reg(NULL, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
			 RPMA_E_INVAL);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), 0);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

static void reg_null_ptr(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	assert_int_equal(rpma_mr_reg(peer, NULL, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
			 RPMA_E_INVAL);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), 0);
}

static void reg_zero_size(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	assert_int_equal(rpma_mr_reg(peer, buf, 0, RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_INVAL);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), 0);
}

static void reg_null_mr_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, NULL),
			 RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), 0);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

static void reg_usage_zero(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), 0, &mr), RPMA_E_INVAL);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), 0);
}

static void reg_usage_unknown_bits(void **state)
{
	(void)state;
	const int bad[] = { 1 << 8, 1 << 30, -1, (int)0x80000000, RPMA_MR_USAGE_READ_SRC | 1 << 8,
			    0x1ff };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++) {
		struct rpma_mr_local *mr = UT_POISON;
		assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), bad[i], &mr), RPMA_E_INVAL);
		assert_ptr_equal(mr, UT_POISON);
	}
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), 0);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/*
 * usage -> access (InfiniBand / RoCE)
 */

static void access_read_src(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_READ_SRC), IBV_ACCESS_REMOTE_READ);
}

static void access_read_dst(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_READ_DST), IBV_ACCESS_LOCAL_WRITE);
}

static void access_write_src(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_WRITE_SRC), IBV_ACCESS_LOCAL_WRITE);
}

static void access_write_dst(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_WRITE_DST),
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
}

static void access_send(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_SEND), 0);
}

static void access_recv(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_RECV), IBV_ACCESS_LOCAL_WRITE);
}

/* read-after-write: the flush is a read of the flushed region */
static void access_flush_visibility(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY), IBV_ACCESS_REMOTE_READ);
}

static void access_flush_persistent(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT), IBV_ACCESS_REMOTE_READ);
}

/* the usual target region: written to and flushed */
static void access_write_dst_flush(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT),
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
}

static void access_all(void **state)
{
	(void)state;
	assert_int_equal(access_for(0xff),
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

/* every combination is the union of its bits, nothing more (no atomics, no ODP) */
static void access_every_combination(void **state)
{
	(void)state;
	int single[8];
	for (int b = 0; b < 8; b++)
		single[b] = access_for(1 << b);
	for (int usage = 1; usage <= 0xff; usage++) {
		int expected = 0;
		for (int b = 0; b < 8; b++)
			if (usage & (1 << b))
				expected |= single[b];
		int access = access_for(usage);
		assert_int_equal(access, expected);
		assert_int_equal(access & (IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ON_DEMAND), 0);
		/* rdma-core refuses remote write without local write */
		if (access & IBV_ACCESS_REMOTE_WRITE)
			assert_true(access & IBV_ACCESS_LOCAL_WRITE);
	}
}

/*
 * usage -> access on iWARP
 */

/* iWARP writes a read response into the sink as a remote write */
static void iwarp_access_read_dst(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_READ_DST),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

static void iwarp_access_read_src(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_READ_SRC), IBV_ACCESS_REMOTE_READ);
}

/* only the read destination differs on iWARP */
static void iwarp_access_others_unchanged(void **state)
{
	(void)state;
	assert_int_equal(access_for(RPMA_MR_USAGE_WRITE_SRC), IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(RPMA_MR_USAGE_WRITE_DST),
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(RPMA_MR_USAGE_SEND), 0);
	assert_int_equal(access_for(RPMA_MR_USAGE_RECV), IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(access_for(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT), IBV_ACCESS_REMOTE_READ);
}

/*
 * rpma_mr_reg: what reaches rdma-core, failures
 */

static void reg_passes_range(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf + 16, 100, RPMA_MR_USAGE_WRITE_SRC);
	assert_int_equal(fake_verbs_reg_mrs(), 1);
	const struct fake_reg_mr_record *r = fake_verbs_reg_mr(0);
	assert_ptr_equal(r->addr, buf + 16);
	assert_int_equal(r->length, 100);
	assert_non_null(r->pd);
	assert_ptr_equal(r->pd->context, fake_verbs_context());
	assert_int_equal(fake_verbs_live_objects(), 2);
	dereg(&mr);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

static void reg_get_ptr_size(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf + 8, 1000, RPMA_MR_USAGE_READ_SRC);
	void *ptr = UT_POISON;
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_get_ptr(mr, &ptr), 0);
	assert_ptr_equal(ptr, buf + 8);
	assert_int_equal(rpma_mr_get_size(mr, &size), 0);
	assert_int_equal(size, 1000);
	dereg(&mr);
}

static void reg_provider_failure(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	fake_verbs_fail(FAKE_REG_MR, 1, EFAULT);
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EFAULT);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_reg_mrs(), 1);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/* the same memory may be registered twice: two regions, two keys */
static void reg_twice(void **state)
{
	(void)state;
	struct rpma_mr_local *a = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	struct rpma_mr_local *b = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	assert_ptr_not_equal(a, b);
	uint8_t da[DESC_SIZE], db[DESC_SIZE];
	assert_int_equal(rpma_mr_get_descriptor(a, da), 0);
	assert_int_equal(rpma_mr_get_descriptor(b, db), 0);
	assert_int_equal(get_le(da + 16, 4), fake_verbs_reg_mr(0)->rkey);
	assert_int_equal(get_le(db + 16, 4), fake_verbs_reg_mr(1)->rkey);
	assert_int_not_equal(get_le(da + 16, 4), get_le(db + 16, 4));
	assert_int_equal(fake_verbs_live_objects(), 3);
	dereg(&a);
	dereg(&b);
}

/*
 * on-demand paging
 */

/* memory that cannot be pinned (EOPNOTSUPP) is registered on demand */
static void odp_retry_success(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_REG_MR, 1, EOPNOTSUPP);
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_WRITE_DST);
	assert_int_equal(fake_verbs_reg_mrs(), 2);
	const struct fake_reg_mr_record *first = fake_verbs_reg_mr(0);
	const struct fake_reg_mr_record *second = fake_verbs_reg_mr(1);
	assert_int_equal(first->access, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE);
	assert_int_equal(second->access, first->access | IBV_ACCESS_ON_DEMAND);
	assert_ptr_equal(second->addr, first->addr);
	assert_int_equal(second->length, first->length);
	assert_ptr_equal(second->pd, first->pd);
	assert_non_null(second->mr);
	assert_int_equal(fake_verbs_live_objects(), 2);
	/* the region describes itself with the key of the registration that worked */
	uint8_t d[DESC_SIZE];
	assert_int_equal(rpma_mr_get_descriptor(mr, d), 0);
	assert_int_equal(get_le(d + 16, 4), second->rkey);
	dereg(&mr);
}

static void odp_retry_fails(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	fake_verbs_fail(FAKE_REG_MR, 1, EOPNOTSUPP);
	fake_verbs_fail(FAKE_REG_MR, 2, ENOMEM);
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
			 RPMA_E_PROVIDER);
	/* the cause is the last attempt's */
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_reg_mrs(), 2);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/* without ODP on the device EOPNOTSUPP is final */
static void no_odp_no_retry(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = UT_POISON;
	fake_verbs_fail(FAKE_REG_MR, 1, EOPNOTSUPP);
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EOPNOTSUPP);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(fake_verbs_reg_mrs(), 1);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/* only EOPNOTSUPP means "try on demand" */
static void odp_other_errno_no_retry(void **state)
{
	(void)state;
	const int errs[] = { EFAULT, ENOMEM, EINVAL, EPERM };
	for (size_t i = 0; i < UT_ARRAY_SIZE(errs); i++) {
		unsigned before = fake_verbs_reg_mrs();
		struct rpma_mr_local *mr = UT_POISON;
		fake_verbs_fail(FAKE_REG_MR, 1, errs[i]);
		assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC, &mr),
				 RPMA_E_PROVIDER);
		assert_int_equal(rpma_err_get_provider_error(), errs[i]);
		assert_ptr_equal(mr, UT_POISON);
		assert_int_equal(fake_verbs_reg_mrs(), before + 1);
	}
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/* ODP is a fallback: the first attempt pins */
static void odp_first_attempt_plain(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	assert_int_equal(fake_verbs_reg_mrs(), 1);
	assert_int_equal(fake_verbs_reg_mr(0)->access, IBV_ACCESS_REMOTE_READ);
	dereg(&mr);
}

/*
 * rpma_mr_dereg
 */

static void dereg_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_mr_dereg(NULL), RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_DEREG_MR), 0);
}

static void dereg_null_mr(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = NULL;
	assert_int_equal(rpma_mr_dereg(&mr), 0);
	assert_null(mr);
	assert_int_equal(fake_verbs_calls(FAKE_DEREG_MR), 0);
}

static void dereg_success(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_SEND);
	assert_int_equal(fake_verbs_live_objects(), 2);
	dereg(&mr);
	assert_int_equal(fake_verbs_calls(FAKE_DEREG_MR), 1);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/*
 * librpma 1.x's code released the object and set *mr_ptr to NULL even when
 * ibv_dereg_mr() failed (its header said otherwise): programs written for
 * it never retry, so a kept object would only leak.
 */
static void dereg_failure_releases_region(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_SEND);
	fake_verbs_fail(FAKE_DEREG_MR, 1, EBUSY);
	int ret = rpma_mr_dereg(&mr);
	int err = rpma_err_get_provider_error();
	int live = fake_verbs_live_objects();
	/*
	 * The registration rdma-core refused to release keeps the domain busy:
	 * the peer goes all the same (its delete fails), then the fake.
	 */
	int peer_ret = rpma_peer_delete(&peer);
	fake_verbs_reset();
	make_peer();
	assert_int_equal(peer_ret, RPMA_E_PROVIDER);
	assert_int_equal(ret, RPMA_E_PROVIDER);
	assert_int_equal(err, EBUSY);
	assert_null(mr);
	assert_int_equal(live, 2);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/*
 * getters
 */

static void get_ptr_null(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_SEND);
	void *ptr = UT_POISON;
	assert_int_equal(rpma_mr_get_ptr(NULL, &ptr), RPMA_E_INVAL);
	assert_ptr_equal(ptr, UT_POISON);
	assert_int_equal(rpma_mr_get_ptr(mr, NULL), RPMA_E_INVAL);
	dereg(&mr);
}

static void get_size_null(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_SEND);
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_get_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(size, UT_POISON_SIZE);
	assert_int_equal(rpma_mr_get_size(mr, NULL), RPMA_E_INVAL);
	dereg(&mr);
}

/*
 * descriptor: encoding
 */

static void desc_size(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_get_descriptor_size(mr, &size), 0);
	assert_int_equal(size, DESC_SIZE);
	dereg(&mr);
}

static void desc_size_null(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_get_descriptor_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(size, UT_POISON_SIZE);
	assert_int_equal(rpma_mr_get_descriptor_size(mr, NULL), RPMA_E_INVAL);
	dereg(&mr);
}

static void desc_null(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	uint8_t d[DESC_SIZE];
	memset(d, 0xee, sizeof(d));
	assert_int_equal(rpma_mr_get_descriptor(NULL, d), RPMA_E_INVAL);
	for (size_t i = 0; i < sizeof(d); i++)
		assert_int_equal(d[i], 0xee);
	assert_int_equal(rpma_mr_get_descriptor(mr, NULL), RPMA_E_INVAL);
	dereg(&mr);
}

/* byte for byte: address, length, rkey little-endian, then the usage */
static void desc_bytes(void **state)
{
	(void)state;
	const int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	struct rpma_mr_local *mr = reg(buf + 24, 3000, usage);
	uint8_t d[DESC_SIZE];
	assert_int_equal(rpma_mr_get_descriptor(mr, d), 0);

	uint8_t expected[DESC_SIZE];
	make_desc(expected, (uint64_t)(uintptr_t)(buf + 24), 3000, fake_verbs_reg_mr(0)->rkey,
		  (uint8_t)usage);
	assert_memory_equal(d, expected, DESC_SIZE);
	/* spelled out, in case the helper and the library share a mistake */
	uint32_t rkey = fake_verbs_reg_mr(0)->rkey;
	assert_int_equal(d[16], rkey & 0xff);
	assert_int_equal(d[19], rkey >> 24);
	assert_int_equal(d[8], 3000 & 0xff);
	assert_int_equal(d[9], 3000 >> 8);
	for (int i = 10; i < 16; i++)
		assert_int_equal(d[i], 0);
	assert_int_equal(d[20], 0x28);
	dereg(&mr);
}

/* a large region far up in the address space: every byte position counts */
static void desc_bytes_wide_values(void **state)
{
	(void)state;
	/* the library never touches the memory; the fake does not either */
	void *far = (void *)(uintptr_t)0x00007f0102030405ULL;
	const size_t size = (size_t)0x0000000a0b0c0d0eULL;
	struct rpma_mr_local *mr = reg(far, size, 0xff);
	uint8_t d[DESC_SIZE];
	assert_int_equal(rpma_mr_get_descriptor(mr, d), 0);
	const uint8_t addr[8] = { 0x05, 0x04, 0x03, 0x02, 0x01, 0x7f, 0x00, 0x00 };
	const uint8_t len[8] = { 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x00, 0x00, 0x00 };
	assert_memory_equal(d, addr, 8);
	assert_memory_equal(d + 8, len, 8);
	assert_int_equal(get_le(d + 16, 4), fake_verbs_reg_mr(0)->rkey);
	assert_int_equal(d[20], 0xff);
	dereg(&mr);
}

/* the encoder writes the size it reports, not one byte more */
static void desc_no_overflow(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	size_t size = 0;
	assert_int_equal(rpma_mr_get_descriptor_size(mr, &size), 0);
	uint8_t d[128];
	assert_true(size >= DESC_SIZE && size < sizeof(d));
	memset(d, 0xee, sizeof(d));
	assert_int_equal(rpma_mr_get_descriptor(mr, d), 0);
	for (size_t i = size; i < sizeof(d); i++)
		assert_int_equal(d[i], 0xee);
	dereg(&mr);
}

/* the usage byte is the usage, not the access flags */
static void desc_usage_byte(void **state)
{
	(void)state;
	for (int b = 0; b < 8; b++) {
		struct rpma_mr_local *mr = reg(buf, sizeof(buf), 1 << b);
		uint8_t d[DESC_SIZE];
		assert_int_equal(rpma_mr_get_descriptor(mr, d), 0);
		assert_int_equal(d[20], 1 << b);
		dereg(&mr);
	}
}

/*
 * descriptor: decoding
 */

static void from_desc_null_desc(void **state)
{
	(void)state;
	struct rpma_mr_remote *mr = UT_POISON;
	assert_int_equal(rpma_mr_remote_from_descriptor(NULL, DESC_SIZE, &mr), RPMA_E_INVAL);
	assert_ptr_equal(mr, UT_POISON);
}

static void from_desc_null_ptr(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 4096, 0x1234, RPMA_MR_USAGE_READ_SRC);
	assert_int_equal(rpma_mr_remote_from_descriptor(d, DESC_SIZE, NULL), RPMA_E_INVAL);
}

/* every length short of 21 bytes is refused, whatever the bytes say */
static void from_desc_truncated(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 4096, 0x1234, 0xff);
	for (size_t len = 0; len < DESC_SIZE; len++) {
		struct rpma_mr_remote *mr = UT_POISON;
		assert_int_equal(rpma_mr_remote_from_descriptor(d, len, &mr), RPMA_E_INVAL);
		assert_ptr_equal(mr, UT_POISON);
	}
}

static void from_desc_truncated_by_one(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 4096, 0x1234, RPMA_MR_USAGE_WRITE_DST);
	struct rpma_mr_remote *mr = UT_POISON;
	assert_int_equal(rpma_mr_remote_from_descriptor(d, DESC_SIZE - 1, &mr), RPMA_E_INVAL);
	assert_ptr_equal(mr, UT_POISON);
}

static void from_desc_usage_zero(void **state)
{
	(void)state;
	uint8_t d[64];
	memset(d, 0xff, sizeof(d));
	make_desc(d, 0x1000, 4096, 0x1234, 0);
	const size_t sizes[] = { DESC_SIZE, DESC_SIZE + 1, sizeof(d) };
	for (size_t i = 0; i < UT_ARRAY_SIZE(sizes); i++) {
		struct rpma_mr_remote *mr = UT_POISON;
		assert_int_equal(rpma_mr_remote_from_descriptor(d, sizes[i], &mr), RPMA_E_INVAL);
		assert_ptr_equal(mr, UT_POISON);
	}
}

static void from_desc_exact(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1122334455667788ULL, 0x0000000000abcdefULL, 0xa1b2c3d4,
		  RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_mr_remote *mr = decode(d, DESC_SIZE);
	assert_int_equal(remote_size(mr), 0xabcdef);
	assert_int_equal(remote_flush_type(mr), RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	remote_delete(&mr);
}

/* the length is the sender's: the whole u64 range is taken as it is */
static void from_desc_huge_length(void **state)
{
	(void)state;
	const uint64_t lengths[] = { UINT64_MAX, 0x8000000000000000ULL, 0x0102030405060708ULL,
				     0xffffffffULL + 1 };
	for (size_t i = 0; i < UT_ARRAY_SIZE(lengths); i++) {
		uint8_t d[DESC_SIZE];
		make_desc(d, UINT64_MAX, lengths[i], UINT32_MAX, RPMA_MR_USAGE_READ_SRC);
		struct rpma_mr_remote *mr = decode(d, DESC_SIZE);
		assert_int_equal(remote_size(mr), (size_t)lengths[i]);
		remote_delete(&mr);
	}
}

/* bytes after the 21st (a later version's trailer, garbage) are ignored */
static void from_desc_extra_bytes_ignored(void **state)
{
	(void)state;
	for (int fill = 0; fill < 3; fill++) {
		uint8_t d[300];
		memset(d, fill == 0 ? 0x00 : fill == 1 ? 0xff : 0x5c, sizeof(d));
		make_desc(d, 0xdead0000, 65536, 0x42,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
		const size_t sizes[] = { DESC_SIZE + 1, DESC_SIZE + 3, 56, 196, sizeof(d) };
		for (size_t i = 0; i < UT_ARRAY_SIZE(sizes); i++) {
			struct rpma_mr_remote *mr = decode(d, sizes[i]);
			assert_int_equal(remote_size(mr), 65536);
			assert_int_equal(remote_flush_type(mr),
					 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
			remote_delete(&mr);
		}
	}
}

/* a descriptor ending where the readable memory ends: nothing beyond is read */
static void from_desc_reads_only_size(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 777, 0x99, RPMA_MR_USAGE_READ_SRC);
	struct edge e;
	uint8_t *at = edge_place(&e, d, DESC_SIZE);
	struct rpma_mr_remote *mr = decode(at, DESC_SIZE);
	assert_int_equal(remote_size(mr), 777);
	remote_delete(&mr);
	edge_free(&e);

	/* and a short one is refused without a look past its end */
	for (size_t len = 0; len < DESC_SIZE; len++) {
		uint8_t *p = edge_place(&e, d, len);
		mr = UT_POISON;
		assert_int_equal(rpma_mr_remote_from_descriptor(p, len, &mr), RPMA_E_INVAL);
		assert_ptr_equal(mr, UT_POISON);
		edge_free(&e);
	}
}

/* untrusted input: any bytes, any size, never a crash, only 0 or INVAL */
static void from_desc_fuzz(void **state)
{
	(void)state;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct edge e;
	uint8_t *area = edge_place(&e, NULL, 0);
	(void)area;
	for (int round = 0; round < 4000; round++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t len = (size_t)(seed >> 33) % 80;
		uint8_t bytes[80];
		for (size_t i = 0; i < len; i++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			bytes[i] = (uint8_t)(seed >> 56);
		}
		uint8_t *at = e.map + e.page - len;
		memcpy(at, bytes, len);
		struct rpma_mr_remote *mr = UT_POISON;
		int ret = rpma_mr_remote_from_descriptor(at, len, &mr);
		if (len >= DESC_SIZE && bytes[20] != 0) {
			assert_int_equal(ret, 0);
			assert_int_equal(remote_size(mr), (size_t)get_le(bytes + 8, 8));
			assert_int_equal(remote_flush_type(mr),
					 bytes[20] & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
						      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT));
			remote_delete(&mr);
		} else {
			assert_int_equal(ret, RPMA_E_INVAL);
			assert_ptr_equal(mr, UT_POISON);
		}
	}
	edge_free(&e);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/* local region -> descriptor -> remote region */
static void round_trip(void **state)
{
	(void)state;
	const int usages[] = {
		RPMA_MR_USAGE_READ_SRC,
		RPMA_MR_USAGE_WRITE_DST,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		0xff,
	};
	for (size_t i = 0; i < UT_ARRAY_SIZE(usages); i++) {
		struct rpma_mr_local *local = reg(buf + i, 1000 + i, usages[i]);
		size_t size = 0;
		assert_int_equal(rpma_mr_get_descriptor_size(local, &size), 0);
		uint8_t d[64];
		assert_true(size <= sizeof(d));
		assert_int_equal(rpma_mr_get_descriptor(local, d), 0);
		struct rpma_mr_remote *remote = decode(d, size);
		assert_int_equal(remote_size(remote), 1000 + i);
		assert_int_equal(remote_flush_type(remote),
				 usages[i] & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
					      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT));
		remote_delete(&remote);
		dereg(&local);
	}
}

/* a remote region is plain memory: no device object behind it */
static void remote_touches_no_device(void **state)
{
	(void)state;
	unsigned calls[FAKE_CALL_MAX];
	for (int c = 0; c < FAKE_CALL_MAX; c++)
		calls[c] = fake_verbs_calls((enum fake_call)c);
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 4096, 0x1234, RPMA_MR_USAGE_WRITE_DST);
	struct rpma_mr_remote *mr = decode(d, DESC_SIZE);
	assert_int_equal(fake_verbs_live_objects(), 1);
	remote_delete(&mr);
	for (int c = 0; c < FAKE_CALL_MAX; c++)
		assert_int_equal(fake_verbs_calls((enum fake_call)c), calls[c]);
}

static void remote_get_size_null(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 4096, 0x1234, RPMA_MR_USAGE_WRITE_DST);
	struct rpma_mr_remote *mr = decode(d, DESC_SIZE);
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_remote_get_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(size, UT_POISON_SIZE);
	assert_int_equal(rpma_mr_remote_get_size(mr, NULL), RPMA_E_INVAL);
	remote_delete(&mr);
}

static void remote_get_flush_type_null(void **state)
{
	(void)state;
	uint8_t d[DESC_SIZE];
	make_desc(d, 0x1000, 4096, 0x1234, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_mr_remote *mr = decode(d, DESC_SIZE);
	int ft = 0x5a5a;
	assert_int_equal(rpma_mr_remote_get_flush_type(NULL, &ft), RPMA_E_INVAL);
	assert_int_equal(ft, 0x5a5a);
	assert_int_equal(rpma_mr_remote_get_flush_type(mr, NULL), RPMA_E_INVAL);
	remote_delete(&mr);
}

/* only the flush bits of the usage are flush types */
static void remote_flush_types(void **state)
{
	(void)state;
	const struct {
		uint8_t usage;
		int flush;
	} cases[] = {
		{ RPMA_MR_USAGE_WRITE_DST, 0 },
		{ RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY },
		{ RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT },
		{ RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
		  RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT },
		{ 0xff, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT },
		{ 0xcf, 0 },
	};
	for (size_t i = 0; i < UT_ARRAY_SIZE(cases); i++) {
		uint8_t d[DESC_SIZE];
		make_desc(d, 0x1000, 4096, 0x1234, cases[i].usage);
		struct rpma_mr_remote *mr = decode(d, DESC_SIZE);
		assert_int_equal(remote_flush_type(mr), cases[i].flush);
		remote_delete(&mr);
	}
}

static void remote_delete_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_mr_remote_delete(NULL), RPMA_E_INVAL);
}

static void remote_delete_null_mr(void **state)
{
	(void)state;
	struct rpma_mr_remote *mr = NULL;
	assert_int_equal(rpma_mr_remote_delete(&mr), 0);
	assert_null(mr);
}

/*
 * rpma_mr_advise
 */

/* an ODP region: the first registration is refused, the on-demand one works */
static struct rpma_mr_local *reg_odp(void *ptr, size_t size)
{
	fake_verbs_fail(FAKE_REG_MR, 1, EOPNOTSUPP);
	struct rpma_mr_local *mr = reg(ptr, size, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	assert_true(fake_verbs_reg_mr(fake_verbs_reg_mrs() - 1)->access & IBV_ACCESS_ON_DEMAND);
	return mr;
}

static void advise_null_mr(void **state)
{
	(void)state;
	assert_int_equal(rpma_mr_advise(NULL, 0, 8, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_ADVISE_MR), 0);
}

static void advise_zero_len(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	assert_int_equal(rpma_mr_advise(mr, 0, 0, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_ADVISE_MR), 0);
	dereg(&mr);
}

static void advise_out_of_range(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, 1024);
	const struct {
		size_t offset, len;
	} bad[] = { { 0, 1025 }, { 1, 1024 }, { 1024, 1 }, { 1023, 2 }, { 2048, 8 } };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++)
		assert_int_equal(
		    rpma_mr_advise(mr, bad[i].offset, bad[i].len, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
		    RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_ADVISE_MR), 0);
	dereg(&mr);
}

/* offset + len must not wrap around to something small */
static void advise_overflow(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, 1024);
	assert_int_equal(rpma_mr_advise(mr, SIZE_MAX, 2, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_INVAL);
	assert_int_equal(rpma_mr_advise(mr, 8, SIZE_MAX - 4, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_INVAL);
	assert_int_equal(rpma_mr_advise(mr, SIZE_MAX, SIZE_MAX, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_ADVISE_MR), 0);
	dereg(&mr);
}

/* an ibv_sge holds a 32-bit length: a longer range cannot be advised at once */
static void advise_len_beyond_u32(void **state)
{
	(void)state;
	void *far = (void *)(uintptr_t)0x0000700000000000ULL;
	struct rpma_mr_local *mr = reg_odp(far, (size_t)1 << 33);
	assert_int_equal(
	    rpma_mr_advise(mr, 0, (size_t)UINT32_MAX + 1, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
	    RPMA_E_INVAL);
	assert_int_equal(fake_verbs_calls(FAKE_ADVISE_MR), 0);
	/* up to UINT32_MAX is fine */
	assert_int_equal(rpma_mr_advise(mr, 4096, UINT32_MAX, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	assert_int_equal(fake_verbs_advise(0)->sge[0].length, UINT32_MAX);
	dereg(&mr);
}

static void advise_success(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	const struct fake_reg_mr_record *r = fake_verbs_reg_mr(fake_verbs_reg_mrs() - 1);
	assert_int_equal(rpma_mr_advise(mr, 128, 256, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					IBV_ADVISE_MR_FLAG_FLUSH),
			 0);
	assert_int_equal(fake_verbs_advises(), 1);
	const struct fake_advise_record *a = fake_verbs_advise(0);
	assert_ptr_equal(a->pd, r->pd);
	assert_int_equal(a->advice, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE);
	assert_int_equal(a->flags, IBV_ADVISE_MR_FLAG_FLUSH);
	assert_int_equal(a->num_sge, 1);
	assert_int_equal(a->sge[0].addr, (uint64_t)(uintptr_t)(buf + 128));
	assert_int_equal(a->sge[0].length, 256);
	assert_int_equal(a->sge[0].lkey, r->lkey);
	dereg(&mr);
}

/* the offset counts from the region's start, not from the buffer's */
static void advise_offset_from_region(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf + 512, 1024);
	assert_int_equal(rpma_mr_advise(mr, 16, 32, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	assert_int_equal(fake_verbs_advise(0)->sge[0].addr, (uint64_t)(uintptr_t)(buf + 528));
	dereg(&mr);
}

static void advise_whole_and_edges(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, 1024);
	assert_int_equal(rpma_mr_advise(mr, 0, 1024, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	assert_int_equal(rpma_mr_advise(mr, 1023, 1, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	assert_int_equal(rpma_mr_advise(mr, 0, 1, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT, 0), 0);
	assert_int_equal(fake_verbs_advises(), 3);
	assert_int_equal(fake_verbs_advise(1)->sge[0].addr, (uint64_t)(uintptr_t)(buf + 1023));
	assert_int_equal(fake_verbs_advise(2)->advice, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT);
	dereg(&mr);
}

static void advise_not_supported(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	fake_verbs_fail(FAKE_ADVISE_MR, 1, EOPNOTSUPP);
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_NOSUPP);
	assert_int_equal(rpma_err_get_provider_error(), EOPNOTSUPP);
	dereg(&mr);
}

static void advise_provider_einval(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	fake_verbs_fail(FAKE_ADVISE_MR, 1, EINVAL);
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), RPMA_E_INVAL);
	dereg(&mr);
}

static void advise_provider_efault(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	fake_verbs_fail(FAKE_ADVISE_MR, 1, EFAULT);
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), RPMA_E_INVAL);
	dereg(&mr);
}

static void advise_provider_other(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	fake_verbs_fail(FAKE_ADVISE_MR, 1, EIO);
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	/* the region is still fine */
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0), 0);
	dereg(&mr);
}

/* an advice rdma-core does not know is the provider's to refuse: INVAL */
static void advise_unknown_advice(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg_odp(buf, sizeof(buf));
	assert_int_equal(rpma_mr_advise(mr, 0, 64, 77, 0), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0x80),
			 RPMA_E_INVAL);
	dereg(&mr);
}

/* a device without ODP cannot prefetch */
static void advise_device_without_odp(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	assert_int_equal(rpma_mr_advise(mr, 0, 64, IBV_ADVISE_MR_ADVICE_PREFETCH, 0),
			 RPMA_E_NOSUPP);
	dereg(&mr);
}

/*
 * versioned descriptor (rpma-ng extension): the 21 bytes of librpma 1.x,
 * then the trailer [0xD7 magic][version 1][flush methods][crc8 of bytes 0..23]
 */

#define VDESC_SIZE	 25
#define METHOD_RAW	 0x01 /* read-after-write */
#define METHOD_GPSPM	 0x02
#define USAGE_PERSISTENT RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT

static void record_nothing(const void *ptr, size_t len)
{
	(void)ptr;
	(void)len;
}

/* the versioned descriptor of mr, checked to stop at 25 bytes */
static void vdesc_of(const struct rpma_mr_local *mr, uint8_t d[VDESC_SIZE])
{
	uint8_t wide[VDESC_SIZE + 8];
	memset(wide, 0xee, sizeof(wide));
	assert_int_equal(rpma_mr_get_versioned_descriptor(mr, wide), 0);
	for (size_t i = VDESC_SIZE; i < sizeof(wide); i++)
		assert_int_equal(wide[i], 0xee);
	memcpy(d, wide, VDESC_SIZE);
}

static void vdesc_reference_crc(void **state)
{
	(void)state;
	assert_true(crc8_ref_is_sound());
}

static void vdesc_size(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_get_versioned_descriptor_size(mr, &size), 0);
	assert_int_equal(size, VDESC_SIZE);
	/* the default form stays librpma's, whatever the region offers */
	assert_int_equal(rpma_mr_get_descriptor_size(mr, &size), 0);
	assert_int_equal(size, DESC_SIZE);
	dereg(&mr);
}

static void vdesc_size_null(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	size_t size = UT_POISON_SIZE;
	assert_int_equal(rpma_mr_get_versioned_descriptor_size(NULL, &size), RPMA_E_INVAL);
	assert_int_equal(size, UT_POISON_SIZE);
	assert_int_equal(rpma_mr_get_versioned_descriptor_size(mr, NULL), RPMA_E_INVAL);
	dereg(&mr);
}

static void vdesc_null(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), RPMA_MR_USAGE_READ_SRC);
	uint8_t d[VDESC_SIZE];
	memset(d, 0xee, sizeof(d));
	assert_int_equal(rpma_mr_get_versioned_descriptor(NULL, d), RPMA_E_INVAL);
	for (size_t i = 0; i < sizeof(d); i++)
		assert_int_equal(d[i], 0xee);
	assert_int_equal(rpma_mr_get_versioned_descriptor(mr, NULL), RPMA_E_INVAL);
	dereg(&mr);
}

/* byte for byte, for a region that persistent flushes may reach */
static void vdesc_bytes(void **state)
{
	(void)state;
	const int usage = RPMA_MR_USAGE_WRITE_DST | USAGE_PERSISTENT;
	struct rpma_mr_local *mr = reg(buf + 24, 3000, usage);
	uint8_t d[VDESC_SIZE];
	vdesc_of(mr, d);

	uint8_t expected[VDESC_SIZE];
	make_desc(expected, (uint64_t)(uintptr_t)(buf + 24), 3000, fake_verbs_reg_mr(0)->rkey,
		  (uint8_t)usage);
	expected[21] = 0xD7;
	expected[22] = 1;
	expected[23] = METHOD_RAW;
	expected[24] = crc8_ref(expected, 24);
	assert_memory_equal(d, expected, VDESC_SIZE);

	/* the first 21 bytes are the librpma 1.x descriptor, unchanged */
	uint8_t legacy[DESC_SIZE];
	assert_int_equal(rpma_mr_get_descriptor(mr, legacy), 0);
	assert_memory_equal(d, legacy, DESC_SIZE);
	dereg(&mr);
}

/* every byte of the descriptor enters the checksum */
static void vdesc_crc_covers_everything(void **state)
{
	(void)state;
	void *far = (void *)(uintptr_t)0x00007f0102030405ULL;
	const size_t size = (size_t)0x0000000a0b0c0d0eULL;
	struct rpma_mr_local *a = reg(far, size, 0xff);
	struct rpma_mr_local *b = reg(buf, sizeof(buf), RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	uint8_t da[VDESC_SIZE], db[VDESC_SIZE];
	vdesc_of(a, da);
	vdesc_of(b, db);
	assert_int_equal(da[24], crc8_ref(da, 24));
	assert_int_equal(db[24], crc8_ref(db, 24));
	/* the whole descriptor, checksum included, divides evenly */
	assert_int_equal(crc8_ref(da, VDESC_SIZE), 0);
	assert_int_equal(crc8_ref(db, VDESC_SIZE), 0);
	assert_int_equal(get_le(da + 16, 4), fake_verbs_reg_mr(0)->rkey);
	assert_int_equal(get_le(db + 16, 4), fake_verbs_reg_mr(1)->rkey);
	dereg(&a);
	dereg(&b);
}

static uint8_t methods_of(const struct rpma_mr_local *mr)
{
	uint8_t d[VDESC_SIZE];
	vdesc_of(mr, d);
	assert_int_equal(d[21], 0xD7);
	assert_int_equal(d[22], 1);
	assert_int_equal(d[24], crc8_ref(d, 24));
	return d[23];
}

/* read-after-write for every flushable region, and for no other */
static void vdesc_methods_by_usage(void **state)
{
	(void)state;
	static const struct {
		int usage;
		uint8_t methods;
	} cases[] = {
		{ RPMA_MR_USAGE_WRITE_DST, 0 },
		{ RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST, 0 },
		{ RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, METHOD_RAW },
		{ USAGE_PERSISTENT, METHOD_RAW },
		{ RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | USAGE_PERSISTENT,
		  METHOD_RAW },
	};
	for (size_t i = 0; i < UT_ARRAY_SIZE(cases); i++) {
		struct rpma_mr_local *mr = reg(buf, sizeof(buf), cases[i].usage);
		assert_int_equal(methods_of(mr), cases[i].methods);
		dereg(&mr);
	}
}

/* GPSPM while the region has a persist function, and only then */
static void vdesc_methods_follow_persist_fn(void **state)
{
	(void)state;
	struct rpma_mr_local *mr =
	    reg(buf, sizeof(buf), RPMA_MR_USAGE_WRITE_DST | USAGE_PERSISTENT);
	assert_int_equal(methods_of(mr), METHOD_RAW);
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	assert_int_equal(methods_of(mr), METHOD_RAW | METHOD_GPSPM);
	/* set again: still offered once */
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	assert_int_equal(methods_of(mr), METHOD_RAW | METHOD_GPSPM);
	assert_int_equal(rpma_mr_set_persist_fn(mr, NULL), 0);
	assert_int_equal(methods_of(mr), METHOD_RAW);
	dereg(&mr);
}

/* the librpma 1.x descriptor does not change when GPSPM is offered */
static void vdesc_legacy_unchanged_by_persist_fn(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), USAGE_PERSISTENT);
	uint8_t before[DESC_SIZE + 4], after[DESC_SIZE + 4];
	memset(before, 0xee, sizeof(before));
	memset(after, 0xee, sizeof(after));
	assert_int_equal(rpma_mr_get_descriptor(mr, before), 0);
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	assert_int_equal(rpma_mr_get_descriptor(mr, after), 0);
	assert_memory_equal(before, after, sizeof(before));
	for (size_t i = DESC_SIZE; i < sizeof(after); i++)
		assert_int_equal(after[i], 0xee);
	size_t size = 0;
	assert_int_equal(rpma_mr_get_descriptor_size(mr, &size), 0);
	assert_int_equal(size, DESC_SIZE);
	dereg(&mr);
}

/* both forms decode to the same region */
static void vdesc_decodes_as_region(void **state)
{
	(void)state;
	const int usage = RPMA_MR_USAGE_WRITE_DST | USAGE_PERSISTENT;
	struct rpma_mr_local *mr = reg(buf, 2048, usage);
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	uint8_t d[VDESC_SIZE];
	vdesc_of(mr, d);
	struct rpma_mr_remote *v = decode(d, VDESC_SIZE);
	struct rpma_mr_remote *l = decode(d, DESC_SIZE);
	assert_int_equal(remote_size(v), 2048);
	assert_int_equal(remote_size(l), 2048);
	assert_int_equal(remote_flush_type(v), USAGE_PERSISTENT);
	assert_int_equal(remote_flush_type(l), USAGE_PERSISTENT);
	remote_delete(&v);
	remote_delete(&l);
	dereg(&mr);
}

/* a versioned descriptor at the very end of a mapping: nothing beyond is read */
static void vdesc_decode_reads_only_size(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), USAGE_PERSISTENT);
	uint8_t d[VDESC_SIZE];
	vdesc_of(mr, d);
	struct edge e;
	for (size_t n = DESC_SIZE; n <= VDESC_SIZE; n++) {
		uint8_t *at = edge_place(&e, d, n);
		struct rpma_mr_remote *r = decode(at, n);
		assert_int_equal(remote_size(r), sizeof(buf));
		remote_delete(&r);
		edge_free(&e);
	}
	dereg(&mr);
}

/*
 * rpma_mr_set_persist_fn (rpma-ng extension)
 */

static void persist_fn_null_mr(void **state)
{
	(void)state;
	assert_int_equal(rpma_mr_set_persist_fn(NULL, record_nothing), RPMA_E_INVAL);
	assert_int_equal(rpma_mr_set_persist_fn(NULL, NULL), RPMA_E_INVAL);
}

/* GPSPM persists: a region that persistent flushes may not reach cannot offer it */
static void persist_fn_needs_persistent_usage(void **state)
{
	(void)state;
	static const int refused[] = {
		RPMA_MR_USAGE_WRITE_DST,
		RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
		RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
		    RPMA_MR_USAGE_READ_SRC,
	};
	for (size_t i = 0; i < UT_ARRAY_SIZE(refused); i++) {
		struct rpma_mr_local *mr = reg(buf, sizeof(buf), refused[i]);
		ut_log_clear();
		unsigned calls = fake_verbs_calls(FAKE_REG_MR) + fake_verbs_calls(FAKE_DEREG_MR);
		assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), RPMA_E_INVAL);
		assert_int_equal(ut_log_count, 1);
		assert_int_equal(ut_log_last_level, RPMA_LOG_LEVEL_ERROR);
		assert_non_null(strstr(ut_log_last_message, "RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT"));
		assert_int_equal(fake_verbs_calls(FAKE_REG_MR) + fake_verbs_calls(FAKE_DEREG_MR),
				 calls);
		/* nothing offered */
		assert_int_equal(methods_of(mr) & METHOD_GPSPM, 0);
		/* withdrawing what is not there is harmless */
		assert_int_equal(rpma_mr_set_persist_fn(mr, NULL), 0);
		dereg(&mr);
	}
}

/* the registration is not touched: GPSPM needs no other access */
static void persist_fn_touches_no_device(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), USAGE_PERSISTENT);
	unsigned reg_calls = fake_verbs_calls(FAKE_REG_MR);
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	assert_int_equal(rpma_mr_set_persist_fn(mr, NULL), 0);
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), reg_calls);
	assert_int_equal(fake_verbs_calls(FAKE_DEREG_MR), 0);
	dereg(&mr);
}

/* a region deregistered while it offers GPSPM: released like any other */
static void persist_fn_dereg(void **state)
{
	(void)state;
	struct rpma_mr_local *a = reg(buf, 1024, USAGE_PERSISTENT);
	struct rpma_mr_local *b = reg(buf + 1024, 1024, USAGE_PERSISTENT);
	struct rpma_mr_local *c = reg(buf + 2048, 1024, USAGE_PERSISTENT);
	assert_int_equal(rpma_mr_set_persist_fn(a, record_nothing), 0);
	assert_int_equal(rpma_mr_set_persist_fn(b, record_nothing), 0);
	assert_int_equal(rpma_mr_set_persist_fn(c, record_nothing), 0);
	/* the middle one, then the others, in an order that is not the offers' */
	dereg(&b);
	assert_int_equal(methods_of(a), METHOD_RAW | METHOD_GPSPM);
	assert_int_equal(methods_of(c), METHOD_RAW | METHOD_GPSPM);
	dereg(&c);
	dereg(&a);
	assert_int_equal(fake_verbs_calls(FAKE_DEREG_MR), 3);
	assert_int_equal(fake_verbs_live_objects(), 1);
}

/*
 * native flush: a device with RDMA FLUSH (rxe on Linux 6.2 and later)
 * registers flushable regions for it, as far as the memory allows
 */

#define METHOD_NATIVE_VIS  0x04
#define METHOD_NATIVE_PERS 0x08
#define FLUSH_ACCESS	   (FAKE_ACCESS_FLUSH_GLOBAL | FAKE_ACCESS_FLUSH_PERSISTENT)
#define USAGE_VISIBILITY   RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY
#define USAGE_BOTH	   (RPMA_MR_USAGE_WRITE_DST | USAGE_VISIBILITY | USAGE_PERSISTENT)

static int mr_setup_native(void **state)
{
	ut_setup(state);
	fake_verbs_set_native_flush(true);
	/* buf is persistent memory, as far as the device knows */
	fake_verbs_set_pmem(buf, sizeof(buf));
	return make_peer();
}

#define MR_TEST_NATIVE(f) cmocka_unit_test_setup_teardown(f, mr_setup_native, mr_teardown)

#define METHOD_NATIVE_AW 0x10 /* the device takes RDMA ATOMIC WRITE into the region */

static int mr_setup_native_atomic_write(void **state)
{
	ut_setup(state);
	fake_verbs_set_native_atomic_write(true);
	return make_peer();
}

/*
 * A device with ATOMIC WRITE: a region that takes writes says so in its
 * versioned descriptor, so that initiators may use it; others do not
 */
static void native_atomic_write_offered(void **state)
{
	(void)state;
	static const struct {
		int usage;
		uint8_t methods;
	} cases[] = {
		{ RPMA_MR_USAGE_WRITE_DST, METHOD_NATIVE_AW },
		{ RPMA_MR_USAGE_WRITE_DST | USAGE_VISIBILITY, METHOD_RAW | METHOD_NATIVE_AW },
		{ RPMA_MR_USAGE_READ_SRC, 0 },
		{ USAGE_VISIBILITY, METHOD_RAW },
		{ RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_RECV, 0 },
	};
	for (size_t i = 0; i < UT_ARRAY_SIZE(cases); i++) {
		struct rpma_mr_local *mr = reg(buf, sizeof(buf), cases[i].usage);
		assert_int_equal(methods_of(mr), cases[i].methods);
		dereg(&mr);
	}
}

/* persistent memory: each flush usage gets its placement, in one registration */
static void native_access_by_usage(void **state)
{
	(void)state;
	static const struct {
		int usage;
		int flush_access;
		uint8_t methods;
	} cases[] = {
		{ RPMA_MR_USAGE_WRITE_DST, 0, 0 },
		{ RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_SEND, 0, 0 },
		{ USAGE_VISIBILITY, FAKE_ACCESS_FLUSH_GLOBAL, METHOD_RAW | METHOD_NATIVE_VIS },
		/* persistence is offered once the application says how the region persists */
		{ USAGE_PERSISTENT, FAKE_ACCESS_FLUSH_PERSISTENT, METHOD_RAW },
		{ USAGE_BOTH, FLUSH_ACCESS, METHOD_RAW | METHOD_NATIVE_VIS },
	};
	for (size_t i = 0; i < UT_ARRAY_SIZE(cases); i++) {
		const unsigned before = fake_verbs_reg_mrs();
		struct rpma_mr_local *mr = reg(buf, sizeof(buf), cases[i].usage);
		assert_int_equal(fake_verbs_reg_mrs(), before + 1);
		const int access = fake_verbs_reg_mr(before)->access;
		assert_int_equal(access & FLUSH_ACCESS, cases[i].flush_access);
		/* read-after-write peers (librpma 1.x ones) are served all the same */
		assert_int_equal(access & ~FLUSH_ACCESS,
				 access_for(cases[i].usage) & ~FLUSH_ACCESS);
		if (cases[i].flush_access)
			assert_true(access & IBV_ACCESS_REMOTE_READ);
		assert_int_equal(methods_of(mr), cases[i].methods);
		dereg(&mr);
	}
}

/*
 * The device grants the persistent placement, but only the application
 * knows that the memory is persistent: native persistent flush is offered
 * while the region has a persist function, as GPSPM is, and only then
 */
static void native_persistent_needs_the_statement(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), USAGE_BOTH);
	assert_true(fake_verbs_reg_mr(fake_verbs_reg_mrs() - 1)->access &
		    FAKE_ACCESS_FLUSH_PERSISTENT);
	assert_int_equal(methods_of(mr), METHOD_RAW | METHOD_NATIVE_VIS);
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	assert_int_equal(methods_of(mr),
			 METHOD_RAW | METHOD_GPSPM | METHOD_NATIVE_VIS | METHOD_NATIVE_PERS);
	assert_int_equal(rpma_mr_set_persist_fn(mr, NULL), 0);
	assert_int_equal(methods_of(mr), METHOD_RAW | METHOD_NATIVE_VIS);
	dereg(&mr);
}

/*
 * DRAM: the device refuses the persistent placement (rxe: EINVAL), the
 * region is registered without it and does not offer it
 */
static void native_dram_drops_persistence(void **state)
{
	(void)state;
	static char dram[256];
	/* a provider error of the application's own, which must stay */
	struct rpma_mr_local *mr = UT_POISON;
	fake_verbs_fail(FAKE_REG_MR, 1, ENOTTY);
	assert_int_equal(rpma_mr_reg(peer, buf, 64, RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOTTY);
	const unsigned before = fake_verbs_reg_mrs();

	mr = reg(dram, sizeof(dram), USAGE_BOTH);
	assert_int_equal(fake_verbs_reg_mrs(), before + 2);
	assert_null(fake_verbs_reg_mr(before)->mr);
	assert_int_equal(fake_verbs_reg_mr(before)->access & FLUSH_ACCESS, FLUSH_ACCESS);
	assert_int_equal(fake_verbs_reg_mr(before + 1)->access & FLUSH_ACCESS,
			 FAKE_ACCESS_FLUSH_GLOBAL);
	assert_int_equal(fake_verbs_reg_mr(before + 1)->access & ~FLUSH_ACCESS,
			 fake_verbs_reg_mr(before)->access & ~FLUSH_ACCESS);
	assert_int_equal(methods_of(mr), METHOD_RAW | METHOD_NATIVE_VIS);
	/* what the library tried and gave up is no failure of the application's */
	assert_int_equal(rpma_err_get_provider_error(), ENOTTY);
	dereg(&mr);

	/* persistent usage only: registered as if the device had no native flush */
	mr = reg(dram, sizeof(dram), RPMA_MR_USAGE_WRITE_DST | USAGE_PERSISTENT);
	assert_int_equal(fake_verbs_reg_mrs(), before + 4);
	assert_int_equal(fake_verbs_reg_mr(before + 3)->access & FLUSH_ACCESS, 0);
	assert_int_equal(methods_of(mr), METHOD_RAW);
	dereg(&mr);
}

/* a region only partly in persistent memory is not persistent */
static void native_partly_pmem(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf + sizeof(buf) / 2, sizeof(buf), USAGE_PERSISTENT);
	assert_int_equal(methods_of(mr), METHOD_RAW);
	dereg(&mr);
}

/* the device refuses every form: the last refusal is the provider's error */
static void native_every_form_refused(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_REG_MR, 1, ENOMEM);
	fake_verbs_fail(FAKE_REG_MR, 2, ENOMEM);
	fake_verbs_fail(FAKE_REG_MR, 3, EFAULT);
	struct rpma_mr_local *mr = UT_POISON;
	assert_int_equal(rpma_mr_reg(peer, buf, sizeof(buf), USAGE_BOTH, &mr), RPMA_E_PROVIDER);
	assert_ptr_equal(mr, UT_POISON);
	assert_int_equal(rpma_err_get_provider_error(), EFAULT);
	/* persistence and visibility, visibility, then neither */
	assert_int_equal(fake_verbs_reg_mrs(), 3);
	assert_int_equal(fake_verbs_reg_mr(0)->access & FLUSH_ACCESS, FLUSH_ACCESS);
	assert_int_equal(fake_verbs_reg_mr(1)->access & FLUSH_ACCESS, FAKE_ACCESS_FLUSH_GLOBAL);
	assert_int_equal(fake_verbs_reg_mr(2)->access & FLUSH_ACCESS, 0);
	assert_int_equal(fake_verbs_live_objects(), 1); /* the peer's domain */
}

/* a device without native flush asks for none, and tries once */
static void native_not_on_plain_device(void **state)
{
	(void)state;
	fake_verbs_set_pmem(buf, sizeof(buf));
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), USAGE_BOTH);
	assert_int_equal(fake_verbs_reg_mrs(), 1);
	assert_int_equal(fake_verbs_reg_mr(0)->access & FLUSH_ACCESS, 0);
	assert_int_equal(methods_of(mr), METHOD_RAW);
	dereg(&mr);
}

/* GPSPM is offered besides native flush */
static void native_with_persist_fn(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = reg(buf, sizeof(buf), USAGE_BOTH);
	assert_int_equal(rpma_mr_set_persist_fn(mr, record_nothing), 0);
	assert_int_equal(methods_of(mr),
			 METHOD_RAW | METHOD_GPSPM | METHOD_NATIVE_VIS | METHOD_NATIVE_PERS);
	dereg(&mr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MR_TEST(reg_null_peer),
		MR_TEST(reg_null_ptr),
		MR_TEST(reg_zero_size),
		MR_TEST(reg_null_mr_ptr),
		MR_TEST(reg_usage_zero),
		MR_TEST(reg_usage_unknown_bits),
		MR_TEST(access_read_src),
		MR_TEST(access_read_dst),
		MR_TEST(access_write_src),
		MR_TEST(access_write_dst),
		MR_TEST(access_send),
		MR_TEST(access_recv),
		MR_TEST(access_flush_visibility),
		MR_TEST(access_flush_persistent),
		MR_TEST(access_write_dst_flush),
		MR_TEST(access_all),
		MR_TEST(access_every_combination),
		MR_TEST_IWARP(iwarp_access_read_dst),
		MR_TEST_IWARP(iwarp_access_read_src),
		MR_TEST_IWARP(iwarp_access_others_unchanged),
		MR_TEST(reg_passes_range),
		MR_TEST(reg_get_ptr_size),
		MR_TEST(reg_provider_failure),
		MR_TEST(reg_twice),
		MR_TEST_ODP(odp_retry_success),
		MR_TEST_ODP(odp_retry_fails),
		MR_TEST(no_odp_no_retry),
		MR_TEST_ODP(odp_other_errno_no_retry),
		MR_TEST_ODP(odp_first_attempt_plain),
		MR_TEST(dereg_null_ptr),
		MR_TEST(dereg_null_mr),
		MR_TEST(dereg_success),
		MR_TEST(dereg_failure_releases_region),
		MR_TEST(get_ptr_null),
		MR_TEST(get_size_null),
		MR_TEST(desc_size),
		MR_TEST(desc_size_null),
		MR_TEST(desc_null),
		MR_TEST(desc_bytes),
		MR_TEST(desc_bytes_wide_values),
		MR_TEST(desc_no_overflow),
		MR_TEST(desc_usage_byte),
		MR_TEST(from_desc_null_desc),
		MR_TEST(from_desc_null_ptr),
		MR_TEST(from_desc_truncated),
		MR_TEST(from_desc_truncated_by_one),
		MR_TEST(from_desc_usage_zero),
		MR_TEST(from_desc_exact),
		MR_TEST(from_desc_huge_length),
		MR_TEST(from_desc_extra_bytes_ignored),
		MR_TEST(from_desc_reads_only_size),
		MR_TEST(from_desc_fuzz),
		MR_TEST(round_trip),
		MR_TEST(remote_touches_no_device),
		MR_TEST(remote_get_size_null),
		MR_TEST(remote_get_flush_type_null),
		MR_TEST(remote_flush_types),
		MR_TEST(remote_delete_null_ptr),
		MR_TEST(remote_delete_null_mr),
		MR_TEST(advise_null_mr),
		MR_TEST_ODP(advise_zero_len),
		MR_TEST_ODP(advise_out_of_range),
		MR_TEST_ODP(advise_overflow),
		MR_TEST_ODP(advise_len_beyond_u32),
		MR_TEST_ODP(advise_success),
		MR_TEST_ODP(advise_offset_from_region),
		MR_TEST_ODP(advise_whole_and_edges),
		MR_TEST_ODP(advise_not_supported),
		MR_TEST_ODP(advise_provider_einval),
		MR_TEST_ODP(advise_provider_efault),
		MR_TEST_ODP(advise_provider_other),
		MR_TEST_ODP(advise_unknown_advice),
		MR_TEST(advise_device_without_odp),
		MR_TEST(vdesc_reference_crc),
		MR_TEST(vdesc_size),
		MR_TEST(vdesc_size_null),
		MR_TEST(vdesc_null),
		MR_TEST(vdesc_bytes),
		MR_TEST(vdesc_crc_covers_everything),
		MR_TEST(vdesc_methods_by_usage),
		MR_TEST(vdesc_methods_follow_persist_fn),
		MR_TEST(vdesc_legacy_unchanged_by_persist_fn),
		MR_TEST(vdesc_decodes_as_region),
		MR_TEST(vdesc_decode_reads_only_size),
		MR_TEST(persist_fn_null_mr),
		MR_TEST(persist_fn_needs_persistent_usage),
		MR_TEST(persist_fn_touches_no_device),
		MR_TEST(persist_fn_dereg),
		cmocka_unit_test_setup_teardown(native_atomic_write_offered,
						mr_setup_native_atomic_write, mr_teardown),
		MR_TEST_NATIVE(native_access_by_usage),
		MR_TEST_NATIVE(native_persistent_needs_the_statement),
		MR_TEST_NATIVE(native_dram_drops_persistence),
		MR_TEST_NATIVE(native_partly_pmem),
		MR_TEST_NATIVE(native_every_form_refused),
		MR_TEST(native_not_on_plain_device),
		MR_TEST_NATIVE(native_with_persist_fn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
