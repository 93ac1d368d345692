/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * batch_write_temporary_src.cpp -- must not compile (see compile_fail.py)
 *
 * The region an element of a batch writes from, a temporary: it would be
 * deregistered before the batch is even posted.
 *
 * expect: \bbatch::write\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma_batch_op write_element(const rpma::mr_remote &dst, [[maybe_unused]] const rpma::mr_local &src)
{
#ifdef RPMA_CONTROL
	return rpma::batch::write(dst, 0, src, 0, 8, rpma::flag::completion_always);
#else
	return rpma::batch::write(dst, 0, make_region(), 0, 8, rpma::flag::completion_always);
#endif
}
