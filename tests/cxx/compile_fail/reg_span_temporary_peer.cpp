/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reg_span_temporary_peer.cpp -- must not compile (see compile_fail.py)
 *
 * A region registered, from a span, with a peer that dies at once.
 *
 * expect: \breg\b
 */

#include <rpma.hpp>

rpma::peer make_peer();

rpma::result<rpma::mr_local> region([[maybe_unused]] rpma::peer &peer, rpma::span<std::byte> memory)
{
#ifdef RPMA_CONTROL
	return rpma::mr_local::reg(peer, memory, rpma::usage::write_src);
#else
	return rpma::mr_local::reg(make_peer(), memory, rpma::usage::write_src);
#endif
}
