// SPDX-License-Identifier: BSD-3-Clause
/*
 * oracle.c -- a ground truth for the four ordering promises of one
 * connection (doc/persistence.md, Ordering), on a real device, for one
 * flush method (ORACLE_METHOD, one program each):
 *
 *   (a) a persistent flush completes only once its range is durable;
 *   (b) when an operation completes, every flush posted before it (by the
 *       same thread) has finished: its range is durable, or visible;
 *   (c) a commit word written by rpma_atomic_write becomes visible only
 *       when the records it covers are durable;
 *   (d) every signaled operation completes exactly once, as what it is.
 *
 * The truth comes from memory that both processes share (mapped before
 * they fork): the target's region itself, which shows what has been
 * placed, and for GPSPM a "durable" copy of it that only the target's
 * persist function writes (what would survive a power loss when only the
 * persist function makes data durable). Where placement is persistence
 * (read-after-write with direct write to PMem, native FLUSH), the region
 * is the durable view.
 *
 * Each posting thread (1 to 4) keeps a log in a slice of the region:
 * records of 64 bytes whose bytes name the thread and the record, and a
 * commit word. It posts a seeded random sequence of record writes,
 * persistent and visibility flushes, atomic writes of its commit word,
 * reads and (where the receive queue is the application's) sends, each
 * signaled or not, one by one or as rpma_post_batch, keeping at most
 * WINDOW operations unfinished, and all its threads' signaled operations
 * not yet taken within the CQ's size. One or two polling threads take the
 * completions (rpma_cq_wait_completion, rpma_cq_get_wc of up to 4, or the
 * librpma 1.x loop of rpma_cq_wait and rpma_cq_get_wc of one) and check
 * (a), (b) and (d) on each; a thread of the target watches the commit
 * words and checks (c) each time one moves. A GPSPM target answers slowly
 * now and then (the seed says when and how slowly), so that completions
 * wait in the library and posts meet its back-pressure.
 *
 * RPMA_ORACLE_SEED=N reruns a seed; RPMA_ORACLE_OPS=N sets the operations
 * (10000 by default, over all posting threads).
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "common.h"

#define METHOD_GPSPM_POLLED 0
#define METHOD_GPSPM_THREAD 1
#define METHOD_RAW	    2
#define METHOD_NATIVE	    3

#ifndef ORACLE_METHOD
#error ORACLE_METHOD must be set
#endif

#define GPSPM (ORACLE_METHOD == METHOD_GPSPM_POLLED || ORACLE_METHOD == METHOD_GPSPM_THREAD)

#define MAX_POSTERS 4
#define RLEN	    64
#define NREC	    128 /* records in a thread's slice, used round robin */
#define WINDOW	    24	/* operations a thread has unfinished at most */
/* a signaled operation at least this often, well inside the window */
#define SIGNAL_EVERY (WINDOW / 2)
/* the CQ's size and the send queue's: what all the posting threads keep unfinished, and more */
#define CQ_SIZE	     (MAX_POSTERS * (WINDOW + 2) + 8)
#define MAX_OPS	     200000
#define SLICE	     (64 + NREC * RLEN) /* the commit word, on a line of its own, then records */
#define REGION_SIZE  (2u << 20)
#define MSG_LEN	     16
#define SERVER_RECVS 32
/*
 * A stream (GPSPM): a persistent flush that the target answers after
 * STREAM_SLOW_US, then STREAM_MIN to 2 * STREAM_MIN signaled writes posted
 * one at a time past the window, while the pollers take their completions
 * and the library must hold them behind the flush: more than the
 * connection's send queue and CQ have entries together (about 450 here),
 * so that only the library's back-pressure keeps the held store bounded.
 */
#define STREAM_MIN     600
#define STREAM_ONE_IN  2500
#define STREAM_SLOW_US 150000

enum op_kind { OP_WRITE, OP_FLUSH_P, OP_FLUSH_V, OP_ATOMIC, OP_READ, OP_SEND, OP_KINDS };
static const char *const kind_name[] = {
	"write", "persistent flush", "visibility flush", "atomic write", "read", "send"
};

/* what both processes see */
struct shared {
	atomic_ullong violations;
	atomic_ullong commit_moves;
	atomic_ullong commit_checks_skipped;
	atomic_ullong persist_calls;
	/* records each thread has posted writes of, so far: older slots may be reused */
	atomic_ullong written[MAX_POSTERS];
	/*
	 * the sends' credits: iWARP has no RNR retry, so a send that finds
	 * no receive posted ends the connection (siw: TERMINATE, "invalid
	 * MSN, no buffer"), the first sends too when they come before the
	 * target has posted its receives. The client takes a ticket per send
	 * and posts it only once the target has posted a receive for it.
	 */
	atomic_ullong send_tickets;
	atomic_ullong recvs_posted;
	/* a stream is about to begin: the next persist call is a slow one */
	atomic_bool slow_next;
	atomic_bool done;
};

static struct shared *sh;
static unsigned char *region;  /* the target's region: what is placed */
static unsigned char *durable; /* GPSPM: what the persist function made durable */
static unsigned long long seed;
static unsigned posters, pollers, ops_total;
static bool region_is_device;

