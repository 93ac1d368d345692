/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma-mirror.c -- copy a file or a device into a remote target's pmem
 *
 * usage: rpma-mirror [options] SOURCE ADDR:PORT
 *        rpma-mirror --serve [options] ADDR:PORT TARGET
 *
 * See rpma-mirror(1). In short: the server maps TARGET (a device DAX, a
 * file on a DAX file system, or a plain file) with libpmem2 and offers it
 * for remote writes, reads and persistent flushes, by GPSPM (its CPU
 * persists what a client flushes, with libpmem2's persist function,
 * served by a thread of the library) or, declared with
 * --direct-write-to-pmem, by reads after the writes. The client maps
 * SOURCE read-only and mirrors it into the first bytes of TARGET in
 * chunks: each chunk is copied into a registered buffer, written, and
 * flushed to persistence; up to --window chunks are in flight. Before
 * copying, it reads back what the target holds (RDMA reads, no CPU on the
 * target) and sends only the chunks that differ: an interrupted copy,
 * run again, resumes. After copying, it reads back every chunk it sent
 * and compares checksums; it reports success only when every chunk of
 * the target matches the source.
 *
 * Exit status: 0 mirrored and checked (or, with --verify-only, the same);
 * 1 an error: nothing is reported as done; 2 bad usage; 3 interrupted by
 * a signal: run it again to resume; 4 --verify-only: the target differs.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpmem2.h>
#include <librpma.h>

#define EXIT_ERROR	 1
#define EXIT_USAGE	 2
#define EXIT_INTERRUPTED 3
#define EXIT_DIFFERS	 4

/* what the two sides say to each other in the private data */
#define MIRROR_MAGIC   "RPMAMIRR"
#define MIRROR_VERSION 1
#define PDATA_MAX      196

struct request_pdata {
	char magic[8]; /* MIRROR_MAGIC */
	uint8_t version;
	uint8_t verify_only;
	uint8_t pad[2];
	uint32_t chunk;	 /* little-endian */
	uint64_t length; /* bytes to mirror, little-endian */
};

struct answer_pdata {
	char magic[8]; /* MIRROR_MAGIC */
	uint8_t version;
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint8_t pad;
	uint64_t target_size;  /* little-endian */
	uint8_t descriptors[]; /* the versioned ones: region, peer configuration */
};

/* GPSPM requests the server takes at a time: a client's window at most */
#define SERVER_DEPTH 16
#define WINDOW_MAX   SERVER_DEPTH
#define CHUNK_MIN    4096
#define CHUNK_MAX    (64u << 20)
#define WAIT_MS	     10000

static const char *prog = "rpma-mirror";
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void failed(const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		complain("%s failed: %s (%s)", call, rpma_err_2str(ret), strerror(err));
	else
		complain("%s failed: %s", call, rpma_err_2str(ret));
}

/* CRC-32C (Castagnoli), reflected, slicing by 8 */
static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] =
			    (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w = le64toh(w) ^ crc;
		crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
		      crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
		      crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
		      crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/*
 * The digest of the first `length` bytes of an area, in chunks of `chunk`
 * bytes: the CRC-32C of the chunks' CRC-32Cs, little-endian, in order.
 * Both sides compute it the same way.
 */
static uint32_t digest_of(const uint32_t *chunk_crcs, uint64_t nchunks)
{
	uint32_t d = 0;

	for (uint64_t i = 0; i < nchunks; i++) {
		uint32_t le = htole32(chunk_crcs[i]);

		d = crc32c(d, &le, sizeof(le));
	}
	return d;
}

static uint32_t digest_of_area(const uint8_t *area, uint64_t length, uint32_t chunk)
{
	uint32_t d = 0;

	for (uint64_t at = 0; at < length; at += chunk) {
		uint64_t n = length - at < chunk ? length - at : chunk;
		uint32_t le = htole32(crc32c(0, area + at, n));

		d = crc32c(d, &le, sizeof(le));
	}
	return d;
}

/* "12.5 MiB" */
static const char *human(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= (1u << 30))
		snprintf(buf, size, "%.1f GiB", bytes / (double)(1u << 30));
	else if (bytes >= (1u << 20))
		snprintf(buf, size, "%.1f MiB", bytes / (double)(1u << 20));
	else if (bytes >= 1024)
		snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
	return buf;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ADDR:PORT, split in place; -1 when it is not one */
static int split_endpoint(char *arg, const char **addr, const char **port)
{
	char *colon = strrchr(arg, ':');

	if (!colon || colon == arg || !colon[1])
		return -1;
	*colon = '\0';
	*addr = arg;
	*port = colon + 1;
	return 0;
}

static void handle_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ----- the server ------------------------------------------------------ */

struct server {
	const char *target;
	bool declared;
	bool once;
	struct pmem2_map *map;
	uint8_t *area;
	size_t size;
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn_cfg *cfg;
	struct rpma_ep *ep;
	bool direct_write;
};

static int server_map(struct server *s)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	int ret = -1;
	/* the target must be there: a mirror never makes one up */
	int fd = open(s->target, O_RDWR);

	if (fd < 0) {
		complain("cannot open the target %s: %s", s->target, strerror(errno));
		return -1;
	}
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&s->map, cfg, src)) {
		complain("cannot map the target %s: %s", s->target, pmem2_errormsg());
		goto out;
	}
	s->area = pmem2_map_get_address(s->map);
	s->size = pmem2_map_get_size(s->map);
	enum pmem2_granularity gran = pmem2_map_get_store_granularity(s->map);

	s->direct_write = s->declared && gran != PMEM2_GRANULARITY_PAGE;
	if (s->declared && !s->direct_write)
		say("%s is not persistent memory: --direct-write-to-pmem ignored", s->target);
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd);
	return ret;
}

