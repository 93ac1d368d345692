// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_conn_cfg.c -- the connection configuration
 */

#include <limits.h>

#include "unit_common.h"

static struct rpma_conn_cfg *new_cfg(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_non_null(cfg);
	return cfg;
}

static void delete_cfg(struct rpma_conn_cfg **cfg)
{
	assert_int_equal(rpma_conn_cfg_delete(cfg), 0);
	assert_null(*cfg);
}

/*
 * new / delete
 */

static void conn_cfg_new_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_conn_cfg_new(NULL), RPMA_E_INVAL);
}

static void conn_cfg_new_twice_distinct(void **state)
{
	(void)state;
	struct rpma_conn_cfg *a = new_cfg();
	struct rpma_conn_cfg *b = new_cfg();
	assert_ptr_not_equal(a, b);
	/* changing one does not change the other */
	assert_int_equal(rpma_conn_cfg_set_cq_size(a, 77), 0);
	uint32_t v = 0;
	assert_int_equal(rpma_conn_cfg_get_cq_size(b, &v), 0);
	assert_int_equal(v, 10);
	delete_cfg(&a);
	delete_cfg(&b);
}

static void conn_cfg_new_touches_no_device(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	assert_int_equal(fake_verbs_live_objects(), 0);
	for (int c = 0; c < FAKE_CALL_MAX; c++)
		assert_int_equal(fake_verbs_calls((enum fake_call)c), 0);
	delete_cfg(&cfg);
}

static void conn_cfg_delete_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_conn_cfg_delete(NULL), RPMA_E_INVAL);
}

static void conn_cfg_delete_null_cfg(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	assert_null(cfg);
}

/*
 * defaults
 */

static void conn_cfg_default_timeout(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	int t = -5;
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	assert_int_equal(t, RPMA_DEFAULT_TIMEOUT_MS);
	assert_int_equal(t, 1000);
	delete_cfg(&cfg);
}

static void conn_cfg_default_compl_channel(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	bool shared = true;
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_false(shared);
	delete_cfg(&cfg);
}

static void conn_cfg_default_srq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	struct rpma_srq *srq = UT_POISON;
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_null(srq);
	delete_cfg(&cfg);
}

/*
 * timeout
 */

static void conn_cfg_timeout_round_trip(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	const int values[] = { 0, 1, 999, 1001, 60000, INT_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(values); i++) {
		int t = -5;
		assert_int_equal(rpma_conn_cfg_set_timeout(cfg, values[i]), 0);
		assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &t), 0);
		assert_int_equal(t, values[i]);
	}
	delete_cfg(&cfg);
}

static void conn_cfg_timeout_negative(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, 2500), 0);
	const int bad[] = { -1, -1000, INT_MIN };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++)
		assert_int_equal(rpma_conn_cfg_set_timeout(cfg, bad[i]), RPMA_E_INVAL);
	int t = 0;
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	assert_int_equal(t, 2500);
	delete_cfg(&cfg);
}

static void conn_cfg_timeout_null(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	int t = 4242;
	assert_int_equal(rpma_conn_cfg_set_timeout(NULL, 10), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_timeout(NULL, &t), RPMA_E_INVAL);
	assert_int_equal(t, 4242);
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_timeout(NULL, NULL), RPMA_E_INVAL);
	delete_cfg(&cfg);
}

/*
 * the four queue sizes: the same contract each
 */

typedef int (*set_u32_fn)(struct rpma_conn_cfg *, uint32_t);
typedef int (*get_u32_fn)(const struct rpma_conn_cfg *, uint32_t *);

static void check_default(get_u32_fn get, uint32_t expected)
{
	struct rpma_conn_cfg *cfg = new_cfg();
	uint32_t v = UT_POISON_U32;
	assert_int_equal(get(cfg, &v), 0);
	assert_int_equal(v, expected);
	delete_cfg(&cfg);
}

static void check_round_trip(set_u32_fn set, get_u32_fn get)
{
	struct rpma_conn_cfg *cfg = new_cfg();
	const uint32_t values[] = { 0, 1, 2, 11, 1024, 65536, INT_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(values); i++) {
		uint32_t v = UT_POISON_U32;
		assert_int_equal(set(cfg, values[i]), 0);
		assert_int_equal(get(cfg, &v), 0);
		assert_int_equal(v, values[i]);
	}
	delete_cfg(&cfg);
}