static unsigned long long mix(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* the bytes of record seq of thread p */
static void pattern(unsigned p, unsigned long long seq, unsigned char out[RLEN])
{
	for (unsigned i = 0; i < RLEN; i += 8) {
		unsigned long long v = i ? mix(((unsigned long long)p << 48) ^ (seq * 8 + i))
					 : ((unsigned long long)p << 48) | seq;
		memcpy(out + i, &v, 8);
	}
}

static size_t slice_off(unsigned p)
{
	return (size_t)p * SLICE;
}

static size_t record_off(unsigned p, unsigned long long seq)
{
	return slice_off(p) + 64 + (size_t)(seq % NREC) * RLEN;
}

static void violation(const char *fmt, unsigned long long a, unsigned long long b,
		      unsigned long long c)
{
	if (atomic_fetch_add(&sh->violations, 1) < 10)
		t_log(fmt, a, b, c);
}

/* the same, naming the operation whose completion showed it */
static void violation_at(const char *what, unsigned long long n, const char *fmt,
			 unsigned long long a, unsigned long long b, unsigned long long c)
{
	if (atomic_fetch_add(&sh->violations, 1) >= 10)
		return;
	char line[256];
	snprintf(line, sizeof(line), fmt, a, b, c);
	t_log("%s (seen when %s %llu completed)", line, what, n);
}

/*
 * Whether records [lo, hi) of thread p hold their bytes in view; a record
 * whose slot a later one reuses by now cannot tell, and passes.
 */
static bool records_hold(const unsigned char *view, unsigned p, unsigned long long lo,
			 unsigned long long hi, unsigned long long *bad)
{
	unsigned char want[RLEN];
	for (unsigned long long s = lo; s < hi; s++) {
		pattern(p, s, want);
		const bool same = memcmp(view + record_off(p, s), want, RLEN) == 0;
		if (atomic_load(&sh->written[p]) > s + NREC - 1)
			continue; /* its slot was written again since */
		if (!same) {
			*bad = s;
			return false;
		}
	}
	return true;
}

/* the view where durable bytes are */
static const unsigned char *durable_view(void)
{
	return GPSPM ? durable : region;
}

/* the target */

static void persist_and_record(void *ctx, const void *ptr, size_t len)
{
	(void)ctx;
	/*
	 * A slow answer now and then, as the seed says (one call in 32, 1 to
	 * 8 ms): the completions posted behind it wait in the library, the
	 * posts keep going, and the held store meets its limit.
	 */
	static atomic_ullong calls;
	const unsigned long long call = atomic_fetch_add(&calls, 1);
	if (atomic_exchange(&sh->slow_next, false))
		usleep(STREAM_SLOW_US);
	else if (mix(seed ^ (0x5100 + call)) % 32 == 0)
		usleep((useconds_t)(1000 + mix(seed + call) % 7000));
	const size_t off = (size_t)((const unsigned char *)ptr - region);
	/* what a crash would keep: the bytes as they are now */
	memcpy(durable + off, ptr, len);
	atomic_fetch_add(&sh->persist_calls, 1);
}

static void *watch_commits(void *arg)
{
	(void)arg;
	unsigned long long seen[MAX_POSTERS] = { 0 };
	while (!atomic_load(&sh->done)) {
		for (unsigned p = 0; p < posters; p++) {
			const unsigned long long now = __atomic_load_n(
			    (unsigned long long *)(region + slice_off(p)), __ATOMIC_ACQUIRE);
			if (now == seen[p])
				continue;
			atomic_fetch_add(&sh->commit_moves, 1);
			if (now < seen[p])
				violation("thread %llu: commit word went back from %llu to %llu", p,
					  seen[p], now);
			/* the records the new value covers, as far as their slots still hold them
			 */
			unsigned long long lo = seen[p];
			if (now > NREC / 2 && lo < now - NREC / 2) {
				lo = now - NREC / 2;
				atomic_fetch_add(&sh->commit_checks_skipped, 1);
			}
			unsigned long long bad = 0;
			if (!records_hold(durable_view(), p, lo, now, &bad))
				violation(
				    "(c) thread %llu: commit word %llu visible, record %llu not "
				    "durable",
				    p, now, bad);
			seen[p] = now;
		}
	}
	return NULL;
}

/*
 * In each process, not before they fork: a device opened by the parent
 * cannot be used by its children (uverbs refuses a file opened with other
 * credentials)
 */
static void skip_without_native(void)
{
	if (ORACLE_METHOD == METHOD_NATIVE && !t_native_flush())
		t_skip("the device has no native RDMA FLUSH (or the library was built without "
		       "it): nothing native to check");
}

static void server(void)
{
	skip_without_native();
	struct rpma_peer *peer = t_peer_new();
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, region, REGION_SIZE,
		     RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	/* GPSPM: the ground truth; native: the statement that the region is persistent */
	T_OK(rpma_mr_set_persist_ctx_fn(mr, persist_and_record, NULL));
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	/* read-after-write and native: placement is what the oracle calls durable */
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, !GPSPM));
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	if (ORACLE_METHOD == METHOD_GPSPM_POLLED)
		T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	else if (ORACLE_METHOD == METHOD_GPSPM_THREAD)
		T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD));
	T_OK(rpma_conn_cfg_set_rq_size(cfg, GPSPM ? 16 : SERVER_RECVS));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, 64));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, 128));

	struct t_pdata pd = { .len = 0 };
	uint8_t methods = t_mr_methods(mr);
	if (ORACLE_METHOD != METHOD_NATIVE)
		methods &= (uint8_t)~T_METHOD_NATIVE;
	t_pdata_add_mr_versioned_methods(&pd, mr, methods);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	pthread_t watcher;
	T_EQ(pthread_create(&watcher, NULL, watch_commits, NULL), 0);

	/* the application's messages (read-after-write and native): received in order */
	unsigned char *msgs = NULL;
	struct rpma_mr_local *msgs_mr = NULL;
	unsigned long long next_msg[MAX_POSTERS] = { 0 };
	unsigned long long received = 0;
	if (!GPSPM) {
		msgs = t_alloc(SERVER_RECVS * MSG_LEN);
		msgs_mr = t_mr_reg(peer, msgs, SERVER_RECVS * MSG_LEN, RPMA_MR_USAGE_RECV);
		for (uintptr_t i = 0; i < SERVER_RECVS; i++)
			T_OK(rpma_recv(conn, msgs_mr, i * MSG_LEN, MSG_LEN, (void *)i));
		atomic_fetch_add(&sh->recvs_posted, SERVER_RECVS);
	}

	if (ORACLE_METHOD == METHOD_GPSPM_THREAD) {
		/* longer than the client's own limits, so that it is the one to say what hangs */
		long long deadline = t_now_ms() + 6 * T_WAIT_MS;
		while (!t_peer_signaled()) {
			if (t_now_ms() > deadline)
				T_FAIL("the client did not finish");
			t_sleep_ms(10);
		}
		t_await('D');
	} else {
		/* GPSPM requests are served here; messages are checked and received again */
		struct rpma_cq *cq = t_cq(conn);
		while (!t_peer_signaled()) {
			struct rpma_completion c;
			int ret = rpma_cq_wait_completion(cq, &c, 10);
			if (ret == RPMA_E_NO_COMPLETION)
				continue;
			T_OK(ret);
			if (c.op != RPMA_OP_RECV || c.op_status != IBV_WC_SUCCESS)
				T_FAIL("the target got op %s, status %d", t_op_str(c.op),
				       c.op_status);
			const uintptr_t i = (uintptr_t)c.op_context;
			unsigned long long word;
			memcpy(&word, msgs + i * MSG_LEN, 8);
			const unsigned p = (unsigned)(word >> 48);
			const unsigned long long s = word & ((1ULL << 48) - 1);
			if (p >= posters || s != next_msg[p])
				violation("thread %llu: message %llu arrived, expected %llu", p, s,
					  p < posters ? next_msg[p] : 0);
			else
				next_msg[p]++;
			received++;
			T_OK(rpma_recv(conn, msgs_mr, i * MSG_LEN, MSG_LEN, (void *)i));
			atomic_fetch_add(&sh->recvs_posted, 1);
		}
		t_await('D');
	}
	atomic_store(&sh->done, true);
	T_EQ(pthread_join(watcher, NULL), 0);
	t_log("target: %llu persist calls, commit words moved %llu times (%llu checks cut "
	      "short), %llu messages",
	      (unsigned long long)atomic_load(&sh->persist_calls),
	      (unsigned long long)atomic_load(&sh->commit_moves),
	      (unsigned long long)atomic_load(&sh->commit_checks_skipped), received);
	t_signal('V');

	t_close(&conn, false);
	if (msgs_mr)
		T_OK(rpma_mr_dereg(&msgs_mr));
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

