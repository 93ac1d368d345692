// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_err.c -- rpma_err_2str and rpma_err_get_provider_error
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include "unit_common.h"

/* librpma 1.x's strings: applications print and sometimes compare them */
static const struct {
	int code;
	const char *text;
} known[] = {
	{ RPMA_E_UNKNOWN, "Unknown error" },
	{ RPMA_E_NOSUPP, "Not supported" },
	{ RPMA_E_PROVIDER, "Provider error occurred" },
	{ RPMA_E_NOMEM, "Out of memory" },
	{ RPMA_E_INVAL, "Invalid argument" },
	{ RPMA_E_NO_COMPLETION, "No next completion available" },
	{ RPMA_E_NO_EVENT, "No next event available" },
	{ RPMA_E_AGAIN, "Temporary error, try again" },
	{ RPMA_E_SHARED_CHANNEL, "Completion channel is shared" },
	{ RPMA_E_NOT_SHARED_CHNL, "Completion channel is not shared" },
};

static void check_code(int code)
{
	for (size_t i = 0; i < UT_ARRAY_SIZE(known); i++) {
		if (known[i].code != code)
			continue;
		const char *s = rpma_err_2str(code);
		assert_non_null(s);
		assert_string_equal(s, known[i].text);
		return;
	}
	fail_msg("code %d is not in the table", code);
}

static void err_2str_unknown(void **state)
{
	(void)state;
	check_code(RPMA_E_UNKNOWN);
}

static void err_2str_nosupp(void **state)
{
	(void)state;
	check_code(RPMA_E_NOSUPP);
}

static void err_2str_provider(void **state)
{
	(void)state;
	check_code(RPMA_E_PROVIDER);
}

static void err_2str_nomem(void **state)
{
	(void)state;
	check_code(RPMA_E_NOMEM);
}

static void err_2str_inval(void **state)
{
	(void)state;
	check_code(RPMA_E_INVAL);
}

static void err_2str_no_completion(void **state)
{
	(void)state;
	check_code(RPMA_E_NO_COMPLETION);
}

static void err_2str_no_event(void **state)
{
	(void)state;
	check_code(RPMA_E_NO_EVENT);
}

static void err_2str_again(void **state)
{
	(void)state;
	check_code(RPMA_E_AGAIN);
}

static void err_2str_shared_channel(void **state)
{
	(void)state;
	check_code(RPMA_E_SHARED_CHANNEL);
}

static void err_2str_not_shared_chnl(void **state)
{
	(void)state;
	check_code(RPMA_E_NOT_SHARED_CHNL);
}

/* the ABI values themselves: a program compiled against 1.x passes these */
static void err_codes_abi_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_E_UNKNOWN, -100000);
	assert_int_equal(RPMA_E_NOSUPP, -100001);
	assert_int_equal(RPMA_E_PROVIDER, -100002);
	assert_int_equal(RPMA_E_NOMEM, -100003);
	assert_int_equal(RPMA_E_INVAL, -100004);
	assert_int_equal(RPMA_E_NO_COMPLETION, -100005);
	assert_int_equal(RPMA_E_NO_EVENT, -100006);
	assert_int_equal(RPMA_E_AGAIN, -100007);
	assert_int_equal(RPMA_E_SHARED_CHANNEL, -100008);
	assert_int_equal(RPMA_E_NOT_SHARED_CHNL, -100009);
}

/* every code has its own message */
static void err_2str_distinct(void **state)
{
	(void)state;
	for (size_t i = 0; i < UT_ARRAY_SIZE(known); i++)
		for (size_t j = i + 1; j < UT_ARRAY_SIZE(known); j++)
			assert_string_not_equal(rpma_err_2str(known[i].code),
						rpma_err_2str(known[j].code));
}

/* a value that is no RPMA_E_* code gets a string, never NULL, never a wrong one */
static void err_2str_not_a_code(void **state)
{
	(void)state;
	const int values[] = { 1, -1, 42, INT_MAX, INT_MIN, -99999, -100010, -100100, -EINVAL };
	for (size_t v = 0; v < UT_ARRAY_SIZE(values); v++) {
		const char *s = rpma_err_2str(values[v]);
		assert_non_null(s);
		assert_true(strlen(s) > 0);
		/* librpma 1.x's text for anything it did not know */
		assert_string_equal(s, "Unknown error");
	}
}

/* the strings are constants: the same text on every call and in every thread */
static void *two_str_thread(void *arg)
{
	(void)arg;
	for (int n = 0; n < 1000; n++)
		for (size_t i = 0; i < UT_ARRAY_SIZE(known); i++)
			if (strcmp(rpma_err_2str(known[i].code), known[i].text) != 0)
				return (void *)1;
	return NULL;
}

