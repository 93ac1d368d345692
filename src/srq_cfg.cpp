/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq_cfg.cpp -- shared receive queue configuration
 */

#include <climits>

#include "err.hpp"
#include "runtime.hpp"
#include "srq_cfg.hpp"

const rpma_srq_cfg rpma_srq_cfg::defaults;

extern "C" {

int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr)
{
	RPMA_CHECK_ARG(cfg_ptr != nullptr);
	auto *cfg = rpma::make<rpma_srq_cfg>();
	if (cfg == nullptr)
		return RPMA_E_NOMEM;
	*cfg_ptr = cfg;
	return 0;
}

int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr)
{
	RPMA_CHECK_ARG(cfg_ptr != nullptr);
	rpma::destroy(*cfg_ptr);
	*cfg_ptr = nullptr;
	return 0;
}

int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(rq_size <= INT_MAX);
	cfg->rq_size.store(rq_size);
	return 0;
}

int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(rq_size != nullptr);
	*rq_size = cfg->rq_size.load();
	return 0;
}

int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(rcq_size <= INT_MAX);
	cfg->rcq_size.store(rcq_size);
	return 0;
}

int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size)
{
	RPMA_CHECK_ARG(cfg != nullptr);
	RPMA_CHECK_ARG(rcq_size != nullptr);
	*rcq_size = cfg->rcq_size.load();
	return 0;
}

} /* extern "C" */
