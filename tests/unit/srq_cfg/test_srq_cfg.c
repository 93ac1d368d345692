// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_srq_cfg.c -- the shared receive queue configuration
 */

#include <limits.h>

#include "unit_common.h"

static struct rpma_srq_cfg *new_cfg(void)
{
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_new(&cfg), 0);
	assert_non_null(cfg);
	return cfg;
}

static void delete_cfg(struct rpma_srq_cfg **cfg)
{
	assert_int_equal(rpma_srq_cfg_delete(cfg), 0);
	assert_null(*cfg);
}

static void srq_cfg_new_null(void **state)
{
	(void)state;
	assert_int_equal(rpma_srq_cfg_new(NULL), RPMA_E_INVAL);
}

static void srq_cfg_new_touches_no_device(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = new_cfg();
	assert_int_equal(fake_verbs_live_objects(), 0);
	for (int c = 0; c < FAKE_CALL_MAX; c++)
		assert_int_equal(fake_verbs_calls((enum fake_call)c), 0);
	delete_cfg(&cfg);
}

static void srq_cfg_delete_null_ptr(void **state)
{
	(void)state;
	assert_int_equal(rpma_srq_cfg_delete(NULL), RPMA_E_INVAL);
}

static void srq_cfg_delete_null_cfg(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = NULL;
	assert_int_equal(rpma_srq_cfg_delete(&cfg), 0);
	assert_null(cfg);
}

typedef int (*set_fn)(struct rpma_srq_cfg *, uint32_t);
typedef int (*get_fn)(const struct rpma_srq_cfg *, uint32_t *);

static void check_default(get_fn get, uint32_t expected)
{
	struct rpma_srq_cfg *cfg = new_cfg();
	uint32_t v = UT_POISON_U32;
	assert_int_equal(get(cfg, &v), 0);
	assert_int_equal(v, expected);
	delete_cfg(&cfg);
}

static void check_round_trip(set_fn set, get_fn get)
{
	struct rpma_srq_cfg *cfg = new_cfg();
	const uint32_t values[] = { 0, 1, 99, 101, 32767, INT_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(values); i++) {
		uint32_t v = UT_POISON_U32;
		assert_int_equal(set(cfg, values[i]), 0);
		assert_int_equal(get(cfg, &v), 0);
		assert_int_equal(v, values[i]);
	}
	delete_cfg(&cfg);
}

static void check_too_big(set_fn set, get_fn get)
{
	struct rpma_srq_cfg *cfg = new_cfg();
	assert_int_equal(set(cfg, 55), 0);
	const uint32_t bad[] = { (uint32_t)INT_MAX + 1, UINT32_MAX };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++)
		assert_int_equal(set(cfg, bad[i]), RPMA_E_INVAL);
	uint32_t v = 0;
	assert_int_equal(get(cfg, &v), 0);
	assert_int_equal(v, 55);
	delete_cfg(&cfg);
}

static void check_null(set_fn set, get_fn get)
{
	struct rpma_srq_cfg *cfg = new_cfg();
	uint32_t v = UT_POISON_U32;
	assert_int_equal(set(NULL, 5), RPMA_E_INVAL);
	assert_int_equal(get(NULL, &v), RPMA_E_INVAL);
	assert_int_equal(v, UT_POISON_U32);
	assert_int_equal(get(cfg, NULL), RPMA_E_INVAL);
	delete_cfg(&cfg);
}

static void srq_cfg_rq_size_default(void **state)
{
	(void)state;
	check_default(rpma_srq_cfg_get_rq_size, 20);
}

static void srq_cfg_rcq_size_default(void **state)
{
	(void)state;
	check_default(rpma_srq_cfg_get_rcq_size, 20);
}

static void srq_cfg_rq_size_round_trip(void **state)
{
	(void)state;
	check_round_trip(rpma_srq_cfg_set_rq_size, rpma_srq_cfg_get_rq_size);
}

static void srq_cfg_rcq_size_round_trip(void **state)
{
	(void)state;
	check_round_trip(rpma_srq_cfg_set_rcq_size, rpma_srq_cfg_get_rcq_size);
}

static void srq_cfg_rq_size_too_big(void **state)
{
	(void)state;
	check_too_big(rpma_srq_cfg_set_rq_size, rpma_srq_cfg_get_rq_size);
}

static void srq_cfg_rcq_size_too_big(void **state)
{
	(void)state;
	check_too_big(rpma_srq_cfg_set_rcq_size, rpma_srq_cfg_get_rcq_size);
}

static void srq_cfg_rq_size_null(void **state)
{
	(void)state;
	check_null(rpma_srq_cfg_set_rq_size, rpma_srq_cfg_get_rq_size);
}

static void srq_cfg_rcq_size_null(void **state)
{
	(void)state;
	check_null(rpma_srq_cfg_set_rcq_size, rpma_srq_cfg_get_rcq_size);
}

/* the two sizes are stored apart */
static void srq_cfg_sizes_independent(void **state)
{
	(void)state;
	struct rpma_srq_cfg *cfg = new_cfg();
	uint32_t rq = 0, rcq = 0;
	assert_int_equal(rpma_srq_cfg_set_rq_size(cfg, 7), 0);
	assert_int_equal(rpma_srq_cfg_get_rcq_size(cfg, &rcq), 0);
	assert_int_equal(rcq, 20);
	assert_int_equal(rpma_srq_cfg_set_rcq_size(cfg, 0), 0);
	assert_int_equal(rpma_srq_cfg_get_rq_size(cfg, &rq), 0);
	assert_int_equal(rq, 7);
	assert_int_equal(rpma_srq_cfg_get_rcq_size(cfg, &rcq), 0);
	assert_int_equal(rcq, 0);
	delete_cfg(&cfg);
}

static void srq_cfg_objects_independent(void **state)
{
	(void)state;
	struct rpma_srq_cfg *a = new_cfg();
	struct rpma_srq_cfg *b = new_cfg();
	assert_ptr_not_equal(a, b);
	assert_int_equal(rpma_srq_cfg_set_rq_size(a, 1), 0);
	uint32_t v = 0;
	assert_int_equal(rpma_srq_cfg_get_rq_size(b, &v), 0);
	assert_int_equal(v, 20);
	delete_cfg(&a);
	delete_cfg(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT_TEST(srq_cfg_new_null),	     UT_TEST(srq_cfg_new_touches_no_device),
		UT_TEST(srq_cfg_delete_null_ptr),    UT_TEST(srq_cfg_delete_null_cfg),
		UT_TEST(srq_cfg_rq_size_default),    UT_TEST(srq_cfg_rcq_size_default),
		UT_TEST(srq_cfg_rq_size_round_trip), UT_TEST(srq_cfg_rcq_size_round_trip),
		UT_TEST(srq_cfg_rq_size_too_big),    UT_TEST(srq_cfg_rcq_size_too_big),
		UT_TEST(srq_cfg_rq_size_null),	     UT_TEST(srq_cfg_rcq_size_null),
		UT_TEST(srq_cfg_sizes_independent),  UT_TEST(srq_cfg_objects_independent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