/* the client */

struct op {
	uint8_t kind;
	bool signaled;
	atomic_bool completed;
	unsigned long long taken_at; /* its place among the completions taken */
	unsigned long long lo, hi;   /* records a flush covers */
};

struct poster {
	unsigned p;
	unsigned long long rng;
	struct op *ops;
	unsigned n_ops;
	atomic_uint posted;	     /* operations posted so far */
	atomic_int finished;	     /* every operation up to this index has finished */
	unsigned verified;	     /* operations whose promises have been checked */
	pthread_mutex_t verify;	     /* one checker at a time */
	unsigned long long seq;	     /* the next record */
	unsigned long long pflushed; /* records [0, pflushed) are under a persistent flush */
	unsigned long long committed;
	unsigned char *staging; /* NREC records, the sources of the writes */
	struct rpma_mr_local *staging_mr;
	unsigned char *sink;
	struct rpma_mr_local *sink_mr;
};

static struct rpma_conn *conn;
static struct rpma_mr_remote *dst;
static struct poster posts[MAX_POSTERS];
static atomic_uint posters_done;
static atomic_ullong counts[OP_KINDS];
static atomic_ullong completions_taken, batches, room_waits, taken_order, signaled_posted;
static atomic_ullong cq_room_waits;
static atomic_ullong streams, stream_writes, sq_full_waits;

static unsigned long long rnd(struct poster *ps)
{
	ps->rng = mix(ps->rng);
	return ps->rng;
}

static void *ctx_of(unsigned p, unsigned n)
{
	return (void *)(uintptr_t)(((uint64_t)(p + 1) << 32) | n);
}

/* checks (a) and (b) for the operations of ps up to n, which have all finished */
static void verify_up_to(struct poster *ps, unsigned n)
{
	pthread_mutex_lock(&ps->verify);
	for (; ps->verified <= n; ps->verified++) {
		const struct op *o = &ps->ops[ps->verified];
		unsigned long long bad = 0;
		const char *by = kind_name[ps->ops[n].kind];
		if (o->kind == OP_FLUSH_P &&
		    !records_hold(durable_view(), ps->p, o->lo, o->hi, &bad))
			violation_at(
			    by, n,
			    "(a/b) thread %llu: persistent flush %llu finished, record %llu "
			    "not durable",
			    ps->p, ps->verified, bad);
		if (o->kind == OP_FLUSH_V && !records_hold(region, ps->p, o->lo, o->hi, &bad))
			violation_at(by, n,
				     "(b) thread %llu: visibility flush %llu finished, record %llu "
				     "not placed",
				     ps->p, ps->verified, bad);
	}
	int prev = atomic_load(&ps->finished);
	while (prev < (int)n && !atomic_compare_exchange_weak(&ps->finished, &prev, (int)n))
		;
	pthread_mutex_unlock(&ps->verify);
}

