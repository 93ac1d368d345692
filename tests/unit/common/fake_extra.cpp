// SPDX-License-Identifier: BSD-3-Clause
/*
 * fake_extra.cpp -- rdma-core objects made by a test (see fake_extra.h)
 */

#include "fake_extra.h"

#include "fake_verbs.h"
#include "verbs/verbs.hpp"

extern "C" {

struct ibv_cq *fx_extra_cq(struct ibv_comp_channel *channel)
{
	return rpma::verbs::create_cq(fake_verbs_context(), 1, nullptr, channel);
}

void fx_extra_cq_ack(struct ibv_cq *cq, unsigned n)
{
	rpma::verbs::ack_cq_events(cq, n);
}

int fx_extra_cq_destroy(struct ibv_cq *cq)
{
	return rpma::verbs::destroy_cq(cq);
}

int fx_extra_comp_channel_destroy(struct ibv_comp_channel *channel)
{
	return rpma::verbs::destroy_comp_channel(channel);
}

int fx_extra_srq_destroy(struct ibv_srq *srq)
{
	return rpma::verbs::destroy_srq(srq);
}

} /* extern "C" */
