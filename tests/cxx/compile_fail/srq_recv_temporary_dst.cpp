/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_recv_temporary_dst.cpp -- must not compile (see compile_fail.py)
 *
 * The region of a receive posted on a shared RQ, a temporary.
 *
 * expect: \brecv\b
 */

#include <rpma.hpp>

rpma::mr_local make_region();

rpma::result<void> post(rpma::srq &srq, [[maybe_unused]] rpma::mr_local &dst)
{
#ifdef RPMA_CONTROL
	return srq.recv(dst, 0, 8);
#else
	return srq.recv(make_region(), 0, 8);
#endif
}
