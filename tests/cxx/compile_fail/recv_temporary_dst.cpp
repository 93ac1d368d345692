/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * recv_temporary_dst.cpp -- must not compile (see compile_fail.py)
 *
 * The region a receive writes into, a temporary.
 *
 * expect: \brecv\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn &conn, [[maybe_unused]] rpma::mr_local &dst)
{
#ifdef RPMA_CONTROL
	return conn.recv(dst, 0, 8);
#else
	return conn.recv(make_region(), 0, 8);
#endif
}
