/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req_create_temporary_peer.cpp -- must not compile (see compile_fail.py)
 *
 * A connection request made with a peer that dies at once.
 *
 * expect: \bcreate\b
 */

#include <rpma.hpp>

rpma::peer make_peer();

rpma::result<rpma::conn_req> client([[maybe_unused]] rpma::peer &peer)
{
#ifdef RPMA_CONTROL
	return rpma::conn_req::create(peer, "192.0.2.1", "7204");
#else
	return rpma::conn_req::create(make_peer(), "192.0.2.1", "7204");
#endif
}
