/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_extra.h -- rdma-core objects made by a test itself, outside the
 * library, through the fake's implementation of src/verbs/verbs.hpp
 */

#ifndef CONN_FAKE_EXTRA_H
#define CONN_FAKE_EXTRA_H

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A CQ of the fake device on channel, e.g. one the library does not know. */
struct ibv_cq *fx_extra_cq(struct ibv_comp_channel *channel);

/* Acknowledges n completion events taken on cq. */
void fx_extra_cq_ack(struct ibv_cq *cq, unsigned n);

/* Destroys a CQ made by fx_extra_cq(); returns what ibv_destroy_cq would. */
int fx_extra_cq_destroy(struct ibv_cq *cq);

/*
 * Destroy what a library destructor left behind when the fake made one of
 * its calls fail; they return what rdma-core would.
 */
int fx_extra_comp_channel_destroy(struct ibv_comp_channel *channel);
int fx_extra_srq_destroy(struct ibv_srq *srq);

#ifdef __cplusplus
}
#endif

#endif /* CONN_FAKE_EXTRA_H */