static void err_2str_threads(void **state)
{
	(void)state;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, two_str_thread, NULL), 0);
	for (int i = 0; i < 4; i++) {
		void *ret = (void *)2;
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
}

/*
 * rpma_err_get_provider_error
 */

/* makes one rdma-core call fail in the calling thread with err */
static int provoke_provider_failure(int err)
{
	struct rpma_peer *peer = UT_POISON;
	fake_verbs_fail(FAKE_ALLOC_PD, 1, err);
	int ret = rpma_peer_new(fake_verbs_context(), &peer);
	if (peer != UT_POISON)
		return -1;
	return ret;
}

/* nothing failed yet in this process */
static void provider_error_zero_at_start(void **state)
{
	(void)state;
	assert_int_equal(rpma_err_get_provider_error(), 0);
}

static void *fresh_thread_error(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)rpma_err_get_provider_error();
}

static void provider_error_zero_in_new_thread(void **state)
{
	(void)state;
	pthread_t t;
	void *ret = (void *)-1;
	assert_int_equal(pthread_create(&t, NULL, fresh_thread_error, NULL), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
}

static void provider_error_after_failure(void **state)
{
	(void)state;
	assert_int_equal(provoke_provider_failure(EHOSTUNREACH), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EHOSTUNREACH);
}

static void provider_error_last_one_wins(void **state)
{
	(void)state;
	assert_int_equal(provoke_provider_failure(ENOMEM), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_int_equal(provoke_provider_failure(ENODEV), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENODEV);
}

/* a provider that failed without an errno must not look like "no error" */
static void provider_error_zero_errno_is_not_zero(void **state)
{
	(void)state;
	assert_int_equal(provoke_provider_failure(0), RPMA_E_PROVIDER);
	assert_int_not_equal(rpma_err_get_provider_error(), 0);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
}

/* an invalid argument is not a provider failure: the value stays */
static void provider_error_kept_by_inval(void **state)
{
	(void)state;
	assert_int_equal(provoke_provider_failure(ETIMEDOUT), RPMA_E_PROVIDER);
	struct rpma_peer *peer = UT_POISON;
	assert_int_equal(rpma_peer_new(NULL, &peer), RPMA_E_INVAL);
	assert_int_equal(rpma_err_get_provider_error(), ETIMEDOUT);
}

/* success does not erase the cause of the last failure */
static void provider_error_kept_by_success(void **state)
{
	(void)state;
	assert_int_equal(provoke_provider_failure(EACCES), RPMA_E_PROVIDER);
	struct rpma_peer *peer = NULL;
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_int_equal(rpma_err_get_provider_error(), EACCES);
}

struct thread_result {
	int ret;
	int before;
	int after;
};

static void *failing_thread(void *arg)
{
	struct thread_result *r = arg;
	r->before = rpma_err_get_provider_error();
	r->ret = provoke_provider_failure(EPERM);
	r->after = rpma_err_get_provider_error();
	return NULL;
}

/* each thread sees its own last failure */
static void provider_error_per_thread(void **state)
{
	(void)state;
	assert_int_equal(provoke_provider_failure(ENOSPC), RPMA_E_PROVIDER);

	struct thread_result r = { 0, -1, -1 };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, failing_thread, &r), 0);
	assert_int_equal(pthread_join(t, NULL), 0);

	assert_int_equal(r.ret, RPMA_E_PROVIDER);
	assert_int_equal(r.before, 0);	  /* not the main thread's ENOSPC */
	assert_int_equal(r.after, EPERM); /* its own */
	/* the other thread's failure did not touch this one */
	assert_int_equal(rpma_err_get_provider_error(), ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* must run before anything fails in the main thread */
		UT_TEST(provider_error_zero_at_start),
		UT_TEST(err_2str_unknown),
		UT_TEST(err_2str_nosupp),
		UT_TEST(err_2str_provider),
		UT_TEST(err_2str_nomem),
		UT_TEST(err_2str_inval),
		UT_TEST(err_2str_no_completion),
		UT_TEST(err_2str_no_event),
		UT_TEST(err_2str_again),
		UT_TEST(err_2str_shared_channel),
		UT_TEST(err_2str_not_shared_chnl),
		UT_TEST(err_codes_abi_values),
		UT_TEST(err_2str_distinct),
		UT_TEST(err_2str_not_a_code),
		UT_TEST(err_2str_threads),
		/* the first thing that touches the provider error in a fresh thread */
		UT_TEST(provider_error_zero_in_new_thread),
		UT_TEST(provider_error_after_failure),
		UT_TEST(provider_error_last_one_wins),
		UT_TEST(provider_error_zero_errno_is_not_zero),
		UT_TEST(provider_error_kept_by_inval),
		UT_TEST(provider_error_kept_by_success),
		UT_TEST(provider_error_per_thread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
