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

#include <atomic>
#include <cstdint>
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
	/*
	 * The id the next region linked in gets: never 0, never used twice
	 * for the peer's life, so that a connection offered a region cannot
	 * reach another one registered later with the same rkey.
	 */
	uint64_t next_id;
};

inline void gpspm_registry_init(gpspm_registry *r)
{
	pthread_rwlock_init(&r->lock, nullptr);
	r->head = nullptr;
	r->next_id = 1;
}

/*
 * The regions of the registry one connection may reach by GPSPM: those
 * the application offered to it (rpma_conn_req_gpspm_offer), by id.
 * Written before the connection exists and read by whoever serves it:
 * the ids are stored before count is released.
 */
constexpr uint32_t GPSPM_SCOPE_MAX = 16;

struct gpspm_scope {
	uint64_t ids[GPSPM_SCOPE_MAX];
	std::atomic<uint32_t> count{ 0 };
};

/* Whether id is among the first n ids of s (n: a count read by the caller). */
inline bool gpspm_scope_holds(const gpspm_scope *s, uint32_t n, uint64_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (s->ids[i] == id)
			return true;
	return false;
}

/* Whether the scope lets its connection reach the region with id. */
inline bool gpspm_scope_allows(const gpspm_scope *s, uint64_t id)
{
	const uint32_t n = s->count.load(std::memory_order_acquire);
	/* nothing offered: every region of the peer, as before scopes existed */
	return n == 0 || gpspm_scope_holds(s, n, id);
}

inline void gpspm_registry_fini(gpspm_registry *r)
{
	pthread_rwlock_destroy(&r->lock);
}

} /* namespace rpma */

#endif /* RPMA_GPSPM_REGISTRY_HPP */
