/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.cpp -- connections: made from a request, their getters, their
 * events and waits as the application calls them, and their end
 */

#include <cerrno>
#include <fcntl.h>

#include "clock.hpp"
#include "conn.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "gpspm.hpp"
#include "peer.hpp"
#include "peer_cfg.hpp"
#include "post.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

int rpma::conn_new(rpma_peer *peer, rdma_cm_id *id, const conn_queues &queues,
		   const void *private_data, uint8_t private_data_len, rpma_conn **conn_ptr)
{
	auto *conn = rpma::make<rpma_conn>();
	if (conn == nullptr)
		return RPMA_E_NOMEM;

	int ret = conn_events_open(&conn->events, id, queues.flush, private_data, private_data_len);
	if (ret) {
		rpma::destroy(conn);
		return ret;
	}
	conn->peer = peer;
	conn->id = id;
	conn->queues = queues;
	conn->read_fenced = peer->iwarp;
	conn->app_qp = queues.gpspm_mode == RPMA_GPSPM_THREAD ? nullptr : id->qp;
	/* no poll yet: the application has no CQ before it has the connection */
	if (queues.gpspm && queues.gpspm_mode == RPMA_GPSPM_POLLED)
		gpspm_gate_posts(queues.gpspm, &conn->posts_held);
	/* waits on the connection's CQs watch its events */
	const uint32_t qp_num = id->qp ? id->qp->qp_num : 0;
	if (queues.cq)
		cq_watch(queues.cq, &conn->events, qp_num);
	if (queues.rcq)
		cq_watch(queues.rcq, &conn->events, qp_num);
	conn_refresh_flush_methods(conn);
	*conn_ptr = conn;
	return 0;
}

bool rpma::conn_refuses_posts()
{
	RPMA_LOG_ERROR("a connection served by a GPSPM thread (RPMA_GPSPM_THREAD) carries "
		       "nothing else");
	return false;
}

flush_capabilities rpma::conn_flush_capabilities(const rpma_conn *conn)
{
	flush_capabilities caps;
	caps.direct_write_to_pmem = conn->direct_write_to_pmem.load(std::memory_order_relaxed);
	caps.gpspm = conn->queues.gpspm != nullptr && gpspm_agreed(conn->queues.gpspm);
	caps.native =
	    conn->peer->native & (verbs::NATIVE_FLUSH_GLOBAL | verbs::NATIVE_FLUSH_PERSISTENT);
	return caps;
}

void rpma::conn_refresh_flush_methods(rpma_conn *conn)
{
	const flush_capabilities caps = conn_flush_capabilities(conn);
	/* the application may post nothing where the GPSPM thread serves (conn_takes_posts) */
	const bool takes_posts = conn->queues.gpspm_mode != RPMA_GPSPM_THREAD;
	const rpma_flush_type types[] = { RPMA_FLUSH_TYPE_PERSISTENT, RPMA_FLUSH_TYPE_VISIBILITY };
	for (rpma_flush_type type : types) {
		const uint8_t usable = takes_posts ? usable_flush_methods(caps, type) : 0;
		conn->usable_flush_methods[type].store(usable, std::memory_order_relaxed);
		/*
		 * Where a read-after-write needs a fence, no fast path takes it,
		 * nor GPSPM, which it would be chosen before: the general path
		 * chooses between them by the region.
		 */
		const uint8_t fenced =
		    (usable & METHOD_READ_AFTER_WRITE) ? METHOD_READ_AFTER_WRITE | METHOD_GPSPM : 0;
		uint8_t fast = conn->read_fenced ? static_cast<uint8_t>(usable & ~fenced) : usable;
		/*
		 * GPSPM's back-pressure is tested on the paths of a GPSPM
		 * connection only (conn_posts_held): its read-after-write and
		 * native flushes take the general path, and GPSPM's fast path
		 * only where no other method could be chosen before it.
		 */
		if (conn->queues.gpspm != nullptr)
			fast = fast == METHOD_GPSPM ? fast : 0;
		conn->fast_flush_methods[type].store(fast, std::memory_order_relaxed);
	}
}

extern "C" {

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(fd != nullptr);
	*fd = conn->events.event_fd;
	return 0;
}

int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(event != nullptr);
	return conn_events_next(&conn->events, event);
}

int rpma_conn_is_up(struct rpma_conn *conn, bool *is_up)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(is_up != nullptr);
	*is_up = conn_events_is_up(&conn->events);
	return 0;
}

int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(pdata != nullptr);
	const conn_events &ev = conn->events;
	pdata->ptr = ev.private_data_len ? const_cast<uint8_t *>(ev.private_data) : nullptr;
	pdata->len = ev.private_data_len;
	return 0;
}

int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(pcfg != nullptr);
	conn->direct_write_to_pmem.store(pcfg->direct_write_to_pmem.load());

	/*
	 * GPSPM is agreed when both sides carry it: as many flushes in flight
	 * as the target keeps receives posted and this side keeps for answers.
	 */
	const uint32_t target_depth = pcfg->gpspm_depth.load();
	gpspm_engine *g = conn->queues.gpspm;
	if ((g == nullptr || !gpspm_agree(g, target_depth)) && target_depth)
		RPMA_LOG_INFO("the target serves GPSPM, but this connection does not carry it "
			      "(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED))");
	conn_refresh_flush_methods(conn);
	return 0;
}

