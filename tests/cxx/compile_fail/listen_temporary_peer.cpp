/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * listen_temporary_peer.cpp -- must not compile (see compile_fail.py)
 *
 * An endpoint listening with a peer that dies at once.
 *
 * expect: \blisten\b
 */

#include <rpma.hpp>

rpma::peer make_peer();

rpma::result<rpma::ep> server([[maybe_unused]] rpma::peer &peer)
{
#ifdef RPMA_CONTROL
	return rpma::ep::listen(peer, "192.0.2.1", "7204");
#else
	return rpma::ep::listen(make_peer(), "192.0.2.1", "7204");
#endif
}
