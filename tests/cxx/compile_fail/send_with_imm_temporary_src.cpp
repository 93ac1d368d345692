/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * send_with_imm_temporary_src.cpp -- must not compile (see compile_fail.py)
 *
 * The region a send with immediate data reads from, a temporary.
 *
 * expect: \bsend_with_imm\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn &conn, [[maybe_unused]] const rpma::mr_local &src)
{
#ifdef RPMA_CONTROL
	return conn.send_with_imm(src, 0, 8, rpma::flag::completion_always, 7u);
#else
	return conn.send_with_imm(make_region(), 0, 8, rpma::flag::completion_always, 7u);
#endif
}
