/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * private_data_of_temporary_conn.cpp -- must not compile (see compile_fail.py)
 *
 * The private data of a connection that dies at once: the span would
 * dangle.
 *
 * expect: \bget_private_data\b
 */

#include <rpma.hpp>

rpma::conn make_conn();

rpma::result<rpma::span<const std::byte>> pdata([[maybe_unused]] const rpma::conn &conn)
{
#ifdef RPMA_CONTROL
	return conn.get_private_data();
#else
	return make_conn().get_private_data();
#endif
}
