/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_req.cpp -- connection requests: resolving, accepting, connecting
 */

#include <cerrno>
#include <cstring>

#include <infiniband/ib.h>

#include "conn_cfg.hpp"
#include "conn_req.hpp"
#include "cq.hpp"
#include "err.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "runtime.hpp"
#include "srq.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

namespace
{

/*
 * Retries of a request the peer does not acknowledge, before its work
 * request completes with IBV_WC_RETRY_EXC_ERR and the connection breaks.
 * Not 7: soft RoCE (rdma_rxe) takes 7 for "retry forever", so a peer that
 * vanished without a word (killed machine, cable pulled) would never be
 * noticed by a program that only polls its CQ. Other devices retry 6
 * times instead of 7: 4.096 us * 2^ACK timeout later, nothing else.
 */
constexpr uint8_t CONN_RETRY_COUNT = 6;

/*
 * The ACK timeout's exponent (each try waits 4.096 us * 2^e) is the largest
 * that lets the first transmission and its CONN_RETRY_COUNT retries fit
 * in the connection's timeout (rpma_conn_cfg_set_timeout), within
 * [14, 20]: under 67 ms a loaded fabric would retransmit for nothing, and
 * over 4.3 s a dead peer would take half a minute to notice. The default
 * 1000 ms gives 15 (134 ms a try, 0.94 s in all).
 */
constexpr uint8_t ACK_TIMEOUT_MIN = 14;
constexpr uint8_t ACK_TIMEOUT_MAX = 20;

uint8_t ack_timeout_exponent(int timeout_ms)
{
	const uint64_t budget_ns = static_cast<uint64_t>(timeout_ms) * 1000000;
	uint8_t e = ACK_TIMEOUT_MIN;
	while (e < ACK_TIMEOUT_MAX &&
	       (CONN_RETRY_COUNT + 1) * (UINT64_C(4096) << (e + 1)) <= budget_ns)
		e++;
	return e;
}

/*
 * Gives id's QP the ACK timeout of cfg's timeout. A kernel that does not
 * take it leaves its own default (from the route's packet life time): the
 * connection works, a dead peer is noticed later; said once per id.
 */
void apply_ack_timeout(rdma_cm_id *id, const rpma_conn_cfg *cfg)
{
	const uint8_t e = ack_timeout_exponent(rpma_conn_cfg::or_defaults(cfg).timeout_ms.load());
	if (verbs::set_ack_timeout(id, e))
		RPMA_LOG_WARNING("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT, %u) failed: %s "
				 "(errno %d); the kernel's default ACK timeout applies",
				 e, strerror(errno), errno);
}

/* The request's queues, made now from its configuration if they are not yet. */
int conn_req_make_queues(rpma_conn_req *req)
{
	if (req->queues_made)
		return 0;
	int ret = conn_queues_create(req->peer, req->id, &req->cfg, &req->queues);
	req->queues_made = ret == 0;
	return ret;
}

/* Releases what a request holds; rejects first when the client is waiting. */
int conn_req_destroy(rpma_conn_req *req, bool reject)
{
	int ret = 0;
	if (reject && verbs::reject(req->id, nullptr, 0))
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_reject");
	if (req->queues_made) {
		int queues_ret = conn_queues_destroy(req->id, &req->queues);
		if (ret == 0)
			ret = queues_ret;
	}
	if (verbs::destroy_id(req->id) && ret == 0)
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_destroy_id");
	rpma::destroy(req);
	return ret;
}

/* rdma_cm parameters shared by connect and accept */
rdma_conn_param conn_param_with(const rpma_conn_private_data *pdata)
{
	rdma_conn_param param{};
	if (pdata) {
		param.private_data = pdata->ptr;
		param.private_data_len = pdata->len;
	}
	/* as many outstanding reads as the devices allow: flushes are reads */
	param.responder_resources = RDMA_MAX_RESP_RES;
	param.initiator_depth = RDMA_MAX_INIT_DEPTH;
	param.flow_control = 1;
	param.retry_count = CONN_RETRY_COUNT;
	/* 7: the receiver not ready is waited for without end, as librpma 1.x did */
	param.rnr_retry_count = 7;
	return param;
}

/*
 * The length of a socket address of family, as the kernel fills it in for
 * an rdma_cm_id; 0 for a family the library does not know.
 */
size_t sockaddr_len(sa_family_t family)
{
	static_assert(sizeof(sockaddr_in) <= sizeof(sockaddr_storage) &&
			  sizeof(sockaddr_in6) <= sizeof(sockaddr_storage) &&
			  sizeof(sockaddr_ib) <= sizeof(sockaddr_storage),
		      "every address rdma_cm gives fits in sockaddr_storage");
	switch (family) {
	case AF_INET:
		return sizeof(sockaddr_in);
	case AF_INET6:
		return sizeof(sockaddr_in6);
	case AF_IB:
		return sizeof(sockaddr_ib);
	default:
		return 0;
	}
}

/*
 * Copies a socket address of rdma_cm's into *addr, the rest zeroed: the
 * whole address at its family's size (it lies in a union as large as a
 * sockaddr_storage), or the family alone for one of unknown layout.
 */
void copy_addr(const sockaddr_storage &from, sockaddr_storage *addr)
{
	std::memset(addr, 0, sizeof(*addr));
	std::memcpy(addr, &from, sockaddr_len(from.ss_family));
	addr->ss_family = from.ss_family;
}

} /* namespace */

