/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/mr.hpp -- the memory regions: rpma::mr_local and rpma::mr_remote
 */

#ifndef RPMA_HPP_MR
#define RPMA_HPP_MR 1

#include <librpma.h>

#include "constants.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "peer.hpp"
#include "span.hpp"

#include <cstddef>
#include <cstdint>

namespace rpma
{

/* ---------------------------------------------------------------- mr_local */

/* A registered local memory region; the memory and the peer must outlive it. */
class mr_local : public detail::unique_handle<rpma_mr_local, &rpma_mr_dereg>
{
public:
	using unique_handle::unique_handle;

	static result<mr_local> reg(peer &p, void *ptr, std::size_t size, usage u) noexcept
	{
		return detail::fetch<mr_local>(&rpma_mr_reg, p.get(), ptr, size,
					       static_cast<int>(u));
	}
	static result<mr_local> reg(peer &p, span<std::byte> memory, usage u) noexcept
	{
		return reg(p, memory.data(), memory.size(), u);
	}
	static result<mr_local> reg(const peer &&, void *, std::size_t, usage) = delete;
	static result<mr_local> reg(const peer &&, span<std::byte>, usage) = delete;

	result<std::size_t> get_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_mr_get_descriptor_size, ptr_);
	}
	/* writes the descriptor at the start of out: its size, errc::inval if out is too small */
	result<std::size_t> get_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(ptr_, out, &rpma_mr_get_descriptor_size,
						&rpma_mr_get_descriptor);
	}

	/* extension: the descriptor followed by the flush methods the region offers */
	result<std::size_t> get_versioned_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_mr_get_versioned_descriptor_size, ptr_);
	}
	/* writes it at the start of out: its size, errc::inval if out is too small */
	result<std::size_t> get_versioned_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(ptr_, out, &rpma_mr_get_versioned_descriptor_size,
						&rpma_mr_get_versioned_descriptor);
	}

	/*
	 * Extension: offers GPSPM flushes of the region, persisted with persist
	 * (pmem2_get_persist_fn() of its mapping fits); nullptr withdraws the
	 * offer. persist runs in whichever thread serves a GPSPM connection.
	 */
	result<void> set_persist_fn(rpma_persist_fn *persist) noexcept
	{
		return result<void>::from_code(rpma_mr_set_persist_fn(ptr_, persist));
	}
	/* Extension: the same, persist given ctx too (the caller's state for the region). */
	result<void> set_persist_fn(rpma_persist_ctx_fn *persist, void *ctx) noexcept
	{
		return result<void>::from_code(rpma_mr_set_persist_ctx_fn(ptr_, persist, ctx));
	}

	result<void *> get_ptr() const noexcept { return detail::fetch(&rpma_mr_get_ptr, ptr_); }
	result<std::size_t> get_size() const noexcept
	{
		return detail::fetch(&rpma_mr_get_size, ptr_);
	}

	result<void> advise(std::size_t offset, std::size_t len, ibv_advise_mr_advice advice,
			    std::uint32_t flags = 0) noexcept
	{
		return result<void>::from_code(rpma_mr_advise(ptr_, offset, len, advice, flags));
	}
};

/* --------------------------------------------------------------- mr_remote */

class mr_remote : public detail::unique_handle<rpma_mr_remote, &rpma_mr_remote_delete>
{
public:
	using unique_handle::unique_handle;

	/* a peer's region as it sent it (untrusted bytes, copied) */
	static result<mr_remote> from_descriptor(span<const std::byte> desc) noexcept
	{
		return detail::fetch<mr_remote>(&rpma_mr_remote_from_descriptor, desc.data(),
						desc.size());
	}

	result<std::size_t> get_size() const noexcept
	{
		return detail::fetch(&rpma_mr_remote_get_size, ptr_);
	}
	/* the usage::flush_type_* bits the region was registered with */
	result<usage> get_flush_type() const noexcept
	{
		return detail::fetch<usage>(&rpma_mr_remote_get_flush_type, ptr_);
	}
};

} /* namespace rpma */

#endif /* RPMA_HPP_MR */
