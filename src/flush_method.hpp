/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush_method.hpp -- which method carries a flush: the best one both
 * sides support, from what the region's descriptor offers and what the
 * connection knows of its target
 */

#ifndef RPMA_FLUSH_METHOD_HPP
#define RPMA_FLUSH_METHOD_HPP

#include <cstdint>

#include <librpma.h>

#include "mr.hpp"
#include "verbs/verbs.hpp"
#include "wire.hpp"

namespace rpma
{

/*
 * What a connection knows of its target for choosing a method: the remote
 * peer configuration it applied, and its own abilities.
 */
struct flush_capabilities {
	bool direct_write_to_pmem; /* the target declared it */
	bool gpspm;		   /* both sides carry GPSPM on this connection */
	/*
	 * The placements of RDMA FLUSH (verbs::NATIVE_FLUSH_* bits) that this
	 * side's device and QP can post; the target's side is in the
	 * region's descriptor.
	 */
	uint8_t native;
};

/*
 * The flush methods the region offers (METHOD_* bits): what its versioned
 * descriptor said, or for a librpma 1.x descriptor read-after-write when
 * its usage names a flush type (librpma 1.x registered every flushable
 * region for remote reads). Decoded once, with the descriptor (mr.cpp).
 */
inline uint8_t remote_flush_methods(const rpma_mr_remote *mr)
{
	return mr->methods;
}

/*
 * The method rpma_flush() uses for dst and type on a connection with caps:
 * the best one both sides support. RPMA_FLUSH_METHOD_NONE when there is
 * none; *why then says why, for the log. Inline: every flush asks.
 */
inline rpma_flush_method choose_flush_method(const flush_capabilities &caps,
					     const rpma_mr_remote *dst, rpma_flush_type type,
					     const char **why)
{
	const uint8_t offered = remote_flush_methods(dst);

	if (type == RPMA_FLUSH_TYPE_PERSISTENT) {
		if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
			*why = "the remote region was not registered for persistent flush";
			return RPMA_FLUSH_METHOD_NONE;
		}
		if ((caps.native & verbs::NATIVE_FLUSH_PERSISTENT) &&
		    (offered & METHOD_NATIVE_PERSISTENT))
			return RPMA_FLUSH_METHOD_NATIVE;
		if (caps.direct_write_to_pmem && (offered & METHOD_READ_AFTER_WRITE))
			return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
		if (caps.gpspm && (offered & METHOD_GPSPM))
			return RPMA_FLUSH_METHOD_GPSPM;
		if (offered & METHOD_GPSPM)
			*why = "the target offers GPSPM for this region, but the connection does "
			       "not carry it (rpma_conn_cfg_set_gpspm on both sides)";
		else
			*why = "the target did not declare direct write to PMem "
			       "(rpma_conn_apply_remote_peer_cfg) and offers no GPSPM for this "
			       "region";
		return RPMA_FLUSH_METHOD_NONE;
	}

	if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)) {
		*why = "the remote region was not registered for visibility flush";
		return RPMA_FLUSH_METHOD_NONE;
	}
	if ((caps.native & verbs::NATIVE_FLUSH_GLOBAL) && (offered & METHOD_NATIVE_VISIBILITY))
		return RPMA_FLUSH_METHOD_NATIVE;
	if (offered & METHOD_READ_AFTER_WRITE)
		return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	*why = "the target offers no method for a visibility flush of this region";
	return RPMA_FLUSH_METHOD_NONE;
}

/*
 * The methods (METHOD_* bits) by which a connection with caps can carry a
 * flush of type, whatever the region: what a flush ands with the region's
 * offer (pick_flush_method). Computed when the capabilities change, not
 * per flush.
 */
inline uint8_t usable_flush_methods(const flush_capabilities &caps, rpma_flush_type type)
{
	if (type == RPMA_FLUSH_TYPE_PERSISTENT)
		return ((caps.native & verbs::NATIVE_FLUSH_PERSISTENT) ? METHOD_NATIVE_PERSISTENT
								       : 0) |
		       (caps.direct_write_to_pmem ? METHOD_READ_AFTER_WRITE : 0) |
		       (caps.gpspm ? METHOD_GPSPM : 0);
	return ((caps.native & verbs::NATIVE_FLUSH_GLOBAL) ? METHOD_NATIVE_VISIBILITY : 0) |
	       METHOD_READ_AFTER_WRITE;
}

/* The order of preference of choose_flush_method(), among the methods both sides have. */
inline rpma_flush_method best_flush_method(uint8_t both)
{
	if (both & (METHOD_NATIVE_PERSISTENT | METHOD_NATIVE_VISIBILITY))
		return RPMA_FLUSH_METHOD_NATIVE;
	if (both & METHOD_READ_AFTER_WRITE)
		return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	if (both & METHOD_GPSPM)
		return RPMA_FLUSH_METHOD_GPSPM;
	return RPMA_FLUSH_METHOD_NONE;
}

/*
 * choose_flush_method() from usable_flush_methods(caps, type): the same
 * method, in a few instructions; RPMA_FLUSH_METHOD_NONE when there is none
 * (choose_flush_method() then says why). type is checked already.
 */
inline rpma_flush_method pick_flush_method(uint8_t usable, const rpma_mr_remote *dst,
					   rpma_flush_type type)
{
	return best_flush_method(usable & dst->flush_offer[type]);
}

} /* namespace rpma */

#endif /* RPMA_FLUSH_METHOD_HPP */
