/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * send_temporary_src.cpp -- must not compile (see compile_fail.py)
 *
 * The region a send reads from, a temporary.
 *
 * expect: \bsend\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn &conn, [[maybe_unused]] const rpma::mr_local &src)
{
#ifdef RPMA_CONTROL
	return conn.send(src, 0, 8, rpma::flag::completion_always);
#else
	return conn.send(make_region(), 0, 8, rpma::flag::completion_always);
#endif
}
