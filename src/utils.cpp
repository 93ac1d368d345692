/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * utils.cpp -- finding the RDMA device behind an address
 */

#include <cerrno>
#include <cstring>

#include "err.hpp"
#include "peer.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

extern "C" {

int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type,
			       struct ibv_context **ibv_ctx_ptr)
{
	RPMA_CHECK_ARG(addr != nullptr);
	RPMA_CHECK_ARG(ibv_ctx_ptr != nullptr);
	RPMA_CHECK_ARG(type == RPMA_UTIL_IBV_CONTEXT_LOCAL || type == RPMA_UTIL_IBV_CONTEXT_REMOTE);

	const bool local = type == RPMA_UTIL_IBV_CONTEXT_LOCAL;
	rdma_addrinfo hints{};
	hints.ai_port_space = RDMA_PS_TCP;
	if (local)
		hints.ai_flags = RAI_PASSIVE;

	rdma_addrinfo *info = nullptr;
	if (verbs::getaddrinfo(addr, nullptr, &hints, &info))
		return RPMA_PROVIDER_FAILED(errno, "rdma_getaddrinfo");

	/* a NULL channel makes the id synchronous: resolving returns when done */
	rdma_cm_id *id = nullptr;
	int ret = 0;
	if (verbs::create_id(nullptr, &id, nullptr)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_create_id");
		goto free_info;
	}

	if (local) {
		if (verbs::bind_addr(id, info->ai_src_addr)) {
			ret = RPMA_PROVIDER_FAILED(errno, "rdma_bind_addr");
			goto destroy_id;
		}
	} else if (verbs::resolve_addr(id, info->ai_src_addr, info->ai_dst_addr,
				       RPMA_DEFAULT_TIMEOUT_MS)) {
		ret = RPMA_PROVIDER_FAILED(errno, "rdma_resolve_addr");
		goto destroy_id;
	}

	if (id->verbs == nullptr) {
		/* e.g. bound to an address of a NIC without RDMA */
		ret = RPMA_PROVIDER_FAILED(ENODEV, "finding the RDMA device of the address");
		goto destroy_id;
	}

	/* the context belongs to librdmacm and outlives the id */
	*ibv_ctx_ptr = id->verbs;

destroy_id:
	(void)verbs::destroy_id(id);
free_info:
	verbs::freeaddrinfo(info);
	return ret;
}

int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable)
{
	RPMA_CHECK_ARG(ibv_ctx != nullptr);
	RPMA_CHECK_ARG(is_odp_capable != nullptr);
	bool capable = false;
	int ret = query_odp(ibv_ctx, &capable);
	if (ret)
		return ret;
	*is_odp_capable = capable ? 1 : 0;
	return 0;
}

const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
{
	switch (conn_event) {
	case RPMA_CONN_UNDEFINED:
		return "Undefined connection event";
	case RPMA_CONN_ESTABLISHED:
		return "Connection established";
	case RPMA_CONN_CLOSED:
		return "Connection closed";
	case RPMA_CONN_LOST:
		return "Connection lost";
	case RPMA_CONN_REJECTED:
		return "Connection rejected";
	case RPMA_CONN_UNREACHABLE:
		return "Connection unreachable";
	default:
		/* librpma 1.x's text */
		return "Unsupported connection event";
	}
}

} /* extern "C" */