/* a completion, however it was taken */
static void completed(uint64_t ctx, int status, enum rpma_op op, bool from_wc, int wc_opcode)
{
	atomic_fetch_add(&completions_taken, 1);
	const unsigned p = (unsigned)(ctx >> 32) - 1;
	const unsigned n = (unsigned)ctx;
	if (p >= posters || n >= posts[p].n_ops || n >= atomic_load(&posts[p].posted)) {
		violation("(d) a completion of nothing posted: context %#llx (%llu, %llu)", ctx, p,
			  n);
		return;
	}
	struct poster *ps = &posts[p];
	struct op *o = &ps->ops[n];
	if (status != IBV_WC_SUCCESS)
		T_FAIL("thread %u: %s %u failed: status %d", p, kind_name[o->kind], n, status);
	if (!o->signaled)
		violation("(d) thread %llu: unsignaled %llu completed (kind %llu)", p, n, o->kind);
	o->taken_at = atomic_fetch_add(&taken_order, 1);
	if (atomic_exchange(&o->completed, true))
		violation("(d) thread %llu: operation %llu completed twice (kind %llu)", p, n,
			  o->kind);
	bool right;
	if (from_wc) {
		switch (o->kind) {
		case OP_FLUSH_P:
		case OP_FLUSH_V:
		case OP_READ:
			right = wc_opcode == IBV_WC_RDMA_READ;
			break;
		case OP_SEND:
			right = wc_opcode == IBV_WC_SEND;
			break;
		default:
			right = wc_opcode == IBV_WC_RDMA_WRITE
#ifdef HAVE_IBV_WC_ATOMIC_WRITE
				|| wc_opcode == IBV_WC_ATOMIC_WRITE
#endif
			    ;
			break;
		}
	} else {
		static const enum rpma_op want[] = { RPMA_OP_WRITE, RPMA_OP_FLUSH, RPMA_OP_FLUSH,
						     RPMA_OP_WRITE, RPMA_OP_READ,  RPMA_OP_SEND };
		right = op == want[o->kind];
	}
	if (!right)
		violation("(d) thread %llu: %llu (kind %llu) completed as another operation", p, n,
			  o->kind);
	verify_up_to(ps, n);
}

/* how a polling thread takes completions (from the seed) */
enum poll_style {
	POLL_WAIT_COMPLETION, /* rpma_cq_wait_completion */
	POLL_GET_WC,	      /* rpma_cq_get_wc of up to 4, busy */
	POLL_WAIT_GET_ONE,    /* librpma 1.x: rpma_cq_wait, then rpma_cq_get_wc of one */
	POLL_STYLES
};

/*
 * POLL_WAIT_GET_ONE: rpma_cq_wait, then rpma_cq_get_wc of one, on the CQ's
 * fd made non-blocking so that the thread can end. An event may cover
 * more completions than one take hands out, and those still in the CQ
 * raise no event of their own: when the wait finds no event, the take
 * is made all the same, and only when that finds nothing either does the
 * thread sleep, in poll(2), for at most 1 ms (rpma_cq_get_fd(3), NOTES).
 */
static bool wait_get_one(struct rpma_cq *cq, int fd, struct ibv_wc *wc)
{
	const int waited = rpma_cq_wait(cq);
	if (waited != RPMA_E_NO_COMPLETION)
		T_OK(waited);
	const int ret = rpma_cq_get_wc(cq, 1, wc, NULL);
	if (ret == 0)
		return true;
	if (ret != RPMA_E_NO_COMPLETION)
		T_OK(ret);
	if (waited == RPMA_E_NO_COMPLETION) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		(void)poll(&pfd, 1, 1);
	}
	return false;
}

/* rpma_cq_get_wc of up to 4, each completion checked: false when there was none */
static bool take_wc_of_4(struct rpma_cq *cq)
{
	struct ibv_wc wc[4];
	int got = 0;
	int ret = rpma_cq_get_wc(cq, 4, wc, &got);
	if (ret == RPMA_E_NO_COMPLETION)
		return false;
	T_OK(ret);
	for (int i = 0; i < got; i++)
		completed(wc[i].wr_id, wc[i].status, RPMA_OP_READ, true, wc[i].opcode);
	return true;
}

static void *poll_thread(void *arg)
{
	const enum poll_style style = (enum poll_style)(uintptr_t)arg;
	const bool as_1x = style != POLL_WAIT_COMPLETION;
	struct rpma_cq *cq = t_cq(conn);
	int fd = -1;
	if (style == POLL_WAIT_GET_ONE) {
		T_OK(rpma_cq_get_fd(cq, &fd));
		T_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK), 0);
	}
	unsigned long long seen = 0;
	long long progress_at = t_now_ms();
	for (;;) {
		/*
		 * Done when every signaled operation has completed: not when the
		 * last one has, as an RDMA read's own completion may come after
		 * those of later operations (iWARP). One that never comes is
		 * reported after T_WAIT_MS without any completion.
		 */
		const unsigned long long taken = atomic_load(&completions_taken);
		if (taken != seen) {
			seen = taken;
			progress_at = t_now_ms();
		}
		if (atomic_load(&posters_done) == posters) {
			if (taken == atomic_load(&signaled_posted))
				break;
			if (t_now_ms() > progress_at + T_WAIT_MS)
				break;
		}
		if (style == POLL_WAIT_GET_ONE) {
			struct ibv_wc wc;
			if (wait_get_one(cq, fd, &wc))
				completed(wc.wr_id, wc.status, RPMA_OP_READ, true, wc.opcode);
		} else if (as_1x) {
			if (!take_wc_of_4(cq))
				sched_yield();
		} else {
			struct rpma_completion c;
			int ret = rpma_cq_wait_completion(cq, &c, 20);
			if (ret == RPMA_E_NO_COMPLETION)
				continue;
			T_OK(ret);
			completed((uint64_t)(uintptr_t)c.op_context, c.op_status, c.op, false, 0);
		}
	}
	return NULL;
}

/* the range of the target that records [lo, hi) of thread p take: the whole slice when they wrap */
static void records_range(unsigned p, unsigned long long lo, unsigned long long hi, size_t *off,
			  size_t *len)
{
	*off = record_off(p, lo);
	*len = (size_t)(hi - lo) * RLEN;
	if (lo % NREC + (hi - lo) > NREC) {
		*off = slice_off(p) + 64;
		*len = NREC * RLEN;
	}
}

