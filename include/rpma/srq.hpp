/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/srq.hpp -- the shared receive queue: rpma::srq_cfg and rpma::srq
 */

#ifndef RPMA_HPP_SRQ
#define RPMA_HPP_SRQ 1

#include <librpma.h>

#include "cq.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "mr.hpp"
#include "peer.hpp"

#include <cstddef>
#include <cstdint>

namespace rpma
{

/* ----------------------------------------------------------------- srq_cfg */

class srq_cfg : public detail::unique_handle<rpma_srq_cfg, &rpma_srq_cfg_delete>
{
public:
	using unique_handle::unique_handle;

	static result<srq_cfg> create() noexcept
	{
		return detail::fetch<srq_cfg>(&rpma_srq_cfg_new);
	}

	result<void> set_rq_size(std::uint32_t rq_size) noexcept
	{
		return result<void>::from_code(rpma_srq_cfg_set_rq_size(ptr_, rq_size));
	}
	result<std::uint32_t> get_rq_size() const noexcept
	{
		return detail::fetch(&rpma_srq_cfg_get_rq_size, ptr_);
	}
	result<void> set_rcq_size(std::uint32_t rcq_size) noexcept
	{
		return result<void>::from_code(rpma_srq_cfg_set_rcq_size(ptr_, rcq_size));
	}
	result<std::uint32_t> get_rcq_size() const noexcept
	{
		return detail::fetch(&rpma_srq_cfg_get_rcq_size, ptr_);
	}
};

/* --------------------------------------------------------------------- srq */

/* A shared receive queue; its peer must outlive it, the connections that use it go first. */
class srq : public detail::unique_handle<rpma_srq, &rpma_srq_delete>
{
public:
	using unique_handle::unique_handle;

	/* the configuration is read by the call only */
	static result<srq> create(peer &p) noexcept
	{
		return detail::fetch<srq>(&rpma_srq_new, p.get(), nullptr);
	}
	static result<srq> create(peer &p, const srq_cfg &cfg) noexcept
	{
		return detail::fetch<srq>(&rpma_srq_new, p.get(), cfg.get());
	}
	static result<srq> create(const peer &&) = delete;
	static result<srq> create(const peer &&, const srq_cfg &) = delete;

	/* dst until the receive completes */
	result<void> recv(mr_local &dst, std::size_t offset, std::size_t len,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_srq_recv(ptr_, dst.get(), offset, len, op_context));
	}
	result<void> recv(const mr_local &&, std::size_t, std::size_t,
			  const void * = nullptr) = delete;

	/* the receive CQ (an empty view when the SRQ has none) */
	result<cq> get_rcq() const &noexcept { return detail::fetch<cq>(&rpma_srq_get_rcq, ptr_); }
	result<cq> get_rcq() const && = delete;
};

} /* namespace rpma */

#endif /* RPMA_HPP_SRQ */
