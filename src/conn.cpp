/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.cpp -- connections: queues, events, completions channel, data path
 */

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "conn.hpp"
#include "conn_cfg.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "peer_cfg.hpp"
#include "post.hpp"
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
	shape.max_send_wr = per_operation * sq_size + depth;
	shape.max_recv_wr = depth ? depth : rq_size;
	/* the emulated atomic write is an 8-byte inline write; GPSPM sends inline */
	shape.max_inline_data = depth ? GPSPM_INLINE_SIZE : RPMA_ATOMIC_WRITE_ALIGNMENT;
	const uint32_t main_cq_size = cq_size + (per_operation - 1) * sq_size + 2 * depth;

	conn_queues q;
	q.gpspm = gpspm_mode;
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
		ret = gpspm_new(peer, gpspm_mode, depth, q.flush->slots_mask + 1, &q.flush->gpspm);
		if (ret)
			goto delete_flush;
	}
	q.cq->flush = q.flush;

	{
		ibv_cq *recv_cq = srq && srq->rcq ? srq->rcq->cq : (q.rcq ? q.rcq->cq : q.cq->cq);
		ret = peer->create_qp(id, shape, q.cq->cq, recv_cq, srq ? srq->srq : nullptr);
		if (ret)
			goto delete_flush;
	}

	if (depth) {
		/* the peer may send its first request as soon as it is connected */
		ret = gpspm_start(q.flush->gpspm, id);
		if (!ret && gpspm_mode == RPMA_GPSPM_THREAD) {
			q.cq->served_by_thread = true;
			ret = gpspm_start_thread(q.flush->gpspm, q.cq);
		}
		if (ret)
			goto destroy_qp;
	}

	*queues = q;
	return 0;

destroy_qp:
	verbs::destroy_qp(id);
delete_flush:
	if (q.flush)
		(void)gpspm_delete(&q.flush->gpspm);
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
	int ret = 0;
	if (queues->flush)
		ret = gpspm_delete(&queues->flush->gpspm);
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

/*
 * The fd the application waits on for connection events: readable while an
 * event waits in rdma_cm (evch) or in the stash (stash_fd). The channel
 * itself turns non-blocking: the library reads it only when it knows, or
 * may find, an event there.
 */
static int conn_event_fd_new(rpma_conn *conn)
{
	int flags = fcntl(conn->evch->fd, F_GETFL);
	if (flags < 0 || fcntl(conn->evch->fd, F_SETFL, flags | O_NONBLOCK))
		return RPMA_PROVIDER_FAILED(errno, "fcntl(O_NONBLOCK) on the event channel");

	conn->stash_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (conn->stash_fd < 0)
		return RPMA_PROVIDER_FAILED(errno, "eventfd");
	conn->event_fd = epoll_create1(EPOLL_CLOEXEC);
	if (conn->event_fd < 0) {
		const int err = errno;
		close(conn->stash_fd);
		return RPMA_PROVIDER_FAILED(err, "epoll_create1");
	}
	const int watched_fds[] = { conn->evch->fd, conn->stash_fd };
	for (int fd : watched_fds) {
		epoll_event ev{};
		ev.events = EPOLLIN;
		ev.data.fd = fd;
		if (epoll_ctl(conn->event_fd, EPOLL_CTL_ADD, fd, &ev)) {
			const int err = errno;
			close(conn->event_fd);
			close(conn->stash_fd);
			return RPMA_PROVIDER_FAILED(err, "epoll_ctl");
		}
	}
	return 0;
}

int rpma::conn_new(rpma_peer *peer, rdma_cm_id *id, const conn_queues &queues,
		   const void *private_data, uint8_t private_data_len, rpma_conn **conn_ptr)
{
	auto *conn = new (std::nothrow) rpma_conn;
	if (conn == nullptr)
		return RPMA_E_NOMEM;

	int ret = 0;
	conn->evch = verbs::create_event_channel();
	if (conn->evch == nullptr) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_create_event_channel");
		goto free_conn;
	}
	ret = conn_event_fd_new(conn);
	if (ret)
		goto destroy_evch;

	/*
	 * The id moves last: until then it stays on its own channel, through
	 * which the caller rejects the client when this fails. Moving it back
	 * could fail and leave it on a destroyed channel.
	 */
	if (verbs::migrate_id(id, conn->evch)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_migrate_id");
		goto close_fds;
	}

	conn->peer = peer;
	conn->id = id;
	conn->queues = queues;
	conn->flush = queues.flush;
	conn->gpspm = queues.gpspm;
	conn->private_data_len = 0;
	conn->set_private_data(private_data, private_data_len);
	/* waits on the connection's CQs watch its events */
	if (queues.cq)
		queues.cq->conn = conn;
	if (queues.rcq)
		queues.rcq->conn = conn;
	*conn_ptr = conn;
	return 0;

