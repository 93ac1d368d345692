/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_threads.c -- what librpma(7) promises about threads (THREAD SAFETY),
 * on the fake rdma-core, with real threads: several threads posting on one
 * connection while one takes the completions, each attributed to the right
 * operation; a receive CQ polled by several threads; one peer registering
 * and deregistering regions, listening and making requests from several
 * threads; configurations changed while read; log thresholds and function
 * changed while others log; the provider error number kept per thread.
 * The ThreadSanitizer build (suite tsan) runs it too, which is where a data
 * race shows.
 *
 * Worker threads do not call cmocka (it cannot fail a test from another
 * thread): they record the first failure, which the test's own thread then
 * reports.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"

#define RADDR 0x7f0000100000ULL
#define RLEN  4096
#define RKEY  0xabcd1234U

static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint failures;
static char first_failure[512];

static void thread_failed(const char *file, int line, const char *what)
{
	pthread_mutex_lock(&failure_lock);
	if (atomic_fetch_add(&failures, 1) == 0)
		snprintf(first_failure, sizeof(first_failure), "%s:%d: %s", file, line, what);
	pthread_mutex_unlock(&failure_lock);
}

/* in a worker thread: record the failure and leave the thread's function */
#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			thread_failed(__FILE__, __LINE__, #cond);                                  \
			return NULL;                                                               \
		}                                                                                  \
	} while (0)

static void reset_failures(void)
{
	atomic_store(&failures, 0);
	first_failure[0] = '\0';
}

/* in the test's thread: fail the test on what the workers recorded */
static void assert_no_thread_failure(void)
{
	if (atomic_load(&failures) != 0)
		fail_msg("%u failure(s) in worker threads, the first: %s", atomic_load(&failures),
			 first_failure);
}

static void run_threads(unsigned n, void *(*fn)(void *), void *args, size_t arg_size)
{
	pthread_t threads[16];
	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(
		    pthread_create(&threads[i], NULL, fn, (char *)args + (size_t)i * arg_size), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_join(threads[i], NULL), 0);
}

/*
 * Posting from several threads on one connection
 */

#define POSTERS	    4
#define POSTS_EACH  1500
#define SQ_SIZE	    32
#define LOCAL_SLOTS 64 /* bytes of the local region each poster uses */

/* the operations a poster cycles through, and the completion each must give */
enum kind {
	K_WRITE,
	K_READ,
	K_FLUSH_PERSISTENT,
	K_FLUSH_VISIBILITY,
	K_ATOMIC,
	K_SEND,
	K_IMM,
	K_TEMPLATE, /* a write and its flush through one write template of every poster */
	K_N
};

static const enum rpma_op expected_op[K_N] = {
	[K_WRITE] = RPMA_OP_WRITE,
	[K_READ] = RPMA_OP_READ,
	[K_FLUSH_PERSISTENT] = RPMA_OP_FLUSH,
	[K_FLUSH_VISIBILITY] = RPMA_OP_FLUSH,
	[K_ATOMIC] = RPMA_OP_WRITE,
	[K_SEND] = RPMA_OP_SEND,
	[K_IMM] = RPMA_OP_WRITE,
	[K_TEMPLATE] = RPMA_OP_FLUSH, /* the write completes only on error */
};

/* the send queue entries each kind takes */
static unsigned entries_of(enum kind k)
{
	return k == K_TEMPLATE ? 2 : 1;
}

/* op_context: which poster, its sequence number, the kind (never 0) */
static uintptr_t context_of(unsigned poster, unsigned seq, enum kind k)
{
	return ((uintptr_t)(poster + 1) << 40) | ((uintptr_t)seq << 8) | (uintptr_t)k;
}

static struct {
	struct rpma_conn *conn;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *rmr;
	struct rpma_write_template *tmpl;
	struct rdma_cm_id *id;
	sem_t credits; /* free send queue entries: a real send queue refuses more */
	atomic_uint posted;
	atomic_uint entries; /* send queue entries posted */
	atomic_bool stop;    /* a poster failed: what it did not post never completes */
} post_ctx;

static char lbuf[POSTERS * LOCAL_SLOTS];

