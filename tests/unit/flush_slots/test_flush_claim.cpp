// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_flush_claim.cpp -- the flush slots of a connection (conn_flush::claim
 * and release): a claim takes a free slot wherever it is, and never one that
 * another claim took, even when two threads claim the last free slot at the
 * same moment
 *
 * A slot's address is the wr_id of the work request carrying its flush: a
 * slot handed out twice would make one completion complete two flushes.
 */

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>
#include <pthread.h>
#include <sched.h>
#include <thread>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include <librpma.h>

#include "fake_verbs.h"
#include "flush_slots.hpp"

using rpma::conn_flush;
using rpma::flush_slot;

/*
 * How long the race may run at most: under ThreadSanitizer the threads
 * overlap little, and the test gives up sooner, not to hold its suite up.
 */
#if defined(__SANITIZE_THREAD__)
#define GIVE_UP_MS 2000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GIVE_UP_MS 2000
#endif
#endif
#ifndef GIVE_UP_MS
#define GIVE_UP_MS 5000
#endif

namespace
{

rpma_peer *peer;

int setup(void **)
{
	fake_verbs_reset();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED), 0);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), 0);
	return 0;
}

int teardown(void **)
{
	assert_int_equal(rpma_peer_delete(&peer), 0);
	assert_int_equal(fake_verbs_live_objects(), 0);
	assert_int_equal(fake_verbs_misuse(), 0);
	return 0;
}

/* Claims every slot there is; the slots, in the order they were claimed. */
std::vector<flush_slot *> claim_all(conn_flush *flush, const int *ctx)
{
	std::vector<flush_slot *> taken;
	for (;;) {
		flush_slot *slot = flush->claim(&ctx[taken.size() % 4], true, 0);
		if (slot == nullptr)
			break;
		for (flush_slot *other : taken)
			assert_ptr_not_equal(slot, other);
		taken.push_back(slot);
		assert_true(taken.size() <= 1024);
	}
	return taken;
}

/*
 * Every slot but one is taken, and the free one is not where the round
 * robin looks first: the claim finds it, and gives it its flush.
 */
void finds_the_free_slot(void **)
{
	conn_flush *flush = nullptr;
	assert_int_equal(rpma::conn_flush_new(peer, 6, &flush), 0);
	static const int ctx[4] = {};
	std::vector<flush_slot *> taken = claim_all(flush, ctx);
	/* room for the signaled flushes in flight asked for */
	assert_true(taken.size() >= 6);

	/* free each slot in turn; the next claim, wherever it starts, takes it */
	static int other;
	for (size_t k = 0; k < taken.size(); k++) {
		flush->release(taken[k]);
		/* a GPSPM flush: only its slot keeps whether it is signaled */
		flush_slot *slot = flush->claim(&other, false, rpma::FLUSH_SLOT_GPSPM);
		assert_ptr_equal(slot, taken[k]);
		assert_ptr_equal(slot->op_context, &other);
		assert_false(slot->signaled);
		/* its wr_id names it */
		assert_ptr_equal(flush->slot_of(flush->wr_id_of(slot)), slot);
		assert_null(flush->claim(&other, true, 0));
	}
	for (flush_slot *slot : taken)
		flush->release(slot);
	assert_int_equal(rpma::conn_flush_delete(&flush), 0);
}

/*
 * Two threads claim the one free slot and give it back, over and over, as
 * fast as they can: the slot is never theirs at the same time. Each marks
 * itself the slot's owner while it holds it (and holds it a moment); an
 * owner found already there is a slot handed out twice.
 *
 * Only threads that run at the same moment can claim at the same moment:
 * the test runs until the two have overlapped long enough (each counts the
 * rounds in which it saw the other make progress), which takes a few
 * milliseconds on an idle machine, or until it gives up: a machine too busy,
 * or with one CPU, cannot tell, and the program then exits 77 (a skip),
 * saying so, rather than pass.
 */
/* two_threads_one_free_slot() saw too little overlap: the program skips */
bool could_not_tell = false;