/* waits until fd is readable (1) or a signal came (0); -1 on error */
static int wait_readable(int fd)
{
	struct pollfd pfd = { fd, POLLIN, 0 };

	while (!stop_signal) {
		int n = poll(&pfd, 1, 200);

		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR) {
			complain("poll: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static bool valid_request(const struct rpma_conn_private_data *pd, struct request_pdata *req)
{
	if (!pd->ptr || pd->len < sizeof(*req))
		return false;
	memcpy(req, pd->ptr, sizeof(*req));
	return memcmp(req->magic, MIRROR_MAGIC, sizeof(req->magic)) == 0 &&
	       req->version == MIRROR_VERSION && le32toh(req->chunk) >= CHUNK_MIN &&
	       le32toh(req->chunk) <= CHUNK_MAX;
}

/* one client, from its request to its disconnection; -1 on error, 1 on a signal */
static int serve_client(struct server *s, struct rpma_conn_req **req,
			const struct request_pdata *rq)
{
	union {
		struct answer_pdata a;
		uint8_t raw[PDATA_MAX];
	} buf;
	size_t mr_desc_size, pcfg_desc_size;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event;
	int ret, fd, result = -1;

	memset(&buf, 0, sizeof(buf));
	memcpy(buf.a.magic, MIRROR_MAGIC, sizeof(buf.a.magic));
	buf.a.version = MIRROR_VERSION;
	buf.a.target_size = htole64(s->size);
	if ((ret = rpma_mr_get_versioned_descriptor_size(s->mr, &mr_desc_size)) ||
	    (ret = rpma_peer_cfg_get_versioned_descriptor_size(s->pcfg, &pcfg_desc_size))) {
		failed("getting the descriptor sizes", ret);
		rpma_conn_req_delete(req);
		return -1;
	}
	if (sizeof(buf.a) + mr_desc_size + pcfg_desc_size > sizeof(buf)) {
		complain("the descriptors do not fit in the private data");
		rpma_conn_req_delete(req);
		return -1;
	}
	buf.a.mr_desc_size = (uint8_t)mr_desc_size;
	buf.a.pcfg_desc_size = (uint8_t)pcfg_desc_size;
	if ((ret = rpma_mr_get_versioned_descriptor(s->mr, buf.a.descriptors)) ||
	    (ret = rpma_peer_cfg_get_versioned_descriptor(s->pcfg, s->cfg,
							  buf.a.descriptors + mr_desc_size))) {
		failed("getting the descriptors", ret);
		rpma_conn_req_delete(req);
		return -1;
	}
	struct rpma_conn_private_data pdata = { buf.raw, (uint8_t)(sizeof(buf.a) + mr_desc_size +
								   pcfg_desc_size) };
	uint64_t length = le64toh(rq->length);
	uint32_t chunk = le32toh(rq->chunk);
	char h[32];

	ret = rpma_conn_req_connect(req, &pdata, &conn);
	if (ret) {
		failed("rpma_conn_req_connect", ret);
		return -1;
	}
	char hc[32];

	if (length > s->size)
		say("a client asks for %s, more than %s holds: it will go",
		    human(length, h, sizeof(h)), s->target);
	else
		say("a client %s %s in chunks of %s", rq->verify_only ? "compares" : "mirrors",
		    human(length, h, sizeof(h)), human(chunk, hc, sizeof(hc)));
	ret = rpma_conn_get_event_fd(conn, &fd);
	while (!ret) {
		int r = wait_readable(fd);

		if (r <= 0) {
			result = r < 0 ? -1 : 1;
			goto out;
		}
		ret = rpma_conn_next_event(conn, &event);
		if (ret)
			break;
		if (event == RPMA_CONN_ESTABLISHED)
			continue;
		const char *how =
		    event == RPMA_CONN_CLOSED ? "disconnected" : rpma_utils_conn_event_2str(event);

		/* the digest of what the client left, as it computes it from the source */
		if (length <= s->size)
			say("the client %s; the first %s of %s: digest %08x", how,
			    human(length, h, sizeof(h)), s->target,
			    digest_of_area(s->area, length, chunk));
		else
			say("the client %s", how);
		result = 0;
		break;
	}
	if (ret)
		failed("waiting for the client", ret);
out:
	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
	return result;
}

static int serve(struct server *s, const char *addr, const char *port)
{
	struct ibv_context *ibv_ctx;
	int status = EXIT_ERROR;
	int ret, ep_fd;
	char h[32];

	if (server_map(s))
		return EXIT_ERROR;
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &s->peer);
	if (ret) {
		failed("opening the RDMA device", ret);
		goto out_map;
	}
	/* written and read from afar, flushed to persistence */
	ret = rpma_mr_reg(s->peer, s->area, s->size,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			  &s->mr);
	if (ret) {
		failed("rpma_mr_reg", ret);
		goto out_peer;
	}
	ret = rpma_mr_set_persist_fn(s->mr, pmem2_get_persist_fn(s->map));
	if (!ret)
		ret = rpma_peer_cfg_new(&s->pcfg);
	if (!ret)
		ret = rpma_peer_cfg_set_direct_write_to_pmem(s->pcfg, s->direct_write);
	if (!ret)
		ret = rpma_conn_cfg_new(&s->cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(s->cfg, RPMA_GPSPM_THREAD);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(s->cfg, SERVER_DEPTH);
	if (ret) {
		failed("configuring the target", ret);
		goto out_mr;
	}
	ret = rpma_ep_listen(s->peer, addr, port, &s->ep);
	if (!ret)
		ret = rpma_ep_get_fd(s->ep, &ep_fd);
	if (ret) {
		failed("rpma_ep_listen", ret);
		goto out_mr;
	}
	say("serving %s (%s) on %s:%s; the clients' flushes persist %s", s->target,
	    human(s->size, h, sizeof(h)), addr, port,
	    s->direct_write ? "by reads after the writes (direct write to pmem)"
			    : "by GPSPM (this CPU persists them with libpmem2)");
	for (;;) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn_private_data pd;
		struct request_pdata rq;
		int r = wait_readable(ep_fd);

		if (r < 0)
			goto out_ep;
		if (r == 0)
			break;
		ret = rpma_ep_next_conn_req(s->ep, s->cfg, &req);
		if (ret) {
			failed("rpma_ep_next_conn_req", ret);
			goto out_ep;
		}
		if (rpma_conn_req_get_private_data(req, &pd) || !valid_request(&pd, &rq)) {
			say("turned down a peer that is not an rpma-mirror client of this version");
			rpma_conn_req_delete(&req);
			continue;
		}
		r = serve_client(s, &req, &rq);
		if (r < 0)
			goto out_ep;
		if (r > 0 || s->once)
			break;
	}
	if (stop_signal)
		say("stopped by signal %d", (int)stop_signal);
	status = 0;
out_ep:
	rpma_ep_shutdown(&s->ep);
out_mr:
	rpma_conn_cfg_delete(&s->cfg);
	rpma_peer_cfg_delete(&s->pcfg);
	rpma_mr_dereg(&s->mr);
out_peer:
	rpma_peer_delete(&s->peer);
out_map:
	pmem2_map_delete(&s->map);
	return status;
}

/* ----- the client ------------------------------------------------------ */

enum phase { COMPARING, COPYING, CHECKING };
static const char *const phase_name[] = { "comparing", "copying", "checking" };

struct slot {
	int index;
	uint64_t chunk; /* the chunk it holds or is being read into */
	bool busy;
};

struct client {
	/* options */
	bool verify_only, fresh, verbose, quiet;
	uint32_t chunk;
	int window;
	double limit; /* bytes a second; 0: no limit */
	/* the source */
	const char *source;
	const uint8_t *src;
	uint64_t length;
	uint64_t nchunks;
	uint32_t *src_crc; /* computed when first needed */
	bool *src_crc_known;
	/* what the target holds */
	uint8_t *state; /* per chunk: SAME, DIFFERS, SENT, VERIFIED */
	/* RDMA */
	struct rpma_peer *peer;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *buf_mr;
	struct rpma_mr_remote *dst;
	uint8_t *buf; /* window slots of chunk bytes */
	struct slot slots[WINDOW_MAX];
	int in_flight;
	bool established; /* the connection was: it must be closed */
	enum rpma_flush_method method;
	/* progress */
	enum phase phase;
	uint64_t phase_done, phase_total; /* bytes */
	double phase_start, last_draw;
	int last_step;
	bool tty;
};

enum { UNKNOWN, SAME, DIFFERS, SENT, VERIFIED };

static uint64_t chunk_len(const struct client *c, uint64_t i)
{
	uint64_t at = i * c->chunk;

	return c->length - at < c->chunk ? c->length - at : c->chunk;
}

static uint32_t source_crc(struct client *c, uint64_t i)
{
	if (!c->src_crc_known[i]) {
		c->src_crc[i] = crc32c(0, c->src + i * c->chunk, chunk_len(c, i));
		c->src_crc_known[i] = true;
	}
	return c->src_crc[i];
}

static void progress(struct client *c, bool final)
{
	double t = now_s();
	int pct = c->phase_total ? (int)(c->phase_done * 100 / c->phase_total) : 100;
	char h1[32], h2[32], h3[32];

	if (c->quiet || c->phase_total == 0)
		return;
	if (c->tty) {
		if (!final && t - c->last_draw < 0.1)
			return;
		c->last_draw = t;
		double rate = t > c->phase_start ? c->phase_done / (t - c->phase_start) : 0;
		char bar[31];
		int fill = pct * 30 / 100;

		memset(bar, '=', (size_t)fill);
		memset(bar + fill, ' ', (size_t)(30 - fill));
		bar[30] = '\0';
		fprintf(stderr, "\r%-9s [%s] %3d%%  %s of %s  %s/s  ", phase_name[c->phase], bar,
			pct, human(c->phase_done, h1, sizeof(h1)),
			human(c->phase_total, h2, sizeof(h2)),
			human((uint64_t)rate, h3, sizeof(h3)));
		if (final)
			fputc('\n', stderr);
		fflush(stderr);
	} else if (c->verbose && (pct / 10 > c->last_step || final)) {
		c->last_step = pct / 10;
		say("%s: %d%% (%s of %s)", phase_name[c->phase], c->last_step * 10,
		    human(c->phase_done, h1, sizeof(h1)), human(c->phase_total, h2, sizeof(h2)));
	}
}

static void phase_begin(struct client *c, enum phase p, uint64_t total)
{
	c->phase = p;
	c->phase_done = 0;
	c->phase_total = total;
	c->phase_start = now_s();
	c->last_draw = 0;
	c->last_step = 0;
	progress(c, false);
}

static struct slot *free_slot(struct client *c)
{
	for (int i = 0; i < c->window; i++)
		if (!c->slots[i].busy)
			return &c->slots[i];
	return NULL;
}

/*
 * Takes one completion and deals with it: a read's (compares the chunk
 * with the source's) or a flush's (the chunk is persistent). 0, or -1
 * with the reason said.
 */
static int take_completion(struct client *c)
{
	struct rpma_completion cmpl;
	int ret = rpma_cq_wait_completion(c->cq, &cmpl, WAIT_MS);

	if (ret == RPMA_E_NO_COMPLETION) {
		complain("the target answered nothing for %d s", WAIT_MS / 1000);
		return -1;
	}
	if (ret) {
		failed("rpma_cq_wait_completion", ret);
		return -1;
	}
	struct slot *sl = (struct slot *)cmpl.op_context;

	if (cmpl.op_status != IBV_WC_SUCCESS || !sl) {
		complain("an operation on the target failed: %s",
			 ibv_wc_status_str(cmpl.op_status));
		return -1;
	}
	uint64_t i = sl->chunk;

	sl->busy = false;
	c->in_flight--;
	c->phase_done += chunk_len(c, i);
	if (cmpl.op == RPMA_OP_READ) {
		const uint8_t *got = c->buf + (size_t)sl->index * c->chunk;
		bool same = crc32c(0, got, chunk_len(c, i)) == source_crc(c, i);

		if (c->phase == CHECKING)
			c->state[i] = same ? VERIFIED : DIFFERS;
		else
			c->state[i] = same ? SAME : DIFFERS;
	} else if (cmpl.op == RPMA_OP_FLUSH) {
		c->state[i] = SENT;
	} else {
		complain("a completion of an unexpected operation");
		return -1;
	}
	progress(c, false);
	return 0;
}

/* takes completions until every operation has completed */
static int drain(struct client *c)
{
	while (c->in_flight > 0)
		if (take_completion(c))
			return -1;
	return 0;
}

/* reads the chunks whose state is `which` back from the target */
static int read_back(struct client *c, enum phase p, int which)
{
	uint64_t total = 0;

	for (uint64_t i = 0; i < c->nchunks; i++)
		if (c->state[i] == which)
			total += chunk_len(c, i);
	phase_begin(c, p, total);
	for (uint64_t i = 0; i < c->nchunks && !stop_signal; i++) {
		if (c->state[i] != which)
			continue;
		struct slot *sl;

		while (!(sl = free_slot(c)))
			if (take_completion(c))
				return -1;
		size_t off = (size_t)sl->index * c->chunk;
		int ret = rpma_read(c->conn, c->buf_mr, off, c->dst, i * c->chunk, chunk_len(c, i),
				    RPMA_F_COMPLETION_ALWAYS, sl);

		if (ret) {
			failed("rpma_read", ret);
			return -1;
		}
		sl->busy = true;
		sl->chunk = i;
		c->in_flight++;
	}
	if (drain(c))
		return -1;
	progress(c, true);
	return 0;
}

/* sends the chunks that differ: written, then flushed to persistence */
static int copy(struct client *c)
{
	uint64_t total = 0, sent = 0;

	for (uint64_t i = 0; i < c->nchunks; i++)
		if (c->state[i] == DIFFERS)
			total += chunk_len(c, i);
	phase_begin(c, COPYING, total);
	for (uint64_t i = 0; i < c->nchunks && !stop_signal; i++) {
		if (c->state[i] != DIFFERS)
			continue;
		struct slot *sl;
		int ret;

		while (!(sl = free_slot(c)))
			if (take_completion(c))
				return -1;
		/* --limit: no faster than so many bytes a second */
		if (c->limit > 0) {
			double due = c->phase_start + sent / c->limit;

			while (now_s() < due && !stop_signal)
				usleep(10000);
			if (stop_signal)
				break;
		}
		size_t off = (size_t)sl->index * c->chunk;
		uint64_t at = i * c->chunk;
		uint64_t len = chunk_len(c, i);

		memcpy(c->buf + off, c->src + at, len);
		ret = rpma_write(c->conn, c->dst, at, c->buf_mr, off, len,
				 RPMA_F_COMPLETION_ON_ERROR, NULL);
		if (ret) {
			failed("rpma_write", ret);
			return -1;
		}
		/* the target takes so many flushes at a time */
		while ((ret = rpma_flush(c->conn, c->dst, at, len, RPMA_FLUSH_TYPE_PERSISTENT,
					 RPMA_F_COMPLETION_ALWAYS, sl)) == RPMA_E_AGAIN) {
			if (c->in_flight == 0) {
				complain("the target takes no flush at all");
				return -1;
			}
			if (take_completion(c))
				return -1;
		}
		if (ret) {
			failed("rpma_flush", ret);
			return -1;
		}
		sl->busy = true;
		sl->chunk = i;
		c->in_flight++;
		sent += len;
	}
	if (drain(c))
		return -1;
	progress(c, true);
	return 0;
}

static const char *method_name(enum rpma_flush_method m)
{
	switch (m) {
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM (the target's CPU persists each chunk)";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "a read after the writes (the target declares direct write to pmem)";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "the RDMA FLUSH verb";
	default:
		return "nothing";
	}
}

static int client_connect(struct client *c, const char *addr, const char *port)
{
	struct ibv_context *ibv_ctx;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	struct request_pdata rq;
	int ret;
	char h1[32], h2[32];

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		failed("finding the RDMA device that reaches the target", ret);
		return -1;
	}
	ret = rpma_peer_new(ibv_ctx, &c->peer);
	if (ret) {
		failed("rpma_peer_new", ret);
		return -1;
	}
	ret = rpma_mr_reg(c->peer, c->buf, (size_t)c->window * c->chunk,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &c->buf_mr);
	if (ret) {
		failed("rpma_mr_reg", ret);
		return -1;
	}
	/* a write and a flush, or a read, per chunk in flight */
	ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, (uint32_t)c->window);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(cfg, 2 * (uint32_t)c->window + 2);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, 2 * (uint32_t)c->window + 2);
	if (ret) {
		failed("configuring the connection", ret);
		goto out;
	}
	memset(&rq, 0, sizeof(rq));
	memcpy(rq.magic, MIRROR_MAGIC, sizeof(rq.magic));
	rq.version = MIRROR_VERSION;
	rq.verify_only = c->verify_only;
	rq.chunk = htole32(c->chunk);
	rq.length = htole64(c->length);
	struct rpma_conn_private_data pd = { &rq, sizeof(rq) };

	ret = rpma_conn_req_new(c->peer, addr, port, cfg, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pd, &c->conn);
	if (ret == RPMA_E_PROVIDER && rpma_err_get_provider_error() == ECONNREFUSED) {
		complain("nobody serves at %s:%s (connection refused)", addr, port);
		goto out;
	}
	if (ret) {
		failed("connecting", ret);
		goto out;
	}
	ret = rpma_conn_next_event(c->conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		complain("cannot connect to %s:%s: %s%s", addr, port,
			 ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event),
			 event == RPMA_CONN_REJECTED
			     ? " (nobody serves there, or it turned us down)"
			     : "");
		goto out;
	}
	c->established = true;

	/* who answered, and with what */
	struct rpma_conn_private_data answer;
	struct answer_pdata a;

	ret = rpma_conn_get_private_data(c->conn, &answer);
	if (ret || !answer.ptr || answer.len < sizeof(a) ||
	    (memcpy(&a, answer.ptr, sizeof(a)),
	     memcmp(a.magic, MIRROR_MAGIC, sizeof(a.magic)) != 0)) {
		complain("%s:%s is not an rpma-mirror server (it answered with %u bytes of "
			 "something else)",
			 addr, port, ret ? 0 : (unsigned)answer.len);
		goto out;
	}
	if (a.version != MIRROR_VERSION ||
	    answer.len < sizeof(a) + a.mr_desc_size + a.pcfg_desc_size) {
		complain("%s:%s speaks another version of rpma-mirror (%u)", addr, port, a.version);
		goto out;
	}
	uint64_t target_size = le64toh(a.target_size);
	size_t region_size;

	if (target_size < c->length) {
		complain("the target at %s:%s (%s) is smaller than %s (%s): nothing copied", addr,
			 port, human(target_size, h1, sizeof(h1)), c->source,
			 human(c->length, h2, sizeof(h2)));
		goto out;
	}
	const uint8_t *desc = (const uint8_t *)answer.ptr + sizeof(a);

	if ((ret = rpma_mr_remote_from_descriptor(desc, a.mr_desc_size, &c->dst)) ||
	    (ret = rpma_peer_cfg_from_descriptor(desc + a.mr_desc_size, a.pcfg_desc_size, &pcfg)) ||
	    (ret = rpma_conn_apply_remote_peer_cfg(c->conn, pcfg)) ||
	    (ret = rpma_mr_remote_get_size(c->dst, &region_size)) ||
	    (ret = rpma_conn_get_cq(c->conn, &c->cq))) {
		failed("taking the target's descriptors", ret);
		goto out;
	}
	if (region_size < c->length) {
		complain("the target's region is smaller than it says: nothing copied");
		goto out;
	}
	if (rpma_conn_get_flush_method(c->conn, c->dst, RPMA_FLUSH_TYPE_PERSISTENT, &c->method)) {
		complain("the target at %s:%s cannot make the copy persistent: nothing copied",
			 addr, port);
		goto out;
	}
	rpma_peer_cfg_delete(&pcfg);
	rpma_conn_cfg_delete(&cfg);
	return 0;
