/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.cpp -- connections: queues, events, completions channel, data path
 */

#include <cerrno>
#include <cstring>
#include <new>

#include "conn.hpp"
#include "conn_cfg.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "flush.hpp"
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
	rpma_srq *srq = c.srq.load();
	ibv_context *ctx = id->verbs ? id->verbs : peer->context;

	conn_queues q;
	int ret = 0;
	if (c.shared_channel.load()) {
		q.shared_channel = verbs::create_comp_channel(ctx);
		if (q.shared_channel == nullptr)
			return RPMA_PROVIDER_FAILED(errno, "ibv_create_comp_channel");
	}

	/* every signaled read is either in the send queue or in the CQ */
	ret = cq_new(ctx, static_cast<int>(cq_size), q.shared_channel, sq_size + cq_size, &q.cq);
	if (ret)
		goto destroy_channel;

	/* receives complete, in order of preference, on the SRQ's CQ, the RCQ, the CQ */
	if (rcq_size && !(srq && srq->rcq)) {
		ret = cq_new(ctx, static_cast<int>(rcq_size), q.shared_channel, 0, &q.rcq);
		if (ret)
			goto delete_cq;
	}

	{
		ibv_cq *recv_cq = srq && srq->rcq ? srq->rcq->cq : (q.rcq ? q.rcq->cq : q.cq->cq);
		ret = peer->create_qp(id, cfg, q.cq->cq, recv_cq, srq ? srq->srq : nullptr);
		if (ret)
			goto delete_rcq;
	}

	*queues = q;
	return 0;

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
	/* the QP goes first: it holds references to the CQs */
	verbs::destroy_qp(id);
	int ret = cq_delete(&queues->rcq);
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

	/* an RDMA read lands locally (and on iWARP, is written remotely) */
	conn->flush_sink_mr =
	    verbs::reg_mr(peer->pd, conn->flush_sink, sizeof(conn->flush_sink),
			  IBV_ACCESS_LOCAL_WRITE | (peer->iwarp ? IBV_ACCESS_REMOTE_WRITE : 0));
	if (conn->flush_sink_mr == nullptr) {
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr");
		goto destroy_evch;
	}

	/*
	 * The id moves last: until then it stays on its own channel, through
	 * which the caller rejects the client when this fails. Moving it back
	 * could fail and leave it on a destroyed channel.
	 */
	if (verbs::migrate_id(id, conn->evch)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_migrate_id");
		goto dereg_mr;
	}

	conn->peer = peer;
	conn->id = id;
	conn->queues = queues;
	conn->private_data_len = 0;
	conn->set_private_data(private_data, private_data_len);
	*conn_ptr = conn;
	return 0;

dereg_mr:
	if (verbs::dereg_mr(conn->flush_sink_mr))
		RPMA_PROVIDER_FAILED_IN_CLEANUP(errno, "ibv_dereg_mr");
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

/*
 * The one-sided operations: rpma_read, rpma_write and rpma_write_with_imm.
 * `local` is the read's destination or the write's source.
 */
static int one_sided(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
		     const rpma_mr_remote *remote, size_t remote_offset, size_t len, int flags,
		     ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	/* both ends are given, or neither (a zero-length operation) */
	RPMA_CHECK_ARG((local == nullptr) == (remote == nullptr));

	ibv_sge sge;
	int nsge = local_sge(local, local_offset, len, &sge);
	if (nsge < 0)
		return nsge;
	ibv_send_wr wr;
	send_wr(&wr, &sge, nsge, opcode, send_flags, op_context);
	int ret =
	    remote_range(remote, remote_offset, len, &wr.wr.rdma.remote_addr, &wr.wr.rdma.rkey);
	if (ret)
		return ret;
	if (opcode == IBV_WR_RDMA_READ)
		return post_read(conn, &wr, false);
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(imm);
	return conn->post_send(&wr);
}

static int send_common(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
		       int flags, ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));

	ibv_sge sge;
	int nsge = local_sge(src, offset, len, &sge);
	if (nsge < 0)
		return nsge;
	ibv_send_wr wr;
	send_wr(&wr, &sge, nsge, opcode, send_flags, op_context);
	if (opcode == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(imm);
	return conn->post_send(&wr);
}

extern "C" {

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(fd != nullptr);
	*fd = conn->evch->fd;
	return 0;
}

int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(event != nullptr);

	rdma_cm_event *cm_event = nullptr;
	if (verbs::get_cm_event(conn->evch, &cm_event)) {
		const int err = errno;
		if (err == ENODATA || err == EAGAIN || err == EWOULDBLOCK) {
			set_provider_error(err);
			return RPMA_E_NO_EVENT;
		}
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

	if (verbs::ack_cm_event(cm_event))
		return RPMA_PROVIDER_FAILED(errno, "rdma_ack_cm_event");

	if (conn_event == RPMA_CONN_UNDEFINED) {
		RPMA_LOG_WARNING("unexpected connection event %d", static_cast<int>(type));
		return RPMA_E_UNKNOWN;
	}
	*event = conn_event;
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
	int ret = 0;
	if (verbs::dereg_mr(conn->flush_sink_mr))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_dereg_mr");
	int queues_ret = conn_queues_destroy(conn->id, &conn->queues);
	if (ret == 0)
		ret = queues_ret;
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

	ibv_cq *ev_cq = nullptr;
	int ret = get_cq_event_1x(conn->queues.shared_channel, &ev_cq);
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

	uint64_t raddr;
	uint32_t rkey;
	int ret = remote_range(dst, dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, &raddr, &rkey);
	if (ret)
		return ret;

	/*
	 * The fence keeps the write behind the reads (flushes) posted before
	 * it, so that e.g. a commit flag lands only after the data it covers
	 * was flushed.
	 */
	send_flags |= IBV_SEND_FENCE;
	if (conn->peer->native_atomic_write) {
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

	if (type == RPMA_FLUSH_TYPE_PERSISTENT) {
		if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
			RPMA_LOG_ERROR("the remote region was not registered for persistent flush");
			return RPMA_E_NOSUPP;
		}
		if (!conn->direct_write_to_pmem.load(std::memory_order_relaxed)) {
			RPMA_LOG_ERROR("the target did not declare direct write to PMem "
				       "(rpma_conn_apply_remote_peer_cfg)");
			return RPMA_E_NOSUPP;
		}
	} else if (!(dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)) {
		RPMA_LOG_ERROR("the remote region was not registered for visibility flush");
		return RPMA_E_NOSUPP;
	}

	return flush_read_after_write(conn, dst, dst_offset, len, send_flags, op_context);
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
