/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_cfg.hpp -- what a target promises about persistence
 */

#ifndef RPMA_PEER_CFG_HPP
#define RPMA_PEER_CFG_HPP

#include <atomic>
#include <cstddef>

#include <librpma.h>

/* The librpma 1.x peer-config descriptor is one byte: the flag. */
constexpr size_t PEER_CFG_DESCRIPTOR_SIZE = 1;

struct rpma_peer_cfg {
	/* "RDMA writes land in the persistent domain" (e.g. DDIO off, eADR) */
	std::atomic<bool> direct_write_to_pmem{ false };
};

#endif /* RPMA_PEER_CFG_HPP */
