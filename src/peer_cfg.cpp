/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.cpp -- the peer configuration and its descriptor
 */

#include <cstdint>
#include <new>

#include "err.hpp"
#include "peer_cfg.hpp"

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

	auto *pcfg = new (std::nothrow) rpma_peer_cfg;
	if (pcfg == nullptr)
		return RPMA_E_NOMEM;
	/* any non-zero byte is "true", as librpma read it */
	pcfg->direct_write_to_pmem.store(*static_cast<const uint8_t *>(desc) != 0);
	*pcfg_ptr = pcfg;
	return 0;
}

} /* extern "C" */