struct poster_arg {
	unsigned index;
};

static void *poster(void *arg)
{
	const unsigned me = ((struct poster_arg *)arg)->index;
	const size_t off = (size_t)me * LOCAL_SLOTS;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	struct rpma_conn *conn = post_ctx.conn;
	struct rpma_mr_local *mr = post_ctx.mr;
	struct rpma_mr_remote *rmr = post_ctx.rmr;
	const char word[8] = "atomic!";

	for (unsigned seq = 0; seq < POSTS_EACH; seq++) {
		const enum kind k = (enum kind)((seq + me) % K_N);
		void *c = (void *)context_of(me, seq, k);
		for (unsigned e = 0; e < entries_of(k); e++) {
			while (sem_wait(&post_ctx.credits) != 0)
				;
		}
		if (atomic_load(&post_ctx.stop))
			return NULL;
		const struct rpma_write_range range = { off, off, 16 };
		int ret = -1;
		switch (k) {
		case K_WRITE:
			ret = rpma_write(conn, rmr, off, mr, off, 16, f, c);
			break;
		case K_READ:
			ret = rpma_read(conn, mr, off, rmr, off, 16, f, c);
			break;
		case K_FLUSH_PERSISTENT:
			ret = rpma_flush(conn, rmr, off, 16, RPMA_FLUSH_TYPE_PERSISTENT, f, c);
			break;
		case K_FLUSH_VISIBILITY:
			ret = rpma_flush(conn, rmr, off, 16, RPMA_FLUSH_TYPE_VISIBILITY, f, c);
			break;
		case K_ATOMIC:
			ret = rpma_atomic_write(conn, rmr, off, word, f, c);
			break;
		case K_SEND:
			ret = rpma_send(conn, mr, off, 16, f, c);
			break;
		case K_IMM:
			ret = rpma_write_with_imm(conn, rmr, off, mr, off, 16, f, seq, c);
			break;
		case K_TEMPLATE:
			ret = rpma_write_template_post(post_ctx.tmpl, &range, 1, f, c);
			break;
		case K_N:
			break;
		}
		CHECK(ret == 0);
		atomic_fetch_add(&post_ctx.posted, 1);
		atomic_fetch_add(&post_ctx.entries, entries_of(k));
	}
	return NULL;
}

/* the work completion a device would make of a posted work request */
static struct ibv_wc wc_of(const struct fake_send_record *rec)
{
	enum ibv_wc_opcode op = IBV_WC_RDMA_WRITE;
	switch (rec->wr.opcode) {
	case IBV_WR_RDMA_READ:
		op = IBV_WC_RDMA_READ;
		break;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		op = IBV_WC_SEND;
		break;
	default:
		break;
	}
	return fx_wc(rec->wr.wr_id, op, IBV_WC_SUCCESS);
}

/*
 * The one thread taking completions: it completes the work requests in the
 * order the send queue got them, as an RC queue pair does, while the
 * posters keep posting, and checks each completion: the operation the
 * poster asked for (a flush is a read on the wire), and each poster's in
 * the order it posted them.
 */
static void *complete(void);

static void *completer(void *arg)
{
	(void)arg;
	void *ret = complete();
	if (atomic_load(&failures) != 0) {
		/* the posters may wait for credits that would never come */
		atomic_store(&post_ctx.stop, true);
		for (unsigned i = 0; i < POSTERS; i++)
			sem_post(&post_ctx.credits);
	}
	return ret;
}

