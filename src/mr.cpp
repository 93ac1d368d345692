/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mr.cpp -- memory registration and region descriptors
 */

#include <cerrno>
#include <cstring>

#include "err.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"
#include "gpspm_wire.hpp"
#include "wire.hpp"

namespace mr_desc = rpma::wire::mr_desc;

namespace rpma
{

int usage_to_access(const rpma_peer *peer, int usage)
{
	int access = 0;

	if (usage & RPMA_MR_USAGE_READ_SRC)
		access |= IBV_ACCESS_REMOTE_READ;
	if (usage & RPMA_MR_USAGE_READ_DST) {
		access |= IBV_ACCESS_LOCAL_WRITE;
		/* iWARP carries a read response as a write into the sink */
		if (peer->iwarp)
			access |= IBV_ACCESS_REMOTE_WRITE;
	}
	/* some providers (rxe) check local write on the source of a write */
	if (usage & RPMA_MR_USAGE_WRITE_SRC)
		access |= IBV_ACCESS_LOCAL_WRITE;
	if (usage & RPMA_MR_USAGE_WRITE_DST)
		access |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (usage & RPMA_MR_USAGE_RECV)
		access |= IBV_ACCESS_LOCAL_WRITE;
	/* a read-after-write flush reads from the flushed region */
	if (usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		access |= IBV_ACCESS_REMOTE_READ;
	return access;
}

static void put_descriptor(const rpma_mr_local *mr, uint8_t *p)
{
	wire::put_le64(p + mr_desc::ADDR, reinterpret_cast<uintptr_t>(mr->mr->addr));
	wire::put_le64(p + mr_desc::LENGTH, mr->mr->length);
	wire::put_le32(p + mr_desc::RKEY, mr->mr->rkey);
	p[mr_desc::USAGE] = static_cast<uint8_t>(mr->usage);
}

/* The flush methods a local region offers to its peers. */
static uint8_t local_flush_methods(const rpma_mr_local *mr)
{
	uint8_t methods = 0;
	/* usage_to_access() grants remote reads to every flushable region */
	if (mr->usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		methods |= METHOD_READ_AFTER_WRITE;
	if (mr->offers_gpspm())
		methods |= METHOD_GPSPM;
	if (mr->native_flush & verbs::NATIVE_FLUSH_GLOBAL)
		methods |= METHOD_NATIVE_VISIBILITY;
	/*
	 * A device may grant persistent flush to memory that is not
	 * persistent: the application says the region is, by giving the
	 * function that persists it, as read-after-write needs it to declare
	 * direct write to PMem and GPSPM needs that same function.
	 */
	if ((mr->native_flush & verbs::NATIVE_FLUSH_PERSISTENT) && mr->offers_gpspm())
		methods |= METHOD_NATIVE_PERSISTENT;
	/* ATOMIC WRITE needs what a write needs of the region, and the device */
	if ((mr->usage & RPMA_MR_USAGE_WRITE_DST) &&
	    (mr->peer->native & verbs::NATIVE_ATOMIC_WRITE))
		methods |= METHOD_NATIVE_ATOMIC_WRITE;
	return methods;
}

/*
 * The placements of a native flush that the usage asks for and the
 * peer's device offers: global visibility for a visibility flush,
 * persistence for a persistent one.
 */
static uint8_t native_flush_wanted(const rpma_peer *peer, int usage)
{
	uint8_t wanted = 0;
	if (usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY)
		wanted |= verbs::NATIVE_FLUSH_GLOBAL;
	if (usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
		wanted |= verbs::NATIVE_FLUSH_PERSISTENT;
	return wanted & peer->native;
}

/*
 * Registers [ptr, ptr + size) with access and the native flush access for
 * *placements, giving up what the device refuses: rxe grants
 * IBV_ACCESS_FLUSH_PERSISTENT only to memory its kernel knows to be
 * persistent (EINVAL for DRAM), so persistence goes first, then global
 * visibility. *placements ends as what was granted. NULL with errno when
 * even the registration without them failed.
 */
static ibv_mr *reg_with_native_flush(rpma_peer *peer, void *ptr, size_t size, int access,
				     uint8_t *placements)
{
	for (;;) {
		ibv_mr *mr = verbs::reg_mr(peer->pd, ptr, size,
					   access | verbs::native_flush_access(*placements));
		if (mr != nullptr || *placements == 0)
			return mr;
		const int err = errno;
		const uint8_t fewer = (*placements & verbs::NATIVE_FLUSH_PERSISTENT)
					  ? *placements & ~verbs::NATIVE_FLUSH_PERSISTENT
					  : 0;
		RPMA_LOG_INFO("ibv_reg_mr of %zu bytes for native %s flush refused (errno %d): "
			      "registering without it",
			      size,
			      (*placements & verbs::NATIVE_FLUSH_PERSISTENT) ? "persistent"
									     : "visibility",
			      err);
		*placements = fewer;
	}
}

} /* namespace rpma */

using namespace rpma;

static void gpspm_offer(gpspm_registry *r, rpma_mr_local *mr, rpma_persist_fn *persist,
			rpma_persist_ctx_fn *persist_ctx, void *ctx)
{
	pthread_rwlock_wrlock(&r->lock);
	mr->persist = persist;
	mr->persist_ctx = persist_ctx;
	mr->persist_arg = ctx;
	mr->gpspm_id = r->next_id++;
	mr->gpspm_prev = nullptr;
	mr->gpspm_next = r->head;
	if (r->head)
		r->head->gpspm_prev = mr;
	r->head = mr;
	pthread_rwlock_unlock(&r->lock);
}

static void gpspm_withdraw(gpspm_registry *r, rpma_mr_local *mr)
{
	/* waits for a persist of the region in progress */
	pthread_rwlock_wrlock(&r->lock);
	if (mr->gpspm_prev)
		mr->gpspm_prev->gpspm_next = mr->gpspm_next;
	else
		r->head = mr->gpspm_next;
	if (mr->gpspm_next)
		mr->gpspm_next->gpspm_prev = mr->gpspm_prev;
	mr->gpspm_prev = mr->gpspm_next = nullptr;
	mr->gpspm_id = 0;
	mr->persist = nullptr;
	mr->persist_ctx = nullptr;
	mr->persist_arg = nullptr;
	pthread_rwlock_unlock(&r->lock);
}

/* gpspm_region()'s refusals, logged: out of line, so that a lookup that finds saves no register */
[[gnu::cold, gnu::noinline]] static void gpspm_out_of_range(const ibv_mr *mr, uint64_t raddr,
							    uint64_t len, uint8_t *status)
{
	RPMA_LOG_ERROR("GPSPM request for %llu bytes at %#llx: outside the region of %zu bytes "
		       "at %#llx",
		       static_cast<unsigned long long>(len), static_cast<unsigned long long>(raddr),
		       mr->length,
		       static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(mr->addr)));
	*status = rpma::GPSPM_OUT_OF_RANGE;
}

[[gnu::cold, gnu::noinline]] static void gpspm_no_region(uint32_t rkey, uint8_t *status)
{
	RPMA_LOG_ERROR("GPSPM request for rkey %#x: no region with that key offers GPSPM", rkey);
	*status = rpma::GPSPM_NO_REGION;
}

[[gnu::cold, gnu::noinline]] static void gpspm_not_offered(uint32_t rkey, uint8_t *status)
{
	RPMA_LOG_ERROR("GPSPM request for rkey %#x: the region was not offered to this connection",
		       rkey);
	*status = rpma::GPSPM_NO_REGION;
}

/*
 * The region with rkey that offers GPSPM to a connection of scope,
 * [raddr, raddr + len) inside it; NULL with *status saying why not
 * (logged). The read lock must be held.
 */
[[gnu::always_inline]] static inline rpma_mr_local *gpspm_region(const gpspm_registry *r,
								 const gpspm_scope *scope,
								 uint32_t rkey, uint64_t raddr,
								 uint64_t len, uint8_t *status)
{
	for (rpma_mr_local *mr = r->head; mr != nullptr; mr = mr->gpspm_next) {
		const ibv_mr *ibv = mr->mr;
		if (ibv->rkey != rkey)
			continue;
		if (__builtin_expect(!gpspm_scope_allows(scope, mr->gpspm_id), 0)) {
			gpspm_not_offered(rkey, status);
			return nullptr;
		}
		const uint64_t base = reinterpret_cast<uintptr_t>(ibv->addr);
		if (__builtin_expect(!rpma::gpspm_range_inside(base, ibv->length, raddr, len), 0)) {
			gpspm_out_of_range(ibv, raddr, len, status);
			return nullptr;
		}
		return mr;
	}
	gpspm_no_region(rkey, status);
	return nullptr;
}

uint8_t rpma::gpspm_registry_persist(gpspm_registry *r, const gpspm_scope *scope, uint32_t rkey,
				     uint64_t raddr, uint64_t len)
{
	uint8_t status = rpma::GPSPM_OK;
	pthread_rwlock_rdlock(&r->lock);
	rpma_mr_local *mr = gpspm_region(r, scope, rkey, raddr, len, &status);
	if (mr != nullptr && len)
		mr->persist_range(reinterpret_cast<const void *>(static_cast<uintptr_t>(raddr)),
				  len);
	pthread_rwlock_unlock(&r->lock);
	return status;
}

uint8_t rpma::gpspm_registry_atomic_write(gpspm_registry *r, const gpspm_scope *scope,
					  uint32_t rkey, uint64_t raddr, const uint8_t value[8])
{
	uint8_t status = rpma::GPSPM_OK;
	pthread_rwlock_rdlock(&r->lock);
	rpma_mr_local *mr = gpspm_region(r, scope, rkey, raddr, sizeof(uint64_t), &status);
	if (mr != nullptr && !(mr->usage & RPMA_MR_USAGE_WRITE_DST)) {
		RPMA_LOG_ERROR("GPSPM atomic write into a region not registered for remote "
			       "writes (RPMA_MR_USAGE_WRITE_DST): refused");
		status = rpma::GPSPM_NOT_WRITABLE;
	} else if (mr != nullptr && raddr % sizeof(uint64_t)) {
		RPMA_LOG_ERROR("GPSPM atomic write at %#llx: not 8-byte aligned, refused",
			       static_cast<unsigned long long>(raddr));
		status = rpma::GPSPM_MISALIGNED;
	} else if (mr != nullptr) {
		/* one aligned store: a reader sees the old word or the new one */
		uint64_t word;
		memcpy(&word, value, sizeof(word));
		__atomic_store_n(reinterpret_cast<uint64_t *>(static_cast<uintptr_t>(raddr)), word,
				 __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&r->lock);
	return status;
}

uint64_t rpma::gpspm_registry_id_of(gpspm_registry *r, const rpma_mr_local *mr)
{
	pthread_rwlock_rdlock(&r->lock);
	const uint64_t id = mr->gpspm_id;
	pthread_rwlock_unlock(&r->lock);
	return id;
}

extern "C" {

int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr)
{
	RPMA_CHECK_ARG(peer != nullptr);
	RPMA_CHECK_ARG(ptr != nullptr);
	RPMA_CHECK_ARG(size != 0);
	RPMA_CHECK_ARG(mr_ptr != nullptr);
	RPMA_CHECK_ARG(usage != 0 && (usage & ~MR_USAGE_ALL) == 0);

	auto *mr = rpma::make<rpma_mr_local>();
	if (mr == nullptr)
		return RPMA_E_NOMEM;

	/*
	 * Read-after-write peers (librpma 1.x ones among them) need what
	 * usage_to_access() grants whether or not native flush is granted too.
	 */
	const int access = usage_to_access(peer, usage);
	uint8_t native_flush = native_flush_wanted(peer, usage);
	ibv_mr *ibv_mr = reg_with_native_flush(peer, ptr, size, access, &native_flush);
	if (ibv_mr == nullptr && errno == EOPNOTSUPP && peer->odp_capable) {
		/* memory that cannot be pinned (e.g. fsdax) can still be paged on demand */
		RPMA_LOG_INFO("ibv_reg_mr: EOPNOTSUPP, retrying with on-demand paging");
		ibv_mr = verbs::reg_mr(peer->pd, ptr, size, access | IBV_ACCESS_ON_DEMAND);
	}
	if (ibv_mr == nullptr) {
		int ret = RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr");
		rpma::destroy(mr);
		return ret;
	}

	mr->mr = ibv_mr;
	mr->usage = usage;
	mr->peer = peer;
	mr->native_flush = native_flush;
	mr->persist = nullptr;
	mr->persist_ctx = nullptr;
	mr->persist_arg = nullptr;
	mr->gpspm_prev = mr->gpspm_next = nullptr;
	mr->gpspm_id = 0;
	*mr_ptr = mr;
	return 0;
}

int rpma_mr_dereg(struct rpma_mr_local **mr_ptr)
{
	RPMA_CHECK_ARG(mr_ptr != nullptr);
	rpma_mr_local *mr = *mr_ptr;
	if (mr == nullptr)
		return 0;

	/* no GPSPM request may reach the region from now on */
	if (mr->offers_gpspm())
		gpspm_withdraw(&mr->peer->gpspm_regions, mr);

	/* released even when the device keeps the registration, as librpma 1.x did */
	int ret = 0;
	if (verbs::dereg_mr(mr->mr))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_dereg_mr");
	rpma::destroy(mr);
	*mr_ptr = nullptr;
	return ret;
}

int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(desc != nullptr);

	put_descriptor(mr, static_cast<uint8_t *>(desc));
	return 0;
}

int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(desc_size != nullptr);
	*desc_size = MR_DESCRIPTOR_SIZE;
	return 0;
}

int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
				   struct rpma_mr_remote **mr_ptr)
{
	RPMA_CHECK_ARG(desc != nullptr);
	RPMA_CHECK_ARG(mr_ptr != nullptr);
	/* the bytes come from the network: trust nothing but their count */
	if (desc_size < MR_DESCRIPTOR_SIZE) {
		RPMA_LOG_ERROR("region descriptor too short: %zu bytes, need %zu", desc_size,
			       MR_DESCRIPTOR_SIZE);
		return RPMA_E_INVAL;
	}