/* rdma-core takes queue sizes as int: beyond INT_MAX is out of range */
static void check_too_big(set_u32_fn set, get_u32_fn get)
{
	struct rpma_conn_cfg *cfg = new_cfg();
	assert_int_equal(set(cfg, 123), 0);
	const uint32_t bad[] = { (uint32_t)INT_MAX + 1, 0xfffffffeU, UINT32_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++)
		assert_int_equal(set(cfg, bad[i]), RPMA_E_INVAL);
	uint32_t v = 0;
	assert_int_equal(get(cfg, &v), 0);
	assert_int_equal(v, 123);
	delete_cfg(&cfg);
}

static void check_null(set_u32_fn set, get_u32_fn get)
{
	struct rpma_conn_cfg *cfg = new_cfg();
	uint32_t v = UT_POISON_U32;
	assert_int_equal(set(NULL, 5), RPMA_E_INVAL);
	assert_int_equal(get(NULL, &v), RPMA_E_INVAL);
	assert_int_equal(v, UT_POISON_U32);
	assert_int_equal(get(cfg, NULL), RPMA_E_INVAL);
	assert_int_equal(get(NULL, NULL), RPMA_E_INVAL);
	delete_cfg(&cfg);
}

/* setting one size leaves the other three alone */
static void check_independent(set_u32_fn set)
{
	struct rpma_conn_cfg *cfg = new_cfg();
	assert_int_equal(set(cfg, 4321), 0);
	const get_u32_fn gets[] = { rpma_conn_cfg_get_cq_size, rpma_conn_cfg_get_rcq_size,
				    rpma_conn_cfg_get_sq_size, rpma_conn_cfg_get_rq_size };
	int found = 0;
	for (size_t i = 0; i < UT_ARRAY_SIZE(gets); i++) {
		uint32_t v = 0;
		assert_int_equal(gets[i](cfg, &v), 0);
		if (v == 4321)
			found++;
	}
	assert_int_equal(found, 1);
	int t = 0;
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	assert_int_equal(t, RPMA_DEFAULT_TIMEOUT_MS);
	delete_cfg(&cfg);
}

#define SIZE_TESTS(name, def)                                                                      \
	static void conn_cfg_##name##_default(void **state)                                        \
	{                                                                                          \
		(void)state;                                                                       \
		check_default(rpma_conn_cfg_get_##name, def);                                      \
	}                                                                                          \
	static void conn_cfg_##name##_round_trip(void **state)                                     \
	{                                                                                          \
		(void)state;                                                                       \
		check_round_trip(rpma_conn_cfg_set_##name, rpma_conn_cfg_get_##name);              \
	}                                                                                          \
	static void conn_cfg_##name##_too_big(void **state)                                        \
	{                                                                                          \
		(void)state;                                                                       \
		check_too_big(rpma_conn_cfg_set_##name, rpma_conn_cfg_get_##name);                 \
	}                                                                                          \
	static void conn_cfg_##name##_null(void **state)                                           \
	{                                                                                          \
		(void)state;                                                                       \
		check_null(rpma_conn_cfg_set_##name, rpma_conn_cfg_get_##name);                    \
	}                                                                                          \
	static void conn_cfg_##name##_independent(void **state)                                    \
	{                                                                                          \
		(void)state;                                                                       \
		check_independent(rpma_conn_cfg_set_##name);                                       \
	}

SIZE_TESTS(cq_size, 10)
SIZE_TESTS(rcq_size, 0)
SIZE_TESTS(sq_size, 10)
SIZE_TESTS(rq_size, 10)

#define SIZE_CASES(name)                                                                           \
	UT_TEST(conn_cfg_##name##_default), UT_TEST(conn_cfg_##name##_round_trip),                 \
	    UT_TEST(conn_cfg_##name##_too_big), UT_TEST(conn_cfg_##name##_null),                   \
	    UT_TEST(conn_cfg_##name##_independent)

/*
 * completion channel
 */

static void conn_cfg_compl_channel_round_trip(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	bool shared = false;
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_true(shared);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, false), 0);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_false(shared);
	delete_cfg(&cfg);
}

static void conn_cfg_compl_channel_null(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	bool shared = true;
	assert_int_equal(rpma_conn_cfg_set_compl_channel(NULL, true), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(NULL, &shared), RPMA_E_INVAL);
	assert_true(shared);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, NULL), RPMA_E_INVAL);
	/* the failed set did not touch this cfg either */
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_false(shared);
	delete_cfg(&cfg);
}

/*
 * SRQ
 */

static void conn_cfg_srq_round_trip(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	/* the configuration only stores the pointer: any value goes */
	struct rpma_srq *fake = (struct rpma_srq *)(uintptr_t)0x1234560;
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, fake), 0);
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_ptr_equal(srq, fake);
	/* NULL takes it away again */
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, NULL), 0);
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_null(srq);
	delete_cfg(&cfg);
}