close_fds:
	close(conn->event_fd);
	close(conn->stash_fd);
destroy_evch:
	verbs::destroy_event_channel(conn->evch);
free_conn:
	delete conn;
	return ret;
}

int rpma_conn::post_send(ibv_send_wr *wr)
{
	ibv_send_wr *bad_wr;
	int ret = verbs::post_send(id->qp, wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
	return 0;
}

static rpma_conn_event conn_event_from(rdma_cm_event_type type)
{
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		return RPMA_CONN_ESTABLISHED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return RPMA_CONN_UNREACHABLE;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return RPMA_CONN_LOST;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return RPMA_CONN_CLOSED;
	case RDMA_CM_EVENT_REJECTED:
		return RPMA_CONN_REJECTED;
	default:
		return RPMA_CONN_UNDEFINED;
	}
}

/* The events after which the connection carries nothing more. */
static bool event_ends_connection(rpma_conn_event event)
{
	return event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST ||
	       event == RPMA_CONN_REJECTED || event == RPMA_CONN_UNREACHABLE;
}

/*
 * The peer is gone: the QP goes to the error state, so that every work
 * request still posted completes (flushed, with an error status) instead of
 * waiting for an answer that cannot come.
 */
static void conn_bring_down(rpma_conn *conn, rpma_conn_event why)
{
	if (conn->down.load(std::memory_order_acquire))
		return;
	conn->down_at_ms.store(monotonic_ms(), std::memory_order_relaxed);
	if (conn->down.exchange(true, std::memory_order_acq_rel))
		return;
	if (conn->id->qp == nullptr)
		return;
	if (int err = verbs::modify_qp_to_error(conn->id->qp)) {
		(void)RPMA_PROVIDER_FAILED(err > 0 ? err : errno, "ibv_modify_qp(IBV_QPS_ERR)");
		return;
	}
	RPMA_LOG_INFO("connection %s: what is still outstanding completes with errors",
		      rpma_utils_conn_event_2str(why));
}

/*
 * Takes one event from the (non-blocking) channel, under events_lock:
 * 0 and *event; RPMA_E_AGAIN when none is there yet; RPMA_E_NO_EVENT,
 * RPMA_E_UNKNOWN (an event that means nothing here, taken) or
 * RPMA_E_PROVIDER as librpma 1.x reported them.
 */
static int conn_take_cm_event(rpma_conn *conn, rpma_conn_event *event)
{
	rdma_cm_event *cm_event = nullptr;
	if (verbs::get_cm_event(conn->evch, &cm_event)) {
		const int err = errno;
		/* no provider error for these: a watching wait must not leave one behind */
		if (err == EAGAIN || err == EWOULDBLOCK)
			return RPMA_E_AGAIN;
		if (err == ENODATA)
			return RPMA_E_NO_EVENT;
		return RPMA_PROVIDER_FAILED(err, "rdma_get_cm_event");
	}

	const rdma_cm_event_type type = cm_event->event;
	const rpma_conn_event conn_event = conn_event_from(type);
	if (conn_event == RPMA_CONN_ESTABLISHED && cm_event->param.conn.private_data &&
	    cm_event->param.conn.private_data_len) {
		/*
		 * The server's answer (active side). The bytes are gone once the
		 * event is acknowledged: keep them. On the passive side the event
		 * carries nothing and the client's request data stays.
		 */
		conn->set_private_data(cm_event->param.conn.private_data,
				       cm_event->param.conn.private_data_len);
	}
	if (event_ends_connection(conn_event))
		conn_bring_down(conn, conn_event);

	if (verbs::ack_cm_event(cm_event))
		return RPMA_PROVIDER_FAILED(errno, "rdma_ack_cm_event");

	if (conn_event == RPMA_CONN_UNDEFINED) {
		RPMA_LOG_WARNING("unexpected connection event %d", static_cast<int>(type));
		return RPMA_E_UNKNOWN;
	}
	*event = conn_event;
	return 0;
}