out:
	rpma_peer_cfg_delete(&pcfg);
	rpma_conn_cfg_delete(&cfg);
	return -1;
}

static void client_disconnect(struct client *c)
{
	enum rpma_conn_event event;

	if (c->conn) {
		/* a connection that was never established has nothing to close */
		if (c->established && rpma_conn_disconnect(c->conn) == 0)
			rpma_conn_next_event(c->conn, &event);
		rpma_conn_delete(&c->conn);
	}
	if (c->dst)
		rpma_mr_remote_delete(&c->dst);
	if (c->buf_mr)
		rpma_mr_dereg(&c->buf_mr);
	if (c->peer)
		rpma_peer_delete(&c->peer);
}

/* maps SOURCE read-only: a plain file, a file on a DAX file system, a device DAX */
static int map_source(struct client *c)
{
	struct pmem2_source *psrc = NULL;
	size_t size;
	int fd = open(c->source, O_RDONLY);

	if (fd < 0) {
		complain("cannot open %s: %s", c->source, strerror(errno));
		return -1;
	}
	/* libpmem2 knows the size of a device DAX as well as a file's */
	if (pmem2_source_from_fd(&psrc, fd) || pmem2_source_size(psrc, &size)) {
		complain("cannot tell the size of %s: %s", c->source, pmem2_errormsg());
		if (psrc)
			pmem2_source_delete(&psrc);
		close(fd);
		return -1;
	}
	pmem2_source_delete(&psrc);
	c->length = size;
	if (size > 0) {
		void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			complain("cannot map %s: %s", c->source, strerror(errno));
			close(fd);
			return -1;
		}
		c->src = p;
	}
	close(fd);
	return 0;
}

