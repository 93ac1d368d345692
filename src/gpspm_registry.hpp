/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_registry.hpp -- the local regions a peer's GPSPM requests may
 * persist: those whose application gave a persist function
 *
 * The peer holds the registry; the regions' module (mr.hpp) owns it: it
 * links a region in and out, and serves the requests against it.
 */

#ifndef RPMA_GPSPM_REGISTRY_HPP
#define RPMA_GPSPM_REGISTRY_HPP

#include <pthread.h>

struct rpma_mr_local;

namespace rpma
{

/*
 * A list through rpma_mr_local::gpspm_next. Serving a request reads it and
 * persists under the read lock, so that a region cannot be deregistered
 * (and its memory unmapped) while it is being persisted.
 */
struct gpspm_registry {
	pthread_rwlock_t lock;
	rpma_mr_local *head;
};

inline void gpspm_registry_init(gpspm_registry *r)
{
	pthread_rwlock_init(&r->lock, nullptr);
	r->head = nullptr;
}

inline void gpspm_registry_fini(gpspm_registry *r)
{
	pthread_rwlock_destroy(&r->lock);
}

} /* namespace rpma */

#endif /* RPMA_GPSPM_REGISTRY_HPP */
