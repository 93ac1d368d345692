/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * batch_flush_temporary_dst.cpp -- must not compile (see compile_fail.py)
 *
 * The remote region of an element of a batch, a temporary: the element
 * points at it, and it would be gone when the batch is posted.
 *
 * expect: \bbatch::flush\b
 */

#include <rpma.hpp>

rpma::mr_remote make_remote();

rpma_batch_op flush_element([[maybe_unused]] const rpma::mr_remote &dst)
{
	constexpr rpma::flush_type persistent = rpma::flush_type::persistent;
	constexpr rpma::flag always = rpma::flag::completion_always;
#ifdef RPMA_CONTROL
	return rpma::batch::flush(dst, 0, 8, persistent, always);
#else
	return rpma::batch::flush(make_remote(), 0, 8, persistent, always);
#endif
}
