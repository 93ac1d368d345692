/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.hpp -- an RC connection: its id, its queues and its events
 *
 * The connection is made of parts that each module owns: the queues
 * (conn_queues.hpp), the events (conn_events.hpp); what the connection
 * itself holds is what the target declared. Posting is conn_post.cpp's.
 */

#ifndef RPMA_CONN_HPP
#define RPMA_CONN_HPP

#include <atomic>
#include <cstdint>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <librpma.h>

#include "conn_events.hpp"
#include "conn_queues.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

struct rpma_peer;

struct rpma_conn {
	rpma_peer *peer;
	rdma_cm_id *id;
	/*
	 * The QP the application's operations are posted on: id->qp, one load
	 * nearer; NULL on a connection the GPSPM thread serves, where the
	 * application may post nothing (conn_takes_posts), so that the data
	 * path's test of it is that check too.
	 */
	ibv_qp *app_qp;
	/*
	 * GPSPM's back-pressure: set while the library holds as many
	 * completions for their turn as it lets the application's posts
	 * add to (gpspm.hpp, hold_limit), when every post returns
	 * RPMA_E_AGAIN; never on a connection without GPSPM. Beside app_qp,
	 * which every post reads too.
	 */
	std::atomic<bool> posts_held{ false };
	rpma::conn_queues queues;
	rpma::conn_events events;

	/* from the peer configuration the target declared */
	std::atomic<bool> direct_write_to_pmem{ false };
	/*
	 * The flush methods (METHOD_* bits) the connection can use, indexed by
	 * rpma_flush_type: from its device, the target's peer configuration
	 * and GPSPM's agreement, set when the connection is made and when a
	 * peer configuration is applied (conn_refresh_flush_methods), so that
	 * a flush only ands them with the region's offer. None on a
	 * connection the GPSPM thread serves, where the application may post
	 * nothing: its flushes take the checked path, which says so.
	 */
	std::atomic<uint8_t> usable_flush_methods[2]{ { 0 }, { 0 } };
	/*
	 * usable_flush_methods as rpma_flush()'s fast paths see them: without
	 * read-after-write where its read needs a fenced write (read_fenced),
	 * which only the general path posts, nor GPSPM then, which it would be
	 * chosen before. One byte and the region's offer then pick the path,
	 * with no test of read_fenced on the way.
	 */
	std::atomic<uint8_t> fast_flush_methods[2]{ { 0 }, { 0 } };
	/*
	 * iWARP (peer->iwarp, one load nearer): a read-after-write flush's
	 * read is followed by a fenced write (flush.cpp's fence_read).
	 */
	bool read_fenced = false;

	/*
	 * Posts chain, which ends with flush_read, a read-after-write flush
	 * filled by read_after_write_fill(), signaled: the flush's slot claimed
	 * first, and given back when the post fails. One doorbell.
	 */
	int post_signaled_flush(ibv_send_wr *chain, ibv_send_wr *flush_read, const void *op_context)
	{
		rpma::conn_flush *flush = queues.flush;
		rpma::flush_slot *slot = rpma::flush_claim_signaled(flush, op_context, flush_read);
		if (__builtin_expect(slot == nullptr, 0))
			return rpma::flush_slots_exhausted();
		const int ret = post_send(chain);
		if (__builtin_expect(ret != 0, 0))
			flush->release(slot);
		return ret;
	}

	/* Posts one send work request (or a chain): one doorbell. */
	int post_send(ibv_send_wr *wr)
	{
		ibv_send_wr *bad_wr;
		const int ret = rpma::verbs::post_send(app_qp, wr, &bad_wr);
		if (__builtin_expect(ret != 0, 0))
			return rpma::post_failed(ret, "ibv_post_send");
		return 0;
	}
};

namespace rpma
{

/* conn_takes_posts()'s refusal: false, logged. */
[[gnu::cold]] bool conn_refuses_posts();

/*
 * Whether the application may post on conn: not when RPMA_GPSPM_THREAD's
 * thread polls its CQ, where nothing else may complete (logged).
 */
inline bool conn_takes_posts(const rpma_conn *conn)
{
	return conn->queues.gpspm_mode != RPMA_GPSPM_THREAD || conn_refuses_posts();
}

/*
 * Whether the application's posts on conn must wait (RPMA_E_AGAIN): GPSPM
 * holds as many completions as it lets posts add to, and a post's could
 * find no place. Not logged: the application takes completions, or waits
 * with rpma_conn_wait_flush_room(), and posts again.
 */
inline bool conn_posts_held(const rpma_conn *conn)
{
	return conn->posts_held.load(std::memory_order_relaxed);
}

/* What the connection knows for choosing a flush method. */
flush_capabilities conn_flush_capabilities(const rpma_conn *conn);

/* Sets conn->usable_flush_methods from what the connection knows now. */
void conn_refresh_flush_methods(rpma_conn *conn);

/*
 * Wraps id (with its QP) and queues into a connection with its own event
 * channel. private_data: what the connection knows of its peer so far (the
 * client's request data, on the passive side). On failure the caller still
 * owns id and queues.
 */
int conn_new(rpma_peer *peer, rdma_cm_id *id, const conn_queues &queues, const void *private_data,
	     uint8_t private_data_len, rpma_conn **conn_ptr);

} /* namespace rpma */

#endif /* RPMA_CONN_HPP */
