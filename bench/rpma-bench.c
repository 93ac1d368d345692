/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma-bench.c -- latency and throughput of the librpma data path.
 *
 * The same binary runs on any librpma.so.0: it is written against the
 * librpma 1.x API only, and the library it loaded is printed (dladdr on
 * rpma_write), so a comparison cannot silently measure the same library
 * twice. Built with RPMA_BENCH_NG (rpma-bench-ng) it can also use the
 * extensions: completions without struct ibv_wc, waiting with
 * rpma_cq_wait_completion, persistent flushes carried by GPSPM (--flush
 * gpspm, on both sides) and, when the header declares it
 * (HAVE_RPMA_POST_BATCH), one doorbell for the writes and the flush of a
 * persistent write.
 *
 *   rpma-bench server [--addr A] [--port P] [--connections N]
 *   rpma-bench client [--addr A] [--port P] [--modes M,...] [options]
 *
 * The server declares direct write to PMem for a region of ordinary memory
 * (or, with --flush gpspm, persists it with a cache-line write-back): what
 * is measured is the library and the RDMA path, not a platform's
 * persistence. Every result is one line of key=value pairs beginning with
 * "result ", for scripts (bench/compare.sh).
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <librpma.h>

#if defined(RPMA_BENCH_NG) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif

#ifdef RPMA_BENCH_NG
#define BENCH_NAME "rpma-bench-ng"
#else
#define BENCH_NAME "rpma-bench"
#endif

/* the server's target region: four flushes in flight of 16 writes of 1 MiB */
#define DEFAULT_REGION (64u << 20)
/* the largest message of the send/recv ping-pong */
#define MSG_MAX (64u << 10)
/* receives the server keeps posted */
#define SERVER_RECVS 4
/* unsignaled sends are retired by a signaled one every SEND_SIGNAL_EVERY */
#define SEND_SIGNAL_EVERY 16
/* a busy poll that sees nothing for this long means the peer is gone */
#define POLL_GIVE_UP_S 10.0

enum mode { MODE_WRITE_LAT, MODE_WRITE_TPUT, MODE_READ_LAT, MODE_SENDRECV_LAT, MODE_COUNT };
static const char *const mode_names[MODE_COUNT] = { "write-lat", "write-tput", "read-lat",
						    "sendrecv-lat" };

enum wait_kind {
	WAIT_POLL,  /* busy rpma_cq_get_wc */
	WAIT_EVENT, /* rpma_cq_wait, then rpma_cq_get_wc */
#ifdef RPMA_BENCH_NG
	WAIT_POLL_COMPLETION, /* busy rpma_cq_get_completion */
	WAIT_COMPLETION,      /* rpma_cq_wait_completion */
#endif
};
static const char *const wait_names[] = { "poll", "event",
#ifdef RPMA_BENCH_NG
					  "poll-completion", "completion"
#endif
};

enum post_kind {
	POST_SINGLE, /* one call (one doorbell) per operation: rpma_write, rpma_flush */
#ifdef HAVE_RPMA_POST_BATCH
	POST_BATCH, /* rpma_post_batch: the writes and their flush in one doorbell */
#endif
};
static const char *const post_names[] = { "single",
#ifdef HAVE_RPMA_POST_BATCH
					  "batch"
#endif
};

enum flush_kind {
	FLUSH_READ_AFTER_WRITE, /* the server declares direct write to PMem */
#ifdef RPMA_BENCH_NG
	FLUSH_GPSPM,  /* the server's CPU persists every flushed range (both sides) */
	FLUSH_NATIVE, /* the RDMA FLUSH verb, where both devices have it (both sides) */
#endif
};
static const char *const flush_names[] = { "read-after-write",
#ifdef RPMA_BENCH_NG
					   "gpspm", "native"
#endif
};

struct options {
	bool server;
	const char *addr;
	const char *port;
	int connections;    /* server: serve this many, then exit (0: forever) */
	size_t region;	    /* server: target region size */
	const char *pmem;   /* server: the region is this device DAX or file, mapped */
	long gpspm_spin_us; /* server, GPSPM: rpma_conn_cfg_set_gpspm_spin (-1: the default) */
	bool modes[MODE_COUNT];
	size_t lat_sizes[32], tput_sizes[32], msg_sizes[32];
	int n_lat_sizes, n_tput_sizes, n_msg_sizes;
	long iters;	/* at most this many measured operations per point */
	long min_iters; /* at least this many, whatever the time */
	long warmup;	/* unmeasured operations before each point */
	double seconds; /* time budget per point (0: no limit, exactly iters) */
	int writes_per_flush;
	int flushes_in_flight;
	enum wait_kind wait;
	enum post_kind post;
	enum flush_kind flush;
	bool untimed; /* latency modes: exactly iters operations, no clock, no statistics */
};

static struct options opt = {
	.addr = "192.0.2.1",
	.port = "7600",
	.region = DEFAULT_REGION,
	.iters = 100000,
	.min_iters = 20,
	.warmup = 20,
	.seconds = 1.0,
	.writes_per_flush = 16,
	.flushes_in_flight = 4,
	.wait = WAIT_POLL,
	.post = POST_SINGLE,
	.flush = FLUSH_READ_AFTER_WRITE,
	.gpspm_spin_us = -1,
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, BENCH_NAME ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* a librpma call that must succeed */
#define CALL(expr)                                                                                 \
	do {                                                                                       \
		int call_ret_ = (expr);                                                            \
		if (call_ret_ != 0)                                                                \
			fail("%s:%d: %s: %s", __FILE__, __LINE__, #expr,                           \
			     rpma_err_2str(call_ret_));                                            \
	} while (0)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- set-up */

static const char *api_name(void)
{
#ifdef RPMA_BENCH_NG
	return "ng";
#else
	return "1.x";
#endif
}

/* The library this process really runs on: a mix-up must show. */
static void print_library(void)
{
	Dl_info info;
	char path[PATH_MAX];
	if (dladdr((void *)rpma_write, &info) == 0 || info.dli_fname == NULL)
		fail("dladdr(rpma_write) failed: cannot tell which librpma is loaded");
	if (realpath(info.dli_fname, path) == NULL)
		snprintf(path, sizeof(path), "%s", info.dli_fname);
	printf("library path=%s api=%s post=%s wait=%s flush=%s\n", path, api_name(),
	       post_names[opt.post], wait_names[opt.wait], flush_names[opt.flush]);
}

static struct rpma_peer *peer_for(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ctx = NULL;
	struct rpma_peer *peer = NULL;
	CALL(rpma_utils_get_ibv_context(addr, type, &ctx));
	CALL(rpma_peer_new(ctx, &peer));
	return peer;
}

static void *alloc_buf(size_t size)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, size) != 0)
		fail("cannot allocate %zu bytes", size);
	memset(p, 0x5a, size);
	return p;
}