static void conn_cfg_srq_null(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	struct rpma_srq *srq = UT_POISON;
	assert_int_equal(rpma_conn_cfg_set_srq(NULL, (struct rpma_srq *)UT_POISON), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_srq(NULL, &srq), RPMA_E_INVAL);
	assert_ptr_equal(srq, UT_POISON);
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, NULL), RPMA_E_INVAL);
	delete_cfg(&cfg);
}

/* every setter keeps the rest of the configuration */
static void conn_cfg_full_configuration(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	struct rpma_srq *fake = (struct rpma_srq *)(uintptr_t)0xabcdef0;
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, 321), 0);
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, 11), 0);
	assert_int_equal(rpma_conn_cfg_set_rcq_size(cfg, 12), 0);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, 13), 0);
	assert_int_equal(rpma_conn_cfg_set_rq_size(cfg, 14), 0);
	assert_int_equal(rpma_conn_cfg_set_compl_channel(cfg, true), 0);
	assert_int_equal(rpma_conn_cfg_set_srq(cfg, fake), 0);

	int t = 0;
	uint32_t v = 0;
	bool shared = false;
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_conn_cfg_get_timeout(cfg, &t), 0);
	assert_int_equal(t, 321);
	assert_int_equal(rpma_conn_cfg_get_cq_size(cfg, &v), 0);
	assert_int_equal(v, 11);
	assert_int_equal(rpma_conn_cfg_get_rcq_size(cfg, &v), 0);
	assert_int_equal(v, 12);
	assert_int_equal(rpma_conn_cfg_get_sq_size(cfg, &v), 0);
	assert_int_equal(v, 13);
	assert_int_equal(rpma_conn_cfg_get_rq_size(cfg, &v), 0);
	assert_int_equal(v, 14);
	assert_int_equal(rpma_conn_cfg_get_compl_channel(cfg, &shared), 0);
	assert_true(shared);
	assert_int_equal(rpma_conn_cfg_get_srq(cfg, &srq), 0);
	assert_ptr_equal(srq, fake);
	delete_cfg(&cfg);
}

/*
 * GPSPM (rpma-ng extension)
 */

static enum rpma_gpspm_mode get_gpspm(const struct rpma_conn_cfg *cfg)
{
	enum rpma_gpspm_mode mode = (enum rpma_gpspm_mode)0x5a;
	assert_int_equal(rpma_conn_cfg_get_gpspm(cfg, &mode), 0);
	return mode;
}

static void conn_cfg_gpspm_default(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	assert_int_equal(get_gpspm(cfg), RPMA_GPSPM_DISABLED);
	delete_cfg(&cfg);
}

static void conn_cfg_gpspm_round_trip(void **state)
{
	(void)state;
	static const enum rpma_gpspm_mode modes[] = {
		RPMA_GPSPM_POLLED, RPMA_GPSPM_THREAD, RPMA_GPSPM_DISABLED,
		RPMA_GPSPM_THREAD, RPMA_GPSPM_POLLED,
	};
	struct rpma_conn_cfg *cfg = new_cfg();
	for (size_t i = 0; i < UT_ARRAY_SIZE(modes); i++) {
		assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, modes[i]), 0);
		assert_int_equal(get_gpspm(cfg), modes[i]);
	}
	delete_cfg(&cfg);
}

static void conn_cfg_gpspm_invalid(void **state)
{
	(void)state;
	static const int invalid[] = { 3, 4, -1, 100, 0x7fffffff };
	struct rpma_conn_cfg *cfg = new_cfg();
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD), 0);
	for (size_t i = 0; i < UT_ARRAY_SIZE(invalid); i++) {
		ut_log_clear();
		assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, (enum rpma_gpspm_mode)invalid[i]),
				 RPMA_E_INVAL);
		assert_int_equal(ut_log_count, 1);
		/* nothing changed */
		assert_int_equal(get_gpspm(cfg), RPMA_GPSPM_THREAD);
	}
	delete_cfg(&cfg);
}

static void conn_cfg_gpspm_null(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	enum rpma_gpspm_mode mode = (enum rpma_gpspm_mode)0x5a;
	assert_int_equal(rpma_conn_cfg_set_gpspm(NULL, RPMA_GPSPM_POLLED), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_gpspm(NULL, &mode), RPMA_E_INVAL);
	assert_int_equal(mode, 0x5a);
	assert_int_equal(rpma_conn_cfg_get_gpspm(cfg, NULL), RPMA_E_INVAL);
	delete_cfg(&cfg);
}

