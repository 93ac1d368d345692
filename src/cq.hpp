/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cq.hpp -- a completion queue, its channel, and what its completions mean
 */

#ifndef RPMA_CQ_HPP
#define RPMA_CQ_HPP

#include <atomic>
#include <cstdint>

#include <infiniband/verbs.h>

#include <librpma.h>

struct rpma_cq {
	ibv_cq *cq;
	ibv_comp_channel *channel;
	bool shared_channel; /* channel belongs to the connection, not to this CQ */

	/*
	 * A read-after-write flush is an RDMA read; its completion looks like
	 * the completion of any read. To report it as RPMA_OP_FLUSH the send
	 * CQ remembers, in posting order, which signaled reads were flushes:
	 * an RC send queue completes its signaled work requests in that order.
	 * Posting threads take reads_lock across noting and posting, so that
	 * the ring's order is the send queue's order; pollers take slots with
	 * an atomic increment.
	 */
	uint8_t *read_kinds;
	uint32_t read_kinds_mask; /* capacity - 1, capacity a power of two */
	std::atomic<uint32_t> reads_posted{ 0 };
	std::atomic<uint32_t> reads_completed{ 0 };
	std::atomic_flag reads_lock = ATOMIC_FLAG_INIT;

	void lock_reads()
	{
		while (reads_lock.test_and_set(std::memory_order_acquire))
			; /* held only across one post: spin */
	}
	void unlock_reads()
	{
		reads_lock.clear(std::memory_order_release);
	}

	/* Records a signaled read (under reads_lock); false when the ring is full. */
	bool note_read(bool is_flush)
	{
		uint32_t head = reads_posted.load(std::memory_order_relaxed);
		if (head - reads_completed.load(std::memory_order_acquire) > read_kinds_mask)
			return false;
		read_kinds[head & read_kinds_mask] = is_flush;
		reads_posted.store(head + 1, std::memory_order_release);
		return true;
	}

	/* Forgets the read just noted (under reads_lock): its post failed. */
	void unnote_read()
	{
		reads_posted.store(reads_posted.load(std::memory_order_relaxed) - 1,
				   std::memory_order_release);
	}

	/* Consumes the oldest noted read; true when it was a flush. */
	bool take_read()
	{
		uint32_t tail = reads_completed.load(std::memory_order_relaxed);
		do {
			if (tail == reads_posted.load(std::memory_order_acquire))
				return false; /* not ours: e.g. polled through rpma_cq_get_wc */
		} while (!reads_completed.compare_exchange_weak(tail, tail + 1,
								std::memory_order_acq_rel));
		return read_kinds[tail & read_kinds_mask];
	}

	/* Polls up to n work completions, translating nothing. */
	int poll(int n, ibv_wc *wc);

	/* Acknowledges one completion event and re-arms the CQ. */
	int ack_and_rearm();

	/* ack_and_rearm() for an event that names this CQ; RPMA_E_UNKNOWN otherwise. */
	int ack_event_of(ibv_cq *ev_cq);
};

namespace rpma
{

/*
 * Creates a CQ of size entries. channel == NULL: the CQ gets a completion
 * channel of its own; otherwise it uses the given shared one.
 * max_signaled_reads bounds the outstanding signaled reads to track.
 */
int cq_new(ibv_context *ctx, int size, ibv_comp_channel *channel, uint32_t max_signaled_reads,
	   rpma_cq **cq_ptr);
int cq_delete(rpma_cq **cq_ptr);

/*
 * Takes one completion event from channel as librpma 1.x did: any failure
 * is RPMA_E_NO_COMPLETION (logged, unless the fd is merely non-blocking
 * and empty), with the errno kept as the provider error.
 */
int get_cq_event_1x(ibv_comp_channel *channel, ibv_cq **ev_cq);

/* The one translation from a work completion to an rpma_completion. */
void completion_from_wc(rpma_cq *cq, const ibv_wc &wc, rpma_completion *cmpl);

} /* namespace rpma */

#endif /* RPMA_CQ_HPP */
