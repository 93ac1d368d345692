/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.cpp -- the peer configuration and its descriptor
 */

#include <cstdint>
#include <new>

#include "conn_cfg.hpp"
#include "err.hpp"
#include "gpspm.hpp"
#include "peer_cfg.hpp"
#include "wire.hpp"

extern "C" {

int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr)
{
	RPMA_CHECK_ARG(pcfg_ptr != nullptr);
	auto *pcfg = new (std::nothrow) rpma_peer_cfg;
	if (pcfg == nullptr)
		return RPMA_E_NOMEM;
	*pcfg_ptr = pcfg;
	return 0;
}

int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr)
{
	RPMA_CHECK_ARG(pcfg_ptr != nullptr);
	delete *pcfg_ptr;
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
	auto *pcfg = new (std::nothrow) rpma_peer_cfg;
	if (pcfg == nullptr)
		return RPMA_E_NOMEM;
	/* any non-zero byte is "true", as librpma read it */
	pcfg->direct_write_to_pmem.store(p[0] != 0);
	/* without a trailer of a version this library knows: a librpma 1.x peer */
	if (desc_size >= PEER_CFG_VERSIONED_DESCRIPTOR_SIZE && p[1] == rpma::wire::TRAILER_MAGIC &&
	    p[2] == rpma::wire::TRAILER_VERSION && p[5] == rpma::wire::crc8(p, 5) &&
	    (p[3] & PEER_CFG_GPSPM))
		pcfg->gpspm_depth.store(p[4]);
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
	const uint32_t depth = rpma::gpspm_depth_of(c);
	const bool gpspm = depth != 0;

	auto *p = static_cast<uint8_t *>(desc);
	p[0] = pcfg->direct_write_to_pmem.load() ? 1 : 0;
	p[1] = rpma::wire::TRAILER_MAGIC;
	p[2] = rpma::wire::TRAILER_VERSION;
	p[3] = gpspm ? PEER_CFG_GPSPM : 0;
	p[4] = gpspm ? static_cast<uint8_t>(depth) : 0;
	p[5] = rpma::wire::crc8(p, 5);
	return 0;
}

} /* extern "C" */
