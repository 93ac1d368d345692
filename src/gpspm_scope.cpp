/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_scope.cpp -- what a peer may reach through a connection's GPSPM:
 * the regions offered to it, and how many refusals it gets
 */

#include "err.hpp"
#include "gpspm.hpp"

namespace rpma
{

int gpspm_offer(gpspm_engine *g, uint64_t id)
{
	const uint32_t n = g->scope.count.load(std::memory_order_relaxed);
	if (gpspm_scope_holds(&g->scope, n, id))
		return 0;
	if (n == GPSPM_SCOPE_MAX) {
		RPMA_LOG_ERROR("a connection can be offered at most %u regions", GPSPM_SCOPE_MAX);
		return RPMA_E_INVAL;
	}
	g->scope.ids[n] = id;
	/* the id before the count that covers it, for whoever serves */
	g->scope.count.store(n + 1, std::memory_order_release);
	return 0;
}

bool gpspm_count_refusal(gpspm_engine *g)
{
	/* once: the requests still queued behind the last one are refused without a word */
	if (++g->refused != GPSPM_REFUSALS_MAX)
		return false;
	RPMA_LOG_ERROR("%u GPSPM requests of the peer refused: closing the connection",
		       GPSPM_REFUSALS_MAX);
	return true;
}

} /* namespace rpma */