static void *complete(void)
{
	const unsigned total = POSTERS * POSTS_EACH;
	struct ibv_cq *icq = post_ctx.id->qp->send_cq;
	struct rpma_cq *cq = NULL;
	CHECK(rpma_conn_get_cq(post_ctx.conn, &cq) == 0);
	unsigned next_seq[POSTERS] = { 0 };
	unsigned completed = 0, queued = 0;

	while (completed < total && !atomic_load(&post_ctx.stop)) {
		/* complete what was posted, as it was posted */
		const unsigned sends = fake_verbs_sends();
		for (; queued < sends; queued++) {
			const struct fake_send_record *rec = fake_verbs_send(queued);
			/* what succeeds unsignaled completes nothing */
			if (!(rec->wr.send_flags & IBV_SEND_SIGNALED))
				continue;
			struct ibv_wc wc = wc_of(rec);
			fake_verbs_push_wc(icq, &wc);
		}
		struct rpma_completion c[8];
		int n = rpma_cq_get_completions(cq, c, 8);
		CHECK(n >= 0);
		for (int i = 0; i < n; i++) {
			const uintptr_t ctx = (uintptr_t)c[i].op_context;
			const unsigned who = (unsigned)(ctx >> 40) - 1;
			const unsigned seq = (unsigned)(ctx >> 8) & 0xffffffffU;
			const enum kind k = (enum kind)(ctx & 0xff);
			CHECK(c[i].op_status == IBV_WC_SUCCESS);
			CHECK(who < POSTERS && k < K_N);
			CHECK(seq == next_seq[who]);
			CHECK(c[i].op == expected_op[k]);
			next_seq[who]++;
			completed++;
			for (unsigned e = 0; e < entries_of(k); e++)
				sem_post(&post_ctx.credits);
		}
	}
	struct rpma_completion none;
	CHECK(atomic_load(&post_ctx.stop) ||
	      rpma_cq_get_completion(cq, &none) == RPMA_E_NO_COMPLETION);
	return NULL;
}

static void posting__threads_on_one_connection(void **state)
{
	(void)state;
	reset_failures();
	struct rpma_conn_cfg *cfg = fx_cfg(SQ_SIZE, 0, false);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, SQ_SIZE), 0);
	memset(&post_ctx, 0, sizeof(post_ctx));
	post_ctx.conn = fx_conn_active(cfg, &post_ctx.id);
	post_ctx.mr = fx_mr(lbuf, sizeof(lbuf),
			    RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND);
	post_ctx.rmr = fx_mr_remote(RADDR, RLEN, RKEY,
				    RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
					RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
					RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	/* a target that says it writes to pmem directly: a persistent flush is a read */
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	assert_int_equal(rpma_conn_apply_remote_peer_cfg(post_ctx.conn, pcfg), 0);
	/* one template for every poster: its chain is taken by one post at a time */
	assert_int_equal(rpma_write_template_new(post_ctx.conn, post_ctx.rmr, post_ctx.mr,
						 RPMA_FLUSH_TYPE_PERSISTENT, &post_ctx.tmpl),
			 0);
	assert_int_equal(sem_init(&post_ctx.credits, 0, SQ_SIZE), 0);

	pthread_t done;
	assert_int_equal(pthread_create(&done, NULL, completer, NULL), 0);
	struct poster_arg args[POSTERS];
	for (unsigned i = 0; i < POSTERS; i++)
		args[i].index = i;
	run_threads(POSTERS, poster, args, sizeof(args[0]));
	if (atomic_load(&failures) != 0)
		atomic_store(&post_ctx.stop, true);
	assert_int_equal(pthread_join(done, NULL), 0);
	assert_no_thread_failure();
	assert_int_equal(atomic_load(&post_ctx.posted), POSTERS * POSTS_EACH);
	assert_int_equal(fake_verbs_sends(), atomic_load(&post_ctx.entries));
	assert_true(atomic_load(&post_ctx.entries) > POSTERS * POSTS_EACH);

	sem_destroy(&post_ctx.credits);
	assert_int_equal(rpma_write_template_delete(&post_ctx.tmpl), 0);
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
	fx_mr_remote_delete(&post_ctx.rmr);
	fx_mr_dereg(&post_ctx.mr);
	fx_conn_delete(&post_ctx.conn);
	fx_cfg_delete(&cfg);
}

/*
 * A receive CQ polled from several threads while completions arrive
 */

#define RECV_POLLERS 3
#define RECVS	     6000

static struct {
	struct rpma_cq *rcq;
	struct ibv_cq *ircq;
	atomic_uint taken;
	atomic_uchar seen[RECVS];
} recv_ctx;