static int run_client(struct client *c, const char *addr, const char *port)
{
	int status = EXIT_ERROR;
	char h1[32], h2[32];

	if (map_source(c))
		return EXIT_ERROR;
	if (c->length == 0) {
		say("%s is empty: nothing to mirror", c->source);
		return 0;
	}
	c->nchunks = (c->length + c->chunk - 1) / c->chunk;
	if ((uint64_t)c->window > c->nchunks)
		c->window = (int)c->nchunks;
	c->src_crc = calloc(c->nchunks, sizeof(*c->src_crc));
	c->src_crc_known = calloc(c->nchunks, sizeof(*c->src_crc_known));
	c->state = calloc(c->nchunks, 1);
	c->buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE),
			       ((size_t)c->window * c->chunk + 4095) & ~(size_t)4095);
	if (!c->src_crc || !c->src_crc_known || !c->state || !c->buf) {
		complain("out of memory");
		goto out;
	}
	for (int i = 0; i < c->window; i++)
		c->slots[i].index = i;
	if (client_connect(c, addr, port))
		goto out;
	if (!c->quiet)
		say("%s (%s) %s %s:%s in %" PRIu64 " chunks of %s; persistent by %s", c->source,
		    human(c->length, h1, sizeof(h1)), c->verify_only ? "compared with" : "to", addr,
		    port, c->nchunks, human(c->chunk, h2, sizeof(h2)), method_name(c->method));

	/* 1. what the target holds already */
	uint64_t same = 0, differs = 0;

	if (c->fresh && !c->verify_only) {
		memset(c->state, DIFFERS, c->nchunks);
	} else if (read_back(c, COMPARING, UNKNOWN)) {
		goto out;
	}
	for (uint64_t i = 0; i < c->nchunks; i++) {
		same += c->state[i] == SAME;
		differs += c->state[i] == DIFFERS;
	}
	if (stop_signal)
		goto interrupted;
	if (c->verify_only) {
		if (differs == 0) {
			say("the target holds the same %s as %s: digest %08x on both sides",
			    human(c->length, h1, sizeof(h1)), c->source,
			    digest_of(c->src_crc, c->nchunks));
			status = 0;
		} else {
			say("the target differs from %s in %" PRIu64 " of %" PRIu64 " chunks",
			    c->source, differs, c->nchunks);
			status = EXIT_DIFFERS;
		}
		goto out;
	}

	/* 2. what differs, written and made persistent */
	if (copy(c))
		goto out;
	uint64_t sent = 0;

	for (uint64_t i = 0; i < c->nchunks; i++)
		sent += c->state[i] == SENT;
	if (stop_signal)
		goto interrupted;

	/* 3. what was sent, read back and compared */
	if (read_back(c, CHECKING, SENT))
		goto out;
	if (stop_signal)
		goto interrupted;
	for (uint64_t i = 0; i < c->nchunks; i++) {
		if (c->state[i] != SAME && c->state[i] != VERIFIED) {
			complain("FAILED: chunk %" PRIu64
				 " of the target differs from %s after the copy",
				 i, c->source);
			goto out;
		}
	}
	for (uint64_t i = 0; i < c->nchunks; i++)
		source_crc(c, i);
	say("mirrored %s: %" PRIu64 " %s sent, %" PRIu64 " already there; every chunk "
	    "checked: digest %08x on both sides",
	    human(c->length, h1, sizeof(h1)), sent, sent == 1 ? "chunk" : "chunks", same,
	    digest_of(c->src_crc, c->nchunks));
	status = 0;
	goto out;