/*
 * The server's region from a device DAX (or a file), mapped shared: what
 * the device must know to be persistent memory to grant native persistent
 * flush (rxe refuses it for DRAM).
 */
static void *map_region(const char *path, size_t size)
{
	int fd = open(path, O_RDWR);
	if (fd < 0)
		fail("cannot open %s: %s", path, strerror(errno));
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fail("cannot map %zu bytes of %s: %s", size, path, strerror(errno));
	close(fd);
	memset(p, 0x5a, size);
	return p;
}

static struct rpma_conn_cfg *conn_cfg_for(uint32_t sq, uint32_t cq, uint32_t rq)
{
	struct rpma_conn_cfg *cfg = NULL;
	CALL(rpma_conn_cfg_new(&cfg));
	CALL(rpma_conn_cfg_set_sq_size(cfg, sq));
	CALL(rpma_conn_cfg_set_cq_size(cfg, cq));
	CALL(rpma_conn_cfg_set_rq_size(cfg, rq));
	CALL(rpma_conn_cfg_set_timeout(cfg, 5000));
	return cfg;
}

static void expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	CALL(rpma_conn_next_event(conn, &ev));
	if (ev != want)
		fail("connection event %s, expected %s", rpma_utils_conn_event_2str(ev),
		     rpma_utils_conn_event_2str(want));
}

/* ------------------------------------------------------------ completions */

struct cmpl {
	const void *ctx;
	bool ok;
	bool recv;
	uint32_t len;
	int status;
};

static long empty_polls; /* busy polls that found nothing, for the record */
static long waits;	 /* times the process slept on the completion channel */

static void from_wc(const struct ibv_wc *wc, struct cmpl *c)
{
	c->ctx = (const void *)(uintptr_t)wc->wr_id;
	c->ok = wc->status == IBV_WC_SUCCESS;
	c->status = (int)wc->status;
	c->recv = c->ok && (wc->opcode & IBV_WC_RECV);
	c->len = wc->byte_len;
}

#ifdef RPMA_BENCH_NG
static void from_completion(const struct rpma_completion *rc, struct cmpl *c)
{
	c->ctx = rc->op_context;
	c->ok = rc->op_status == IBV_WC_SUCCESS;
	c->status = (int)rc->op_status;
	c->recv = c->ok && (rc->op == RPMA_OP_RECV || rc->op == RPMA_OP_RECV_RDMA_WITH_IMM);
	c->len = rc->byte_len;
}
#endif

static void poll_stalled(void)
{
	static double since;
	double t = now_s();
	if (since == 0.0 || t - since > 2 * POLL_GIVE_UP_S) {
		since = t; /* a new stall (or the first) */
		return;
	}
	if (t - since > POLL_GIVE_UP_S)
		fail("no completion for %.0f s: the peer is gone", POLL_GIVE_UP_S);
}

/* Takes the next completion of cq, the way opt.wait says. */
static void take(struct rpma_cq *cq, struct cmpl *c)
{
	long spins = 0;
	for (;;) {
		int ret;
		switch (opt.wait) {
		case WAIT_POLL:
		case WAIT_EVENT: {
			struct ibv_wc wc;
			ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			if (ret == 0) {
				from_wc(&wc, c);
				return;
			}
			break;
		}
#ifdef RPMA_BENCH_NG
		case WAIT_POLL_COMPLETION: {
			struct rpma_completion rc;
			ret = rpma_cq_get_completion(cq, &rc);
			if (ret == 0) {
				from_completion(&rc, c);
				return;
			}
			break;
		}
		case WAIT_COMPLETION: {
			struct rpma_completion rc;
			ret = rpma_cq_wait_completion(cq, &rc, (int)(POLL_GIVE_UP_S * 1000));
			if (ret == 0) {
				from_completion(&rc, c);
				return;
			}
			if (ret == RPMA_E_NO_COMPLETION)
				fail("no completion for %.0f s: the peer is gone", POLL_GIVE_UP_S);
			break;
		}
#endif
		}
		if (ret != RPMA_E_NO_COMPLETION)
			fail("taking a completion: %s", rpma_err_2str(ret));
		empty_polls++;
		if (opt.wait == WAIT_EVENT) {
			waits++;
			CALL(rpma_cq_wait(cq));
		} else if (++spins % (1L << 20) == 0) {
			poll_stalled();
		}
	}
}

/* Takes completions until the one of ctx, which must have succeeded. */
static void take_ctx(struct rpma_cq *cq, const void *ctx, const char *what)
{
	struct cmpl c;
	do {
		take(cq, &c);
		if (!c.ok)
			fail("%s: a completion failed (status %d: %s)", what, c.status,
			     ibv_wc_status_str((enum ibv_wc_status)c.status));
	} while (c.ctx != ctx);
}

/* ---------------------------------------------------------------- posting */

/* contexts of the signaled operations (their addresses are what is compared) */
#define MAX_IN_FLIGHT 64
static const char flush_ctx[MAX_IN_FLIGHT];
#define FLUSH_CTX(i) ((const void *)&flush_ctx[(i)])
static const char read_ctx, recv_ctx, send_ctx;

struct client {
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *mr; /* [0, max) data, then the send area, then the receive area */
	struct rpma_mr_remote *dst;
	size_t dst_size;
	size_t data_size;
};

