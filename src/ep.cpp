/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ep.cpp -- listening endpoints and the requests they receive
 */

#include <cerrno>

#include "conn_req.hpp"
#include "err.hpp"
#include "peer.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

struct rpma_ep {
	rpma_peer *peer;
	rdma_cm_id *id;
	rdma_event_channel *evch;
};

extern "C" {

int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		   struct rpma_ep **ep_ptr)
{
	RPMA_CHECK_ARG(peer != nullptr);
	RPMA_CHECK_ARG(addr != nullptr);
	RPMA_CHECK_ARG(port != nullptr);
	RPMA_CHECK_ARG(ep_ptr != nullptr);

	auto *ep = rpma::make_zeroed<rpma_ep>();
	if (ep == nullptr)
		return RPMA_E_NOMEM;

	rdma_addrinfo hints{};
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	rdma_addrinfo *info = nullptr;
	int ret = 0;

	ep->evch = verbs::create_event_channel();
	if (ep->evch == nullptr) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_create_event_channel");
		goto free_ep;
	}
	if (verbs::create_id(ep->evch, &ep->id, nullptr)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_create_id");
		goto destroy_evch;
	}
	if (verbs::getaddrinfo(addr, port, &hints, &info)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_getaddrinfo");
		goto destroy_id;
	}
	if (verbs::bind_addr(ep->id, info->ai_src_addr)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_bind_addr");
		goto free_info;
	}
	if (verbs::listen(ep->id, 0)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_listen");
		goto free_info;
	}
	verbs::freeaddrinfo(info);

	ep->peer = peer;
	*ep_ptr = ep;
	return 0;

free_info:
	verbs::freeaddrinfo(info);
destroy_id:
	(void)verbs::destroy_id(ep->id);
destroy_evch:
	verbs::destroy_event_channel(ep->evch);
free_ep:
	rpma::destroy(ep);
	return ret;
}

int rpma_ep_shutdown(struct rpma_ep **ep_ptr)
{
	RPMA_CHECK_ARG(ep_ptr != nullptr);
	rpma_ep *ep = *ep_ptr;
	if (ep == nullptr)
		return 0;

	/*
	 * Released even when the id cannot be destroyed, as librpma 1.x did;
	 * librdmacm forbids destroying a channel that still has an id, so the
	 * channel is then left open.
	 */
	int ret = 0;
	if (verbs::destroy_id(ep->id)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_destroy_id");
		RPMA_LOG_WARNING("the event channel of an endpoint whose id could not be "
				 "destroyed is left open");
	} else {
		verbs::destroy_event_channel(ep->evch);
	}
	rpma::destroy(ep);
	*ep_ptr = nullptr;
	return ret;
}

int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd)
{
	RPMA_CHECK_ARG(ep != nullptr);
	RPMA_CHECK_ARG(fd != nullptr);
	*fd = ep->evch->fd;
	return 0;
}

int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr)
{
	RPMA_CHECK_ARG(ep != nullptr);
	RPMA_CHECK_ARG(req_ptr != nullptr);
	/* checked before taking the event, so that the client's request stays */
	int ret = check_conn_cfg(cfg);
	if (ret)
		return ret;

	rdma_cm_event *event = nullptr;
	if (verbs::get_cm_event(ep->evch, &event)) {
		const int err = errno;
		if (err == ENODATA || err == EAGAIN || err == EWOULDBLOCK) {
			set_provider_error(err);
			return RPMA_E_NO_EVENT;
		}
		return RPMA_PROVIDER_FAILED(err, "rdma_get_cm_event");
	}

	if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		RPMA_LOG_ERROR("expected a connection request, got event %d",
			       static_cast<int>(event->event));
		if (verbs::ack_cm_event(event))
			return RPMA_PROVIDER_FAILED(errno, "rdma_ack_cm_event");
		return RPMA_E_INVAL;
	}

	rdma_cm_id *id = event->id;
	ret = conn_req_from_cm_event(ep->peer, event, cfg, req_ptr);
	if (verbs::ack_cm_event(event) && ret == 0) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_ack_cm_event");
		(void)rpma_conn_req_delete(req_ptr);
		return ret;
	}
	if (ret) {
		/* the client must not wait for an answer that will never come */
		if (verbs::reject(id, nullptr, 0))
			RPMA_PROVIDER_FAILED_IN_CLEANUP(errno, "rdma_reject");
		if (verbs::destroy_id(id))
			RPMA_PROVIDER_FAILED_IN_CLEANUP(errno, "rdma_destroy_id");
	}
	return ret;
}

} /* extern "C" */