interrupted:
	sent = 0;
	for (uint64_t i = 0; i < c->nchunks; i++)
		sent += c->state[i] == SENT || c->state[i] == VERIFIED;
	say("interrupted by signal %d: %" PRIu64 " of %" PRIu64 " chunks sent and persistent "
	    "this time; NOT mirrored -- run the same command again to resume",
	    (int)stop_signal, sent, differs);
	status = EXIT_INTERRUPTED;
out:
	client_disconnect(c);
	free(c->src_crc);
	free(c->src_crc_known);
	free(c->state);
	free(c->buf);
	if (c->src)
		munmap((void *)c->src, c->length);
	return status;
}

/* ----- options --------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: %s [options] SOURCE ADDR:PORT\n"
		"       %s --serve [--direct-write-to-pmem] [--once] ADDR:PORT TARGET\n"
		"options:\n"
		"  --verify-only       compare the target with SOURCE, copy nothing\n"
		"  --fresh             copy every chunk, without reading the target first\n"
		"  --chunk SIZE        bytes a chunk, 4 KiB to 64 MiB, K and M allowed (1M)\n"
		"  --window N          chunks in flight, 1 to %d (8)\n"
		"  --limit MIB         copy no faster than MIB MiB a second\n"
		"  --verbose           report progress on lines when not on a terminal\n"
		"  --quiet             no progress, no summary: the exit status only\n"
		"see rpma-mirror(1)\n",
		prog, prog, WINDOW_MAX);
}

static int parse_size(const char *arg, uint32_t *out)
{
	char *end;
	unsigned long long v = strtoull(arg, &end, 10);

	if (end == arg)
		return -1;
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	if (*end || v < CHUNK_MIN || v > CHUNK_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int main(int argc, char *argv[])
{
	static struct client c;
	static struct server s;
	bool serve_mode = false;
	static const struct option options[] = {
		{ "serve", no_argument, NULL, 'S' },
		{ "direct-write-to-pmem", no_argument, NULL, 'D' },
		{ "once", no_argument, NULL, 'o' },
		{ "verify-only", no_argument, NULL, 'V' },
		{ "fresh", no_argument, NULL, 'f' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'w' },
		{ "limit", required_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	c.chunk = 1u << 20;
	c.window = 8;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'S':
			serve_mode = true;
			break;
		case 'D':
			s.declared = true;
			break;
		case 'o':
			s.once = true;
			break;
		case 'V':
			c.verify_only = true;
			break;
		case 'f':
			c.fresh = true;
			break;
		case 'c':
			if (parse_size(optarg, &c.chunk)) {
				complain("--chunk takes 4K to 64M, not %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'w':
			c.window = atoi(optarg);
			if (c.window < 1 || c.window > WINDOW_MAX) {
				complain("--window takes 1 to %d, not %s", WINDOW_MAX, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'l':
			c.limit = atof(optarg) * (1 << 20);
			if (c.limit <= 0) {
				complain("--limit takes a positive number of MiB a second");
				return EXIT_USAGE;
			}
			break;
		case 'v':
			c.verbose = true;
			break;
		case 'q':
			c.quiet = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		usage();
		return EXIT_USAGE;
	}
	crc_init();
	handle_signals();

	const char *addr, *port;

	if (serve_mode) {
		if (split_endpoint(argv[optind], &addr, &port)) {
			complain("%s is not ADDR:PORT", argv[optind]);
			return EXIT_USAGE;
		}
		s.target = argv[optind + 1];
		return serve(&s, addr, port);
	}
	if (split_endpoint(argv[optind + 1], &addr, &port)) {
		complain("%s is not ADDR:PORT", argv[optind + 1]);
		return EXIT_USAGE;
	}
	c.source = argv[optind];
	c.tty = isatty(STDERR_FILENO);
	return run_client(&c, addr, port);
}