/* GPSPM and the rest of the configuration do not touch each other */
static void conn_cfg_gpspm_independent(void **state)
{
	(void)state;
	struct rpma_conn_cfg *a = new_cfg();
	struct rpma_conn_cfg *b = new_cfg();
	assert_int_equal(rpma_conn_cfg_set_rq_size(a, 77), 0);
	assert_int_equal(rpma_conn_cfg_set_gpspm(a, RPMA_GPSPM_POLLED), 0);
	assert_int_equal(get_gpspm(b), RPMA_GPSPM_DISABLED);
	uint32_t rq = 0;
	assert_int_equal(rpma_conn_cfg_get_rq_size(a, &rq), 0);
	assert_int_equal(rq, 77);
	assert_int_equal(rpma_conn_cfg_set_rq_size(a, 5), 0);
	assert_int_equal(get_gpspm(a), RPMA_GPSPM_POLLED);
	delete_cfg(&a);
	delete_cfg(&b);
}

/* RPMA_GPSPM_THREAD's spin: the documented default, 0 to the maximum, nothing beyond */
static void conn_cfg_gpspm_spin(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	uint32_t spin = 0;
	assert_int_equal(rpma_conn_cfg_get_gpspm_spin(cfg, &spin), 0);
	assert_int_equal(spin, RPMA_DEFAULT_GPSPM_SPIN_US);
	static const uint32_t valid[] = { 0, 1, 7, 1000, RPMA_GPSPM_SPIN_US_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(valid); i++) {
		assert_int_equal(rpma_conn_cfg_set_gpspm_spin(cfg, valid[i]), 0);
		assert_int_equal(rpma_conn_cfg_get_gpspm_spin(cfg, &spin), 0);
		assert_int_equal(spin, valid[i]);
	}
	static const uint32_t invalid[] = { RPMA_GPSPM_SPIN_US_MAX + 1, UINT32_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(invalid); i++) {
		ut_log_clear();
		assert_int_equal(rpma_conn_cfg_set_gpspm_spin(cfg, invalid[i]), RPMA_E_INVAL);
		assert_int_equal(ut_log_count, 1);
		assert_int_equal(rpma_conn_cfg_get_gpspm_spin(cfg, &spin), 0);
		assert_int_equal(spin, RPMA_GPSPM_SPIN_US_MAX); /* nothing changed */
	}
	/* the mode and the spin are set apart */
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD), 0);
	assert_int_equal(rpma_conn_cfg_get_gpspm_spin(cfg, &spin), 0);
	assert_int_equal(spin, RPMA_GPSPM_SPIN_US_MAX);
	delete_cfg(&cfg);
}

static void conn_cfg_gpspm_spin_null(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = new_cfg();
	uint32_t spin = 0x5a;
	assert_int_equal(rpma_conn_cfg_set_gpspm_spin(NULL, 10), RPMA_E_INVAL);
	assert_int_equal(rpma_conn_cfg_get_gpspm_spin(NULL, &spin), RPMA_E_INVAL);
	assert_int_equal(spin, 0x5a);
	assert_int_equal(rpma_conn_cfg_get_gpspm_spin(cfg, NULL), RPMA_E_INVAL);
	delete_cfg(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(conn_cfg_new_null),
		UT_TEST(conn_cfg_new_twice_distinct),
		UT_TEST(conn_cfg_new_touches_no_device),
		UT_TEST(conn_cfg_delete_null_ptr),
		UT_TEST(conn_cfg_delete_null_cfg),
		UT_TEST(conn_cfg_default_timeout),
		UT_TEST(conn_cfg_default_compl_channel),
		UT_TEST(conn_cfg_default_srq),
		UT_TEST(conn_cfg_timeout_round_trip),
		UT_TEST(conn_cfg_timeout_negative),
		UT_TEST(conn_cfg_timeout_null),
		SIZE_CASES(cq_size),
		SIZE_CASES(rcq_size),
		SIZE_CASES(sq_size),
		SIZE_CASES(rq_size),
		UT_TEST(conn_cfg_compl_channel_round_trip),
		UT_TEST(conn_cfg_compl_channel_null),
		UT_TEST(conn_cfg_srq_round_trip),
		UT_TEST(conn_cfg_srq_null),
		UT_TEST(conn_cfg_full_configuration),
		UT_TEST(conn_cfg_gpspm_default),
		UT_TEST(conn_cfg_gpspm_round_trip),
		UT_TEST(conn_cfg_gpspm_invalid),
		UT_TEST(conn_cfg_gpspm_null),
		UT_TEST(conn_cfg_gpspm_independent),
		UT_TEST(conn_cfg_gpspm_spin),
		UT_TEST(conn_cfg_gpspm_spin_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
