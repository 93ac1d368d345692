/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/peer.hpp -- rpma::peer_cfg and rpma::peer; the versioned descriptor
 * of a peer_cfg for the connections of a conn_cfg is defined in conn.hpp,
 * after conn_cfg
 */

#ifndef RPMA_HPP_PEER
#define RPMA_HPP_PEER 1

#include <librpma.h>

#include "error.hpp"
#include "handle.hpp"
#include "span.hpp"

#include <cstddef>

namespace rpma
{

/* ---------------------------------------------------------------- peer_cfg */

class conn_cfg;

class peer_cfg : public detail::unique_handle<rpma_peer_cfg, &rpma_peer_cfg_delete>
{
public:
	using unique_handle::unique_handle;

	static result<peer_cfg> create() noexcept
	{
		return detail::fetch<peer_cfg>(&rpma_peer_cfg_new);
	}

	/* a peer's configuration as it sent it (untrusted bytes, copied) */
	static result<peer_cfg> from_descriptor(span<const std::byte> desc) noexcept
	{
		return detail::fetch<peer_cfg>(&rpma_peer_cfg_from_descriptor, desc.data(),
					       desc.size());
	}

	result<void> set_direct_write_to_pmem(bool supported) noexcept
	{
		return result<void>::from_code(
		    rpma_peer_cfg_set_direct_write_to_pmem(ptr_, supported));
	}
	result<bool> get_direct_write_to_pmem() const noexcept
	{
		return detail::fetch(&rpma_peer_cfg_get_direct_write_to_pmem, ptr_);
	}

	result<std::size_t> get_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_peer_cfg_get_descriptor_size, ptr_);
	}
	/* writes the descriptor at the start of out: its size, errc::inval if out is too small */
	result<std::size_t> get_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(ptr_, out, &rpma_peer_cfg_get_descriptor_size,
						&rpma_peer_cfg_get_descriptor);
	}

	/* extension: the descriptor followed by the GPSPM service of the connections */
	result<std::size_t> get_versioned_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_peer_cfg_get_versioned_descriptor_size, ptr_);
	}
	/*
	 * Writes the versioned descriptor at the start of out, announcing the
	 * GPSPM service of connections made with the default configuration
	 * (none): its size, errc::inval if out is too small.
	 */
	result<std::size_t> get_versioned_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(
		    ptr_, out, &rpma_peer_cfg_get_versioned_descriptor_size,
		    [](const rpma_peer_cfg *pcfg, void *desc) {
			    return rpma_peer_cfg_get_versioned_descriptor(pcfg, nullptr, desc);
		    });
	}
	/* ...of connections made with cfg (read by the call only) */
	result<std::size_t> get_versioned_descriptor(const conn_cfg &cfg,
						     span<std::byte> out) const noexcept;
};

/* -------------------------------------------------------------------- peer */

class peer : public detail::unique_handle<rpma_peer, &rpma_peer_delete>
{
public:
	using unique_handle::unique_handle;

	static result<peer> create(ibv_context *ibv_ctx) noexcept
	{
		return detail::fetch<peer>(&rpma_peer_new, ibv_ctx);
	}
};

} /* namespace rpma */

#endif /* RPMA_HPP_PEER */
