/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * get_rcq_of_temporary_conn.cpp -- must not compile (see compile_fail.py)
 *
 * The receive CQ of a connection that dies at once.
 *
 * expect: \bget_rcq\b
 */

#include <rpma.hpp>

rpma::conn make_conn();

rpma::result<rpma::cq> queue([[maybe_unused]] const rpma::conn &conn)
{
#ifdef RPMA_CONTROL
	return conn.get_rcq();
#else
	return make_conn().get_rcq();
#endif
}
