/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_cfg.hpp -- the shape of a shared receive queue
 */

#ifndef RPMA_SRQ_CFG_HPP
#define RPMA_SRQ_CFG_HPP

#include <atomic>
#include <cstdint>

/* librpma 1.x's defaults: 20 receives, a receive CQ of 20 entries */
struct rpma_srq_cfg {
	std::atomic<uint32_t> rq_size{ 20 };
	std::atomic<uint32_t> rcq_size{ 20 }; /* 0: no receive CQ of its own */

	static const rpma_srq_cfg defaults;
};

#endif /* RPMA_SRQ_CFG_HPP */