int rpma::check_conn_cfg(const rpma_conn_cfg *cfg)
{
	const rpma_conn_cfg &c = rpma_conn_cfg::or_defaults(cfg);
	const rpma_srq *srq = c.srq.load();
	if (c.shared_channel.load() && srq != nullptr && srq->rcq != nullptr) {
		RPMA_LOG_ERROR("a shared completion channel cannot be used with a shared receive "
			       "queue that has its own receive CQ");
		return RPMA_E_INVAL;
	}
	return gpspm_check_cfg(c);
}

int rpma::conn_req_from_cm_event(rpma_peer *peer, rdma_cm_event *event, const rpma_conn_cfg *cfg,
				 rpma_conn_req **req_ptr)
{
	auto *req = rpma::make_zeroed<rpma_conn_req>();
	if (req == nullptr)
		return RPMA_E_NOMEM;

	/* the queues wait for the application's consent (conn_req_make_queues) */
	req->cfg.copy_from(rpma_conn_cfg::or_defaults(cfg));
	apply_ack_timeout(event->id, cfg);
	req->peer = peer;
	req->id = event->id;
	req->passive = true;
	/* the event and its bytes go back to librdmacm when acknowledged: copy */
	const uint8_t len = event->param.conn.private_data ? event->param.conn.private_data_len : 0;
	if (len)
		memcpy(req->private_data, event->param.conn.private_data, len);
	req->private_data_len = len;
	/* a REQ names the client's queue pair; an MPA request (iWARP) does not, and gives 0 */
	req->peer_qp_num = event->param.conn.qp_num;
	*req_ptr = req;
	return 0;
}

extern "C" {

int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		      const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr)
{
	RPMA_CHECK_ARG(peer != nullptr);
	RPMA_CHECK_ARG(addr != nullptr);
	RPMA_CHECK_ARG(port != nullptr);
	RPMA_CHECK_ARG(req_ptr != nullptr);
	int ret = check_conn_cfg(cfg);
	if (ret)
		return ret;

	const int timeout_ms = rpma_conn_cfg::or_defaults(cfg).timeout_ms.load();

	rdma_addrinfo hints{};
	hints.ai_port_space = RDMA_PS_TCP;
	rdma_addrinfo *info = nullptr;
	if (verbs::getaddrinfo(addr, port, &hints, &info))
		return RPMA_PROVIDER_FAILED(errno, "rdma_getaddrinfo");

	/* synchronous until connected: resolving returns when it is done */
	rdma_cm_id *id = nullptr;
	rpma_conn_req *req = nullptr;
	if (verbs::create_id(nullptr, &id, nullptr)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_create_id");
		goto free_info;
	}
	if (verbs::resolve_addr(id, info->ai_src_addr, info->ai_dst_addr, timeout_ms)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_resolve_addr");
		goto destroy_id;
	}
	if (verbs::resolve_route(id, timeout_ms)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_resolve_route");
		goto destroy_id;
	}
	apply_ack_timeout(id, cfg);

	req = rpma::make_zeroed<rpma_conn_req>();
	if (req == nullptr) {
		ret = RPMA_E_NOMEM;
		goto destroy_id;
	}
	req->cfg.copy_from(rpma_conn_cfg::or_defaults(cfg));
	req->peer = peer;
	req->id = id;
	req->passive = false;
	ret = conn_req_make_queues(req);
	if (ret) {
		rpma::destroy(req);
		goto destroy_id;
	}
	verbs::freeaddrinfo(info);
	*req_ptr = req;
	return 0;

destroy_id:
	(void)verbs::destroy_id(id);
free_info:
	verbs::freeaddrinfo(info);
	return ret;
}