/*
 * What a stall leaves to go on: whether the target served every GPSPM
 * flush the client posted (the shared counters), and where each queue
 * pair's packet sequence numbers stand (a requester's sq-psn beyond its
 * peer's rq-psn: packets the transport never delivered), and the device's
 * counters (retries, RNR NAKs, duplicates). Both processes are in this
 * guest, so the rdma tool sees both ends.
 */
static void report_stall(void)
{
	if (GPSPM)
		t_log("GPSPM: %llu persistent flushes posted, %llu served by the target",
		      (unsigned long long)atomic_load(&counts[OP_FLUSH_P]),
		      (unsigned long long)atomic_load(&sh->persist_calls));
	FILE *qps = popen("rdma resource show qp 2>&1; rdma statistic show 2>&1", "r");
	if (qps == NULL)
		return;
	char line[512];
	while (fgets(line, sizeof(line), qps)) {
		line[strcspn(line, "\n")] = '\0';
		t_log("rdma: %s", line);
	}
	pclose(qps);
}

/* waits until the window has room for operation n */
static void wait_window(struct poster *ps, unsigned n)
{
	long long deadline = t_now_ms() + T_WAIT_MS;
	while ((int)n - atomic_load(&ps->finished) > WINDOW) {
		if (t_now_ms() > deadline) {
			/* what is unfinished, for the report */
			for (unsigned i = (unsigned)(atomic_load(&ps->finished) + 1); i < n; i++)
				t_log("thread %u: operation %u: %s, %s, %s", ps->p, i,
				      kind_name[ps->ops[i].kind],
				      ps->ops[i].signaled ? "signaled" : "unsignaled",
				      atomic_load(&ps->ops[i].completed) ? "completed"
									 : "not completed");
			report_stall();
			T_FAIL("thread %u: operation %d never finished", ps->p,
			       atomic_load(&ps->finished) + 1);
		}
		usleep(50);
	}
}

/*
 * Counts a signaled operation about to be posted, once the CQ has room for
 * its completion: the signaled operations posted and not taken stay within
 * the CQ's size, as an application must keep them. The send queue does
 * not bound them: rxe frees a send queue entry once its completion is in
 * the CQ, before anyone polls it, and drops a send completion that finds
 * the CQ full (a receive's stops the queue pair). Each posting thread may
 * have counted two operations that it has not posted yet (a batch's),
 * hence the margin; with everything posted taken, no wait goes on.
 */
static void signaled_post(void)
{
	atomic_fetch_add(&signaled_posted, 1);
	const long long deadline = t_now_ms() + T_WAIT_MS;
	while ((long long)(atomic_load(&signaled_posted) - atomic_load(&completions_taken)) >
	       CQ_SIZE - 2 * MAX_POSTERS) {
		atomic_fetch_add(&cq_room_waits, 1);
		if (t_now_ms() > deadline) {
			report_stall();
			T_FAIL("no room in the CQ for %d ms: %llu signaled operations posted, %llu "
			       "completions taken",
			       T_WAIT_MS, (unsigned long long)atomic_load(&signaled_posted),
			       (unsigned long long)atomic_load(&completions_taken));
		}
		usleep(50);
	}
}

/* one wait for room after RPMA_E_AGAIN, within the limit since the first */
static void wait_room(const char *what, long long deadline)
{
	atomic_fetch_add(&room_waits, 1);
	if (t_now_ms() > deadline) {
		report_stall();
		T_FAIL("%s: no room in the flow control for %d ms", what, T_WAIT_MS);
	}
	int ret = rpma_conn_wait_flush_room(conn, 100);
	/* the completions the library holds are to be taken first: the pollers take them */
	if (ret == RPMA_E_AGAIN) {
		usleep(50);
		return;
	}
	if (ret && ret != RPMA_E_NO_COMPLETION)
		T_OK(ret);
}

/*
 * Whether a post that returned ret is to be tried again: the GPSPM flow
 * control or its back-pressure said so (after a wait for room), or the
 * send queue was full (after a pause for the pollers), within the limit
 * since the first try. A full send queue is the provider's ENOMEM from
 * ibv_post_send() and, from the work request builders that atomic writes
 * and native flushes take (ibv_wr_*), rxe's ENOSPC.
 */
static bool post_again(int ret, const char *what, long long deadline)
{
	if (ret == RPMA_E_AGAIN) {
		wait_room(what, deadline);
		return true;
	}
	if (ret != RPMA_E_PROVIDER ||
	    (rpma_err_get_provider_error() != ENOMEM && rpma_err_get_provider_error() != ENOSPC))
		return false;
	atomic_fetch_add(&sq_full_waits, 1);
	if (t_now_ms() > deadline) {
		report_stall();
		T_FAIL("%s: the send queue stayed full for %d ms", what, T_WAIT_MS);
	}
	usleep(100);
	return true;
}

