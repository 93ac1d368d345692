// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_crash_model.cpp -- seeded random sequences of the library's
 * operations against the crash model (target_model.h), for every set-up
 * and platform, crashing at every step
 *
 * Two programs play the initiator:
 * - a mix: records appended to a log area and a commit word (the count of
 *   records covered by persistent flushes posted before it, posted with
 *   rpma_atomic_write, possibly before those flushes complete), writes,
 *   reads, persistent and visibility flushes of a scratch area, batches of
 *   writes and flushes, signaled or not, RPMA_E_AGAIN met by polling;
 * - examples/19-replicated-log's writer: its records, batches in two
 *   stages (writes and a flush; then the tail's atomic write and its
 *   flush), up to BATCHES_IN_FLIGHT batches in flight; the replica's
 *   recovery (log_check() of the example's common.h) is run on `durable`
 *   at every crash point.
 *
 * Checks at every crash point: (1) every persistent flush whose completion
 * (or a later operation's) the application has taken covers durable bytes
 * as new as the writes posted before it; (2) a durable commit word (the
 * log's tail) covers only durable records; (3) on DRAM, rpma_flush
 * (PERSISTENT) is refused and nothing is durable. On the fly: completions
 * in post order, each once, with the right op.
 *
 * RPMA_CRASH_SEED=<seed> runs that one seed for every set-up and platform
 * (RPMA_CRASH_ONLY=<setup>/<platform> narrows it); RPMA_CRASH_SEQS=<n>
 * sequences per set-up and platform; RPMA_CRASH_BREAK=persist|flush|ddio
 * breaks the simulated target (then the checker must report violations).
 */

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "target_model.h"

extern "C" {
#include "fixture.h"
#include "log_recovery.h"
}

using namespace crash;

namespace
{

const uint64_t BASE_SEED = 0x5eed0000;

const platform PLATFORMS[] = { platform::adr_ddio_on, platform::adr_ddio_off, platform::eadr,
			       platform::dram };

/* the method the rules of doc/persistence.md ("How the two sides agree") give */
rpma_flush_method expected_method(setup set, platform plat, rpma_flush_type type)
{
	if (type == RPMA_FLUSH_TYPE_VISIBILITY)
		return set == setup::native ? RPMA_FLUSH_METHOD_NATIVE
					    : RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	if (plat == platform::dram)
		return RPMA_FLUSH_METHOD_NONE;
	const bool placement = plat != platform::adr_ddio_on;
	switch (set) {
	case setup::legacy:
		return placement ? RPMA_FLUSH_METHOD_READ_AFTER_WRITE : RPMA_FLUSH_METHOD_NONE;
	case setup::gpspm:
		return RPMA_FLUSH_METHOD_GPSPM;
	case setup::full:
		return placement ? RPMA_FLUSH_METHOD_READ_AFTER_WRITE : RPMA_FLUSH_METHOD_GPSPM;
	case setup::native:
		return RPMA_FLUSH_METHOD_NATIVE;
	}
	return RPMA_FLUSH_METHOD_NONE;
}

struct totals {
	unsigned long sequences, steps, crash_points, ops, completions, claims, again, nosupp,
	    violations, recovered, findings;
	uint64_t finding_seed;
	std::string finding;
	rpma_flush_method method;
};

/* the initiator's program */
struct program {
	virtual ~program() = default;
	/* one action of the application; false when it has nothing to do now */
	virtual bool post() = 0;
	virtual bool done() = 0;
};

void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/*
 * The mix. Layout: [0, 8) the commit word; records of REC_SIZE bytes from
 * REC_BASE; a scratch area from SCRATCH.
 */
struct mix : program {
	static const size_t COMMIT = 0, REC_BASE = 64, REC_SIZE = 96, NREC = 32;
	/*
	 * Words for atomic writes of their own at the end: "an rpma_write or
	 * rpma_read of the same 8 bytes posted after [a GPSPM atomic write],
	 * before its completion, can reach the target's memory first"
	 * (doc/persistence.md, Ordering), so nothing else touches them, nor
	 * the commit word.
	 */
	static const size_t SCRATCH = 4096, SCRATCH_LEN = 3968, WORDS = 8064, SIZE = 8192;

	sim &s;
	unsigned budget;
	unsigned written = 0;	/* records posted */
	unsigned covered = 0;	/* records covered by persistent flushes posted */
	unsigned committed = 0; /* the last commit posted */
	uint64_t unique = 1;
	std::function<int()> pending; /* an operation refused with RPMA_E_AGAIN */
	/*
	 * the last atomic write to each word: "Wait for the atomic write's
	 * completion before touching its word again" (doc/persistence.md)
	 */
	std::unordered_map<size_t, size_t> last_atomic;

	bool word_free(size_t at)
	{
		auto it = last_atomic.find(at);
		return it == last_atomic.end() || s.ops[it->second].finished;
	}

	int atomic(size_t at, uint64_t value, bool sig)
	{
		uint8_t w[8];
		put_le64(w, value);
		int ret = s.atomic_write(at, w, sig);
		if (ret == 0)
			last_atomic[at] = s.ops.size() - 1;
		return ret;
	}

	mix(sim &sim_, unsigned ops) : s(sim_), budget(ops)
	{
		s.extra_check = [this](sim &x) { check_commit(x); };
	}

	std::vector<uint8_t> random_bytes(size_t len)
	{
		std::vector<uint8_t> v(len);
		for (auto &b : v)
			b = (uint8_t)s.rng.next();
		return v;
	}

	bool signaled(unsigned percent)
	{
		return s.rng.chance(percent);
	}

	/* (2): a durable commit word covers only durable records */
	void check_commit(sim &x)
	{
		uint64_t c = get_le64(x.durable() + COMMIT);
		if (c > written) {
			x.violation("(2) the durable commit word says %" PRIu64
				    " records, %u were written",
				    c, written);
			return;
		}
		for (size_t b = REC_BASE; b < REC_BASE + c * REC_SIZE; b++) {
			uint32_t need = x.posted_version(b);
			uint32_t v = x.durable_version(b);
			if (need == 0 || v < need || x.durable()[b] != x.byte_of(v, b)) {
				x.violation("(2) the durable commit word says %" PRIu64
					    " records, but record %zu is not durable (byte %zu)",
					    c, (b - REC_BASE) / REC_SIZE, b);
				return;
			}
		}
	}

	bool done() override
	{
		return budget == 0 && !pending;
	}

	/* runs op now, or keeps it for later when refused with RPMA_E_AGAIN */
	bool attempt(std::function<int()> op)
	{
		int ret = op();
		if (ret == RPMA_E_AGAIN)
			pending = op;
		else
			pending = nullptr;
		return ret != RPMA_E_AGAIN;
	}

	bool post() override
	{
		if (pending)
			return attempt(pending);
		if (budget == 0)
			return false;
		budget--;
		switch (s.rng.below(10)) {
		case 0:
		case 1: { /* a record */
			if (written == NREC)
				return post_scratch_write();
			auto data = random_bytes(REC_SIZE);
			size_t at = REC_BASE + written * REC_SIZE;
			bool sig = signaled(30);
			if (s.rng.chance(30)) {
				size_t half = 1 + s.rng.below(REC_SIZE - 1);
				s.write(at, data.data(), half, sig);
				s.write(at + half, data.data() + half, REC_SIZE - half, sig);
			} else {
				s.write(at, data.data(), REC_SIZE, sig);
			}
			written++;
			return true;
		}
		case 2: { /* the records' flush */
			if (written == covered)
				return post_scratch_flush();
			unsigned upto = written;
			size_t at = REC_BASE + covered * REC_SIZE;
			size_t len = (upto - covered) * REC_SIZE;
			bool sig = signaled(60);
			return attempt([this, at, len, sig, upto]() {
				int ret = s.flush(at, len, RPMA_FLUSH_TYPE_PERSISTENT, sig);
				if (ret == 0)
					covered = upto;
				return ret;
			});
		}
		case 3: { /* the commit, maybe before the flushes complete */
			if (covered == committed || !word_free(COMMIT))
				return post_atomic_scratch();
			unsigned value = covered;
			bool sig = signaled(50);
			return attempt([this, value, sig]() {
				int ret = atomic(COMMIT, value, sig);
				if (ret == 0)
					committed = value;
				return ret;
			});
		}
		case 4:
			return post_scratch_write();
		case 5:
			return post_scratch_flush();
		case 6: { /* a visibility flush anywhere */
			size_t at = REC_BASE + s.rng.below(WORDS - REC_BASE);
			size_t len = s.rng.below((unsigned)(WORDS - at) + 1);
			if (len > 512)
				len = 512;
			bool sig = signaled(60);
			return attempt(
			    [=]() { return s.flush(at, len, RPMA_FLUSH_TYPE_VISIBILITY, sig); });
		}
		case 7: { /* a read */
			size_t at = REC_BASE + s.rng.below(WORDS - REC_BASE - 64);
			size_t len = 1 + s.rng.below(64);
			s.read(at, len, signaled(80));
			return true;
		}
		case 8:
			return post_batch();
		default:
			return post_atomic_scratch();
		}
	}

	bool post_scratch_write()
	{
		size_t len = 1 + s.rng.below(300);
		size_t at = SCRATCH + s.rng.below((unsigned)(SCRATCH_LEN - len));
		auto data = random_bytes(len);
		s.write(at, data.data(), len, signaled(30));
		return true;
	}

	bool post_scratch_flush()
	{
		size_t len = s.rng.below(300);
		size_t at = SCRATCH + s.rng.below((unsigned)(SCRATCH_LEN - len));
		bool sig = signaled(60);
		return attempt([=]() { return s.flush(at, len, RPMA_FLUSH_TYPE_PERSISTENT, sig); });
	}

	bool post_atomic_scratch()
	{
		size_t at = WORDS + 8 * s.rng.below((unsigned)((SIZE - WORDS) / 8));
		if (!word_free(at))
			return post_scratch_write();
		uint64_t value = (unique++ << 16) | 0xa5;
		bool sig = signaled(50);
		return attempt([=]() { return atomic(at, value, sig); });
	}

	/* a record (or scratch write), its flush, maybe a read or a visibility flush */
	bool post_batch()
	{
		struct keep {
			std::vector<uint8_t> data;
		};
		auto k = std::make_shared<keep>();
		std::vector<sim::batch_elem> e;
		unsigned upto = covered;
		if (written < NREC) {
			k->data = random_bytes(REC_SIZE);
			size_t at = REC_BASE + written * REC_SIZE;
			e.push_back({ app_op::write, at, REC_SIZE, RPMA_FLUSH_TYPE_VISIBILITY,
				      signaled(30), nullptr });
			upto = written + 1;
			e.push_back({ app_op::flush, REC_BASE + covered * REC_SIZE,
				      (upto - covered) * REC_SIZE, RPMA_FLUSH_TYPE_PERSISTENT,
				      signaled(60), nullptr });
		} else {
			size_t len = 1 + s.rng.below(200);
			size_t at = SCRATCH + s.rng.below((unsigned)(SCRATCH_LEN - len));
			k->data = random_bytes(len);
			e.push_back({ app_op::write, at, len, RPMA_FLUSH_TYPE_VISIBILITY,
				      signaled(30), nullptr });
			e.push_back({ app_op::flush, at, len, RPMA_FLUSH_TYPE_PERSISTENT,
				      signaled(60), nullptr });
		}
		if (s.rng.chance(30))
			e.push_back({ app_op::read, SCRATCH + 8 * s.rng.below(100), 8,
				      RPMA_FLUSH_TYPE_VISIBILITY, signaled(80), nullptr });
		if (s.rng.chance(30))
			e.push_back({ app_op::flush, SCRATCH, 64, RPMA_FLUSH_TYPE_VISIBILITY,
				      signaled(50), nullptr });
		e[0].data = k->data.data();
		const bool record = written < NREC;
		return attempt([this, k, e, record, upto]() {
			std::vector<sim::batch_elem> now = e;
			now[0].data = k->data.data();
			int ret = s.batch(now.data(), (int)now.size());
			if (ret == RPMA_E_NOSUPP) {
				/* no persistent flush here: the write alone */
				now.erase(now.begin() + 1);
				if (now.size() > 1 && now.back().k == app_op::flush &&
				    s.method_visibility == RPMA_FLUSH_METHOD_NONE)
					now.pop_back();
				ret = s.batch(now.data(), (int)now.size());
				if (ret == 0 && record)
					written++;
				return ret;
			}
			if (ret == 0 && record) {
				written++;
				covered = upto;
			}
			return ret;
		});
	}
};

/*
 * examples/19-replicated-log's writer towards one replica (writer.c:
 * send_batch(), commit_batch(), take_completions()), its records appended
 * locally as append() does.
 */
struct replog : program {
	static const size_t CAP = 8192, SIZE = CRASH_LOG_HEADER_SIZE + CAP;
	static const unsigned WINDOW = 8;

	sim &s;
	unsigned records, appended = 0;
	std::vector<uint8_t> local; /* the writer's log */
	std::vector<uint64_t> ends; /* where each record ends */
	uint64_t tail = 0, posted = 0, durable = 0;
	unsigned batches_in_flight = 0;
	rpma_flush_type type;
	struct stage {
		uint64_t to;
		bool tail;
	};
	std::unordered_map<size_t, stage> stages;
	std::vector<uint64_t> commits; /* stage 2 refused with RPMA_E_AGAIN, to retry */
	unsigned long recovered = 0;

	replog(sim &sim_, unsigned n) : s(sim_), records(n), local(SIZE)
	{
		type = s.cfg.plat == platform::dram ? RPMA_FLUSH_TYPE_VISIBILITY
						    : RPMA_FLUSH_TYPE_PERSISTENT;
		memcpy(local.data(), s.durable(), SIZE);
		s.extra_check = [this](sim &x) { check_recovery(x); };
		s.on_completion = [this](size_t op) { completed(op); };
	}

	/* the replica restarts from `durable`: what it accepts must be durable */
	void check_recovery(sim &x)
	{
		uint64_t n = 0, bytes = 0;
		const char *problem = nullptr;
		crash_log_recover(x.durable(), SIZE, &n, &bytes, &problem);
		if (problem != nullptr) {
			x.violation("(2) the replica's recovery finds a damaged log after %" PRIu64
				    " records: %s",
				    n, problem);
			return;
		}
		recovered += n;
		for (size_t b = CRASH_LOG_HEADER_SIZE; b < CRASH_LOG_HEADER_SIZE + bytes; b++) {
			uint32_t need = x.posted_version(b);
			uint32_t v = x.durable_version(b);
			if (need == 0 || v < need || x.durable()[b] != x.byte_of(v, b) ||
			    x.durable()[b] != local[b]) {
				x.violation("(2) the replica's recovery accepts %" PRIu64
					    " records, but byte %zu was not made durable",
					    n, b);
				return;
			}
		}
	}

	bool done() override
	{
		return appended == records && durable == tail && commits.empty();
	}

	void append()
	{
		uint32_t len = 1 + s.rng.below(160);
		std::vector<uint8_t> payload(len);
		for (auto &b : payload)
			b = (uint8_t)s.rng.next();
		uint8_t *rec = local.data() + CRASH_LOG_HEADER_SIZE + tail;
		memset(rec, 0, crash_record_size(len));
		put_le64(rec, appended);
		for (int i = 0; i < 4; i++) {
			rec[8 + i] = (uint8_t)(len >> (8 * i));
			rec[12 + i] =
			    (uint8_t)(crash_record_crc(appended, len, payload.data()) >> (8 * i));
		}
		memcpy(rec + CRASH_LOG_RECORD_HEADER, payload.data(), len);
		tail += crash_record_size(len);
		appended++;
	}

	bool commit(uint64_t to)
	{
		uint8_t w[8];
		put_le64(w, to);
		if (s.atomic_write(CRASH_LOG_TAIL_OFFSET, w, false) == RPMA_E_AGAIN)
			return false;
		int ret;
		while ((ret = s.flush(CRASH_LOG_TAIL_OFFSET, 8, type, true)) == RPMA_E_AGAIN)
			s.poll(); /* writer.c would take this for a failure */
		if (ret == 0)
			stages[s.ops.size() - 1] = { to, true };
		return true;
	}

	void completed(size_t op)
	{
		auto it = stages.find(op);
		if (it == stages.end())
			return;
		stage st = it->second;
		stages.erase(it);
		if (!st.tail) {
			if (!commit(st.to))
				commits.push_back(st.to);
			return;
		}
		durable = st.to;
		batches_in_flight--;
	}

	bool post() override
	{
		if (!commits.empty()) {
			if (!commit(commits.front()))
				return false;
			commits.erase(commits.begin());
			return true;
		}
		/* append while the window allows, or send a batch */
		bool can_append = appended < records && appended - acknowledged() < WINDOW;
		bool can_send = batches_in_flight < CRASH_BATCHES_IN_FLIGHT && posted < tail;
		if (can_append && (!can_send || s.rng.chance(50))) {
			append();
			ends.push_back(tail);
			return true;
		}
		if (!can_send)
			return false;
		uint64_t from = posted, to = tail;
		size_t at = CRASH_LOG_HEADER_SIZE + from;
		size_t len = to - from;
		s.write(at, local.data() + at, len, false);
		int ret;
		while ((ret = s.flush(at, len, type, true)) == RPMA_E_AGAIN)
			s.poll(); /* writer.c would take this for a failure */
		if (ret == 0)
			stages[s.ops.size() - 1] = { to, false };
		batches_in_flight++;
		posted = to;
		return true;
	}

	unsigned acknowledged() const
	{
		unsigned n = 0;
		while (n < ends.size() && ends[n] <= durable)
			n++;
		return n;
	}
};

/* drives one sequence to its end: the program, the initiator's polls, the network */
void run(sim &s, program &p)
{
	unsigned stalled = 0;
	while (!(p.done() && s.quiet())) {
		if (s.n.steps > 100000) {
			s.violation("the sequence does not end");
			return;
		}
		unsigned r = s.rng.below(10);
		if (r < 3) {
			if (!p.done() && p.post()) {
				s.n.steps++;
				s.crash_point("initiator posted");
				stalled = 0;
			}
			continue;
		}
		if (r < 5) {
			s.poll();
			continue;
		}
		if (s.net_step()) {
			stalled = 0;
			continue;
		}
		if (s.poll() == 0 && (p.done() || !p.post())) {
			if (++stalled > 200) {
				s.violation("stuck: nothing can move (the library waits for "
					    "something that never comes)");
				return;
			}
		} else {
			stalled = 0;
		}
	}
}

unsigned sequences_per_combo()
{
	const char *e = getenv("RPMA_CRASH_SEQS");
	return e ? (unsigned)strtoul(e, nullptr, 0) : 30;
}

bool only_seed(uint64_t *seed)
{
	const char *e = getenv("RPMA_CRASH_SEED");
	if (e == nullptr || *e == '\0')
		return false;
	*seed = strtoull(e, nullptr, 0);
	return true;
}

bool selected(setup set, platform plat)
{
	const char *e = getenv("RPMA_CRASH_ONLY");
	if (e == nullptr || *e == '\0')
		return true;
	std::string want = e;
	std::string name = std::string(setup_name(set)) + "/" + platform_name(plat);
	return name.find(want) != std::string::npos || want == setup_name(set);
}

config make_config(setup set, platform plat, uint64_t seed, breakage brk, bool log,
		   const uint8_t *initial)
{
	config c;
	c.plat = plat;
	c.set = set;
	c.seed = seed;
	c.brk = brk;
	c.region_size = log ? replog::SIZE : mix::SIZE;
	c.initial = initial;
	c.dram_persistent_usage = (seed & 2) != 0;
	c.as_example = log;
	c.idepth = log ? CRASH_FLUSHES_IN_FLIGHT : 4;
	c.tdepth = log ? CRASH_FLUSHES_IN_FLIGHT : 3;
	return c;
}

void accumulate(totals &t, const sim &s)
{
	t.sequences++;
	t.steps += s.n.steps;
	t.crash_points += s.n.crash_points;
	t.ops += s.n.ops;
	t.completions += s.n.completions;
	t.claims += s.n.claims;
	t.again += s.n.again;
	t.nosupp += s.n.nosupp;
	t.violations += s.violations;
	t.method = s.method_persistent;
	if (s.findings && t.findings == 0) {
		t.finding_seed = s.cfg.seed;
		t.finding = s.first_finding;
	}
	t.findings += s.findings;
}

/* one sequence; its violations */
unsigned one(setup set, platform plat, uint64_t seed, breakage brk, bool log, totals &t)
{
	std::vector<uint8_t> initial;
	if (log) {
		initial.resize(replog::SIZE);
		crash_log_format(initial.data(), initial.size(), 0x1122334455667788ULL);
	}
	sim s(make_config(set, plat, seed, brk, log, log ? initial.data() : nullptr));
	rpma_flush_method want = expected_method(set, plat, RPMA_FLUSH_TYPE_PERSISTENT);
	if (s.method_persistent != want)
		s.violation("the library picked %s for a persistent flush, the rules say %s",
			    method_name(s.method_persistent), method_name(want));
	want = expected_method(set, plat, RPMA_FLUSH_TYPE_VISIBILITY);
	if (s.method_visibility != want)
		s.violation("the library picked %s for a visibility flush, the rules say %s",
			    method_name(s.method_visibility), method_name(want));
	if (log) {
		replog p(s, 24 + s.rng.below(16));
		run(s, p);
		t.recovered += p.recovered;
	} else {
		mix p(s, 40 + s.rng.below(30));
		run(s, p);
	}
	accumulate(t, s);
	if (s.violations && getenv("RPMA_CRASH_QUIET") == nullptr)
		printf("# %s %s %s seed %" PRIu64 " (RPMA_CRASH_SEED=%" PRIu64
		       "): %u violation(s), first: %s\n",
		       log ? "replicated-log" : "mix", setup_name(set), platform_name(plat), seed,
		       seed, s.violations, s.first_violation.c_str());
	return s.violations;
}

const setup MIX_SETUPS[] = { setup::legacy, setup::gpspm, setup::full, setup::native };
const setup LOG_SETUPS[] = { setup::gpspm, setup::full, setup::native };

totals mix_totals[4][4], log_totals[4][4];

void run_combo(setup set, platform plat, bool log, totals &t)
{
	if (!selected(set, plat))
		return;
	const breakage brk = breakage_from_env();
	uint64_t seed;
	if (only_seed(&seed)) {
		one(set, plat, seed, brk, log, t);
	} else {
		const uint64_t base =
		    BASE_SEED + (log ? 0x8000 : 0) + 0x100 * (uint64_t)((int)set * 4 + (int)plat);
		for (unsigned i = 0; i < sequences_per_combo(); i++)
			one(set, plat, base + i, brk, log, t);
	}
}

/* fails the test for the combinations that saw violations, once all ran */
void expect_no_violations(totals (*tt)[4], const char *what)
{
	unsigned long bad = 0;
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			if (tt[i][j].violations) {
				printf("# %s, %s, %s: %lu violation(s) (seeds above)\n", what,
				       setup_name((setup)i), platform_name((platform)j),
				       tt[i][j].violations);
				bad++;
			}
	if (bad && breakage_from_env() == breakage::none)
		fail_msg("%s: violations in %lu set-up/platform combination(s)", what, bad);
}

void mix_all(void **state)
{
	(void)state;
	for (setup set : MIX_SETUPS)
		for (platform plat : PLATFORMS)
			run_combo(set, plat, false, mix_totals[(int)set][(int)plat]);
	expect_no_violations(mix_totals, "mix");
}

void log_all(void **state)
{
	(void)state;
	for (setup set : LOG_SETUPS)
		for (platform plat : PLATFORMS)
			run_combo(set, plat, true, log_totals[(int)set][(int)plat]);
	expect_no_violations(log_totals, "replicated log");
}

/*
 * The checker's self-test: a target that breaks its platform's promise
 * (its persist function does nothing; its device's FLUSH does nothing; its
 * platform's placement is not persistent although the target says so)
 * must be caught, on the set-ups where the method relies on it.
 */
void self_test(void **state)
{
	(void)state;
	setenv("RPMA_CRASH_QUIET", "1", 1);
	struct {
		breakage brk;
		setup set;
		platform plat;
		const char *what;
	} cases[] = {
		{ breakage::persist_noop, setup::gpspm, platform::adr_ddio_on,
		  "persist function that does nothing" },
		{ breakage::persist_noop, setup::full, platform::adr_ddio_on,
		  "persist function that does nothing (as the example)" },
		{ breakage::flush_noop, setup::native, platform::adr_ddio_on,
		  "native FLUSH that does nothing" },
		{ breakage::ddio_lie, setup::legacy, platform::eadr,
		  "placement not persistent after all" },
	};
	for (const auto &c : cases) {
		for (int log = 0; log < 2; log++) {
			if (log && c.set == setup::legacy)
				continue;
			totals t{};
			unsigned caught = 0;
			const unsigned seqs = 6;
			for (unsigned i = 0; i < seqs; i++)
				caught += one(c.set, c.plat, BASE_SEED + 0x4000 + i, c.brk,
					      log != 0, t) != 0;
			printf("# self-test: %s (%s, %s, %s): %u of %u sequences caught\n", c.what,
			       log ? "replicated log" : "mix", setup_name(c.set),
			       platform_name(c.plat), caught, seqs);
			if (caught == 0)
				fail_msg("the checker missed a broken target: %s", c.what);
		}
	}
	/* and a sound target with the same seeds is not blamed */
	totals t{};
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(one(setup::gpspm, platform::adr_ddio_on, BASE_SEED + 0x4000 + i,
				     breakage::none, false, t),
				 0);
	unsetenv("RPMA_CRASH_QUIET");
}

void print_table(const char *what, totals (*tt)[4], const setup *sets, size_t nsets)
{
	printf("# %-14s %-7s %-13s %-17s %5s %8s %9s %6s %6s %5s %6s\n", what, "set-up", "platform",
	       "method", "seqs", "steps", "crashpts", "ops", "claims", "AGAIN", "NOSUPP");
	for (size_t i = 0; i < nsets; i++)
		for (platform plat : PLATFORMS) {
			const totals &t = tt[(int)sets[i]][(int)plat];
			if (t.sequences == 0)
				continue;
			printf("# %-14s %-7s %-13s %-17s %5lu %8lu %9lu %6lu %6lu %5lu %6lu\n",
			       what, setup_name(sets[i]), platform_name(plat),
			       method_name(t.method), t.sequences, t.steps, t.crash_points, t.ops,
			       t.claims, t.again, t.nosupp);
		}
}

void summary(void **state)
{
	(void)state;
	print_table("mix", mix_totals, MIX_SETUPS, 4);
	print_table("replicated-log", log_totals, LOG_SETUPS, 3);
	unsigned long cp = 0;
	for (auto &row : mix_totals)
		for (auto &t : row)
			cp += t.crash_points;
	for (auto &row : log_totals)
		for (auto &t : row)
			cp += t.crash_points;
	printf("# crash points checked: %lu\n", cp);
	/*
	 * A run that checked nothing proves nothing: RPMA_CRASH_SEQS=0, or an
	 * RPMA_CRASH_ONLY that names no set-up, would otherwise pass.
	 */
	if (cp == 0)
		fail_msg("no crash point was checked (RPMA_CRASH_SEQS, RPMA_CRASH_ONLY?)");
	for (int log = 0; log < 2; log++)
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++) {
				const totals &t = (log ? log_totals : mix_totals)[i][j];
				if (t.findings)
					printf("# finding (%s, %s, %s): %lu time(s), e.g. "
					       "RPMA_CRASH_SEED=%" PRIu64 ": %s\n",
					       log ? "replicated log" : "mix", setup_name((setup)i),
					       platform_name((platform)j), t.findings,
					       t.finding_seed, t.finding.c_str());
			}
}

} /* namespace */

int main(void)
{
	uint64_t seed;
	if (only_seed(&seed))
		printf("# crashmodel: RPMA_CRASH_SEED=%" PRIu64 "\n", seed);
	else
		printf("# crashmodel: base seed %#" PRIx64 ", %u sequences per set-up and "
		       "platform (RPMA_CRASH_SEED=<seed> reruns one)\n",
		       BASE_SEED, sequences_per_combo());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mix_all),
		cmocka_unit_test(log_all),
		cmocka_unit_test(self_test),
		cmocka_unit_test(summary),
	};
	return cmocka_run_group_tests_name("crashmodel", tests, nullptr, nullptr);
}
