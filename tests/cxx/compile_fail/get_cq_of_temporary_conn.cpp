/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * get_cq_of_temporary_conn.cpp -- must not compile (see compile_fail.py)
 *
 * The CQ of a connection that dies at once: the view would dangle.
 *
 * expect: \bget_cq\b
 */

#include <rpma.hpp>

rpma::result<rpma::cq> queue([[maybe_unused]] rpma::conn_req &req,
			     [[maybe_unused]] const rpma::conn &conn)
{
#ifdef RPMA_CONTROL
	return conn.get_cq();
#else
	return req.connect().value().get_cq();
#endif
}
