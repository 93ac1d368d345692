/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_get_rcq_of_temporary.cpp -- must not compile (see compile_fail.py)
 *
 * The receive CQ of a shared RQ that dies at once.
 *
 * expect: \bget_rcq\b
 */

#include <rpma.hpp>

rpma::srq make_srq();

rpma::result<rpma::cq> queue([[maybe_unused]] const rpma::srq &srq)
{
#ifdef RPMA_CONTROL
	return srq.get_rcq();
#else
	return make_srq().get_rcq();
#endif
}