	auto *p = static_cast<const uint8_t *>(desc);
	const int usage = p[mr_desc::USAGE];
	if (usage == 0) {
		RPMA_LOG_ERROR("region descriptor without any usage");
		return RPMA_E_INVAL;
	}

	/*
	 * The versioned form carries a trailer; without one (or with one of a
	 * version this library does not know) the target is a librpma 1.x
	 * peer, or wants to be treated as one.
	 */
	const bool versioned = desc_size >= MR_VERSIONED_DESCRIPTOR_SIZE &&
			       p[mr_desc::MAGIC] == wire::TRAILER_MAGIC &&
			       p[mr_desc::VERSION] == wire::TRAILER_VERSION &&
			       p[mr_desc::CRC] == wire::crc8(p, mr_desc::CRC);

	auto *mr = rpma::make<rpma_mr_remote>();
	if (mr == nullptr)
		return RPMA_E_NOMEM;
	mr->raddr = wire::get_le64(p + mr_desc::ADDR);
	mr->size = wire::get_le64(p + mr_desc::LENGTH);
	mr->rkey = wire::get_le32(p + mr_desc::RKEY);
	mr->usage = usage;
	mr->versioned = versioned;
	/*
	 * Methods this library does not know are not used. librpma 1.x
	 * registered every flushable region for remote reads.
	 */
	const int flush_usage =
	    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	if (versioned)
		mr->methods = static_cast<uint8_t>(p[mr_desc::METHODS] & METHODS_KNOWN);
	else
		mr->methods = (usage & flush_usage) ? METHOD_READ_AFTER_WRITE : 0;
	mr->flush_offer[RPMA_FLUSH_TYPE_PERSISTENT] =
	    (usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ? mr->methods : 0;
	mr->flush_offer[RPMA_FLUSH_TYPE_VISIBILITY] =
	    (usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) ? mr->methods : 0;
	*mr_ptr = mr;
	return 0;
}

int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(ptr != nullptr);
	*ptr = mr->mr->addr;
	return 0;
}