void two_threads_one_free_slot(void **)
{
	conn_flush *flush = nullptr;
	assert_int_equal(rpma::conn_flush_new(peer, 0, &flush), 0);
	static const int ctx[4] = {};
	std::vector<flush_slot *> taken = claim_all(flush, ctx);
	assert_true(!taken.empty());
	flush_slot *free_slot = taken.back();
	flush->release(free_slot);

	constexpr unsigned long OVERLAPS_ENOUGH = 200000;
	static int thread_ctx[2];
	std::atomic<int> owner{ -1 };
	std::atomic<bool> stop{ false };
	std::atomic<unsigned> twice{ 0 };
	std::atomic<unsigned> elsewhere{ 0 };
	std::atomic<unsigned long> rounds[2] = { { 0 }, { 0 } };
	std::atomic<unsigned long> overlaps{ 0 };
	std::atomic<unsigned long> held{ 0 };

	/* nothing is asserted while the threads run */
	auto claimer = [&](int k) {
		unsigned long seen = rounds[1 - k].load(std::memory_order_relaxed);
		while (!stop.load(std::memory_order_relaxed)) {
			rounds[k].fetch_add(1, std::memory_order_relaxed);
			const unsigned long other = rounds[1 - k].load(std::memory_order_relaxed);
			if (other != seen) {
				seen = other;
				overlaps.fetch_add(1, std::memory_order_relaxed);
			}
			flush_slot *slot = flush->claim(&thread_ctx[k], true, 0);
			if (slot == nullptr)
				continue;
			if (slot != free_slot)
				elsewhere.fetch_add(1);
			if (owner.exchange(k) != -1)
				twice.fetch_add(1);
			for (int i = 0; i < 32; i++)
				std::atomic_signal_fence(std::memory_order_seq_cst);
			if (slot->op_context != &thread_ctx[k])
				twice.fetch_add(1);
			owner.store(-1);
			flush->release(slot);
			held.fetch_add(1, std::memory_order_relaxed);
		}
	};
	std::thread a(claimer, 0), b(claimer, 1);
	/* on two CPUs of their own, if there are two: a busy machine shares them less */
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) >= 2) {
		std::thread *threads[2] = { &a, &b };
		int cpu = -1;
		for (std::thread *t : threads) {
			while (!CPU_ISSET(++cpu, &allowed))
				;
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			/* only a hint: the test is right wherever they run */
			(void)pthread_setaffinity_np(t->native_handle(), sizeof(one), &one);
		}
	}
	/* a slot handed out twice shows within milliseconds of overlap */
	const auto start = std::chrono::steady_clock::now();
	const auto give_up = start + std::chrono::milliseconds(GIVE_UP_MS);
	while (twice.load() == 0 && overlaps.load() < OVERLAPS_ENOUGH &&
	       std::chrono::steady_clock::now() < give_up)
		std::this_thread::sleep_for(std::chrono::milliseconds(2));
	stop.store(true);
	a.join();
	b.join();
	const long long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
				 std::chrono::steady_clock::now() - start)
				 .count();

	for (flush_slot *slot : taken)
		if (slot != free_slot)
			flush->release(slot);
	assert_int_equal(rpma::conn_flush_delete(&flush), 0);
	if (twice.load())
		fail_msg("the one free slot was held by both threads at once (%u times in %lu "
			 "claims, %lld ms)",
			 twice.load(), held.load(), ms);
	assert_int_equal(elsewhere.load(), 0);
	assert_true(held.load() > 0);
	print_message("# %lu claims, %lu rounds overlapping, %lld ms\n", held.load(),
		      overlaps.load(), ms);
	if (overlaps.load() < OVERLAPS_ENOUGH) {
		print_message("# the threads overlapped too little to tell: skipped\n");
		could_not_tell = true;
	}
}

} /* namespace */

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(finds_the_free_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(two_threads_one_free_slot, setup, teardown),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	const int failed = cmocka_run_group_tests_name("flush_claim", tests, nullptr, nullptr);
	/* what it could not observe it does not pass: meson counts 77 as a skip */
	return failed == 0 && could_not_tell ? 77 : failed;
}
