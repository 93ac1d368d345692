/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_cfg.cpp -- connection configuration getters and setters
 */

#include <climits>

#include "conn_cfg.hpp"
#include "err.hpp"
#include "runtime.hpp"

const rpma_conn_cfg rpma_conn_cfg::defaults;

/* Queue sizes become ints in rdma-core (ibv_create_cq's cqe). */
static bool queue_size_fits(uint32_t size)
{
	return size <= INT_MAX;
}

extern "C" {

int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr)
{
	RPMA_CHECK_ARG(cfg_ptr != nullptr);
	auto *cfg = rpma::make<rpma_conn_cfg>();
	if (cfg == nullptr)
		return RPMA_E_NOMEM;
	*cfg_ptr = cfg;
	return 0;
}

int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr)
{
	RPMA_CHECK_ARG(cfg_ptr != nullptr);
	rpma::destroy(*cfg_ptr);
	*cfg_ptr = nullptr;
	return 0;
}

int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(timeout_ms >= 0);
	cfg->timeout_ms.store(timeout_ms);
	return 0;
}

int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(timeout_ms != nullptr);
	*timeout_ms = cfg->timeout_ms.load();
	return 0;
}

int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(queue_size_fits(cq_size));
	cfg->cq_size.store(cq_size);
	return 0;
}

int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(cq_size != nullptr);
	*cq_size = cfg->cq_size.load();
	return 0;
}

int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(queue_size_fits(rcq_size));
	cfg->rcq_size.store(rcq_size);
	return 0;
}

int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(rcq_size != nullptr);
	*rcq_size = cfg->rcq_size.load();
	return 0;
}

int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(queue_size_fits(sq_size));
	cfg->sq_size.store(sq_size);
	return 0;
}

int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(sq_size != nullptr);
	*sq_size = cfg->sq_size.load();
	return 0;
}

int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(queue_size_fits(rq_size));
	cfg->rq_size.store(rq_size);
	return 0;
}

int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(rq_size != nullptr);
	*rq_size = cfg->rq_size.load();
	return 0;
}

int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	cfg->shared_channel.store(shared);
	return 0;
}

int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(shared != nullptr);
	*shared = cfg->shared_channel.load();
	return 0;
}

int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	cfg->srq.store(srq);
	return 0;
}

int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(srq_ptr != nullptr);
	*srq_ptr = cfg->srq.load();
	return 0;
}

int rpma_conn_cfg_set_gpspm(struct rpma_conn_cfg *cfg, enum rpma_gpspm_mode mode)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(mode == RPMA_GPSPM_DISABLED || mode == RPMA_GPSPM_POLLED ||
		       mode == RPMA_GPSPM_THREAD);
	cfg->gpspm.store(mode);
	return 0;
}

int rpma_conn_cfg_get_gpspm(const struct rpma_conn_cfg *cfg, enum rpma_gpspm_mode *mode)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(mode != nullptr);
	*mode = cfg->gpspm.load();
	return 0;
}

int rpma_conn_cfg_set_gpspm_spin(struct rpma_conn_cfg *cfg, uint32_t spin_us)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(spin_us <= RPMA_GPSPM_SPIN_US_MAX);
	cfg->gpspm_spin_us.store(spin_us);
	return 0;
}

int rpma_conn_cfg_get_gpspm_spin(const struct rpma_conn_cfg *cfg, uint32_t *spin_us)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(spin_us != nullptr);
	*spin_us = cfg->gpspm_spin_us.load();
	return 0;
}

} /* extern "C" */
