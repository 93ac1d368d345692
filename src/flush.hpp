/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush.hpp -- how a flush reaches the target
 */

#ifndef RPMA_FLUSH_HPP
#define RPMA_FLUSH_HPP

#include <cstddef>

#include <infiniband/verbs.h>

struct rpma_conn;
struct rpma_mr_remote;

namespace rpma
{

/*
 * Posts an RDMA read on conn. A signaled read is remembered by the send CQ
 * (is_flush says which kind) so that its completion can be reported as a
 * read or as a flush.
 */
int post_read(rpma_conn *conn, ibv_send_wr *wr, bool is_flush);

/*
 * The read-after-write flush: an RDMA read from the flushed range cannot
 * complete before the writes posted ahead of it on the same queue pair have
 * been placed in the target's memory. Where writes land in the persistent
 * domain (the target declared direct write to PMem) that makes them
 * persistent; otherwise visible to the target's CPU.
 */
int flush_read_after_write(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset, size_t len,
			   unsigned send_flags, const void *op_context);

} /* namespace rpma */

#endif /* RPMA_FLUSH_HPP */