int rpma_conn_req_delete(struct rpma_conn_req **req_ptr)
{
	RPMA_CHECK_ARG(req_ptr != nullptr);
	rpma_conn_req *req = *req_ptr;
	if (req == nullptr)
		return 0;
	*req_ptr = nullptr;
	return conn_req_destroy(req, req->passive);
}

int rpma_conn_req_gpspm_offer(struct rpma_conn_req *req, const struct rpma_mr_local *mr)
{
	RPMA_CHECK_ARG(req != nullptr);
	RPMA_CHECK_ARG(mr != nullptr);
	if (req->cfg.gpspm.load() == RPMA_GPSPM_DISABLED) {
		RPMA_LOG_ERROR("invalid argument: the request carries no GPSPM "
			       "(rpma_conn_cfg_set_gpspm)");
		return RPMA_E_INVAL;
	}
	if (mr->peer != req->peer) {
		RPMA_LOG_ERROR("invalid argument: the region belongs to another peer");
		return RPMA_E_INVAL;
	}
	const uint64_t id = gpspm_registry_id_of(&req->peer->gpspm_regions, mr);
	if (id == 0) {
		RPMA_LOG_ERROR("invalid argument: the region offers no GPSPM "
			       "(rpma_mr_set_persist_fn)");
		return RPMA_E_INVAL;
	}
	/* what is offered lives in the connection's GPSPM engine: the queues come first */
	int ret = conn_req_make_queues(req);
	if (ret)
		return ret;
	return gpspm_offer(req->queues.gpspm, id);
}

int rpma_conn_req_reject(struct rpma_conn_req **req_ptr, const struct rpma_conn_private_data *pdata)
{
	RPMA_CHECK_ARG(req_ptr != nullptr && *req_ptr != nullptr);
	rpma_conn_req *req = *req_ptr;
	/*
	 * Only the passive side has somebody to answer. The arguments are
	 * checked before the request is taken, so that a program that got
	 * them wrong can still connect or delete it.
	 */
	if (!req->passive) {
		RPMA_LOG_ERROR("invalid argument: an outgoing request has nobody to reject");
		return RPMA_E_INVAL;
	}
	if (pdata != nullptr && (pdata->ptr == nullptr || pdata->len == 0)) {
		RPMA_LOG_ERROR("invalid argument: empty private data");
		return RPMA_E_INVAL;
	}
	*req_ptr = nullptr;

	/*
	 * The answer travels in the CM's reject (a REJ on InfiniBand and
	 * RoCE, an MPA reply with the reject bit on iWARP), so the request's
	 * QP, if the application had one made, never leaves the INIT state
	 * it was created in: a peer that is refused never holds a queue pair
	 * that could reach a region.
	 */
	int ret = 0;
	if (verbs::reject(req->id, pdata ? pdata->ptr : nullptr, pdata ? pdata->len : 0))
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_reject");
	const int destroy_ret = conn_req_destroy(req, false);
	return ret ? ret : destroy_ret;
}

int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
			  const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr)
{
	RPMA_CHECK_ARG(req_ptr != nullptr && *req_ptr != nullptr);

	/*
	 * From here on the request is consumed, whatever happens, as librpma
	 * 1.x documents: a program written for it never deletes a request
	 * after a failed connect, so keeping it would leak it and leave the
	 * client waiting for an answer.
	 */
	rpma_conn_req *req = *req_ptr;
	*req_ptr = nullptr;
	if (conn_ptr == nullptr ||
	    (pdata != nullptr && (pdata->ptr == nullptr || pdata->len == 0))) {
		RPMA_LOG_ERROR("invalid argument: %s",
			       conn_ptr == nullptr ? "conn_ptr == NULL" : "empty private data");
		(void)conn_req_destroy(req, req->passive);
		return RPMA_E_INVAL;
	}

	/* a client's request gets its queues here, unless a receive or an offer made them */
	int ret = conn_req_make_queues(req);
	if (ret) {
		/* the caller hears why the queues failed; a failed reject is only logged */
		if (req->passive && verbs::reject(req->id, nullptr, 0))
			RPMA_PROVIDER_FAILED_IN_CLEANUP(errno, "rdma_reject");
		(void)conn_req_destroy(req, false);
		return ret;
	}

	/*
	 * The connection (and its own event channel) comes first, so that
	 * the ESTABLISHED event cannot go to a channel nobody reads.
	 */
	rpma_conn *conn = nullptr;
	ret = conn_new(req->peer, req->id, req->queues, req->private_data, req->private_data_len,
		       &conn);
	if (ret) {
		(void)conn_req_destroy(req, req->passive);
		return ret;
	}
	const bool passive = req->passive;
	rpma::destroy(req); /* its id and queues now belong to conn */

	rdma_conn_param param = conn_param_with(pdata);
	if (passive ? verbs::accept(conn->id, &param) : verbs::connect(conn->id, &param)) {
		ret = RPMA_PROVIDER_FAILED(errno, passive ? "rdma_accept" : "rdma_connect");
		/*
		 * A failed rdma_accept answers nothing: without a reject the
		 * client waits for its connection until its own timeout.
		 */
		if (passive && verbs::reject(conn->id, nullptr, 0))
			RPMA_PROVIDER_FAILED_IN_CLEANUP(errno, "rdma_reject");
		(void)rpma_conn_delete(&conn);
		return ret;
	}

	*conn_ptr = conn;
	return 0;
}

