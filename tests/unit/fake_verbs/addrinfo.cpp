// SPDX-License-Identifier: BSD-3-Clause
/*
 * addrinfo.cpp -- rdma_getaddrinfo and rdma_freeaddrinfo
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <netinet/in.h>

using namespace fake;

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

int getaddrinfo(const char *node, const char *service, const rdma_addrinfo *hints,
		rdma_addrinfo **res)
{
	state &s = st();
	guard g(s.lock);
	s.gai_node_set = node != nullptr;
	s.gai_node = node ? node : "";
	s.gai_service_set = service != nullptr;
	s.gai_service = service ? service : "";
	s.gai_flags = hints ? hints->ai_flags : -1;
	if (int err = enter(FAKE_GETADDRINFO); err != GO_ON)
		return fail_minus1(err);
	if (!res || (!node && !service))
		return fail_minus1(EINVAL);

	unsigned long port = 0;
	if (service) {
		char *end = nullptr;
		errno = 0;
		port = strtoul(service, &end, 10);
		if (!*service || *end || errno || port > 65535 || service[0] == '-' ||
		    service[0] == '+' || service[0] == ' ')
			return fail_minus1(EINVAL);
	}
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);

	auto *ai = new fake_addrinfo();
	sockaddr_storage *ss = passive ? &ai->src : &ai->dst;
	socklen_t len;
	in_addr a4;
	in6_addr a6;
	if (!node) {
		auto *sin = reinterpret_cast<sockaddr_in *>(ss);
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = passive ? htonl(INADDR_ANY) : htonl(INADDR_LOOPBACK);
		sin->sin_port = htons((uint16_t)port);
		len = sizeof(sockaddr_in);
	} else if (inet_pton(AF_INET, node, &a4) == 1) {
		auto *sin = reinterpret_cast<sockaddr_in *>(ss);
		sin->sin_family = AF_INET;
		sin->sin_addr = a4;
		sin->sin_port = htons((uint16_t)port);
		len = sizeof(sockaddr_in);
	} else if (inet_pton(AF_INET6, node, &a6) == 1) {
		auto *sin6 = reinterpret_cast<sockaddr_in6 *>(ss);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = a6;
		sin6->sin6_port = htons((uint16_t)port);
		len = sizeof(sockaddr_in6);
	} else {
		delete ai;
		return fail_minus1(EADDRNOTAVAIL);
	}
	ai->ai.ai_flags = hints ? hints->ai_flags : 0;
	ai->ai.ai_family = ss->ss_family;
	ai->ai.ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	ai->ai.ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	if (passive) {
		ai->ai.ai_src_addr = reinterpret_cast<sockaddr *>(&ai->src);
		ai->ai.ai_src_len = len;
	} else {
		ai->ai.ai_dst_addr = reinterpret_cast<sockaddr *>(&ai->dst);
		ai->ai.ai_dst_len = len;
	}
	add_live(ai, kind::addrinfo);
	*res = &ai->ai;
	return 0;
}

void freeaddrinfo(rdma_addrinfo *res)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_FREEADDRINFO);
	if (!res)
		return; /* as verbs.cpp: nothing to free */
	if (!is_live(res, kind::addrinfo, "rdma_freeaddrinfo"))
		return;
	drop_live(res);
	delete as<fake_addrinfo>(res);
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

const char *fake_verbs_last_getaddrinfo_node(void)
{
	guard g(st().lock);
	return st().gai_node_set ? st().gai_node.c_str() : nullptr;
}

const char *fake_verbs_last_getaddrinfo_service(void)
{
	guard g(st().lock);
	return st().gai_service_set ? st().gai_service.c_str() : nullptr;
}

int fake_verbs_last_getaddrinfo_flags(void)
{
	guard g(st().lock);
	return st().gai_flags;
}

} /* extern "C" */
