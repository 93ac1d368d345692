/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * srq.hpp -- a shared receive queue and its optional receive CQ
 */

#ifndef RPMA_SRQ_HPP
#define RPMA_SRQ_HPP

#include <infiniband/verbs.h>

struct rpma_cq;

struct rpma_srq {
	ibv_srq *srq;
	rpma_cq *rcq; /* NULL: receives complete on each connection's CQ */
};

#endif /* RPMA_SRQ_HPP */
