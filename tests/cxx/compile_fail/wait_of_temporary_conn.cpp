/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wait_of_temporary_conn.cpp -- must not compile (see compile_fail.py)
 *
 * Waiting on a connection that dies at once: the CQ it names would dangle.
 *
 * expect: \bwait\b
 */

#include <rpma.hpp>

rpma::conn make_conn();

rpma::result<rpma::conn_wait_result> woken([[maybe_unused]] rpma::conn &conn)
{
#ifdef RPMA_CONTROL
	return conn.wait();
#else
	return make_conn().wait();
#endif
}