static void *recv_producer(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < RECVS; i++) {
		struct ibv_wc wc = fx_wc(i + 1, IBV_WC_RECV, IBV_WC_SUCCESS);
		wc.byte_len = i % 64;
		fake_verbs_push_wc(recv_ctx.ircq, &wc);
	}
	return NULL;
}

static void *recv_poller(void *arg)
{
	(void)arg;
	while (atomic_load(&recv_ctx.taken) < RECVS) {
		struct rpma_completion c;
		int ret = rpma_cq_get_completion(recv_ctx.rcq, &c);
		if (ret == RPMA_E_NO_COMPLETION)
			continue;
		CHECK(ret == 0);
		const uintptr_t id = (uintptr_t)c.op_context;
		CHECK(id >= 1 && id <= RECVS);
		CHECK(c.op == RPMA_OP_RECV);
		CHECK(c.byte_len == (id - 1) % 64);
		/* each once */
		CHECK(atomic_fetch_add(&recv_ctx.seen[id - 1], 1) == 0);
		atomic_fetch_add(&recv_ctx.taken, 1);
	}
	return NULL;
}

static void receive_cq__polled_by_several_threads(void **state)
{
	(void)state;
	reset_failures();
	struct rpma_conn_cfg *cfg = fx_cfg(8, 64, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	memset(&recv_ctx, 0, sizeof(recv_ctx));
	assert_int_equal(rpma_conn_get_rcq(conn, &recv_ctx.rcq), 0);
	recv_ctx.ircq = id->qp->recv_cq;

	pthread_t producer;
	assert_int_equal(pthread_create(&producer, NULL, recv_producer, NULL), 0);
	char unused[RECV_POLLERS];
	run_threads(RECV_POLLERS, recv_poller, unused, 1);
	assert_int_equal(pthread_join(producer, NULL), 0);
	assert_no_thread_failure();
	assert_int_equal(atomic_load(&recv_ctx.taken), RECVS);

	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

/*
 * One peer: regions, endpoints and connection requests from several threads
 */

#define PEER_USERS  4
#define PEER_ROUNDS 150

struct peer_user_arg {
	unsigned index;
	char buf[4 * 4096];
};

static void *peer_user(void *arg)
{
	struct peer_user_arg *a = arg;
	char port[16];
	snprintf(port, sizeof(port), "%u", 7300 + a->index);
	for (unsigned round = 0; round < PEER_ROUNDS; round++) {
		/* a few regions, registered and deregistered in another order */
		struct rpma_mr_local *mrs[4] = { NULL };
		for (unsigned i = 0; i < 4; i++)
			CHECK(rpma_mr_reg(fx_peer, a->buf + i * 4096, 4096,
					  RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST,
					  &mrs[i]) == 0);
		for (unsigned i = 0; i < 4; i++) {
			size_t size = 0;
			CHECK(rpma_mr_get_size(mrs[i], &size) == 0 && size == 4096);
		}
		for (unsigned i = 4; i > 0; i--)
			CHECK(rpma_mr_dereg(&mrs[(i + round) % 4]) == 0);

		/* a connection request, and now and then an endpoint */
		struct rpma_conn_req *req = NULL;
		CHECK(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, NULL, &req) == 0);
		CHECK(rpma_conn_req_delete(&req) == 0);
		if (round % 10 == 0) {
			struct rpma_ep *ep = NULL;
			CHECK(rpma_ep_listen(fx_peer, FX_ADDR, port, &ep) == 0);
			CHECK(rpma_ep_shutdown(&ep) == 0);
		}
	}
	return NULL;
}

static void peer__used_by_several_threads(void **state)
{
	(void)state;
	reset_failures();
	const int base = fake_verbs_live_objects();
	static struct peer_user_arg args[PEER_USERS];
	for (unsigned i = 0; i < PEER_USERS; i++)
		args[i].index = i;
	run_threads(PEER_USERS, peer_user, args, sizeof(args[0]));
	assert_no_thread_failure();
	assert_int_equal(fake_verbs_live_objects(), base);
	/* each round: four regions, and the flush sink of its connection request */
	assert_int_equal(fake_verbs_calls(FAKE_REG_MR), PEER_USERS * PEER_ROUNDS * 5);
	assert_int_equal(fake_verbs_calls(FAKE_DEREG_MR), PEER_USERS * PEER_ROUNDS * 5);
}

/*
 * Configurations changed from several threads while others read them
 */

#define CFG_ROUNDS 3000

static struct rpma_conn_cfg *shared_cfg;
static struct rpma_peer_cfg *shared_pcfg;

static void *cfg_writer(void *arg)
{
	const unsigned me = *(unsigned *)arg;
	for (unsigned i = 0; i < CFG_ROUNDS; i++) {
		/* the values written are 16 or 32: a torn or stale one is neither */
		const uint32_t v = ((i + me) % 2) ? 32 : 16;
		CHECK(rpma_conn_cfg_set_cq_size(shared_cfg, v) == 0);
		CHECK(rpma_conn_cfg_set_sq_size(shared_cfg, v) == 0);
		CHECK(rpma_conn_cfg_set_rcq_size(shared_cfg, v) == 0);
		CHECK(rpma_conn_cfg_set_timeout(shared_cfg, (int)v) == 0);
		CHECK(rpma_peer_cfg_set_direct_write_to_pmem(shared_pcfg, v == 32) == 0);
	}
	return NULL;
}

static void *cfg_reader(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < CFG_ROUNDS; i++) {
		uint32_t cq = 0, sq = 0, rcq = 0;
		int timeout = 0;
		bool direct = false;
		CHECK(rpma_conn_cfg_get_cq_size(shared_cfg, &cq) == 0 && (cq == 16 || cq == 32));
		CHECK(rpma_conn_cfg_get_sq_size(shared_cfg, &sq) == 0 && (sq == 16 || sq == 32));
		CHECK(rpma_conn_cfg_get_rcq_size(shared_cfg, &rcq) == 0 &&
		      (rcq == 16 || rcq == 32));
		CHECK(rpma_conn_cfg_get_timeout(shared_cfg, &timeout) == 0 &&
		      (timeout == 16 || timeout == 32));
		CHECK(rpma_peer_cfg_get_direct_write_to_pmem(shared_pcfg, &direct) == 0);
		/* and a connection request made with it as it changes */
		if (i % 50 == 0) {
			struct rpma_conn_req *req = NULL;
			CHECK(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, shared_cfg, &req) == 0);
			CHECK(rpma_conn_req_delete(&req) == 0);
		}
	}
	return NULL;
}