int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(size != nullptr);
	*size = mr->mr->length;
	return 0;
}

int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(size != nullptr);
	*size = mr->size;
	return 0;
}

int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(flush_type != nullptr);
	*flush_type =
	    mr->usage & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	return 0;
}

int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr)
{
	RPMA_CHECK_ARG(mr_ptr != nullptr);
	rpma::destroy(*mr_ptr);
	*mr_ptr = nullptr;
	return 0;
}

int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(len != 0 && len <= UINT32_MAX);
	RPMA_CHECK_ARG(range_fits(mr->size(), offset, len));

	ibv_sge sge{};
	sge.addr = mr->addr_at(offset);
	sge.length = static_cast<uint32_t>(len);
	sge.lkey = mr->mr->lkey;

	if (verbs::advise_mr(mr->mr->pd, static_cast<ibv_advise_mr_advice>(advice), flags, &sge,
			     1)) {
		const int err = errno;
		if (err == EOPNOTSUPP || err == ENOTSUP) {
			set_provider_error(err);
			RPMA_LOG_ERROR("ibv_advise_mr: not supported by the device");
			return RPMA_E_NOSUPP;
		}
		if (err == EFAULT || err == EINVAL) {
			set_provider_error(err);
			RPMA_LOG_ERROR("ibv_advise_mr: invalid advice, flags or range (errno %d)",
				       err);
			return RPMA_E_INVAL;
		}
		return RPMA_PROVIDER_FAILED(err, "ibv_advise_mr");
	}
	return 0;
}

