/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.hpp -- local memory regions and remote ones known by descriptor
 */

#ifndef RPMA_MR_HPP
#define RPMA_MR_HPP

#include <cstddef>
#include <cstdint>

#include <infiniband/verbs.h>

#include <librpma.h>

#include "wire.hpp"

struct rpma_peer;

/* librpma 1.x region descriptor, and the versioned one (wire.hpp) */
constexpr size_t MR_DESCRIPTOR_SIZE = rpma::wire::mr_desc::SIZE;
constexpr size_t MR_VERSIONED_DESCRIPTOR_SIZE = rpma::wire::mr_desc::VERSIONED_SIZE;

constexpr int MR_USAGE_ALL =
    RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV;

struct rpma_mr_local {
	ibv_mr *mr;
	int usage;
	rpma_peer *peer;
	/*
	 * The placements (rpma::verbs::NATIVE_FLUSH_* bits) that a peer's
	 * RDMA FLUSH may ask of the region: what its usage asked for, the
	 * device offers, and the registration was granted.
	 */
	uint8_t native_flush;

	/*
	 * GPSPM: how the target's CPU makes the region persistent; set, the
	 * region is on its peer's list of regions that GPSPM may flush.
	 */
	rpma_persist_fn *persist;
	/* or, with a context: one of the two is set at most */
	rpma_persist_ctx_fn *persist_ctx;
	void *persist_arg;
	rpma_mr_local *gpspm_prev;
	rpma_mr_local *gpspm_next;
	uint64_t gpspm_id; /* its id on the peer's list (gpspm_registry), 0 when not on it */

	/* Whether the application said how the region is made persistent. */
	bool offers_gpspm() const
	{
		return persist != nullptr || persist_ctx != nullptr;
	}
	/* Makes [ptr, ptr + len) of the region persistent, as the application said. */
	void persist_range(const void *ptr, size_t len) const
	{
		if (persist_ctx)
			persist_ctx(persist_arg, ptr, len);
		else
			persist(ptr, len);
	}

	uint64_t addr_at(size_t offset) const
	{
		return reinterpret_cast<uintptr_t>(mr->addr) + offset;
	}
	size_t size() const
	{
		return mr->length;
	}
};

struct rpma_mr_remote {
	uint64_t raddr; /* the registering process's virtual address */
	uint64_t size;
	uint32_t rkey;
	int usage;
	bool versioned; /* the descriptor carried the trailer */
	/*
	 * The rpma::flush_method_bits the target offers: its versioned
	 * descriptor's, or read-after-write for a flushable librpma 1.x region
	 */
	uint8_t methods;
	/*
	 * methods for a flush of each rpma_flush_type: none when the region
	 * was not registered for that type. What a flush ands with what the
	 * connection can use (rpma::pick_flush_method).
	 */
	uint8_t flush_offer[2];
};

namespace rpma
{

struct gpspm_registry;
struct gpspm_scope;

/* The ibv access flags a region needs for the given usage on that peer. */
int usage_to_access(const rpma_peer *peer, int usage);

/* Whether [offset, offset + len) lies within size, without overflow. */
inline bool range_fits(uint64_t size, size_t offset, size_t len)
{
	return offset <= size && len <= size - offset;
}

/*
 * Serves a GPSPM request of a connection whose scope is scope: persists
 * [raddr, raddr + len) of the region with rkey, if the scope lets the
 * connection reach it. Returns the rpma::gpspm_status that says why not
 * (logged), for the log: the peer is told only GPSPM_REFUSED.
 */
uint8_t gpspm_registry_persist(gpspm_registry *r, const gpspm_scope *scope, uint32_t rkey,
			       uint64_t raddr, uint64_t len);

/*
 * Serves a GPSPM atomic write: stores the 8 bytes of value at raddr of the
 * region with rkey, as one aligned store (not persisted: as an RDMA write,
 * it needs a flush). Returns the rpma::gpspm_status, as above.
 */
uint8_t gpspm_registry_atomic_write(gpspm_registry *r, const gpspm_scope *scope, uint32_t rkey,
				    uint64_t raddr, const uint8_t value[8]);

/* The id of mr on its peer's list of GPSPM regions; 0 when it offers no GPSPM. */
uint64_t gpspm_registry_id_of(gpspm_registry *r, const rpma_mr_local *mr);

} /* namespace rpma */

#endif /* RPMA_MR_HPP */