static void *cfg_worker(void *arg)
{
	const unsigned me = *(unsigned *)arg;
	return me % 2 ? cfg_writer(arg) : cfg_reader(arg);
}

static void configuration__changed_while_read(void **state)
{
	(void)state;
	reset_failures();
	shared_cfg = fx_cfg(16, 16, false);
	assert_int_equal(rpma_conn_cfg_set_sq_size(shared_cfg, 16), 0);
	assert_int_equal(rpma_conn_cfg_set_timeout(shared_cfg, 16), 0);
	assert_int_equal(rpma_peer_cfg_new(&shared_pcfg), 0);
	unsigned args[4] = { 0, 1, 2, 3 };
	run_threads(4, cfg_worker, args, sizeof(args[0]));
	assert_no_thread_failure();
	assert_int_equal(rpma_peer_cfg_delete(&shared_pcfg), 0);
	fx_cfg_delete(&shared_cfg);
}

/*
 * Log thresholds and the log function changed while other threads log
 */

#define LOGGERS	   3
#define LOG_ROUNDS 4000

static atomic_uint logged_a, logged_b;
static atomic_bool logging_done;

static void log_a(enum rpma_log_level level, const char *file_name, const int line_no,
		  const char *function_name, const char *message_format, ...)
{
	(void)level, (void)file_name, (void)line_no, (void)function_name, (void)message_format;
	atomic_fetch_add(&logged_a, 1);
}

static void log_b(enum rpma_log_level level, const char *file_name, const int line_no,
		  const char *function_name, const char *message_format, ...)
{
	(void)level, (void)file_name, (void)line_no, (void)function_name, (void)message_format;
	atomic_fetch_add(&logged_b, 1);
}

