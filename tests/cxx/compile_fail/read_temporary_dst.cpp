/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_temporary_dst.cpp -- must not compile (see compile_fail.py)
 *
 * The region a read writes into, a temporary.
 *
 * expect: \bread\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn &conn, [[maybe_unused]] rpma::mr_local &dst,
			const rpma::mr_remote &src)
{
#ifdef RPMA_CONTROL
	return conn.read(dst, 0, src, 0, 8, rpma::flag::completion_always);
#else
	return conn.read(make_region(), 0, src, 0, 8, rpma::flag::completion_always);
#endif
}