/* The stash, under events_lock; stash_fd is readable while it holds events. */
static void stash_push(rpma_conn *conn, rpma_conn_event event)
{
	conn_event_stash &st = conn->stash;
	st.events[(st.head + st.count) % conn_event_stash::CAPACITY] = event;
	if (st.count++ == 0) {
		const uint64_t one = 1;
		if (write(conn->stash_fd, &one, sizeof(one)) != sizeof(one))
			RPMA_LOG_WARNING("eventfd write failed: errno %d", errno);
	}
}

static bool stash_pop(rpma_conn *conn, rpma_conn_event *event)
{
	conn_event_stash &st = conn->stash;
	if (st.count == 0)
		return false;
	*event = st.events[st.head];
	st.head = (st.head + 1) % conn_event_stash::CAPACITY;
	if (--st.count == 0) {
		uint64_t value;
		if (read(conn->stash_fd, &value, sizeof(value)) != sizeof(value))
			RPMA_LOG_WARNING("eventfd read failed: errno %d", errno);
	}
	return true;
}

watch_result rpma::conn_watch_events(rpma_conn *conn)
{
	std::lock_guard<std::mutex> guard(conn->events_lock);
	watch_result result = watch_result::none;
	for (;;) {
		if (conn->stash.count == conn_event_stash::CAPACITY)
			return result == watch_result::took ? result : watch_result::stuck;
		rpma_conn_event event = RPMA_CONN_UNDEFINED;
		const int ret = conn_take_cm_event(conn, &event);
		if (ret == RPMA_E_AGAIN)
			return result; /* none left */
		if (ret != 0 && ret != RPMA_E_UNKNOWN)
			return result == watch_result::took ? result : watch_result::stuck;
		stash_push(conn, event);
		result = watch_result::took;
	}
}

bool rpma::conn_drained(rpma_conn *conn)
{
	if (!conn->down.load(std::memory_order_acquire))
		return false;
	if (monotonic_ms() < conn->down_at_ms.load(std::memory_order_relaxed) + CONN_DOWN_DRAIN_MS)
		return false;
	conn->flush->sweep_orphans.store(true, std::memory_order_release);
	return true;
}

int rpma::wait_channel_or_peer(int channel_fd, rpma_conn *conn, int timeout_ms)
{
	const long long deadline = timeout_ms >= 0 ? monotonic_ms() + timeout_ms : -1;
	long long drain_deadline = -1;
	bool watch = conn != nullptr;
	/* when the channel's events could not be taken: when to try again */
	long long watch_again_at = -1;
	for (;;) {
		const bool down = conn && conn->down.load(std::memory_order_acquire);
		if (watch_again_at >= 0 && monotonic_ms() >= watch_again_at) {
			watch = true;
			watch_again_at = -1;
		}
		long long until = deadline;
		if (down) {
			/* the events after this are the application's to read */
			watch = false;
			watch_again_at = -1;
			if (drain_deadline < 0)
				drain_deadline = conn->down_at_ms.load(std::memory_order_relaxed) +
						 CONN_DOWN_DRAIN_MS;
			if (until < 0 || drain_deadline < until)
				until = drain_deadline;
		}
		long long wake_at = until;
		if (watch_again_at >= 0 && (wake_at < 0 || watch_again_at < wake_at))
			wake_at = watch_again_at;
		int wait_ms = -1;
		if (wake_at >= 0) {
			const long long left = wake_at - monotonic_ms();
			wait_ms =
			    left <= 0 ? 0 : (left > INT_MAX ? INT_MAX : static_cast<int>(left));
		}

		pollfd pfd[2] = { { channel_fd, POLLIN, 0 }, { -1, POLLIN, 0 } };
		if (watch)
			pfd[1].fd = conn->evch->fd;
		const int ready = ::poll(pfd, 2, wait_ms);
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			return RPMA_PROVIDER_FAILED(errno, "poll on the completion channel");
		}
		if (pfd[0].revents)
			return 1;
		if (pfd[1].revents) {
			/*
			 * None there: another thread took it; keep watching. A
			 * full stash or a failing channel: stop for a while rather
			 * than spin, then look again (the application may have
			 * read its events meanwhile).
			 */
			if (conn_watch_events(conn) == watch_result::stuck) {
				watch = false;
				watch_again_at = monotonic_ms() + WATCH_AGAIN_MS;
			}
			continue;
		}
		if (until >= 0 && monotonic_ms() >= until) {
			if (down)
				(void)conn_drained(conn);
			return 0;
		}
	}
}

