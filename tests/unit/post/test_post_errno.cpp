// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_post_errno.cpp -- post_errno(): what ibv_post_send() and friends
 * return, as the errno the application is told (rpma_err_get_provider_error)
 *
 * Providers return the error number itself, positive (most) or negated
 * (siw: -EINVAL, errno left alone); -1 means the provider failed through
 * errno, and when errno says nothing either, the failure is EIO. -1 is
 * never the error number 1 (EPERM): no provider meant that.
 */

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <initializer_list>

extern "C" {
#include <cmocka.h>
}

#include "post.hpp"

using rpma::post_errno;

namespace
{

/* positive: the error number itself, whatever errno holds */
void positive_as_is(void **)
{
	for (int err : { EINVAL, ENOMEM, ENOSPC, EPERM, EIO }) {
		errno = EAGAIN;
		assert_int_equal(post_errno(err), err);
		errno = 0;
		assert_int_equal(post_errno(err), err);
	}
}

/* negative (siw): negated, whatever errno holds */
void negative_negated(void **)
{
	for (int err : { EINVAL, ENOMEM, ENOSPC, EIO, EAGAIN }) {
		errno = EPERM;
		assert_int_equal(post_errno(-err), err);
		errno = 0;
		assert_int_equal(post_errno(-err), err);
	}
}

/* -1: the provider failed through errno */
void minus_one_is_errno(void **)
{
	for (int err : { ENOMEM, EINVAL, EAGAIN, ENOSPC }) {
		errno = err;
		assert_int_equal(post_errno(-1), err);
	}
}

/* -1 with no errno: EIO, never EPERM (1) nor "no error" */
void minus_one_without_errno_is_eio(void **)
{
	errno = 0;
	const int err = post_errno(-1);
	assert_int_not_equal(err, EPERM);
	assert_int_not_equal(err, 0);
	assert_int_equal(err, EIO);
}

} /* namespace */

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(positive_as_is),
		cmocka_unit_test(negative_negated),
		cmocka_unit_test(minus_one_is_errno),
		cmocka_unit_test(minus_one_without_errno_is_eio),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("post_errno", tests, nullptr, nullptr);
}
