/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.hpp -- the flushes the initiator's device carries: read-after-write
 * and the native RDMA FLUSH (GPSPM is gpspm.hpp's)
 *
 * Each makes one work request ready to post (post.hpp's prepared_wr); a
 * signaled one claims a slot of the connection's flush_slots, whose
 * address becomes its wr_id.
 */

#ifndef RPMA_FLUSH_HPP
#define RPMA_FLUSH_HPP

#include <cstddef>

#include <librpma.h>

#include "flush_slots.hpp"
#include "post.hpp"

struct rpma_mr_remote;

namespace rpma
{

/*
 * The read-after-write flush: an RDMA read from the flushed range cannot
 * complete before the writes posted ahead of it on the same queue pair have
 * been placed in the target's memory. Where writes land in the persistent
 * domain (the target declared direct write to PMem) that makes them
 * persistent; otherwise visible to the target's CPU.
 */
int flush_read_after_write_prepare(conn_flush *flush, bool iwarp, const rpma_mr_remote *dst,
				   size_t offset, size_t len, unsigned send_flags,
				   const void *op_context, prepared_wr *p);

/*
 * The native flush: the RDMA FLUSH verb of IBTA 1.5, executed by the
 * target's device, with the placement of type (persistence or global
 * visibility) for [offset, offset + len) of dst; a range longer than a
 * FLUSH can name (32 bits) flushes the whole region, which covers it.
 */
int flush_native_prepare(conn_flush *flush, const rpma_mr_remote *dst, size_t offset, size_t len,
			 rpma_flush_type type, unsigned send_flags, const void *op_context,
			 prepared_wr *p);

} /* namespace rpma */

#endif /* RPMA_FLUSH_HPP */