int rpma::wait_1x(int channel_fd, rpma_conn *conn)
{
	if (conn == nullptr)
		return WAIT_1X_EVENT;
	const int fl = fcntl(channel_fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		return WAIT_1X_EVENT; /* the read says at once whether an event is there */
	const int ret = wait_channel_or_peer(channel_fd, conn, -1);
	if (ret < 0)
		return RPMA_E_NO_COMPLETION; /* as librpma 1.x reported a failed wait */
	if (ret > 0)
		return WAIT_1X_EVENT;
	if (conn->flush->any_in_flight())
		return WAIT_1X_ORPHANS;
	RPMA_LOG_ERROR("the connection is down and nothing more completes");
	return RPMA_E_NO_COMPLETION;
}

/* Fills a send work request for the data-path calls below. */
static void send_wr(ibv_send_wr *wr, ibv_sge *sge, int nsge, ibv_wr_opcode opcode,
		    unsigned send_flags, const void *op_context)
{
	*wr = ibv_send_wr{};
	wr->wr_id = wr_id_of(op_context);
	wr->sg_list = nsge ? sge : nullptr;
	wr->num_sge = nsge;
	wr->opcode = opcode;
	wr->send_flags = send_flags;
}

/* RPMA_GPSPM_THREAD: the library's thread polls the CQ, nothing else may complete there */
static bool conn_takes_posts(const rpma_conn *conn)
{
	if (conn->gpspm != RPMA_GPSPM_THREAD)
		return true;
	RPMA_LOG_ERROR("a connection served by a GPSPM thread (RPMA_GPSPM_THREAD) carries "
		       "nothing else");
	return false;
}

/* GPSPM: the receive queues of both sides belong to the library */
static bool conn_takes_messages(const rpma_conn *conn)
{
	if (conn->gpspm == RPMA_GPSPM_DISABLED)
		return true;
	RPMA_LOG_ERROR("the receive queues of a GPSPM connection belong to the library: no "
		       "sends, receives or writes with immediate data");
	return false;
}

/*
 * The one-sided operations: rpma_read, rpma_write and rpma_write_with_imm.
 * `local` is the read's destination or the write's source.
 */
static int one_sided_prepare(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
			     const rpma_mr_remote *remote, size_t remote_offset, size_t len,
			     unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
			     const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	/* both ends are given, or neither (a zero-length operation) */
	RPMA_CHECK_ARG((local == nullptr) == (remote == nullptr));
	RPMA_CHECK_ARG(opcode != IBV_WR_RDMA_WRITE_WITH_IMM || conn_takes_messages(conn));

	int nsge = local_sge(local, local_offset, len, sge);
	if (nsge < 0)
		return nsge;
	send_wr(wr, sge, nsge, opcode, send_flags, op_context);
	int ret =
	    remote_range(remote, remote_offset, len, &wr->wr.rdma.remote_addr, &wr->wr.rdma.rkey);
	if (ret)
		return ret;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr->imm_data = htonl(imm);
	return 0;
}

static int one_sided(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
		     const rpma_mr_remote *remote, size_t remote_offset, size_t len, int flags,
		     ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	ibv_sge sge;
	ibv_send_wr wr;
	int ret = one_sided_prepare(conn, local, local_offset, remote, remote_offset, len,
				    send_flags, opcode, imm, op_context, &wr, &sge);
	if (ret)
		return ret;
	return conn->post_send(&wr);
}

static int send_prepare(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
			unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
			const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	RPMA_CHECK_ARG(conn_takes_messages(conn));
	int nsge = local_sge(src, offset, len, sge);
	if (nsge < 0)
		return nsge;
	send_wr(wr, sge, nsge, opcode, send_flags, op_context);
	if (opcode == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(imm);
	return 0;
}

static int send_common(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
		       int flags, ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));

	ibv_sge sge;
	ibv_send_wr wr;
	int ret =
	    send_prepare(conn, src, offset, len, send_flags, opcode, imm, op_context, &wr, &sge);
	if (ret)
		return ret;
	return conn->post_send(&wr);
}

