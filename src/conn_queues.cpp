/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_queues.cpp -- the queues of a connection, made as its configuration
 * says: CQs, the QP, the flush slots, and GPSPM with its thread
 */

#include <cerrno>

#include "conn_cfg.hpp"
#include "conn_queues.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush_slots.hpp"
#include "gpspm.hpp"
#include "gpspm_thread.hpp"
#include "peer.hpp"
#include "srq.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

int rpma::conn_queues_create(rpma_peer *peer, rdma_cm_id *id, const rpma_conn_cfg *cfg,
			     conn_queues *queues)
{
	const rpma_conn_cfg &c = rpma_conn_cfg::or_defaults(cfg);
	const uint32_t cq_size = c.cq_size.load();
	const uint32_t rcq_size = c.rcq_size.load();
	const uint32_t sq_size = c.sq_size.load();
	const uint32_t rq_size = c.rq_size.load();
	const rpma_gpspm_mode gpspm_mode = c.gpspm.load();
	const uint32_t depth = c.gpspm_depth();
	rpma_srq *srq = c.srq.load();
	ibv_context *ctx = id->verbs ? id->verbs : peer->context;

	if (gpspm_mode != RPMA_GPSPM_DISABLED) {
		/* the library's receives must complete where the library polls */
		if (rcq_size || srq) {
			RPMA_LOG_ERROR("GPSPM takes the connection's receive queue: it cannot go "
				       "with a receive CQ or a shared receive queue");
			return RPMA_E_INVAL;
		}
		if (depth == 0) {
			RPMA_LOG_ERROR("GPSPM needs a receive queue: its size is 0");
			return RPMA_E_INVAL;
		}
	}

	/*
	 * GPSPM: its sends and receives take room in the queues and the CQ
	 * beyond what the application asked for. iWARP: a read-after-write
	 * flush is two work requests (the read and the fenced write after it),
	 * so every operation the application counts may take two entries, and
	 * on a failure complete twice.
	 */
	const uint32_t per_operation = peer->iwarp ? 2 : 1;
	qp_shape shape;
	/*
	 * GPSPM: a connection may carry requests both ways, so its send queue
	 * may hold at once as many requests of this side as its depth, as
	 * many answers to the peer's (one per receive buffer the peer may
	 * fill), and a probe of a silent target (gpspm_watch). The CQ takes
	 * all of their completions and those of the receives besides.
	 */
	const uint32_t gpspm_sends = depth ? 2 * depth + 1 : 0;
	shape.max_send_wr = per_operation * sq_size + gpspm_sends;
	shape.max_recv_wr = depth ? depth : rq_size;
	/* the emulated atomic write is an 8-byte inline write; GPSPM sends inline */
	shape.max_inline_data = depth ? GPSPM_INLINE_SIZE : RPMA_ATOMIC_WRITE_ALIGNMENT;
	const uint32_t main_cq_size = cq_size + (per_operation - 1) * sq_size + depth + gpspm_sends;

	conn_queues q;
	q.gpspm_mode = gpspm_mode;
	int ret = 0;
	if (c.shared_channel.load()) {
		q.shared_channel = verbs::create_comp_channel(ctx);
		if (q.shared_channel == nullptr)
			return RPMA_PROVIDER_FAILED(errno, "ibv_create_comp_channel");
	}

	ret = cq_new(ctx, static_cast<int>(main_cq_size), q.shared_channel, &q.cq);
	if (ret)
		goto destroy_channel;

	/* receives complete, in order of preference, on the SRQ's CQ, the RCQ, the CQ */
	if (rcq_size && !(srq && srq->rcq)) {
		ret = cq_new(ctx, static_cast<int>(rcq_size), q.shared_channel, &q.rcq);
		if (ret)
			goto delete_cq;
	}

	/* every signaled flush is either in the send queue or in the CQ */
	ret = conn_flush_new(peer, shape.max_send_wr + main_cq_size, &q.flush);
	if (ret)
		goto delete_rcq;
	if (depth) {
		/*
		 * A target silent for a quarter of the connection's timeout is
		 * probed, and the probe fails within the timeout (the ACK
		 * timeout's budget, conn_req.cpp): a lost answer is noticed
		 * within 1.25 times the timeout of the last answer.
		 */
		const uint32_t probe_after_ms = static_cast<uint32_t>(c.timeout_ms.load()) / 4;
		/*
		 * Posts stop once as many completions are held as the send
		 * queue and the CQ have entries. Then what can still be held:
		 * every completion the CQ holds, since a provider may free a
		 * send queue entry once its completion is in the CQ, before
		 * anyone polls it (rxe does), so that the CQ, not the send
		 * queue, bounds what is done and not read; a completion of
		 * every entry of the send queue; one of every request awaiting
		 * its answer (as many as this side keeps receives: a failed
		 * receive fails them all at once); and those of the entries
		 * one poll reads, whose send queue entries are free before the
		 * posts are told.
		 */
		const uint32_t hold_limit = shape.max_send_wr + main_cq_size;
		const uint32_t max_held =
		    hold_limit + main_cq_size + shape.max_send_wr + depth + rpma_cq::UNREAD_MAX;
		ret = gpspm_new(peer, gpspm_mode, depth, hold_limit, max_held, probe_after_ms,
				&q.gpspm);
		if (ret)
			goto delete_flush;
	}
	cq_serve_flushes(q.cq, q.flush, q.gpspm);

	{
		ibv_cq *recv_cq = srq && srq->rcq ? srq->rcq->cq : (q.rcq ? q.rcq->cq : q.cq->cq);
		ret = peer->create_qp(id, shape, q.cq->cq, recv_cq, srq ? srq->srq : nullptr);
		if (ret)
			goto delete_flush;
	}

	if (depth) {
		/* the peer may send its first request as soon as it is connected */
		ret = gpspm_start(q.gpspm, id);
		if (!ret && gpspm_mode == RPMA_GPSPM_THREAD)
			ret = gpspm_thread_start(q.cq, c.gpspm_spin_us.load(), &q.server);
		if (ret)
			goto destroy_qp;
	}

	*queues = q;
	return 0;

destroy_qp:
	verbs::destroy_qp(id);
delete_flush:
	(void)gpspm_delete(&q.gpspm);
	(void)conn_flush_delete(&q.flush);
delete_rcq:
	(void)cq_delete(&q.rcq);
delete_cq:
	(void)cq_delete(&q.cq);
destroy_channel:
	if (q.shared_channel)
		(void)verbs::destroy_comp_channel(q.shared_channel);
	return ret;
}

int rpma::conn_queues_destroy(rdma_cm_id *id, conn_queues *queues)
{
	/* the GPSPM thread stops polling before anything it polls goes */
	gpspm_thread_stop(&queues->server);
	int ret = gpspm_delete(&queues->gpspm);
	/* the QP goes first: it holds references to the CQs */
	verbs::destroy_qp(id);
	int flush_ret = conn_flush_delete(&queues->flush);
	if (ret == 0)
		ret = flush_ret;
	int rcq_ret = cq_delete(&queues->rcq);
	if (ret == 0)
		ret = rcq_ret;
	int cq_ret = cq_delete(&queues->cq);
	if (ret == 0)
		ret = cq_ret;
	if (queues->shared_channel) {
		if (verbs::destroy_comp_channel(queues->shared_channel) && ret == 0)
			ret = RPMA_PROVIDER_FAILED(errno, "ibv_destroy_comp_channel");
		queues->shared_channel = nullptr;
	}
	return ret;
}
