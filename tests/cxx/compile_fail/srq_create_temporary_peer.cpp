/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_create_temporary_peer.cpp -- must not compile (see compile_fail.py)
 *
 * A shared RQ made with a peer that dies at once.
 *
 * expect: \bcreate\b
 */

#include <rpma.hpp>

rpma::peer make_peer();

rpma::result<rpma::srq> shared([[maybe_unused]] rpma::peer &peer)
{
#ifdef RPMA_CONTROL
	return rpma::srq::create(peer);
#else
	return rpma::srq::create(make_peer());
#endif
}