/*
 * The value a C caller stored in an enum field, read as the int it is: an
 * enum object of C++ holding a value none of its enumerators can reach
 * must not be read as the enum (undefined behaviour), and the fields of a
 * batch come from C.
 */
template <typename Enum> static int stored_value(const Enum &field)
{
	static_assert(sizeof(Enum) == sizeof(int), "C stores an enum as an int");
	int value;
	memcpy(&value, &field, sizeof(value));
	return value;
}

/* One element of rpma_post_batch(), made ready to post. */
static int batch_prepare(rpma_conn *conn, const rpma_batch_op &op, prepared_wr *p)
{
	p->slot = nullptr;
	p->native.placement = 0;
	unsigned send_flags;
	RPMA_CHECK_ARG(send_flags_from(op.flags, &send_flags));
	const int kind = stored_value(op.op);
	switch (kind) {
	case RPMA_OP_READ:
		RPMA_CHECK_ARG(!op.with_imm);
		return one_sided_prepare(conn, op.local, op.local_offset, op.remote,
					 op.remote_offset, op.len, send_flags, IBV_WR_RDMA_READ, 0,
					 op.op_context, &p->wr, &p->sge);
	case RPMA_OP_WRITE:
		return one_sided_prepare(
		    conn, op.local, op.local_offset, op.remote, op.remote_offset, op.len,
		    send_flags, op.with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		    op.imm, op.op_context, &p->wr, &p->sge);
	case RPMA_OP_SEND:
		RPMA_CHECK_ARG(op.remote == nullptr);
		return send_prepare(conn, op.local, op.local_offset, op.len, send_flags,
				    op.with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, op.imm,
				    op.op_context, &p->wr, &p->sge);
	case RPMA_OP_FLUSH:
		RPMA_CHECK_ARG(op.remote != nullptr);
		RPMA_CHECK_ARG(op.local == nullptr && !op.with_imm);
		RPMA_CHECK_ARG(stored_value(op.flush_type) == RPMA_FLUSH_TYPE_PERSISTENT ||
			       stored_value(op.flush_type) == RPMA_FLUSH_TYPE_VISIBILITY);
		RPMA_CHECK_ARG(range_fits(op.remote->size, op.remote_offset, op.len));
		return flush_prepare(conn, op.remote, op.remote_offset, op.len, op.flush_type,
				     send_flags, op.op_context, p);
	default:
		RPMA_LOG_ERROR("operation %d cannot be batched: reads, writes, flushes and sends "
			       "can",
			       kind);
		return RPMA_E_INVAL;
	}
}

extern "C" {

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(fd != nullptr);
	*fd = conn->event_fd;
	return 0;
}

int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(event != nullptr);

	for (;;) {
		{
			std::lock_guard<std::mutex> guard(conn->events_lock);
			rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			/* what a wait for completions took first comes first */
			if (stash_pop(conn, &ev)) {
				if (ev == RPMA_CONN_UNDEFINED)
					return RPMA_E_UNKNOWN; /* logged when taken */
				*event = ev;
				return 0;
			}
			int ret = conn_take_cm_event(conn, &ev);
			if (ret == 0)
				*event = ev;
			else if (ret == RPMA_E_NO_EVENT)
				set_provider_error(ENODATA); /* as librpma 1.x kept it */
			if (ret != RPMA_E_AGAIN)
				return ret;
		}

		/* none yet: the fd handed out says whether to wait for one */
		const int fl = fcntl(conn->event_fd, F_GETFL);
		if (fl < 0)
			return RPMA_PROVIDER_FAILED(errno, "fcntl(F_GETFL) on the event fd");
		if (fl & O_NONBLOCK) {
			set_provider_error(EAGAIN);
			return RPMA_E_NO_EVENT;
		}
		pollfd pfd{ conn->event_fd, POLLIN, 0 };
		if (::poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return RPMA_PROVIDER_FAILED(errno, "poll on the event fd");
	}
}

