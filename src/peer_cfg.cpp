/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.cpp -- the peer configuration and its descriptor
 */

#include <cstdint>

#include "conn_cfg.hpp"
#include "err.hpp"
#include "peer_cfg.hpp"
#include "runtime.hpp"
#include "wire.hpp"

namespace desc = rpma::wire::peer_cfg_desc;

extern "C" {

int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr)
{
	RPMA_CHECK_ARG(pcfg_ptr != nullptr);
	auto *pcfg = rpma::make<rpma_peer_cfg>();
	if (pcfg == nullptr)
		return RPMA_E_NOMEM;
	*pcfg_ptr = pcfg;
	return 0;
}

int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr)
{
	RPMA_CHECK_ARG(pcfg_ptr != nullptr);
	rpma::destroy(*pcfg_ptr);
	*pcfg_ptr = nullptr;
	return 0;
}

int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported)
{
	RPMA_CHECK_ARG(pcfg != nullptr);
	pcfg->direct_write_to_pmem.store(supported);
	return 0;
}

int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported)
{
	RPMA_CHECK_ARG(pcfg != nullptr);
	RPMA_CHECK_ARG(supported != nullptr);
	*supported = pcfg->direct_write_to_pmem.load();
	return 0;
}

int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc)
{
	RPMA_CHECK_ARG(pcfg != nullptr);
	RPMA_CHECK_ARG(desc != nullptr);
	*static_cast<uint8_t *>(desc) = pcfg->direct_write_to_pmem.load() ? 1 : 0;
	return 0;
}

int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size)
{
	RPMA_CHECK_ARG(pcfg != nullptr);
	RPMA_CHECK_ARG(desc_size != nullptr);
	*desc_size = PEER_CFG_DESCRIPTOR_SIZE;
	return 0;
}

int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
				  struct rpma_peer_cfg **pcfg_ptr)
{
	RPMA_CHECK_ARG(desc != nullptr);
	RPMA_CHECK_ARG(pcfg_ptr != nullptr);
	/* bytes after the first are a later version's business: ignored */
	RPMA_CHECK_ARG(desc_size >= PEER_CFG_DESCRIPTOR_SIZE);

	auto *p = static_cast<const uint8_t *>(desc);
	auto *pcfg = rpma::make<rpma_peer_cfg>();
	if (pcfg == nullptr)
		return RPMA_E_NOMEM;
	/* any non-zero byte is "true", as librpma read it */
	pcfg->direct_write_to_pmem.store(p[desc::DIRECT_WRITE] != 0);
	/* without a trailer of a version this library knows: a librpma 1.x peer */
	if (desc_size >= PEER_CFG_VERSIONED_DESCRIPTOR_SIZE &&
	    p[desc::MAGIC] == rpma::wire::TRAILER_MAGIC &&
	    p[desc::VERSION] == rpma::wire::TRAILER_VERSION &&
	    p[desc::CRC] == rpma::wire::crc8(p, desc::CRC) && (p[desc::FLAGS] & desc::FLAG_GPSPM))
		pcfg->gpspm_depth.store(p[desc::GPSPM_DEPTH]);
	*pcfg_ptr = pcfg;
	return 0;
}

int rpma_peer_cfg_get_versioned_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size)
{
	RPMA_CHECK_ARG(pcfg != nullptr);
	RPMA_CHECK_ARG(desc_size != nullptr);
	*desc_size = PEER_CFG_VERSIONED_DESCRIPTOR_SIZE;
	return 0;
}

int rpma_peer_cfg_get_versioned_descriptor(const struct rpma_peer_cfg *pcfg,
					   const struct rpma_conn_cfg *cfg, void *desc)
{
	RPMA_CHECK_ARG(pcfg != nullptr);
	RPMA_CHECK_ARG(desc != nullptr);

	/*
	 * What the connections made with cfg offer: a GPSPM connection keeps
	 * its receive queue's size in receives posted for requests.
	 */
	const rpma_conn_cfg &c = rpma_conn_cfg::or_defaults(cfg);
	const uint32_t depth = c.gpspm_depth();
	const bool gpspm = depth != 0;

	auto *p = static_cast<uint8_t *>(desc);
	p[desc::DIRECT_WRITE] = pcfg->direct_write_to_pmem.load() ? 1 : 0;
	p[desc::MAGIC] = rpma::wire::TRAILER_MAGIC;
	p[desc::VERSION] = rpma::wire::TRAILER_VERSION;
	p[desc::FLAGS] = gpspm ? desc::FLAG_GPSPM : 0;
	p[desc::GPSPM_DEPTH] = gpspm ? static_cast<uint8_t>(depth) : 0;
	p[desc::CRC] = rpma::wire::crc8(p, desc::CRC);
	return 0;
}

} /* extern "C" */