int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
		       size_t len, const void *op_context)
{
	RPMA_CHECK_ARG(req != nullptr);
	if (req->cfg.gpspm.load() != RPMA_GPSPM_DISABLED) {
		RPMA_LOG_ERROR("the receive queue of a GPSPM connection belongs to the library");
		return RPMA_E_INVAL;
	}
	/* librpma 1.x wanted a region here even for 0 bytes (rpma_recv does not) */
	RPMA_CHECK_ARG(dst != nullptr);
	ibv_recv_wr wr;
	ibv_sge sge;
	int ret = prepare_recv(dst, offset, len, op_context, &wr, &sge);
	if (ret)
		return ret;
	/* the client may send as soon as it is connected: the receive needs the queue pair now */
	ret = conn_req_make_queues(req);
	if (ret)
		return ret;
	ibv_recv_wr *bad_wr;
	ret = verbs::post_recv(req->id->qp, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_recv");
	return 0;
}

int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
				   struct rpma_conn_private_data *pdata)
{
	RPMA_CHECK_ARG(req != nullptr);
	RPMA_CHECK_ARG(pdata != nullptr);
	pdata->ptr = req->private_data_len ? const_cast<uint8_t *>(req->private_data) : nullptr;
	pdata->len = req->private_data_len;
	return 0;
}

int rpma_conn_req_get_peer_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr)
{
	RPMA_CHECK_ARG(req != nullptr);
	RPMA_CHECK_ARG(addr != nullptr);
	/*
	 * What rdma_get_peer_addr(req->id) points to, read in place (no call
	 * into rdma-core): the client's address on the passive side, the
	 * resolved destination on the active side.
	 */
	copy_addr(req->id->route.addr.dst_storage, addr);
	return 0;
}

int rpma_conn_req_get_local_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr)
{
	RPMA_CHECK_ARG(req != nullptr);
	RPMA_CHECK_ARG(addr != nullptr);
	/*
	 * What rdma_get_local_addr(req->id) points to: on the passive side the
	 * address the request came in at (the listener's own, or the one of
	 * the device that took it when the listener is bound to every
	 * address), on the active side the source rdma_cm chose when it
	 * resolved the route.
	 */
	copy_addr(req->id->route.addr.src_storage, addr);
	return 0;
}

int rpma_conn_req_get_qp_num(const struct rpma_conn_req *req, uint32_t *qp_num)
{
	RPMA_CHECK_ARG(req != nullptr);
	RPMA_CHECK_ARG(qp_num != nullptr);
	/* asking for the number makes no queues: a client's request gets them only by consent */
	if (!req->queues_made) {
		RPMA_LOG_ERROR(
		    "invalid argument: the request has no queue pair yet (a client's "
		    "request gets one at rpma_conn_req_recv or rpma_conn_req_gpspm_offer)");
		return RPMA_E_INVAL;
	}
	*qp_num = req->id->qp->qp_num;
	return 0;
}

int rpma_conn_req_get_peer_qp_num(const struct rpma_conn_req *req, uint32_t *qp_num)
{
	RPMA_CHECK_ARG(req != nullptr);
	RPMA_CHECK_ARG(qp_num != nullptr);
	if (!req->passive) {
		RPMA_LOG_ERROR("invalid argument: an outgoing request learns the peer's queue pair "
			       "only when connected");
		return RPMA_E_INVAL;
	}
	/* queue pair 0 is never a connection's: 0 means the request named none */
	if (req->peer_qp_num == 0) {
		RPMA_LOG_INFO("the client's request carries no queue pair number (iWARP's "
			      "connection manager does not give it)");
		return RPMA_E_NOSUPP;
	}
	*qp_num = req->peer_qp_num;
	return 0;
}

} /* extern "C" */