int rpma_conn_is_up(struct rpma_conn *conn, bool *is_up)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(is_up != nullptr);
	if (!conn->down.load(std::memory_order_acquire))
		(void)conn_watch_events(conn);
	*is_up = !conn->down.load(std::memory_order_acquire);
	/* a poller that asks learns of the flushes that cannot complete any more */
	if (!*is_up)
		(void)conn_drained(conn);
	return 0;
}

int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(pdata != nullptr);
	pdata->ptr = conn->private_data_len ? const_cast<uint8_t *>(conn->private_data) : nullptr;
	pdata->len = conn->private_data_len;
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
	gpspm_engine *g = conn->flush->gpspm;
	if (g != nullptr && g->mode == RPMA_GPSPM_POLLED)
		g->max_in_flight.store(target_depth < g->depth ? target_depth : g->depth);
	else if (target_depth)
		RPMA_LOG_INFO("the target serves GPSPM, but this connection does not carry it "
			      "(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED))");
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
	if (verbs::destroy_id(conn->id)) {
		const int err = errno;
		/* librdmacm forbids destroying a channel that still has an id: leave it */
		RPMA_LOG_WARNING("the event channel of a connection whose id could not be "
				 "destroyed is left open");
		if (ret == 0)
			ret = RPMA_PROVIDER_FAILED(err, "rdma_destroy_id");
	} else {
		verbs::destroy_event_channel(conn->evch);
	}
	close(conn->event_fd);
	close(conn->stash_fd);

	delete conn;
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

	int ret = wait_1x(conn->queues.shared_channel->fd, conn);
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

int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context)
{
	return one_sided(conn, dst, dst_offset, src, src_offset, len, flags, IBV_WR_RDMA_READ, 0,
			 op_context);
}

int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context)
{
	return one_sided(conn, src, src_offset, dst, dst_offset, len, flags, IBV_WR_RDMA_WRITE, 0,
			 op_context);
}

int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context)
{
	return one_sided(conn, src, src_offset, dst, dst_offset, len, flags,
			 IBV_WR_RDMA_WRITE_WITH_IMM, imm, op_context);
}

int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(src != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT == 0);
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	uint64_t raddr;
	uint32_t rkey;
	int ret = remote_range(dst, dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, &raddr, &rkey);
	if (ret)
		return ret;

	/*
	 * A GPSPM flush is done when its answer comes, not when its send
	 * does: behind one still unanswered, the target's CPU makes the write,
	 * once it has persisted what came before.
	 */
	gpspm_engine *g = conn->flush->gpspm;
	if (g != nullptr && gpspm_atomic_write_waits(g))
		return gpspm_atomic_write(conn, dst, dst_offset, src, send_flags, op_context);

	/*
	 * The fence keeps the write behind the reads (flushes) posted before
	 * it, so that e.g. a commit flag lands only after the data it covers
	 * was flushed.
	 */
	send_flags |= IBV_SEND_FENCE;
	/*
	 * Natively only where both devices have ATOMIC WRITE: a target that
	 * cannot execute it would fail the request and the connection, where
	 * the inline write works.
	 */
	if ((conn->peer->native & verbs::NATIVE_ATOMIC_WRITE) &&
	    (remote_flush_methods(dst) & METHOD_NATIVE_ATOMIC_WRITE)) {
		ret = verbs::post_atomic_write(conn->id->qp, wr_id_of(op_context), send_flags, rkey,
					       raddr, src);
		if (ret)
			return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_wr_atomic_write");
		return 0;
	}

	/* an 8-byte aligned write placed by one inline packet is not torn */
	ibv_sge sge{};
	sge.addr = reinterpret_cast<uintptr_t>(src);
	sge.length = RPMA_ATOMIC_WRITE_ALIGNMENT;
	ibv_send_wr wr;
	send_wr(&wr, &sge, 1, IBV_WR_RDMA_WRITE, send_flags | IBV_SEND_INLINE, op_context);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return conn->post_send(&wr);
}

