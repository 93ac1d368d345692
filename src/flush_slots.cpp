/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flush_slots.cpp -- the slots of signaled flushes, the ring of unsignaled
 * ones, the read sink, and the sweep of a connection that went down
 */

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <unistd.h>

#include "err.hpp"
#include "flush_slots.hpp"
#include "gpspm_wire.hpp"
#include "peer.hpp"
#include "runtime.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t capacity = 1;
	while (capacity < n && capacity < (1U << 31))
		capacity <<= 1;
	return capacity;
}

int conn_flush_new(rpma_peer *peer, uint32_t max_in_flight, conn_flush **flush_ptr)
{
	const uint32_t capacity = pow2_at_least(max_in_flight + 1);
	auto *flush = rpma::make<conn_flush>();
	auto *slots = rpma::make_array<flush_slot>(capacity);
	auto *unsignaled = rpma::make_array<unsignaled_flush>(capacity);
	const long page = sysconf(_SC_PAGESIZE);
	void *sink = nullptr;
	if (flush == nullptr || slots == nullptr || unsignaled == nullptr ||
	    posix_memalign(&sink, static_cast<size_t>(page), static_cast<size_t>(page))) {
		rpma::destroy(flush);
		rpma::destroy_array(slots);
		rpma::destroy_array(unsignaled);
		return RPMA_E_NOMEM;
	}

	/* an RDMA read lands locally (and on iWARP, is written remotely) */
	ibv_mr *sink_mr =
	    verbs::reg_mr(peer->pd, sink, FLUSH_SINK_SIZE,
			  IBV_ACCESS_LOCAL_WRITE | (peer->iwarp ? IBV_ACCESS_REMOTE_WRITE : 0));
	if (sink_mr == nullptr) {
		int ret = RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr");
		free(sink);
		rpma::destroy(flush);
		rpma::destroy_array(slots);
		rpma::destroy_array(unsignaled);
		return ret;
	}

	flush->slots = slots;
	flush->slots_mask = capacity - 1;
	flush->unsignaled = unsignaled;
	flush->sink = static_cast<uint8_t *>(sink);
	flush->sink_mr = sink_mr;
	flush->sink_lkey = sink_mr->lkey;
	*flush_ptr = flush;
	return 0;
}

int conn_flush_delete(conn_flush **flush_ptr)
{
	conn_flush *flush = *flush_ptr;
	if (flush == nullptr)
		return 0;
	int ret = 0;
	if (verbs::dereg_mr(flush->sink_mr))
		ret = RPMA_PROVIDER_FAILED(errno, "ibv_dereg_mr");
	free(flush->sink);
	rpma::destroy_array(flush->slots);
	rpma::destroy_array(flush->unsignaled);
	rpma::destroy(flush);
	*flush_ptr = nullptr;
	return ret;
}

flush_slot *conn_flush::claim_searching(const void *op_context, bool signaled, uint8_t kind)
{
	/*
	 * Slots are handed out round robin. A connection has at most as many
	 * signaled flushes in flight as its send queue and CQ hold, and there
	 * are more slots than that, so the next slot is free unless the
	 * application overfills its queues; the search after it is for that
	 * case only.
	 */
	const uint32_t capacity = slots_mask + 1;
	const uint32_t first = next_slot.fetch_add(1, std::memory_order_relaxed);
	for (uint32_t i = 0; i < capacity; i++) {
		flush_slot *slot = &slots[(first + i) & slots_mask];
		uint8_t expected = 0;
		if (slot->state.compare_exchange_strong(expected, FLUSH_SLOT_CLAIMING | kind,
							std::memory_order_acquire,
							std::memory_order_relaxed)) {
			set_op_context(slot, op_context);
			set_signaled(slot, signaled, kind);
			/* published with its fields: see FLUSH_SLOT_CLAIMING */
			slot->state.store(FLUSH_SLOT_IN_USE | kind, std::memory_order_release);
			return slot;
		}
	}
	return nullptr;
}

uint32_t conn_flush::sweep(completion_out *out, uint32_t qp_num)
{
	uint32_t gpspm_retired = 0;
	/*
	 * In post order: slots are claimed round robin, so the oldest claim
	 * is at the next slot to claim, once the table has wrapped.
	 */
	const uint32_t oldest = next_slot.load(std::memory_order_relaxed);
	for (uint32_t i = 0; i <= slots_mask && !out->full(); i++) {
		flush_slot *slot = &slots[(oldest + i) & slots_mask];
		uint8_t state = slot->state.load(std::memory_order_acquire);
		if (!(state & FLUSH_SLOT_IN_USE))
			continue;
		const void *op_context = slot->op_context;
		/* an answer held for its send's completion, which will not come now */
		const bool held = state & FLUSH_SLOT_ANSWER_HELD;
		const bool report =
		    (slot_signaled(slot, state) && !(state & FLUSH_SLOT_COMPLETED)) || held;
		/* a completion that comes after all finds the slot retired, and is dropped */
		if (!slot->state.compare_exchange_strong(state, FLUSH_SLOT_SWEPT,
							 std::memory_order_acq_rel))
			continue;
		if ((state & FLUSH_SLOT_GPSPM) && !(state & FLUSH_SLOT_COMPLETED))
			gpspm_retired++;
		if (report) {
			ibv_wc wc;
			const ibv_wc_status status =
			    held ? gpspm_answer_wc_status(slot->answer_status)
				 : IBV_WC_WR_FLUSH_ERR;
			const bool is_flush = library_slot_completion(
			    op_context, state & FLUSH_SLOT_WRITE, status, qp_num, &wc);
			out->put(wc, is_flush);
		}
	}
	return gpspm_retired;
}

bool conn_flush::any_in_flight() const
{
	for (uint32_t i = 0; i <= slots_mask; i++) {
		const uint8_t state = slots[i].state.load(std::memory_order_acquire);
		if ((state & FLUSH_SLOT_IN_USE) && !(state & FLUSH_SLOT_COMPLETED) &&
		    slot_signaled(&slots[i], state))
			return true;
	}
	return false;
}

} /* namespace rpma */
