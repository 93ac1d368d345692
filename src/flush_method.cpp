/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush_method.cpp -- the best flush method both sides support
 */

#include "flush_method.hpp"
#include "mr.hpp"
#include "verbs/verbs.hpp"
#include "wire.hpp"

namespace rpma
{

uint8_t remote_flush_methods(const rpma_mr_remote *mr)
{
	if (mr->versioned)
		return mr->methods;
	/* librpma 1.x registered every flushable region for remote reads */
	const int flush_usage =
	    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	return (mr->usage & flush_usage) ? METHOD_READ_AFTER_WRITE : 0;
}

rpma_flush_method choose_flush_method(const flush_capabilities &caps, const rpma_mr_remote *dst,
				      rpma_flush_type type, const char **why)
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

} /* namespace rpma */
