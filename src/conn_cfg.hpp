/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_cfg.hpp -- the shape of a connection's queues
 */

#ifndef RPMA_CONN_CFG_HPP
#define RPMA_CONN_CFG_HPP

#include <atomic>
#include <cstdint>

#include <librpma.h>

#include "gpspm_wire.hpp"

/*
 * Fields are atomic because librpma allowed one thread to tune a
 * configuration while another one creates connections from it.
 */
struct rpma_conn_cfg {
	std::atomic<int> timeout_ms{ RPMA_DEFAULT_TIMEOUT_MS };
	std::atomic<uint32_t> cq_size{ 10 };
	std::atomic<uint32_t> rcq_size{ 0 }; /* 0: receives complete on the main CQ */
	std::atomic<uint32_t> sq_size{ 10 };
	std::atomic<uint32_t> rq_size{ 10 };
	std::atomic<bool> shared_channel{ false };
	std::atomic<rpma_srq *> srq{ nullptr };
	std::atomic<rpma_gpspm_mode> gpspm{ RPMA_GPSPM_DISABLED };
	std::atomic<uint32_t> gpspm_spin_us{ RPMA_DEFAULT_GPSPM_SPIN_US };

	/* The configuration a NULL cfg stands for. */
	static const rpma_conn_cfg defaults;

	static const rpma_conn_cfg &or_defaults(const rpma_conn_cfg *cfg)
	{
		return cfg ? *cfg : defaults;
	}

	/*
	 * Takes o's values: a request keeps the configuration it was made
	 * with, whatever the application does to o (deleting it included)
	 * before the request's queues are made.
	 */
	void copy_from(const rpma_conn_cfg &o)
	{
		timeout_ms.store(o.timeout_ms.load());
		cq_size.store(o.cq_size.load());
		rcq_size.store(o.rcq_size.load());
		sq_size.store(o.sq_size.load());
		rq_size.store(o.rq_size.load());
		shared_channel.store(o.shared_channel.load());
		srq.store(o.srq.load());
		gpspm.store(o.gpspm.load());
		gpspm_spin_us.store(o.gpspm_spin_us.load());
	}

	/*
	 * How many GPSPM requests a connection made with this configuration
	 * takes at a time: its receive queue's size, at most
	 * GPSPM_DEPTH_MAX; 0 when it carries no GPSPM.
	 */
	uint32_t gpspm_depth() const
	{
		if (gpspm.load() == RPMA_GPSPM_DISABLED)
			return 0;
		const uint32_t rq = rq_size.load();
		return rq < rpma::GPSPM_DEPTH_MAX ? rq : rpma::GPSPM_DEPTH_MAX;
	}
};

#endif /* RPMA_CONN_CFG_HPP */
