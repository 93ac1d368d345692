/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_post.hpp -- what the files of the data path (conn_post.cpp,
 * conn_post_flush.cpp) share: a flush made ready to post by its method,
 * alone or in a batch
 */

#ifndef RPMA_CONN_POST_HPP
#define RPMA_CONN_POST_HPP

#include <librpma.h>

#include "conn.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "post.hpp"

namespace rpma
{

/* RPMA_E_NOSUPP for a flush no method carries, with the reason logged. */
[[gnu::cold]] int flush_refused(const rpma_conn *conn, const rpma_mr_remote *dst,
				rpma_flush_type type);

/* Gives back what a prepared work request holds, when it was not posted. */
void flush_unprepare(rpma_conn *conn, prepared_wr *p);

/* The method of a flush of type to dst on conn: pick_flush_method(), inline. */
[[gnu::always_inline]] inline rpma_flush_method
flush_method_of(const rpma_conn *conn, const rpma_mr_remote *dst, rpma_flush_type type)
{
	return pick_flush_method(conn->usable_flush_methods[type].load(std::memory_order_relaxed),
				 dst, type);
}

/*
 * Makes a flush of [offset, offset + len) of dst ready to post by method,
 * the one pick_flush_method() gave for the connection and type: claims
 * its slot (and for GPSPM its place in the flow control). RPMA_E_NOSUPP,
 * with the reason logged, when no method carries it.
 */
[[gnu::always_inline]] inline int flush_prepare(rpma_conn *conn, rpma_flush_method method,
						const rpma_mr_remote *dst, size_t offset,
						size_t len, rpma_flush_type type,
						unsigned send_flags, const void *op_context,
						prepared_wr *p)
{
	conn_flush *flush = conn->queues.flush;
	p->native.placement = 0;
	switch (method) {
	case RPMA_FLUSH_METHOD_NATIVE:
		return flush_native_prepare(flush, dst, offset, len, type, send_flags, op_context,
					    p);
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return flush_read_after_write_prepare(flush, conn->read_fenced, dst, offset, len,
						      send_flags, op_context, p);
	case RPMA_FLUSH_METHOD_GPSPM:
		return gpspm_flush_prepare(conn->queues.gpspm, flush, dst, offset, len, send_flags,
					   op_context, p);
	default:
		return flush_refused(conn, dst, type);
	}
}

} /* namespace rpma */

#endif /* RPMA_CONN_POST_HPP */