int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
	       enum rpma_flush_type type, int flags, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(type == RPMA_FLUSH_TYPE_PERSISTENT || type == RPMA_FLUSH_TYPE_VISIBILITY);
	RPMA_CHECK_ARG(range_fits(dst->size, dst_offset, len));
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	prepared_wr p;
	int ret = flush_prepare(conn, dst, dst_offset, len, type, send_flags, op_context, &p);
	if (ret)
		return ret;
	if (p.native.placement) {
		ret = verbs::post_send_ex(conn->id->qp, &p.wr, &p.native);
		if (ret)
			ret = RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_wr_flush");
	} else {
		ret = conn->post_send(&p.wr);
	}
	if (ret)
		flush_unprepare(conn, &p);
	return ret;
}

/*
 * Posts a prepared batch that holds a native flush: through the ibv_qp_ex
 * work-request API, which can say what a flush needs and ibv_post_send
 * cannot. All or nothing, one doorbell.
 */
static int post_batch_ex(rpma_conn *conn, prepared_wr *batch, int count, int *failed)
{
	verbs::native_flush_wr native[RPMA_BATCH_MAX];
	for (int i = 0; i < count; i++)
		native[i] = batch[i].native;
	int ret = verbs::post_send_ex(conn->id->qp, &batch[0].wr, native);
	if (ret == 0)
		return 0;
	for (int i = 0; i < count; i++)
		flush_unprepare(conn, &batch[i]);
	/* ibv_wr_complete() posts nothing when it fails: the batch failed as a whole */
	if (failed)
		*failed = 0;
	return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_wr_complete");
}

int rpma_post_batch(struct rpma_conn *conn, const struct rpma_batch_op *ops, int count, int *failed)
{
	if (failed)
		*failed = -1;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(ops != nullptr);
	RPMA_CHECK_ARG(count >= 1 && count <= RPMA_BATCH_MAX);
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	/* every element is checked and built before anything is posted */
	prepared_wr batch[RPMA_BATCH_MAX];
	bool native = false;
	for (int i = 0; i < count; i++) {
		int ret = batch_prepare(conn, ops[i], &batch[i]);
		if (ret) {
			/* GPSPM's flow control is no error: take completions, post again */
			if (ret != RPMA_E_AGAIN)
				RPMA_LOG_ERROR("batch element %d refused: nothing posted", i);
			for (int j = 0; j < i; j++)
				flush_unprepare(conn, &batch[j]);
			if (failed)
				*failed = i;
			return ret;
		}
		if (batch[i].native.placement)
			native = true;
		if (i)
			batch[i - 1].last()->next = &batch[i].wr;
	}
	if (native)
		return post_batch_ex(conn, batch, count, failed);

	/* one chain, one doorbell */
	ibv_send_wr *bad_wr = nullptr;
	int ret = verbs::post_send(conn->id->qp, &batch[0].wr, &bad_wr);
	if (ret == 0)
		return 0;
	int first_unposted = 0;
	for (int i = 0; i < count; i++) {
		/* an element whose fence was not posted did not go as a whole */
		if (&batch[i].wr == bad_wr || batch[i].last() == bad_wr) {
			first_unposted = i;
			break;
		}
	}
	for (int i = first_unposted; i < count; i++)
		flush_unprepare(conn, &batch[i]);
	if (failed)
		*failed = first_unposted;
	return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send");
}

int rpma_conn_get_flush_method(const struct rpma_conn *conn, const struct rpma_mr_remote *dst,
			       enum rpma_flush_type type, enum rpma_flush_method *method)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(type == RPMA_FLUSH_TYPE_PERSISTENT || type == RPMA_FLUSH_TYPE_VISIBILITY);
	RPMA_CHECK_ARG(method != nullptr);

	const char *why = nullptr;
	*method = choose_flush_method(capabilities_of(conn), dst, type, &why);
	return *method == RPMA_FLUSH_METHOD_NONE ? RPMA_E_NOSUPP : 0;
}

int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context)
{
	return send_common(conn, src, offset, len, flags, IBV_WR_SEND, 0, op_context);
}

int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context)
{
	return send_common(conn, src, offset, len, flags, IBV_WR_SEND_WITH_IMM, imm, op_context);
}

int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(conn_takes_messages(conn));
	ibv_recv_wr wr;
	ibv_sge sge;
	int ret = prepare_recv(dst, offset, len, op_context, &wr, &sge);
	if (ret)
		return ret;
	ibv_recv_wr *bad_wr;
	ret = verbs::post_recv(conn->id->qp, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_recv");
	return 0;
}

} /* extern "C" */
