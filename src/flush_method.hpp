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

struct rpma_mr_remote;

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
 * The method rpma_flush() uses for dst and type on a connection with caps:
 * the best one both sides support. RPMA_FLUSH_METHOD_NONE when there is
 * none; *why then says why, for the log.
 */
rpma_flush_method choose_flush_method(const flush_capabilities &caps, const rpma_mr_remote *dst,
				      rpma_flush_type type, const char **why);

/* The flush methods the region offers (METHOD_* bits). */
uint8_t remote_flush_methods(const rpma_mr_remote *mr);

} /* namespace rpma */

#endif /* RPMA_FLUSH_METHOD_HPP */
