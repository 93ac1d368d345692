/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * arrow_of_temporary_result.cpp -- must not compile (see compile_fail.py)
 *
 * A call through -> of a temporary result, unchecked: what the result
 * holds (here a new connection) dies with it at the end of the statement.
 *
 * expect: operator\s*'?->
 */

#include <rpma.hpp>

rpma::result<std::uint32_t> qp_num(rpma::conn_req &req)
{
#ifdef RPMA_CONTROL
	auto conn = req.connect();
	if (!conn)
		return conn.error();
	return conn->get_qp_num();
#else
	return req.connect()->get_qp_num();
#endif
}