int rpma_mr_get_versioned_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(desc_size != nullptr);
	*desc_size = MR_VERSIONED_DESCRIPTOR_SIZE;
	return 0;
}

int rpma_mr_get_versioned_descriptor(const struct rpma_mr_local *mr, void *desc)
{
	RPMA_CHECK_ARG(mr != nullptr);
	RPMA_CHECK_ARG(desc != nullptr);

	auto *p = static_cast<uint8_t *>(desc);
	put_descriptor(mr, p);
	p[mr_desc::MAGIC] = wire::TRAILER_MAGIC;
	p[mr_desc::VERSION] = wire::TRAILER_VERSION;
	p[mr_desc::METHODS] = local_flush_methods(mr);
	p[mr_desc::CRC] = wire::crc8(p, mr_desc::CRC);
	return 0;
}

/* Withdraws the region's offer, if any, then offers it with what is given. */
static int set_persist(rpma_mr_local *mr, rpma_persist_fn *persist,
		       rpma_persist_ctx_fn *persist_ctx, void *ctx)
{
	if ((persist || persist_ctx) && !(mr->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) {
		RPMA_LOG_ERROR("a region offers GPSPM only when registered with "
			       "RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT");
		return RPMA_E_INVAL;
	}
	if (mr->offers_gpspm())
		gpspm_withdraw(&mr->peer->gpspm_regions, mr);
	if (persist || persist_ctx)
		gpspm_offer(&mr->peer->gpspm_regions, mr, persist, persist_ctx, ctx);
	return 0;
}

int rpma_mr_set_persist_fn(struct rpma_mr_local *mr, rpma_persist_fn *persist)
{
	RPMA_CHECK_ARG(mr != nullptr);
	return set_persist(mr, persist, nullptr, nullptr);
}

int rpma_mr_set_persist_ctx_fn(struct rpma_mr_local *mr, rpma_persist_ctx_fn *persist, void *ctx)
{
	RPMA_CHECK_ARG(mr != nullptr);
	return set_persist(mr, nullptr, persist, ctx);
}

} /* extern "C" */