static void *logger(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < LOG_ROUNDS; i++) {
		/* an invalid argument is logged at ERROR */
		CHECK(rpma_conn_cfg_set_cq_size(NULL, 1) == RPMA_E_INVAL);
		CHECK(rpma_mr_remote_from_descriptor(
			  "short", 5, &(struct rpma_mr_remote *){ NULL }) == RPMA_E_INVAL);
	}
	return NULL;
}

static void *log_changer(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !atomic_load(&logging_done); i++) {
		CHECK(rpma_log_set_function(i % 2 ? log_a : log_b) == 0);
		CHECK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, i % 3 ? RPMA_LOG_LEVEL_ERROR
								       : RPMA_LOG_DISABLED) == 0);
	}
	return NULL;
}

static void logging__changed_while_logging(void **state)
{
	(void)state;
	reset_failures();
	atomic_store(&logged_a, 0);
	atomic_store(&logged_b, 0);
	atomic_store(&logging_done, false);
	pthread_t changer;
	assert_int_equal(pthread_create(&changer, NULL, log_changer, NULL), 0);
	char unused[LOGGERS];
	run_threads(LOGGERS, logger, unused, 1);
	atomic_store(&logging_done, true);
	assert_int_equal(pthread_join(changer, NULL), 0);
	assert_no_thread_failure();
	/* some messages went each way, none beyond what was logged */
	const unsigned total = atomic_load(&logged_a) + atomic_load(&logged_b);
	assert_true(total <= LOGGERS * LOG_ROUNDS * 2);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
}

/*
 * The provider error number, kept per thread: each of two threads sees the
 * errno of its own failure, whatever the other's was since.
 */

static pthread_barrier_t in_turn;
static char region[4096];

static void *provider_failer(void *arg)
{
	const int err = *(int *)arg;
	/* first one thread fails, then the other; then both look */
	for (int turn = 0; turn < 2; turn++) {
		if ((turn == 0) == (err == EPROTO)) {
			struct rpma_mr_local *mr = NULL;
			fake_verbs_fail(FAKE_REG_MR, 1, err);
			CHECK(rpma_mr_reg(fx_peer, region, sizeof(region), RPMA_MR_USAGE_READ_SRC,
					  &mr) == RPMA_E_PROVIDER);
		}
		pthread_barrier_wait(&in_turn);
	}
	CHECK(rpma_err_get_provider_error() == err);
	return NULL;
}

static void provider_error__kept_per_thread(void **state)
{
	(void)state;
	reset_failures();
	const int mine = rpma_err_get_provider_error();
	assert_int_equal(pthread_barrier_init(&in_turn, NULL, 2), 0);
	int errs[2] = { EPROTO, ENOMEM };
	run_threads(2, provider_failer, errs, sizeof(errs[0]));
	assert_int_equal(pthread_barrier_destroy(&in_turn), 0);
	assert_no_thread_failure();
	/* and this thread's own is untouched by both */
	assert_int_equal(rpma_err_get_provider_error(), mine);
}

/* the fixture, with a log function that several threads may call */
static int threads_setup(void **state)
{
	fx_setup(state);
	assert_int_equal(rpma_log_set_function(log_a), 0);
	return 0;
}

/*
 * Two threads wait on one CQ (rpma_cq_wait_completion) and one event comes:
 * both are woken, one takes the event and the completion, and the other
 * must not read the channel (a blocking one, as rdma-core's are), where it
 * would wait for an event that may never come.
 */
struct waiter {
	struct rpma_cq *cq;
	int ret;
	struct rpma_completion cmpl;
};

static void *wait_one(void *arg)
{
	struct waiter *w = arg;
	w->ret = rpma_cq_wait_completion(w->cq, &w->cmpl, 400);
	return NULL;
}

