/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * private_data_of_temporary_conn_req.cpp -- must not compile (see compile_fail.py)
 *
 * The private data of a request that dies at once.
 *
 * expect: \bget_private_data\b
 */

#include <rpma.hpp>

rpma::conn_req make_req();

rpma::result<rpma::span<const std::byte>> pdata([[maybe_unused]] const rpma::conn_req &req)
{
#ifdef RPMA_CONTROL
	return req.get_private_data();
#else
	return make_req().get_private_data();
#endif
}
