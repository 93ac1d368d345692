/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req_recv_temporary_dst.cpp -- must not compile (see compile_fail.py)
 *
 * The region of a receive posted on a request, a temporary.
 *
 * expect: \brecv\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::conn_req &req, [[maybe_unused]] rpma::mr_local &dst)
{
#ifdef RPMA_CONTROL
	return req.recv(dst, 0, 8);
#else
	return req.recv(make_region(), 0, 8);
#endif
}
