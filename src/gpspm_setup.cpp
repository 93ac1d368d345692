/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_setup.cpp -- the GPSPM engine made and freed: what a connection's
 * configuration must allow, its buffers and their registration
 */

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "conn_cfg.hpp"
#include "err.hpp"
#include "gpspm.hpp"
#include "peer.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

int gpspm_check_cfg(const rpma_conn_cfg &cfg)
{
	if (cfg.gpspm.load() == RPMA_GPSPM_DISABLED)
		return 0;
	if (cfg.rcq_size.load() || cfg.srq.load()) {
		RPMA_LOG_ERROR("GPSPM takes the connection's receive queue: it cannot go with a "
			       "receive CQ or a shared receive queue");
		return RPMA_E_INVAL;
	}
	if (cfg.gpspm_depth() == 0) {
		RPMA_LOG_ERROR("GPSPM needs a receive queue: its size is 0");
		return RPMA_E_INVAL;
	}
	/* the thread sleeps on the channel: rpma_conn_wait() would take its events */
	if (cfg.gpspm.load() == RPMA_GPSPM_THREAD && cfg.shared_channel.load()) {
		RPMA_LOG_ERROR("a connection served by a GPSPM thread (RPMA_GPSPM_THREAD) cannot "
			       "share its completion channel with the application");
		return RPMA_E_INVAL;
	}
	return 0;
}

int gpspm_new(rpma_peer *peer, rpma_gpspm_mode mode, uint32_t depth, uint32_t hold_limit,
	      uint32_t max_held, uint32_t probe_after_ms, gpspm_engine **gpspm_ptr)
{
	const size_t size = static_cast<size_t>(depth + 3) * GPSPM_SLOT_SIZE;
	const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	auto *g = rpma::make<gpspm_engine>();
	auto *held = rpma::make_array<gpspm_engine::held_completion>(max_held);
	void *buffers = nullptr;
	/* pages of their own: nothing else shares a page the NIC writes */
	if (g == nullptr || held == nullptr ||
	    posix_memalign(&buffers, page, (size + page - 1) / page * page)) {
		rpma::destroy(g);
		rpma::destroy_array(held);
		return RPMA_E_NOMEM;
	}
	memset(buffers, 0, size);

	g->buffers_mr = verbs::reg_mr(peer->pd, buffers, size, IBV_ACCESS_LOCAL_WRITE);
	if (g->buffers_mr == nullptr) {
		int ret = RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr");
		free(buffers);
		rpma::destroy(g);
		rpma::destroy_array(held);
		return ret;
	}
	g->peer = peer;
	g->id = nullptr;
	g->qp = nullptr;
	g->mode = mode;
	g->depth = depth;
	g->buffers = static_cast<uint8_t *>(buffers);
	g->closing_wr_id =
	    static_cast<uint64_t>(reinterpret_cast<uintptr_t>(buffers) +
				  static_cast<uintptr_t>(depth + 2) * GPSPM_SLOT_SIZE);
	g->serving_fenced = false;
	g->refused = 0;
	g->requests_sent = 0;
	g->answers_in = 0;
	g->held = held;
	g->held_count = 0;
	g->held_capacity = max_held;
	g->hold_limit = hold_limit;
	g->posts_held = &g->own_posts_held;
	g->silent_since_ms = 0;
	g->silent_answers_in = 0;
	g->probe_after_ms = probe_after_ms;
	g->probe_posted = false;
	pthread_mutex_init(&g->take_lock, nullptr);
	*gpspm_ptr = g;
	return 0;
}

bool gpspm_agree(gpspm_engine *g, uint32_t target_depth)
{
	if (g->mode != RPMA_GPSPM_POLLED)
		return false;
	g->max_in_flight.store(target_depth < g->depth ? target_depth : g->depth);
	return true;
}

int gpspm_delete(gpspm_engine **gpspm_ptr)
{
	gpspm_engine *g = *gpspm_ptr;
	if (g == nullptr)
		return 0;
	int ret = 0;
	if (verbs::dereg_mr(g->buffers_mr))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_dereg_mr");
	free(g->buffers);
	rpma::destroy_array(g->held);
	pthread_mutex_destroy(&g->take_lock);
	rpma::destroy(g);
	*gpspm_ptr = nullptr;
	return ret;
}

} /* namespace rpma */
