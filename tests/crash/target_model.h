/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * target_model.h -- a crash model of one connection on the fake rdma-core:
 * a target region with a persistence domain per platform, a simulated RC
 * network and target device that execute what the library posts one step
 * at a time, the target's library (a second connection of the same
 * process) serving GPSPM, and a checker that crashes at every step
 *
 * The region is three byte arrays: what the target's CPU sees (`visible`,
 * the memory the target registered), what survives a power loss
 * (`durable`), and, for checking, every write the initiator posted (its
 * bytes, by version). Each byte of `visible` and `durable` carries the
 * version of the write that put it there: a version is the index, plus
 * one, of the initiator's work request in the fake's record of sends (0:
 * the initial content), so versions grow in post order.
 *
 * The platforms (doc/persistence.md, "The platforms"):
 * - ADR, DDIO on: a placed RDMA write sits in the CPU cache: visible, not
 *   durable, until the target persists it (GPSPM's persist function, a
 *   native RDMA FLUSH to persistence) or the cache evicts its line (a step
 *   of the simulator: a cache may write a line back at any time);
 * - ADR, DDIO off: a placed RDMA write is durable; a store of the target's
 *   CPU sits in the cache as above;
 * - eADR: everything placed or stored is durable;
 * - DRAM: nothing is ever durable.
 * An RDMA read never makes anything durable.
 *
 * Steps (each one action of the network or the target, in an order an RC
 * connection allows): execute the next work request of a send queue (in
 * order; a write is placed, a read or FLUSH starts, a send is delivered
 * into the peer's next posted receive, RNR otherwise); finish a started
 * read or FLUSH (it reads the memory, resp. makes its range durable); a
 * later request without IBV_SEND_FENCE may execute before an earlier read
 * or FLUSH finishes, as on InfiniBand, a fenced one may not; complete the
 * oldest finished request of a send queue (a CQE when it was signaled);
 * let the target's library poll its CQ once; evict one dirty cache line.
 * The initiator's posting and polling are steps too; a seeded PRNG picks.
 */

#ifndef CRASH_TARGET_MODEL_H
#define CRASH_TARGET_MODEL_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <librpma.h>

#include "fake_verbs.h"

namespace crash
{

enum class platform { adr_ddio_on, adr_ddio_off, eadr, dram };

/*
 * What the target offers and how the two sides are set up; the library
 * picks the method from that (rpma_conn_get_flush_method).
 * - legacy: devices without native verbs, no GPSPM; direct write to PMem
 *   declared where the platform allows it (read-after-write there);
 * - gpspm: GPSPM on both connections, a persist function on PMem, no
 *   direct write declared (a target may claim less than it has): GPSPM
 *   on every PMem platform;
 * - full: GPSPM and direct write where the platform allows it, as
 *   examples/19-replicated-log's replica with --direct-write-to-pmem;
 * - native: devices with RDMA FLUSH and ATOMIC WRITE, the region in the
 *   fake's pmem on PMem platforms, a persist function there.
 */
enum class setup { legacy, gpspm, full, native };

/* A deliberately broken target, for the checker's self-test. */
enum class breakage {
	none,
	persist_noop, /* the persist function does nothing */
	flush_noop,   /* a native FLUSH to persistence does nothing */
	ddio_lie,     /* placement is not durable on the platforms that say it is */
};

const char *platform_name(platform p);
const char *setup_name(setup s);
const char *method_name(rpma_flush_method m);
breakage breakage_from_env(void);

/* splitmix64 */
struct prng {
	uint64_t s;
	uint64_t next();
	unsigned below(unsigned n);
	bool chance(unsigned percent);
};

struct config {
	platform plat;
	setup set;
	uint64_t seed;
	breakage brk;
	size_t region_size;
	const uint8_t *initial; /* region_size bytes, or NULL for zeros */
	/* the region's usage on DRAM includes FLUSH_TYPE_PERSISTENT */
	bool dram_persistent_usage;
	/*
	 * examples/19-replicated-log's set-up: the writer's connection always
	 * asks for GPSPM (POLLED), the replica's only with a persist function,
	 * the region's usage as replica.c registers it
	 */
	bool as_example;
	unsigned idepth, tdepth; /* GPSPM depths: initiator's, target's */
};

/* what happened to one operation of the application */
struct app_op {
	enum kind { write, flush, atomic, read } k;
	bool signaled;
	rpma_flush_type type;
	size_t off, len;
	unsigned record;	    /* index in the fake's sends */
	std::vector<uint32_t> need; /* flush, read: the versions written before it */
	bool finished;		    /* its completion, or a later one's, was taken */
	uint8_t *local;		    /* read: where the bytes go */
};

struct counters {
	unsigned long steps, crash_points, ops, completions, claims, again, nosupp;
};

class sim
{
      public:
	explicit sim(const config &cfg);
	~sim();
	sim(const sim &) = delete;
	sim &operator=(const sim &) = delete;

	/* the initiator's view */
	rpma_conn *conn = nullptr;
	rpma_mr_remote *dst = nullptr;
	rpma_cq *cq = nullptr;
	rpma_mr_local *src_mr = nullptr;
	rpma_flush_method method_persistent = RPMA_FLUSH_METHOD_NONE;
	rpma_flush_method method_visibility = RPMA_FLUSH_METHOD_NONE;
	prng rng;
	const config cfg;

	/* operations of the application, with their bookkeeping; the rpma return */
	int write(size_t off, const uint8_t *data, size_t len, bool signaled);
	int flush(size_t off, size_t len, rpma_flush_type type, bool signaled);
	int atomic_write(size_t off, const uint8_t value[8], bool signaled);
	int read(size_t off, size_t len, bool signaled);
	struct batch_elem {
		app_op::kind k; /* write, flush or read */
		size_t off, len;
		rpma_flush_type type;
		bool signaled;
		const uint8_t *data; /* write */
	};
	int batch(const batch_elem *e, int n);

	/* one poll of the initiator's CQ, one of several ways; completions taken */
	int poll();
	/* one step of the network or the target; false when none can be made */
	bool net_step();
	/* nothing in flight, no completion expected or queued */
	bool quiet();
	/* flow-control slots: a GPSPM flush or atomic write in flight */
	unsigned expected() const
	{
		return (unsigned)expect.size();
	}

	/* a crash now: check the promises against `durable` */
	void crash_point(const char *where);
	/* a further check at each crash point (the commit word, the log) */
	std::function<void(sim &)> extra_check;
	/* called for each completion the application takes, after the checks */
	std::function<void(size_t op)> on_completion;

	/* the region as a power loss would leave it, and its versions */
	const uint8_t *durable() const
	{
		return dur.data();
	}
	uint32_t durable_version(size_t b) const
	{
		return dur_ver[b];
	}
	/* the byte that version v wrote at b */
	uint8_t byte_of(uint32_t v, size_t b) const;
	/* the version of the last write posted to b */
	uint32_t posted_version(size_t b) const
	{
		return expect_ver[b];
	}

	void violation(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	/*
	 * A departure from promise (b), a violation, also counted apart: a
	 * completion of an operation carried by GPSPM taken before the
	 * completion of an operation posted before it (the target's answer
	 * can come before the send queue's completions of the earlier work
	 * requests: a lost ACK, a read response retried), and what follows from
	 * it (that earlier operation need not have finished).
	 */
	void finding(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	unsigned findings = 0;
	std::string first_finding;
	unsigned violations = 0;
	std::string first_violation;
	counters n{};
	std::vector<app_op> ops;

	/* the persist function's work (called by the target's library) */
	void persist_called(const void *ptr, size_t len);

      private:
	struct wr {
		fake_send_record rec;
		unsigned index;
		enum { posted, started, executed } state;
		std::vector<uint32_t> seen; /* read: versions it read */
	};
	struct rq_entry {
		uint64_t wr_id;
		uint64_t addr;
		uint32_t len;
	};
	struct qpm {
		ibv_qp *qp = nullptr;
		std::deque<wr> sq;
		std::deque<rq_entry> rq;
		qpm *peer = nullptr;
		bool initiator = false;
	};
	struct cpu_store {
		size_t off;
		uint8_t bytes[8];
		uint32_t version, slot, seq;
		bool stored;
	};

	qpm qi, qt;
	rpma_conn *tconn = nullptr;
	rpma_cq *tcq = nullptr;
	rpma_mr_local *tmr = nullptr;
	rdma_cm_id *iid = nullptr, *tid = nullptr;
	uint32_t trkey = 0;
	bool tgranted_persistent = false;
	uint8_t *visible = nullptr;
	std::vector<uint8_t> initial, dur, shadow;
	std::vector<uint32_t> vis_ver, dur_ver, expect_ver;
	std::vector<bool> dirty; /* per 64-byte line: in the cache, newer than durable */
	std::unordered_map<uint32_t, std::pair<size_t, std::vector<uint8_t>>> writes;
	std::deque<cpu_store> cpu;
	std::deque<size_t> expect;  /* signaled ops, in post order */
	std::vector<size_t> claims; /* persistent flushes known finished */
	std::unordered_map<unsigned, std::vector<uint32_t>> read_seen; /* by send index */
	size_t implied = 0; /* ops before this one are known finished */
	unsigned seen_sends = 0, seen_recvs = 0;
	uint8_t *src = nullptr;
	size_t src_size = 0, src_used = 0;

	bool placement_durable() const;
	bool cpu_durable() const;
	void make_durable(size_t off, size_t len);
	void place(size_t off, const uint8_t *bytes, size_t len, uint32_t ver, bool by_cpu);
	void sync_records();
	void sync_cpu_stores();
	bool can_execute(const qpm &q, size_t *at);
	void execute(qpm &q, size_t at);
	void finish(qpm &q, size_t at);
	void complete_head(qpm &q);
	void target_poll();
	void evict_one();
	bool remote_range(uint64_t addr, uint64_t len, uint32_t rkey, size_t *off,
			  const char *what);
	uint8_t *take_local(size_t len);
	void check_send_records(unsigned before, unsigned count, const char *what);
	void taken(const void *ctx, int op, bool as_wc, int wc_opcode, int status);
	void finished_through(size_t op, bool by_gpspm);
	bool carried_by_gpspm(const app_op &o) const;
	void check_claim(const app_op &o, const char *where);
	void check_read(const app_op &o, bool by_gpspm);
	size_t new_op(app_op o);
};

} /* namespace crash */

#endif /* CRASH_TARGET_MODEL_H */