static void two_threads_one_event(bool application_has_fd)
{
	fake_verbs_set_blocking_channels(true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	if (application_has_fd) {
		/* the fd is then blocking, as librpma 1.x gave it */
		int fd = -1;
		assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
		assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	}
	/* both get past poll() before either reads */
	fake_verbs_set_cq_event_delay(50);
	struct waiter w[2] = { { .cq = cq }, { .cq = cq } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, wait_one, &w[i]), 0);
	usleep(50000); /* both asleep in poll() */
	struct ibv_wc wc = fx_wc(0x51, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	fake_verbs_push_cq_event(id->qp->send_cq->channel, id->qp->send_cq);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	fake_verbs_set_cq_event_delay(0);
	/* one has the completion, the other nothing after its time */
	const int got = w[0].ret == 0 ? 0 : 1;
	assert_int_equal(w[got].ret, 0);
	assert_ptr_equal(w[got].cmpl.op_context, (void *)0x51);
	assert_int_equal(w[1 - got].ret, RPMA_E_NO_COMPLETION);
	/* the other did not read the empty channel */
	assert_int_equal(fake_verbs_misuse(), 0);
	fx_conn_delete(&conn);
}

/* the application took the channel's fd (rpma_cq_get_fd): a look before each read */
static void waiting__two_threads_one_event(void **state)
{
	(void)state;
	two_threads_one_event(true);
}

/* the channel is the library's alone, non-blocking: the read itself says */
static void waiting__two_threads_one_event_library_fd(void **state)
{
	(void)state;
	two_threads_one_event(false);
}

/*
 * One thread watches a connection's events as a wait does (rpma_conn_is_up
 * takes them from rdma_cm into the connection's stash) while another reads
 * them (rpma_conn_next_event, which empties the stash first): each event
 * is read once, in the order it came, whichever thread took it from
 * rdma_cm. The stash is the connection's, shared by both under its lock.
 */
#define EVENTS_PUSHED 2000

static struct {
	struct rpma_conn *conn;
	atomic_bool done;
} watched;

static void *event_watcher(void *arg)
{
	(void)arg;
	while (!atomic_load(&watched.done)) {
		bool up = false;
		CHECK(rpma_conn_is_up(watched.conn, &up) == 0);
		CHECK(up);
	}
	return NULL;
}

static void events__watched_while_read(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	watched.conn = fx_conn_active(NULL, &id);
	struct rdma_event_channel *ch = fx_conn_channel(id);
	atomic_store(&watched.done, false);
	reset_failures();
	/*
	 * ESTABLISHED, then an event of no meaning here, in turn, all there
	 * before either thread looks: the reader then mostly reads what the
	 * watcher stashed, with nothing but the connection's lock between them
	 */
	for (unsigned i = 0; i < EVENTS_PUSHED; i++)
		fake_verbs_push_cm_event(
		    ch, i % 2 ? RDMA_CM_EVENT_ADDR_CHANGE : RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	pthread_t watcher;
	assert_int_equal(pthread_create(&watcher, NULL, event_watcher, NULL), 0);
	unsigned read = 0;
	const time_t give_up = time(NULL) + 30;
	while (read < EVENTS_PUSHED && time(NULL) < give_up) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		const int ret = rpma_conn_next_event(watched.conn, &ev);
		if (ret == RPMA_E_NO_EVENT)
			continue;
		if (read % 2) {
			assert_int_equal(ret, RPMA_E_UNKNOWN);
		} else {
			assert_int_equal(ret, 0);
			assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
		}
		read++;
	}
	atomic_store(&watched.done, true);
	assert_int_equal(pthread_join(watcher, NULL), 0);
	assert_no_thread_failure();
	assert_int_equal(read, EVENTS_PUSHED);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(watched.conn, &ev), RPMA_E_NO_EVENT);
	fx_conn_delete(&watched.conn);
}

int main(void)
{
	/* one test a line */
	/* clang-format off */
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, threads_setup, fx_teardown)
		T(posting__threads_on_one_connection),
		T(receive_cq__polled_by_several_threads),
		T(peer__used_by_several_threads),
		T(configuration__changed_while_read),
		T(logging__changed_while_logging),
		T(provider_error__kept_per_thread),
		T(waiting__two_threads_one_event),
		T(waiting__two_threads_one_event_library_fd),
		T(events__watched_while_read),
#undef T
	};
	/* clang-format on */
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
