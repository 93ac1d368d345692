/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.hpp -- what a target promises about persistence
 */

#ifndef RPMA_PEER_CFG_HPP
#define RPMA_PEER_CFG_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <librpma.h>

#include "wire.hpp"

/* The librpma 1.x peer-config descriptor (one byte), and the versioned one (wire.hpp) */
constexpr size_t PEER_CFG_DESCRIPTOR_SIZE = rpma::wire::peer_cfg_desc::SIZE;
constexpr size_t PEER_CFG_VERSIONED_DESCRIPTOR_SIZE = rpma::wire::peer_cfg_desc::VERSIONED_SIZE;

struct rpma_peer_cfg {
	/* "RDMA writes land in the persistent domain" (e.g. DDIO off, eADR) */
	std::atomic<bool> direct_write_to_pmem{ false };
	/*
	 * Decoded from a versioned descriptor: how many GPSPM flushes the
	 * target's connections take at a time; 0 when they serve none.
	 */
	std::atomic<uint32_t> gpspm_depth{ 0 };
};

#endif /* RPMA_PEER_CFG_HPP */
