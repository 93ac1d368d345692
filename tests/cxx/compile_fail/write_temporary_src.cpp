/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_temporary_src.cpp -- must not compile (see compile_fail.py)
 *
 * The region a write reads from, a temporary: it would be deregistered
 * while the write is in flight.
 *
 * expect: \bwrite\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn &conn, const rpma::mr_remote &dst,
			[[maybe_unused]] const rpma::mr_local &src)
{
#ifdef RPMA_CONTROL
	return conn.write(dst, 0, src, 0, 8, rpma::flag::completion_always);
#else
	return conn.write(dst, 0, make_region(), 0, 8, rpma::flag::completion_always);
#endif
}
