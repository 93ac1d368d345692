/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loopback.h -- what the instruction bench asks of its loopback provider
 */

#ifndef RPMA_BENCH_LOOPBACK_H
#define RPMA_BENCH_LOOPBACK_H

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one device of the loopback provider. */
struct ibv_context *loopback_context(void);

/* Whether the device offers native RDMA FLUSH and ATOMIC WRITE (before a peer is made). */
void loopback_set_native(int flush_persistent, int atomic_write);

/*
 * How many times a CQ was re-armed: on rxe and most providers a system
 * call (ibv_req_notify_cq writes a command to the kernel).
 */
unsigned loopback_rearms(void);

#ifdef __cplusplus
}
#endif

#endif /* RPMA_BENCH_LOOPBACK_H */
