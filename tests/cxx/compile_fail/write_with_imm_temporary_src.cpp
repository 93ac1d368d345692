/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_with_imm_temporary_src.cpp -- must not compile (see compile_fail.py)
 *
 * The region a write with immediate data reads from, a temporary.
 *
 * expect: \bwrite_with_imm\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn &conn, const rpma::mr_remote &dst,
			[[maybe_unused]] const rpma::mr_local &src)
{
#ifdef RPMA_CONTROL
	return conn.write_with_imm(dst, 0, src, 0, 8, rpma::flag::completion_always, 7u);
#else
	return conn.write_with_imm(dst, 0, make_region(), 0, 8, rpma::flag::completion_always, 7u);
#endif
}