/* W writes of size bytes at dst_off.. and one persistent flush of them */
static void post_persistent_writes(struct client *cl, size_t dst_off, size_t size, int w,
				   const void *ctx)
{
	size_t span = (size_t)w * size;
#ifdef HAVE_RPMA_POST_BATCH
	if (opt.post == POST_BATCH) {
		struct rpma_batch_op ops[RPMA_BATCH_MAX];
		for (int i = 0; i < w; i++) {
			ops[i] = (struct rpma_batch_op){
				.op = RPMA_OP_WRITE,
				.flags = RPMA_F_COMPLETION_ON_ERROR,
				.local = cl->mr,
				.local_offset = 0,
				.remote = cl->dst,
				.remote_offset = dst_off + (size_t)i * size,
				.len = size,
			};
		}
		ops[w] = (struct rpma_batch_op){
			.op = RPMA_OP_FLUSH,
			.flags = RPMA_F_COMPLETION_ALWAYS,
			.op_context = ctx,
			.remote = cl->dst,
			.remote_offset = dst_off,
			.len = span,
			.flush_type = RPMA_FLUSH_TYPE_PERSISTENT,
		};
		int failed = -1;
		int ret = rpma_post_batch(cl->conn, ops, w + 1, &failed);
		if (ret)
			fail("rpma_post_batch: %s (element %d)", rpma_err_2str(ret), failed);
		return;
	}
#endif
	for (int i = 0; i < w; i++)
		CALL(rpma_write(cl->conn, cl->dst, dst_off + (size_t)i * size, cl->mr, 0, size,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
	CALL(rpma_flush(cl->conn, cl->dst, dst_off, span, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, ctx));
}

/* ---------------------------------------------------------------- results */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* nearest rank: the smallest sample with at least p of them at or below it */
static double percentile(const double *sorted, long n, double p)
{
	long rank = (long)ceil(p * (double)n);
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static void report_latency(enum mode m, size_t size, double *us, long n)
{
	double sum = 0;
	qsort(us, (size_t)n, sizeof(*us), cmp_double);
	for (long i = 0; i < n; i++)
		sum += us[i];
	printf("result mode=%s size=%zu iters=%ld p50_us=%.2f p99_us=%.2f p999_us=%.2f "
	       "avg_us=%.2f min_us=%.2f max_us=%.2f\n",
	       mode_names[m], size, n, percentile(us, n, 0.50), percentile(us, n, 0.99),
	       percentile(us, n, 0.999), sum / (double)n, us[0], us[n - 1]);
	fflush(stdout);
}

/* measure another operation? */
static bool more(long done, double t_start)
{
	if (done >= opt.iters)
		return false;
	if (opt.seconds <= 0 || done < opt.min_iters)
		return true;
	return now_s() - t_start < opt.seconds;
}

/* ------------------------------------------------------------------ modes */

static double *samples;

/* warming up takes at most this share of a size's time budget */
#define WARMUP_SHARE 0.2

static void one_persistent_write(struct client *cl, size_t size)
{
	post_persistent_writes(cl, 0, size, 1, FLUSH_CTX(0));
	take_ctx(cl->cq, FLUSH_CTX(0), "persistent write");
}

static void one_read(struct client *cl, size_t size)
{
	CALL(rpma_read(cl->conn, cl->mr, 0, cl->dst, 0, size, RPMA_F_COMPLETION_ALWAYS, &read_ctx));
	take_ctx(cl->cq, &read_ctx, "read");
}

static void one_ping_pong(struct client *cl, size_t size)
{
	static unsigned long seq;
	int flags =
	    ++seq % SEND_SIGNAL_EVERY ? RPMA_F_COMPLETION_ON_ERROR : RPMA_F_COMPLETION_ALWAYS;
	CALL(rpma_recv(cl->conn, cl->mr, cl->data_size + MSG_MAX, MSG_MAX, &recv_ctx));
	CALL(rpma_send(cl->conn, cl->mr, cl->data_size, size, flags, &send_ctx));
	take_ctx(cl->cq, &recv_ctx, "send/recv");
}

static void run_latency(struct client *cl, enum mode m, size_t size)
{
	void (*one)(struct client *, size_t) = m == MODE_WRITE_LAT  ? one_persistent_write
					       : m == MODE_READ_LAT ? one_read
								    : one_ping_pong;
	double warm = now_s();
	for (long i = 0; i < opt.warmup && (i == 0 || opt.seconds <= 0 ||
					    now_s() - warm < opt.seconds * WARMUP_SHARE);
	     i++)
		one(cl, size);
	if (opt.untimed) {
		/* nothing but the operations, for instruction counts */
		for (long i = 0; i < opt.iters; i++)
			one(cl, size);
		printf("result mode=%s size=%zu iters=%ld untimed=1\n", mode_names[m], size,
		       opt.iters);
		return;
	}
	long n = 0;
	double start = now_s(), t0 = start;
	while (more(n, start)) {
		one(cl, size);
		double t1 = now_s();
		samples[n++] = (t1 - t0) * 1e6;
		t0 = t1;
	}
	report_latency(m, size, samples, n);
}

/*
 * Keeps flushes_in_flight batches of writes_per_flush writes and one
 * persistent flush posted, for `batches` batches, or until the budget of
 * seconds is spent once min_batches completed; returns how many completed.
 */
static long pump(struct client *cl, size_t size, long batches, long min_batches, double budget,
		 double *seconds)
{
	int w = opt.writes_per_flush, f = opt.flushes_in_flight;
	size_t span = (size_t)w * size;
	long slots = (long)(cl->dst_size / span);
	long posted = 0, completed = 0;
	double start = now_s();
	for (; posted < f && posted < batches; posted++)
		post_persistent_writes(cl, (size_t)(posted % slots) * span, size, w,
				       FLUSH_CTX(posted % f));
	while (completed < posted) {
		take_ctx(cl->cq, FLUSH_CTX(completed % f), "pipelined persistent writes");
		completed++;
		bool go_on = posted < batches;
		if (go_on && opt.seconds > 0 && completed >= min_batches)
			go_on = now_s() - start < budget;
		if (go_on) {
			post_persistent_writes(cl, (size_t)(posted % slots) * span, size, w,
					       FLUSH_CTX(posted % f));
			posted++;
		}
	}
	*seconds = now_s() - start;
	return completed;
}

static void run_throughput(struct client *cl, size_t size)
{
	int w = opt.writes_per_flush, f = opt.flushes_in_flight;
	size_t span = (size_t)w * size;
	if (span * (size_t)f > cl->dst_size)
		fail("write-tput: %d x %d writes of %zu bytes need %zu bytes of the server's "
		     "region, which has %zu (server --region)",
		     f, w, size, span * (size_t)f, cl->dst_size);
	double seconds;
	/* large writes take long: at least one pipeline's worth, whatever --min-iters says */
	long min_batches = opt.min_iters < f ? opt.min_iters : f;
	pump(cl, size, opt.warmup < f ? opt.warmup : f, 1, opt.seconds * WARMUP_SHARE, &seconds);
	long batches = pump(cl, size, opt.iters, min_batches, opt.seconds, &seconds);
	double bytes = (double)batches * (double)span;
	printf("result mode=write-tput size=%zu writes_per_flush=%d flushes_in_flight=%d "
	       "batches=%ld seconds=%.3f mb_s=%.2f writes_s=%.0f\n",
	       size, w, f, batches, seconds, bytes / seconds / 1e6, (double)batches * w / seconds);
	fflush(stdout);
}

/* ----------------------------------------------------------------- client */

static size_t max_size(const size_t *sizes, int n, size_t at_least)
{
	for (int i = 0; i < n; i++)
		if (sizes[i] > at_least)
			at_least = sizes[i];
	return at_least;
}

static int client(void)
{
	struct client cl = { 0 };
	struct rpma_peer *peer = peer_for(opt.addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);

	cl.data_size = max_size(opt.lat_sizes, opt.n_lat_sizes, 8);
	cl.data_size = max_size(opt.tput_sizes, opt.n_tput_sizes, cl.data_size);
	size_t buf_size = cl.data_size + 2 * MSG_MAX;
	void *buf = alloc_buf(buf_size);
	CALL(rpma_mr_reg(peer, buf, buf_size,
			 RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
			     RPMA_MR_USAGE_RECV,
			 &cl.mr));

	/* every write of the pipeline occupies the send queue until its flush completes */
	uint32_t sq =
	    (uint32_t)(opt.flushes_in_flight * (opt.writes_per_flush + 1) + SEND_SIGNAL_EVERY + 8);
	/* GPSPM: the receive queue's size is how many flushes may be in flight */
	uint32_t rq = opt.flushes_in_flight > 4 ? (uint32_t)opt.flushes_in_flight : 4;
	struct rpma_conn_cfg *cfg =
	    conn_cfg_for(sq, (uint32_t)opt.flushes_in_flight + SEND_SIGNAL_EVERY + 8, rq);
#ifdef RPMA_BENCH_NG
	/* the answers to the flushes are taken wherever the benchmark takes completions */
	if (opt.flush == FLUSH_GPSPM)
		CALL(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
#endif
	struct rpma_conn_req *req = NULL;
	CALL(rpma_conn_req_new(peer, opt.addr, opt.port, cfg, &req));
	CALL(rpma_conn_req_connect(&req, NULL, &cl.conn));
	expect_event(cl.conn, RPMA_CONN_ESTABLISHED);

	/* the server's region and its persistence declaration */
	struct rpma_conn_private_data pdata;
	CALL(rpma_conn_get_private_data(cl.conn, &pdata));
	const unsigned char *pd = pdata.ptr;
	if (pdata.ptr == NULL || pdata.len < 2 || pd[0] == 0 || pd[0] + 2u > pdata.len)
		fail("the server sent no region descriptor");
	CALL(rpma_mr_remote_from_descriptor(pd + 1, pd[0], &cl.dst));
	struct rpma_peer_cfg *pcfg = NULL;
	CALL(rpma_peer_cfg_from_descriptor(pd + 1 + pd[0], pdata.len - 1u - pd[0], &pcfg));
	CALL(rpma_conn_apply_remote_peer_cfg(cl.conn, pcfg));
	CALL(rpma_peer_cfg_delete(&pcfg));
	CALL(rpma_mr_remote_get_size(cl.dst, &cl.dst_size));
	int flush_types = 0;
	CALL(rpma_mr_remote_get_flush_type(cl.dst, &flush_types));
	if (!(flush_types & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		fail("the server's region does not take persistent flushes");
	if (cl.data_size > cl.dst_size)
		fail("operations of %zu bytes do not fit the server's region of %zu", cl.data_size,
		     cl.dst_size);
	CALL(rpma_conn_get_cq(cl.conn, &cl.cq));
#ifdef RPMA_BENCH_NG
	/*
	 * The figures are of the method asked for, or none: a GPSPM run that
	 * the peers quietly carry by read-after-write would measure the wrong
	 * thing.
	 */
	enum rpma_flush_method method = RPMA_FLUSH_METHOD_NONE;
	CALL(rpma_conn_get_flush_method(cl.conn, cl.dst, RPMA_FLUSH_TYPE_PERSISTENT, &method));
	enum rpma_flush_method want = opt.flush == FLUSH_GPSPM ? RPMA_FLUSH_METHOD_GPSPM
				      : opt.flush == FLUSH_NATIVE
					  ? RPMA_FLUSH_METHOD_NATIVE
					  : RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	if (method != want)
		fail("the peers agreed on flush method %d, not %d (%s): no figures", (int)method,
		     (int)want, flush_names[opt.flush]);
#endif
	if (opt.flush == FLUSH_READ_AFTER_WRITE)
		printf("target region=%zu flush=read-after-write direct_write_to_pmem=declared "
		       "(measures the library, not the platform's persistence)\n",
		       cl.dst_size);
#ifdef RPMA_BENCH_NG
	else if (opt.flush == FLUSH_NATIVE)
		printf("target region=%zu flush=native (the RDMA FLUSH verb, executed by the "
		       "target's device)\n",
		       cl.dst_size);
#endif
	else
		printf("target region=%zu flush=gpspm persist=cache-line-write-back memory=dram "
		       "(measures the library, not the platform's persistence)\n",
		       cl.dst_size);
	fflush(stdout);

	samples = calloc((size_t)opt.iters, sizeof(*samples));
	if (samples == NULL)
		fail("cannot allocate %ld samples", opt.iters);

	if (opt.modes[MODE_WRITE_LAT])
		for (int i = 0; i < opt.n_lat_sizes; i++)
			run_latency(&cl, MODE_WRITE_LAT, opt.lat_sizes[i]);
	if (opt.modes[MODE_WRITE_TPUT])
		for (int i = 0; i < opt.n_tput_sizes; i++)
			run_throughput(&cl, opt.tput_sizes[i]);
	if (opt.modes[MODE_READ_LAT])
		for (int i = 0; i < opt.n_lat_sizes; i++)
			run_latency(&cl, MODE_READ_LAT, opt.lat_sizes[i]);
	if (opt.modes[MODE_SENDRECV_LAT])
		for (int i = 0; i < opt.n_msg_sizes; i++)
			run_latency(&cl, MODE_SENDRECV_LAT, opt.msg_sizes[i]);

	printf("stats empty_polls=%ld waits=%ld\n", empty_polls, waits);
	CALL(rpma_conn_disconnect(cl.conn));
	expect_event(cl.conn, RPMA_CONN_CLOSED);
	CALL(rpma_conn_delete(&cl.conn));
	CALL(rpma_mr_remote_delete(&cl.dst));
	CALL(rpma_mr_dereg(&cl.mr));
	CALL(rpma_conn_cfg_delete(&cfg));
	CALL(rpma_peer_delete(&peer));
	free(samples);
	free(buf);
	return 0;
}

/* ----------------------------------------------------------------- server */

static const char recv_slots[SERVER_RECVS];
#define RECV_CTX(k) ((const void *)&recv_slots[(k)])

/* the server spins on its CQ this long after the last message before it sleeps */
#define SERVER_SPIN_S 0.005

/* answers the message of one receive completion with as many bytes */
static void answer(struct rpma_conn *conn, struct rpma_mr_local *msgs, const struct ibv_wc *wc)
{
	static unsigned long sent;
	if (wc->status != IBV_WC_SUCCESS) {
		/* the receives still posted when the client leaves end flushed */
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			fprintf(stderr, BENCH_NAME ": a completion failed: %s\n",
				ibv_wc_status_str(wc->status));
		return;
	}
	if (!(wc->opcode & IBV_WC_RECV))
		return; /* a signaled send */
	size_t k = (size_t)((const char *)(uintptr_t)wc->wr_id - (const char *)RECV_CTX(0));
	CALL(rpma_recv(conn, msgs, k * MSG_MAX, MSG_MAX, RECV_CTX(k)));
	int flags =
	    ++sent % SEND_SIGNAL_EVERY ? RPMA_F_COMPLETION_ON_ERROR : RPMA_F_COMPLETION_ALWAYS;
	CALL(rpma_send(conn, msgs, SERVER_RECVS * MSG_MAX, wc->byte_len, flags, &send_ctx));
}

/*
 * Answers every message until the client disconnects. The server spins on
 * its CQ while messages keep coming (a ping-pong is measured, not the
 * server's wake-up) and sleeps on the completion channel when idle (the
 * one-sided modes leave it nothing to do, and a spinning server would take
 * a CPU from the client).
 */
static void serve_connection(struct rpma_conn *conn, struct rpma_mr_local *msgs)
{
	struct rpma_cq *cq = NULL;
	int cq_fd = -1, ev_fd = -1;
	CALL(rpma_conn_get_cq(conn, &cq));
	CALL(rpma_cq_get_fd(cq, &cq_fd));
	CALL(rpma_conn_get_event_fd(conn, &ev_fd));
	double last = now_s();
	for (unsigned long spins = 0;; spins++) {
		struct ibv_wc wc[8];
		int got = 0;
		int ret = rpma_cq_get_wc(cq, 8, wc, &got);
		if (ret == 0) {
			for (int i = 0; i < got; i++)
				answer(conn, msgs, &wc[i]);
			last = now_s();
			continue;
		}
		if (ret != RPMA_E_NO_COMPLETION)
			fail("rpma_cq_get_wc: %s", rpma_err_2str(ret));
		if (spins % 1024)
			continue;
		bool idle = now_s() - last > SERVER_SPIN_S;
		struct pollfd pfd[2] = { { .fd = ev_fd, .events = POLLIN },
					 { .fd = cq_fd, .events = POLLIN } };
		if (poll(pfd, idle ? 2 : 1, idle ? -1 : 0) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
		}
		if (pfd[0].revents) {
			enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
			CALL(rpma_conn_next_event(conn, &ev));
			if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
				return;
		}
		if (idle && pfd[1].revents) {
			/* acknowledges the event and re-arms the CQ: spin again */
			CALL(rpma_cq_wait(cq));
			last = now_s();
		}
	}
}

#ifdef RPMA_BENCH_NG
/*
 * GPSPM: the library's thread serves the client's flushes and owns the CQ;
 * the server only waits for the client to leave.
 */
/* the GPSPM requests served: the persist function counts them (the library's thread) */
static unsigned long persists;
/* the server's connection configuration, for what it reports */
static struct rpma_conn_cfg *server_cfg;

/* user + system CPU time of the whole process, in microseconds */
static double process_cpu_us(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		fail("getrusage: %s", strerror(errno));
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/*
 * The library's thread serves the connection; the main thread sleeps until
 * it ends, then says what serving cost the process: its CPU time (the
 * thread's polling and spinning, the persist function, the provider's
 * system calls) per request served.
 */
static void serve_gpspm_connection(struct rpma_conn *conn)
{
	const double cpu0 = process_cpu_us();
	const unsigned long persists0 = __atomic_load_n(&persists, __ATOMIC_RELAXED);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		CALL(rpma_conn_next_event(conn, &ev));
		if (ev == RPMA_CONN_CLOSED || ev == RPMA_CONN_LOST)
			break;
	}
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	const double cpu = process_cpu_us() - cpu0;
	const unsigned long served = __atomic_load_n(&persists, __ATOMIC_RELAXED) - persists0;
	const double wall =
	    (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
	uint32_t spin_us = 0;
	CALL(rpma_conn_cfg_get_gpspm_spin(server_cfg, &spin_us));
	printf("server gpspm requests=%lu spin_us=%" PRIu32 " cpu_us=%.0f wall_us=%.0f "
	       "cpu_per_request_us=%.2f cpu_share=%.3f\n",
	       served, spin_us, cpu, wall, served ? cpu / (double)served : 0.0,
	       wall > 0 ? cpu / wall : 0.0);
	fflush(stdout);
}

#define CACHE_LINE 64

enum write_back { WRITE_BACK_NONE, WRITE_BACK_CLFLUSH, WRITE_BACK_CLFLUSHOPT, WRITE_BACK_CLWB };
static const char *const write_back_names[] = { "none", "clflush", "clflushopt", "clwb" };
static enum write_back write_back;

/* the best cache-line write-back the CPU has, as libpmem2 picks it */
static void pick_write_back(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	write_back = WRITE_BACK_CLFLUSH; /* every x86-64 has it */
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		if (b & (1u << 24))
			write_back = WRITE_BACK_CLWB;
		else if (b & (1u << 23))
			write_back = WRITE_BACK_CLFLUSHOPT;
	}
#endif
}

/*
 * The region's persist function for GPSPM. It stands for libpmem2's
 * (pmem2_get_persist_fn()) on an ADR platform: every cache line of the
 * range is written back, then a fence orders the write-backs before the
 * library's answer. The region is DRAM, so nothing becomes persistent;
 * what the target's CPU spends on a flush is what is measured.
 */
static void persist_range(const void *ptr, size_t len)
{
	__atomic_fetch_add(&persists, 1, __ATOMIC_RELAXED);
#if defined(__x86_64__) || defined(__i386__)
	uintptr_t end = (uintptr_t)ptr + len;
	for (uintptr_t p = (uintptr_t)ptr & ~(uintptr_t)(CACHE_LINE - 1); p < end;
	     p += CACHE_LINE) {
		char *line = (char *)p;
		switch (write_back) {
		case WRITE_BACK_NONE:
			break;
		case WRITE_BACK_CLWB:
			__asm__ volatile("clwb %0" : "+m"(*line));
			break;
		case WRITE_BACK_CLFLUSHOPT:
			__asm__ volatile("clflushopt %0" : "+m"(*line));
			break;
		case WRITE_BACK_CLFLUSH:
			__asm__ volatile("clflush %0" : "+m"(*line));
			break;
		}
	}
	__asm__ volatile("sfence" ::: "memory");
#else
	/* elsewhere the benchmark knows no write-back instruction: a fence only (eADR-like) */
	(void)ptr;
	(void)len;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
#endif /* RPMA_BENCH_NG */

static int server(void)
{
	struct rpma_peer *peer = peer_for(opt.addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	void *region = opt.pmem ? map_region(opt.pmem, opt.region) : alloc_buf(opt.region);
	void *msgbuf = alloc_buf((SERVER_RECVS + 1) * MSG_MAX);
	struct rpma_mr_local *region_mr = NULL, *msg_mr = NULL;
	CALL(rpma_mr_reg(peer, region, opt.region,
			 RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			     RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
			     RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			 &region_mr));
	CALL(rpma_mr_reg(peer, msgbuf, (SERVER_RECVS + 1) * MSG_MAX,
			 RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &msg_mr));
	bool gpspm = false;
	/* the versioned descriptors: GPSPM and native flush are offered through them */
	bool versioned = false;
#ifdef RPMA_BENCH_NG
	gpspm = opt.flush == FLUSH_GPSPM;
	versioned = opt.flush != FLUSH_READ_AFTER_WRITE;
#endif

	/*
	 * The region is ordinary memory declared persistent: the benchmark
	 * measures the library's path to persistence, not the platform's.
	 * With GPSPM the server declares nothing (a read-after-write flush
	 * would then give visibility only) and offers its persist function
	 * instead; its receive queue, as deep as GPSPM allows in flight,
	 * belongs to the library's thread.
	 */
	struct rpma_peer_cfg *pcfg = NULL;
	CALL(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = conn_cfg_for(64, 64, gpspm ? 64 : SERVER_RECVS);
	if (!gpspm)
		CALL(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
#ifdef RPMA_BENCH_NG
	/* the persist function also says the region is persistent: native flush needs it */
	if (gpspm || opt.flush == FLUSH_NATIVE) {
		pick_write_back();
		CALL(rpma_mr_set_persist_fn(region_mr, persist_range));
	}
	if (gpspm) {
		CALL(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD));
		if (opt.gpspm_spin_us >= 0)
			CALL(rpma_conn_cfg_set_gpspm_spin(cfg, (uint32_t)opt.gpspm_spin_us));
		server_cfg = cfg;
	}
#endif

	/*
	 * private data: [length of the region descriptor][it][peer-config
	 * descriptor]; GPSPM needs the versioned forms, which offer it
	 */
	unsigned char pd[128];
	size_t mr_desc = 0, pcfg_desc = 0;
	if (!versioned) {
		CALL(rpma_mr_get_descriptor_size(region_mr, &mr_desc));
		CALL(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc));
	}
#ifdef RPMA_BENCH_NG
	else {
		CALL(rpma_mr_get_versioned_descriptor_size(region_mr, &mr_desc));
		CALL(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &pcfg_desc));
	}
#endif
	if (mr_desc > 255 || 1 + mr_desc + pcfg_desc > 196 || 1 + mr_desc + pcfg_desc > sizeof(pd))
		fail("descriptors of %zu and %zu bytes do not fit the private data", mr_desc,
		     pcfg_desc);
	pd[0] = (unsigned char)mr_desc;
	if (!versioned) {
		CALL(rpma_mr_get_descriptor(region_mr, pd + 1));
		CALL(rpma_peer_cfg_get_descriptor(pcfg, pd + 1 + mr_desc));
	}
#ifdef RPMA_BENCH_NG
	else {
		CALL(rpma_mr_get_versioned_descriptor(region_mr, pd + 1));
		CALL(rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, pd + 1 + mr_desc));
	}
#endif
	struct rpma_conn_private_data pdata = { pd, (uint8_t)(1 + mr_desc + pcfg_desc) };

	struct rpma_ep *ep = NULL;
	CALL(rpma_ep_listen(peer, opt.addr, opt.port, &ep));
	if (!gpspm)
		printf("server listening addr=%s port=%s region=%zu flush=%s "
		       "direct_write_to_pmem=declared memory=%s (measures the library, not the "
		       "platform's persistence)\n",
		       opt.addr, opt.port, opt.region, flush_names[opt.flush],
		       opt.pmem ? opt.pmem : "dram");
#ifdef RPMA_BENCH_NG
	else
		printf("server listening addr=%s port=%s region=%zu flush=gpspm gpspm=thread "
		       "persist=%s+fence memory=dram (measures the library, not the platform's "
		       "persistence)\n",
		       opt.addr, opt.port, opt.region, write_back_names[write_back]);
#endif
	fflush(stdout);

	for (int n = 0; opt.connections == 0 || n < opt.connections; n++) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		CALL(rpma_ep_next_conn_req(ep, cfg, &req));
		if (!gpspm)
			for (size_t k = 0; k < SERVER_RECVS; k++)
				CALL(rpma_conn_req_recv(req, msg_mr, k * MSG_MAX, MSG_MAX,
							RECV_CTX(k)));
		CALL(rpma_conn_req_connect(&req, &pdata, &conn));
		expect_event(conn, RPMA_CONN_ESTABLISHED);
		if (!gpspm)
			serve_connection(conn, msg_mr);
#ifdef RPMA_BENCH_NG
		else
			serve_gpspm_connection(conn);
#endif
		CALL(rpma_conn_disconnect(conn));
		CALL(rpma_conn_delete(&conn));
	}

	CALL(rpma_ep_shutdown(&ep));
	CALL(rpma_conn_cfg_delete(&cfg));
	CALL(rpma_peer_cfg_delete(&pcfg));
	CALL(rpma_mr_dereg(&msg_mr));
	CALL(rpma_mr_dereg(&region_mr));
	CALL(rpma_peer_delete(&peer));
	free(msgbuf);
	if (opt.pmem)
		munmap(region, opt.region);
	else
		free(region);
	return 0;
}

/* ---------------------------------------------------------------- options */

static void usage(int status)
{
	FILE *f = status ? stderr : stdout;
	fprintf(
	    f,
	    "usage: " BENCH_NAME " capabilities    (the APIs this build can use)\n"
	    "       " BENCH_NAME
	    " server [--addr A] [--port P] [--connections N] [--region BYTES]\n"
	    "       " BENCH_NAME " client [--addr A] [--port P] [--modes M,...] [options]\n"
	    "modes: write-lat (rpma_write + rpma_flush(PERSISTENT) + its completion),\n"
	    "       write-tput (pipelined persistent writes), read-lat, sendrecv-lat, all\n"
	    "  --lat-sizes S,...    write-lat and read-lat sizes (8,64,512,4k,32k,256k,1m)\n"
	    "  --tput-sizes S,...   write-tput sizes (4k,16k,64k,256k,1m)\n"
	    "  --msg-sizes S,...    sendrecv-lat sizes (8,64,512,4k; at most 64k)\n"
	    "  --writes-per-flush W (16)   --flushes-in-flight F (4)\n"
	    "  --iters N            at most N measured operations (write-tput: batches) per size\n"
	    "  --seconds T          time budget per size, 0: exactly --iters (1)\n"
	    "  --min-iters N        at least N, whatever the time (20)\n"
	    "  --warmup N           unmeasured operations before each size (20)\n"
	    "  --untimed            exactly --iters operations (write-tput: batches), no clock\n"
	    "                       and no statistics per operation (for instruction counts)\n"
	    "  --wait poll|event"
#ifdef RPMA_BENCH_NG
	    "|poll-completion|completion"
#endif
	    "  how completions are taken (poll)\n"
#ifdef HAVE_RPMA_POST_BATCH
	    "  --post single|batch  one doorbell per operation, or per write+flush batch\n"
#endif
#ifdef RPMA_BENCH_NG
	    "  --flush read-after-write|gpspm|native  how persistent flushes are carried, on\n"
	    "                       both sides; gpspm: the server persists every flushed range\n"
	    "                       with a cache-line write-back (no sendrecv-lat); native: the\n"
	    "                       RDMA FLUSH verb (both devices must have it; a persistent\n"
	    "                       one needs a region in pmem, --pmem)\n"
	    "  --gpspm-spin US      server, --flush gpspm: how long the library's thread\n"
	    "                       polls after a request before it sleeps (the library's\n"
	    "                       default: RPMA_DEFAULT_GPSPM_SPIN_US)\n"
#endif
	    "  --pmem PATH          server: the region is PATH (a device DAX) mapped\n"

	    "The server serves every mode; it declares direct write to PMem for ordinary\n"
	    "memory: the library is measured, not the platform.\n");
	exit(status);
}

static size_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		fail("bad size '%s'", s);
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	}
	if (*end != '\0' && *end != ',')
		fail("bad size '%s'", s);
	return (size_t)v;
}

static int parse_sizes(const char *list, size_t *out, int max)
{
	int n = 0;
	for (const char *p = list; *p;) {
		if (n == max)
			fail("more than %d sizes in '%s'", max, list);
		out[n] = parse_size(p);
		if (out[n] == 0)
			fail("size 0 in '%s'", list);
		n++;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return n;
}

static long parse_long(const char *s, long min)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min)
		fail("bad number '%s' (at least %ld)", s, min);
	return v;
}

static int pick(const char *s, const char *const *names, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	fail("unknown %s '%s'", what, s);
}

static void parse_modes(const char *list)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *save = NULL, *m = strtok_r(buf, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		if (strcmp(m, "all") == 0) {
			for (int i = 0; i < MODE_COUNT; i++)
				opt.modes[i] = true;
			continue;
		}
		opt.modes[pick(m, mode_names, MODE_COUNT, "mode")] = true;
	}
}

int main(int argc, char *argv[])
{
	if (argc < 2)
		usage(2);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		usage(0);
	if (strcmp(argv[1], "capabilities") == 0) {
		/* what this build can do, for scripts */
		printf("api=%s posts=", api_name());
		for (size_t i = 0; i < sizeof(post_names) / sizeof(*post_names); i++)
			printf("%s%s", i ? "," : "", post_names[i]);
		printf(" waits=");
		for (size_t i = 0; i < sizeof(wait_names) / sizeof(*wait_names); i++)
			printf("%s%s", i ? "," : "", wait_names[i]);
		printf(" flushes=");
		for (size_t i = 0; i < sizeof(flush_names) / sizeof(*flush_names); i++)
			printf("%s%s", i ? "," : "", flush_names[i]);
		printf("\n");
		return 0;
	}
	if (strcmp(argv[1], "server") == 0)
		opt.server = true;
	else if (strcmp(argv[1], "client") != 0)
		usage(2);
	bool modes_given = false;

	opt.n_lat_sizes = parse_sizes("8,64,512,4k,32k,256k,1m", opt.lat_sizes, 32);
	opt.n_tput_sizes = parse_sizes("4k,16k,64k,256k,1m", opt.tput_sizes, 32);
	opt.n_msg_sizes = parse_sizes("8,64,512,4k", opt.msg_sizes, 32);

	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		if (strcmp(o, "--help") == 0)
			usage(0);
		if (strcmp(o, "--untimed") == 0) {
			opt.untimed = true;
			continue;
		}
		if (i + 1 >= argc)
			usage(2);
		const char *v = argv[++i];
		if (strcmp(o, "--addr") == 0)
			opt.addr = v;
		else if (strcmp(o, "--port") == 0)
			opt.port = v;
		else if (strcmp(o, "--connections") == 0)
			opt.connections = (int)parse_long(v, 0);
		else if (strcmp(o, "--region") == 0)
			opt.region = parse_size(v);
		else if (strcmp(o, "--modes") == 0) {
			parse_modes(v);
			modes_given = true;
		} else if (strcmp(o, "--lat-sizes") == 0)
			opt.n_lat_sizes = parse_sizes(v, opt.lat_sizes, 32);
		else if (strcmp(o, "--tput-sizes") == 0)
			opt.n_tput_sizes = parse_sizes(v, opt.tput_sizes, 32);
		else if (strcmp(o, "--msg-sizes") == 0)
			opt.n_msg_sizes = parse_sizes(v, opt.msg_sizes, 32);
		else if (strcmp(o, "--writes-per-flush") == 0)
			opt.writes_per_flush = (int)parse_long(v, 1);
		else if (strcmp(o, "--flushes-in-flight") == 0)
			opt.flushes_in_flight = (int)parse_long(v, 1);
		else if (strcmp(o, "--iters") == 0)
			opt.iters = parse_long(v, 1);
		else if (strcmp(o, "--min-iters") == 0)
			opt.min_iters = parse_long(v, 1);
		else if (strcmp(o, "--warmup") == 0)
			opt.warmup = parse_long(v, 0);
		else if (strcmp(o, "--seconds") == 0)
			opt.seconds = strtod(v, NULL);
		else if (strcmp(o, "--wait") == 0)
			opt.wait = (enum wait_kind)pick(
			    v, wait_names, (int)(sizeof(wait_names) / sizeof(*wait_names)), "wait");
		else if (strcmp(o, "--post") == 0)
			opt.post = (enum post_kind)pick(
			    v, post_names, (int)(sizeof(post_names) / sizeof(*post_names)), "post");
		else if (strcmp(o, "--pmem") == 0)
			opt.pmem = v;
#ifdef RPMA_BENCH_NG
		else if (strcmp(o, "--gpspm-spin") == 0)
			opt.gpspm_spin_us = parse_long(v, 0);
#endif
		else if (strcmp(o, "--flush") == 0)
			opt.flush = (enum flush_kind)pick(
			    v, flush_names, (int)(sizeof(flush_names) / sizeof(*flush_names)),
			    "flush");
		else
			usage(2);
	}
	if (!modes_given)
		parse_modes(opt.flush == FLUSH_READ_AFTER_WRITE ? "all"
								: "write-lat,write-tput,read-lat");
	/* GPSPM takes the receive queue: the application may not send or receive */
	if (opt.flush != FLUSH_READ_AFTER_WRITE && opt.modes[MODE_SENDRECV_LAT])
		fail("sendrecv-lat cannot run with --flush %s", flush_names[opt.flush]);
	if (opt.flushes_in_flight > MAX_IN_FLIGHT)
		fail("at most %d flushes in flight", MAX_IN_FLIGHT);
#ifdef HAVE_RPMA_POST_BATCH
	if (opt.writes_per_flush + 1 > RPMA_BATCH_MAX)
		fail("at most %d writes per flush", RPMA_BATCH_MAX - 1);
#endif
	for (int i = 0; i < opt.n_msg_sizes; i++)
		if (opt.msg_sizes[i] > MSG_MAX)
			fail("messages of at most %u bytes", MSG_MAX);
	if (opt.min_iters > opt.iters)
		opt.min_iters = opt.iters;
	if (opt.untimed)
		opt.seconds = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	print_library();
	if (opt.server)
		return server();
	printf("config writes_per_flush=%d flushes_in_flight=%d iters=%ld min_iters=%ld "
	       "warmup=%ld seconds=%.2f\n",
	       opt.writes_per_flush, opt.flushes_in_flight, opt.iters, opt.min_iters, opt.warmup,
	       opt.seconds);
	return client();
}