#define POSTED(call)                                                                               \
	({                                                                                         \
		int ret_;                                                                          \
		const long long deadline_ = t_now_ms() + T_WAIT_MS;                                \
		while (post_again(ret_ = (call), #call, deadline_))                                \
			;                                                                          \
		ret_;                                                                              \
	})

/*
 * One write of a stream: the thread's last record again, with the bytes it
 * already has, so that the truth does not move while hundreds of writes
 * are in flight. Then, as the seed says, a take (the completions it hands
 * out are checked as the pollers check theirs) or a wait for room without
 * a take: either reads the CQ, as an application that keeps one write in
 * flight does (signaled_post() keeps the CQ within its size). A full send
 * queue (the provider's ENOMEM) waits for the pollers.
 */
static void post_stream_write(struct poster *ps, unsigned n, bool wait_between)
{
	struct op *o = &ps->ops[n];
	const unsigned long long s = ps->seq - 1;
	o->kind = OP_WRITE;
	o->signaled = true;
	signaled_post();
	atomic_store(&ps->posted, n + 1);
	int ret =
	    POSTED(rpma_write(conn, dst, record_off(ps->p, s), ps->staging_mr, (s % NREC) * RLEN,
			      RLEN, RPMA_F_COMPLETION_ALWAYS, ctx_of(ps->p, n)));
	T_OK(ret);
	atomic_fetch_add(&counts[OP_WRITE], 1);
	atomic_fetch_add(&stream_writes, 1);
	if (wait_between) {
		ret = rpma_conn_wait_flush_room(conn, 10);
		if (ret && ret != RPMA_E_AGAIN && ret != RPMA_E_NO_COMPLETION)
			T_OK(ret);
		return;
	}
	(void)take_wc_of_4(t_cq(conn));
}

static void *post_thread(void *arg)
{
	struct poster *ps = arg;
	const unsigned p = ps->p;
	unsigned stream_left = 0;
	bool stream_waits = false, streamed = false;
	for (unsigned n = 0; n < ps->n_ops; n++) {
		if (stream_left) {
			post_stream_write(ps, n, stream_waits);
			stream_left--;
			continue;
		}
		/* room for this one and the next: a batch takes two */
		wait_window(ps, n + 1);
		struct op *o = &ps->ops[n];
		unsigned long long r = rnd(ps);
		/* a stream now and then, and once in every GPSPM run: its flush first */
		const bool stream_starts =
		    GPSPM && ps->seq > 0 && n + 2 * STREAM_MIN < ps->n_ops &&
		    ((r >> 32) % STREAM_ONE_IN == 0 || (p == 0 && !streamed && n >= ps->n_ops / 2));
		if (stream_starts) {
			stream_left = STREAM_MIN + (unsigned)((r >> 40) % STREAM_MIN);
			stream_waits = (r >> 60) % 2 == 0;
			streamed = true;
			atomic_fetch_add(&streams, 1);
			atomic_store(&sh->slow_next, true);
		}
		/* a signaled operation now and then, and always at the end */
		o->signaled = r % 4 == 0 || n == ps->n_ops - 1 ||
			      n % SIGNAL_EVERY == SIGNAL_EVERY - 1 || stream_starts;
		const int flags =
		    o->signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
		unsigned k = (unsigned)((r >> 8) % 100);
		if (k < 40)
			o->kind = OP_WRITE;
		else if (k < 62)
			o->kind = OP_FLUSH_P;
		else if (k < 72)
			o->kind = OP_FLUSH_V;
		else if (k < 86)
			o->kind = OP_ATOMIC;
		else if (k < 93 || GPSPM)
			o->kind = OP_READ;
		else
			o->kind = OP_SEND;
		/* a flush with nothing new to cover covers the last record again */
		if ((o->kind == OP_FLUSH_P || o->kind == OP_FLUSH_V) && ps->seq == 0)
			o->kind = OP_WRITE;
		if (o->kind == OP_ATOMIC && ps->pflushed == ps->committed)
			o->kind = OP_READ;
		if (stream_starts)
			o->kind = OP_FLUSH_P;
		const bool batch = (r >> 20) % 5 == 0 && o->kind == OP_WRITE && n + 1 < ps->n_ops;
		if (o->signaled)
			signaled_post();
		atomic_store(&ps->posted, n + 1);

		switch (o->kind) {
		case OP_WRITE: {
			const unsigned long long s = ps->seq++;
			unsigned char *src = ps->staging + (s % NREC) * RLEN;
			pattern(p, s, src);
			atomic_store(&sh->written[p], s + 1);
			if (!batch) {
				T_OK(POSTED(rpma_write(conn, dst, record_off(p, s), ps->staging_mr,
						       (s % NREC) * RLEN, RLEN, flags,
						       ctx_of(p, n))));
				break;
			}
			/* the write and a persistent flush of it, as one batch */
			struct op *f = &ps->ops[n + 1];
			f->kind = OP_FLUSH_P;
			f->signaled = (r >> 24) % 2 == 0 || n + 1 == ps->n_ops - 1 ||
				      (n + 1) % SIGNAL_EVERY == SIGNAL_EVERY - 1;
			if (f->signaled)
				signaled_post();
			f->lo = ps->pflushed;
			f->hi = ps->seq;
			struct rpma_batch_op b[2];
			memset(b, 0, sizeof(b));
			b[0].op = RPMA_OP_WRITE;
			b[0].flags = flags;
			b[0].op_context = ctx_of(p, n);
			b[0].local = ps->staging_mr;
			b[0].local_offset = (s % NREC) * RLEN;
			b[0].remote = dst;
			b[0].remote_offset = record_off(p, s);
			b[0].len = RLEN;
			b[1].op = RPMA_OP_FLUSH;
			b[1].flags =
			    f->signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
			b[1].op_context = ctx_of(p, n + 1);
			b[1].remote = dst;
			records_range(p, f->lo, f->hi, &b[1].remote_offset, &b[1].len);
			b[1].flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
			atomic_store(&ps->posted, n + 2);
			/*
			 * Refused (RPMA_E_AGAIN): nothing went. The provider
			 * failed (a full send queue): the elements before
			 * *failed went, the rest goes again.
			 */
			int ret, sent = 0;
			const long long deadline = t_now_ms() + T_WAIT_MS;
			for (;;) {
				int failed = -1;
				ret = rpma_post_batch(conn, b + sent, 2 - sent, &failed);
				if (ret == RPMA_E_PROVIDER && failed > 0)
					sent += failed;
				if (!post_again(ret, "rpma_post_batch", deadline))
					break;
			}
			T_OK(ret);
			atomic_fetch_add(&batches, 1);
			atomic_fetch_add(&counts[OP_WRITE], 1);
			atomic_fetch_add(&counts[OP_FLUSH_P], 1);
			ps->pflushed = ps->seq;
			n++;
			continue;
		}
		case OP_FLUSH_P:
		case OP_FLUSH_V: {
			/* the records since the last persistent flush, or the last one */
			o->lo = o->kind == OP_FLUSH_P && ps->pflushed < ps->seq ? ps->pflushed
										: ps->seq - 1;
			o->hi = ps->seq;
			size_t off, len;
			records_range(p, o->lo, o->hi, &off, &len);
			const enum rpma_flush_type type = o->kind == OP_FLUSH_P
							      ? RPMA_FLUSH_TYPE_PERSISTENT
							      : RPMA_FLUSH_TYPE_VISIBILITY;
			T_OK(POSTED(rpma_flush(conn, dst, off, len, type, flags, ctx_of(p, n))));
			if (o->kind == OP_FLUSH_P)
				ps->pflushed = ps->seq;
			break;
		}
		case OP_ATOMIC: {
			char word[8];
			const unsigned long long v = ps->pflushed;
			memcpy(word, &v, 8);
			T_OK(POSTED(
			    rpma_atomic_write(conn, dst, slice_off(p), word, flags, ctx_of(p, n))));
			ps->committed = v;
			break;
		}
		case OP_READ:
			T_OK(POSTED(rpma_read(conn, ps->sink_mr, 0, dst, slice_off(p), 8, flags,
					      ctx_of(p, n))));
			break;
		case OP_SEND: {
			const unsigned long long ticket = atomic_fetch_add(&sh->send_tickets, 1);
			const long long credit_deadline = t_now_ms() + T_WAIT_MS;
			while (ticket >= atomic_load(&sh->recvs_posted)) {
				if (t_now_ms() > credit_deadline)
					T_FAIL("thread %u: no receive posted for send %llu within "
					       "%d ms",
					       p, ticket, T_WAIT_MS);
				sched_yield();
			}
			unsigned char *m = ps->sink + 64 + (n % WINDOW) * MSG_LEN;
			static atomic_ullong sent[MAX_POSTERS];
			const unsigned long long word =
			    ((unsigned long long)p << 48) | atomic_fetch_add(&sent[p], 1);
			memcpy(m, &word, 8);
			T_OK(rpma_send(conn, ps->sink_mr, 64 + (n % WINDOW) * MSG_LEN, MSG_LEN,
				       flags, ctx_of(p, n)));
			break;
		}
		}
		atomic_fetch_add(&counts[o->kind], 1);
	}
	atomic_fetch_add(&posters_done, 1);
	return NULL;
}

/*
 * The device's asynchronous events while the client runs: a CQ that
 * overflowed (rxe drops a send completion then, and stops the queue pair
 * for a receive's) or a queue pair the provider stopped is a lost
 * completion the four checks would only see as its consequence.
 */
static atomic_bool async_stop;
static atomic_uint async_errors;

static void *async_thread(void *arg)
{
	struct ibv_context *ibv = arg;
	struct pollfd pfd = { .fd = ibv->async_fd, .events = POLLIN };
	while (!atomic_load(&async_stop)) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		struct ibv_async_event ev;
		if (ibv_get_async_event(ibv, &ev))
			continue;
		const bool bad = ev.event_type == IBV_EVENT_CQ_ERR ||
				 ev.event_type == IBV_EVENT_QP_FATAL ||
				 ev.event_type == IBV_EVENT_QP_REQ_ERR ||
				 ev.event_type == IBV_EVENT_QP_ACCESS_ERR;
		t_log("asynchronous event: %s", ibv_event_type_str(ev.event_type));
		if (bad)
			atomic_fetch_add(&async_errors, 1);
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

static void client(void)
{
	skip_without_native();
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	if (GPSPM)
		T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, CQ_SIZE));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, CQ_SIZE));
	T_OK(rpma_conn_cfg_set_rq_size(cfg, 16));
	conn = t_connect(peer, cfg, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	dst = t_pdata_mr(&pd, 0);
	size_t len = 0;
	const void *desc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));

	enum rpma_flush_method pm = RPMA_FLUSH_METHOD_NONE, vm = RPMA_FLUSH_METHOD_NONE;
	T_OK(rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &pm));
	T_OK(rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_VISIBILITY, &vm));
	t_log("persistent flushes by %s, visibility flushes by %s", t_method_str(pm),
	      t_method_str(vm));
	if (GPSPM)
		T_EQ(pm, RPMA_FLUSH_METHOD_GPSPM);
	else if (ORACLE_METHOD == METHOD_RAW)
		T_EQ(pm, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	else
		T_EQ(vm, RPMA_FLUSH_METHOD_NATIVE);

	for (unsigned p = 0; p < posters; p++) {
		struct poster *ps = &posts[p];
		ps->p = p;
		ps->rng = mix(seed ^ (0x1000 + p));
		ps->n_ops = (ops_total + posters - 1) / posters;
		ps->ops = calloc(ps->n_ops, sizeof(*ps->ops));
		T_ASSERT(ps->ops != NULL);
		atomic_init(&ps->finished, -1);
		pthread_mutex_init(&ps->verify, NULL);
		ps->staging = t_alloc(NREC * RLEN);
		ps->staging_mr = t_mr_reg(peer, ps->staging, NREC * RLEN, RPMA_MR_USAGE_WRITE_SRC);
		ps->sink = t_alloc(64 + WINDOW * MSG_LEN);
		ps->sink_mr = t_mr_reg(peer, ps->sink, 64 + WINDOW * MSG_LEN,
				       RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND);
	}

	struct ibv_context *ibv = NULL;
	T_OK(rpma_utils_get_ibv_context(t_env.addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv));
	int fl = fcntl(ibv->async_fd, F_GETFL);
	T_ASSERT(fl >= 0 && fcntl(ibv->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	pthread_t at;
	T_EQ(pthread_create(&at, NULL, async_thread, ibv), 0);

	const long long start = t_now_ms();
	pthread_t pt[MAX_POSTERS], qt[2];
	for (unsigned q = 0; q < pollers; q++)
		T_EQ(pthread_create(&qt[q], NULL, poll_thread,
				    (void *)(uintptr_t)((seed >> (16 + 4 * q)) % POLL_STYLES)),
		     0);
	for (unsigned p = 0; p < posters; p++)
		T_EQ(pthread_create(&pt[p], NULL, post_thread, &posts[p]), 0);
	for (unsigned p = 0; p < posters; p++)
		T_EQ(pthread_join(pt[p], NULL), 0);
	for (unsigned q = 0; q < pollers; q++)
		T_EQ(pthread_join(qt[q], NULL), 0);
	const long long took = t_now_ms() - start;
	atomic_store(&async_stop, true);
	T_EQ(pthread_join(at, NULL), 0);
	if (atomic_load(&async_errors))
		violation("%llu asynchronous error events: a CQ overflowed or a queue pair stopped",
			  atomic_load(&async_errors), 0, 0);

	/* (d): every signaled operation completed, once */
	unsigned long long signaled = 0, ops = 0;
	for (unsigned p = 0; p < posters; p++) {
		for (unsigned n = 0; n < posts[p].n_ops; n++) {
			ops++;
			if (!posts[p].ops[n].signaled)
				continue;
			signaled++;
			if (atomic_load(&posts[p].ops[n].completed))
				continue;
			violation("(d) thread %llu: signaled %llu (kind %llu) never completed", p,
				  n, posts[p].ops[n].kind);
			/* the operations around it, and when their completions were taken */
			for (unsigned i = n > 8 ? n - 8 : 0; i < posts[p].n_ops && i < n + 8; i++) {
				const struct op *o = &posts[p].ops[i];
				t_log("  thread %u op %u: %s, %s, %s %llu", p, i,
				      kind_name[o->kind], o->signaled ? "signaled" : "unsignaled",
				      atomic_load(&o->completed) ? "taken" : "not taken",
				      o->taken_at);
			}
		}
	}
	t_log(
	    "%llu operations in %lld ms: %llu writes, %llu persistent and %llu visibility "
	    "flushes, %llu atomic writes, %llu reads, %llu sends; %llu signaled, %llu "
	    "completions, %llu batches, %llu waits for room; %llu streams of %llu writes "
	    "in all, %llu waits for the send queue, %llu for room in the CQ",
	    ops, took, (unsigned long long)counts[OP_WRITE], (unsigned long long)counts[OP_FLUSH_P],
	    (unsigned long long)counts[OP_FLUSH_V], (unsigned long long)counts[OP_ATOMIC],
	    (unsigned long long)counts[OP_READ], (unsigned long long)counts[OP_SEND], signaled,
	    (unsigned long long)atomic_load(&completions_taken),
	    (unsigned long long)atomic_load(&batches), (unsigned long long)atomic_load(&room_waits),
	    (unsigned long long)atomic_load(&streams),
	    (unsigned long long)atomic_load(&stream_writes),
	    (unsigned long long)atomic_load(&sq_full_waits),
	    (unsigned long long)atomic_load(&cq_room_waits));
	t_signal('D');
	t_await('V');
	const unsigned long long v = atomic_load(&sh->violations);
	t_log("%llu violations", v);
	T_EQ(v, 0);

	t_close(&conn, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	for (unsigned p = 0; p < posters; p++) {
		T_OK(rpma_mr_dereg(&posts[p].staging_mr));
		T_OK(rpma_mr_dereg(&posts[p].sink_mr));
	}
	T_OK(rpma_peer_delete(&peer));
}

/* the region: shared with the client, and persistent memory for native persistence */
static unsigned char *map_region(void)
{
	const char *path = getenv("RPMA_TEST_PMEM");
	if (ORACLE_METHOD == METHOD_NATIVE && path && *path) {
		int fd = open(path, O_RDWR);
		if (fd >= 0) {
			void *p =
			    mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			close(fd);
			if (p != MAP_FAILED) {
				region_is_device = true;
				return p;
			}
		}
	}
	void *p =
	    mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		T_FAIL("cannot map the region");
	return p;
}

int main(void)
{
	static const char *const names[] = { "oracle_gpspm_polled", "oracle_gpspm_thread",
					     "oracle_read_after_write", "oracle_native" };
	t_init(names[ORACLE_METHOD], 60 + ORACLE_METHOD);
	t_set_deadline(600);
	const char *s = getenv("RPMA_ORACLE_SEED");
	seed = s && *s ? strtoull(s, NULL, 0) : mix((unsigned long long)time(NULL) ^ getpid());
	const char *o = getenv("RPMA_ORACLE_OPS");
	ops_total = o && *o ? (unsigned)strtoul(o, NULL, 0) : 10000;
	if (ops_total > MAX_OPS)
		ops_total = MAX_OPS;
	posters = 1 + (unsigned)(seed % MAX_POSTERS);
	pollers = 1 + (unsigned)((seed >> 8) % 2);
	t_log("seed %llu (rerun: RPMA_ORACLE_SEED=%llu): %u posting and %u polling threads "
	      "(styles %llu, %llu), %u operations",
	      seed, seed, posters, pollers, (seed >> 16) % 3, (seed >> 20) % 3, ops_total);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	durable =
	    mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || durable == MAP_FAILED)
		T_FAIL("cannot map the shared state");
	region = map_region();
	memset(region, 0, REGION_SIZE);
	memset(sh, 0, sizeof(*sh));
	if (region_is_device)
		t_log("region: persistent memory %s", getenv("RPMA_TEST_PMEM"));
	return t_run(server, client);
}