int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(qp_num != nullptr);
	*qp_num = conn->id->qp->qp_num;
	return 0;
}

int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(cq_ptr != nullptr);
	*cq_ptr = conn->queues.cq;
	return 0;
}

int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(rcq_ptr != nullptr);
	*rcq_ptr = conn->queues.rcq;
	return 0;
}

int rpma_conn_disconnect(struct rpma_conn *conn)
{
	RPMA_CHECK_ARG(conn != nullptr);
	if (verbs::disconnect(conn->id))
		return RPMA_PROVIDER_FAILED(errno, "rdma_disconnect");
	return 0;
}

int rpma_conn_delete(struct rpma_conn **conn_ptr)
{
	RPMA_CHECK_ARG(conn_ptr != nullptr);
	rpma_conn *conn = *conn_ptr;
	if (conn == nullptr)
		return 0;

	/* everything is released even if a step fails; the first failure is reported */
	int ret = conn_queues_destroy(conn->id, &conn->queues);
	const bool id_destroyed = verbs::destroy_id(conn->id) == 0;
	if (!id_destroyed && ret == 0)
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_destroy_id");
	conn_events_close(&conn->events, id_destroyed);

	rpma::destroy(conn);
	*conn_ptr = nullptr;
	return ret;
}

int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(fd != nullptr);
	if (conn->queues.shared_channel == nullptr)
		return RPMA_E_NOT_SHARED_CHNL;
	*fd = conn->queues.shared_channel->fd;
	return 0;
}

int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(cq != nullptr);
	RPMA_CHECK_ARG(flags == 0 || flags == RPMA_W_WAIT_FOR_COMPLETION);
	/* as librpma 1.x: a failure hands out no CQ to drain */
	*cq = nullptr;
	if (conn->queues.shared_channel == nullptr)
		return RPMA_E_NOT_SHARED_CHNL;
	/* completions already read from the main CQ: their event went, the CQ has them */
	if (cq_taken_not_handed(conn->queues.cq)) {
		*cq = conn->queues.cq;
		if (is_rcq)
			*is_rcq = false;
		return 0;
	}

	const int fd = conn->queues.shared_channel->fd;
	const int fl = fcntl(fd, F_GETFL);
	int ret = wait_1x(fd, &conn->events, conn->queues.gpspm, fl < 0 || !(fl & O_NONBLOCK));
	if (ret < 0)
		return ret;
	if (ret == WAIT_1X_ORPHANS) {
		/* no event: the flushes the library completes are on the main CQ */
		*cq = conn->queues.cq;
		if (is_rcq)
			*is_rcq = false;
		return 0;
	}
	ibv_cq *ev_cq = nullptr;
	ret = get_cq_event_1x(conn->queues.shared_channel, &ev_cq);
	if (ret)
		return ret;

	/* the main CQ always exists; an event of neither CQ is reported by it */
	rpma_cq *fired =
	    conn->queues.rcq && ev_cq == conn->queues.rcq->cq ? conn->queues.rcq : conn->queues.cq;
	ret = fired->ack_event_of(ev_cq);
	if (ret)
		return ret;
	*cq = fired;
	if (is_rcq)
		*is_rcq = fired == conn->queues.rcq;
	return 0;
}

} /* extern "C" */

/*
 * Whether a GPSPM request could be posted on conn now: a place in the flow
 * control (where the target agreed), and none of the posts held back.
 */
static bool room_for_posts(const rpma_conn *conn, const gpspm_engine *g)
{
	return (!gpspm_agreed(g) || gpspm_has_room(g)) && !conn_posts_held(conn);
}

extern "C" {

int rpma_conn_wait_flush_room(struct rpma_conn *conn, int timeout_ms)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(cq_application_may_use(conn->queues.cq));
	gpspm_engine *g = conn->queues.gpspm;
	/* no GPSPM on the connection, or not agreed and nothing held: nothing limits the posts */
	if (g == nullptr || (!gpspm_agreed(g) && !conn_posts_held(conn)))
		return 0;
	rpma_cq *cq = conn->queues.cq;
	if (cq->shared_channel)
		return RPMA_E_SHARED_CHANNEL;

	const long long deadline = timeout_ms >= 0 ? monotonic_ms() + timeout_ms : 0;
	for (;;) {
		/* the answers wait in the CQ: handle them, keep the rest for later */
		int ret = cq->absorb();
		if (ret < 0)
			return ret;
		if (ret == rpma_cq::ABSORB_TAKE_FIRST)
			return RPMA_E_AGAIN;
		if (room_for_posts(conn, g))
			return 0;

		const int left = timeout_ms >= 0 ? ms_until(deadline) : -1;
		ret = cq_wait_event(cq, left);
		if (ret == RPMA_E_NO_COMPLETION && (left == 0 || conn->events.is_down())) {
			ret = cq->absorb();
			if (ret < 0)
				return ret;
			if (ret == rpma_cq::ABSORB_TAKE_FIRST)
				return RPMA_E_AGAIN;
			if (room_for_posts(conn, g))
				return 0;
			if (conn->events.is_down())
				RPMA_LOG_ERROR(
				    "the connection is down and no GPSPM answer will come");
			return RPMA_E_NO_COMPLETION;
		}
		if (ret && ret != RPMA_E_NO_COMPLETION)
			return ret;
	}
}

} /* extern "C" */
