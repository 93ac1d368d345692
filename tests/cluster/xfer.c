/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * xfer.c -- every kind of operation between two machines, data checked
 *
 * usage: xfer server ADDR PORT SIZE [PMEM]
 *        xfer client ADDR PORT SIZE SEED [CHUNK]
 *        xfer stream ADDR PORT SIZE SEED LIMIT_S [poll|wait]
 *        xfer verify PMEM SIZE SEED
 *
 * The server registers SIZE bytes (of the device DAX PMEM, or of DRAM) for
 * remote writes, reads and flushes, and gives their descriptor and its peer
 * configuration to the client in the connection's private data. The client
 * fills SIZE bytes with a pattern drawn from SEED and
 *   - writes them in chunks of 1 MiB, each followed by a persistent flush
 *     (a visibility flush when the server has no pmem), one at a time
 *     with their completions checked; the first 8 bytes by an atomic write
 *     after the others where the device has atomics (not siw);
 *   - reads the whole area back into a second buffer and compares it,
 *     byte for byte;
 *   - sends the server a check request (with immediate data where the
 *     device has it) carrying the seed, the size and 40 bytes of pattern;
 *     the server compares its own memory with the pattern, byte for byte,
 *     checks the message's bytes (and the immediate data), and answers
 *     with the offset of the first difference, if any.
 * CHUNK (default 1 MiB) is the length of each write, flush and read.
 * Exit status 0 when every byte matched on both sides; 1 otherwise, with
 * the reason.
 *
 * stream: a program written for librpma 1.x that only busy-polls
 * rpma_cq_get_wc (no wait, no connection event read): it streams the
 * pattern into the server's memory, over and over, as 16 writes of 4 KiB
 * per persistent flush with 4 flushes in flight, and checks that the
 * flushes complete in post order. It prints "streaming" once the first
 * flush completed. When the server dies or the network breaks, it must
 * see an error completion: it prints how long after the last successful
 * one, checks that every flush still in flight comes back exactly once,
 * prints "durable N" (every byte below N was reported flushed, at least
 * once) and exits 0. No error completion within LIMIT_S of the last
 * successful one: exit 1. With "wait" it sleeps in rpma_cq_wait when the
 * CQ is empty instead of polling again (an alarm ends it after LIMIT_S).
 *
 * verify: every byte of the first SIZE bytes of the device DAX PMEM (as
 * the server maps it) holds the pattern of SEED: what a client was told
 * was durable survived (a server killed, a machine powered off). The client tries to connect for 60
 * s, so the server may start after it. Used by tests/cluster/ over two machines; works in one too.
 */

#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpmem2.h>
#include <librpma.h>

#define CHUNK		(1u << 20)
#define MSG_SIZE	64
#define MSG_PATTERN	40
#define CONNECT_TRIES_S 60

struct pdata {
	uint64_t size;
	uint8_t pmem;
	uint8_t mr_desc_size;
	uint8_t cfg_desc_size;
	uint8_t mr_desc[32];
	uint8_t cfg_desc[32];
};

struct check_msg {
	char magic[8]; /* "XFERCHK" */
	uint64_t seed;
	uint64_t size;
	uint8_t pattern[MSG_PATTERN];
};

struct result_msg {
	char magic[8];	 /* "XFERRES" */
	uint64_t status; /* 0: every byte matched; else 1 + the first bad offset */
	uint8_t pad[MSG_SIZE - 16];
};

_Static_assert(sizeof(struct check_msg) == MSG_SIZE, "one message");
_Static_assert(sizeof(struct result_msg) == MSG_SIZE, "one message");

static const char *who = "xfer";

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "%s: ", who);                                                      \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		exit(1);                                                                           \
	} while (0)

#define CHECK_RPMA(call)                                                                           \
	do {                                                                                       \
		int ret_ = (call);                                                                 \
		if (ret_)                                                                          \
			FAIL("%s: %s (%d)", #call, rpma_err_2str(ret_), ret_);                     \
	} while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the pattern: byte I of the stream of SEED (splitmix64 of each word) */
static uint64_t pattern_word(uint64_t seed, uint64_t word)
{
	uint64_t z = seed + (word + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void pattern_fill(uint8_t *buf, uint64_t seed, size_t size)
{
	size_t i;

	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t w = pattern_word(seed, i / 8);
		memcpy(buf + i, &w, 8);
	}
	for (; i < size; i++)
		buf[i] = (uint8_t)(pattern_word(seed, i / 8) >> (8 * (i % 8)));
}

/* 1 + the offset of the first byte that differs from the pattern, or 0 */
static uint64_t pattern_check(const uint8_t *buf, uint64_t seed, size_t size)
{
	uint8_t expected[4096];

	for (size_t off = 0; off < size; off += sizeof(expected)) {
		size_t n = size - off < sizeof(expected) ? size - off : sizeof(expected);
		size_t words = off / 8;
		/* off is a multiple of 8: the chunk starts at a word */
		for (size_t i = 0; i < n; i++)
			expected[i] = (uint8_t)(pattern_word(seed, words + i / 8) >> (8 * (i % 8)));
		if (memcmp(buf + off, expected, n) != 0) {
			for (size_t i = 0; i < n; i++)
				if (buf[off + i] != expected[i])
					return 1 + off + i;
		}
	}
	return 0;
}

/*
 * The extensions of this library, looked up at run time: the same program
 * runs on librpma 1.x (tests/cluster/run.sh, interop), which lacks them.
 */
typedef int mr_desc_size_fn(const struct rpma_mr_local *mr, size_t *desc_size);
typedef int mr_desc_fn(const struct rpma_mr_local *mr, void *desc);
typedef int pcfg_desc_size_fn(const struct rpma_peer_cfg *pcfg, size_t *desc_size);
typedef int pcfg_versioned_desc_fn(const struct rpma_peer_cfg *pcfg,
				   const struct rpma_conn_cfg *cfg, void *desc);
typedef int set_persist_fn_fn(struct rpma_mr_local *mr, void (*persist)(const void *, size_t));
typedef int flush_method_fn(const struct rpma_conn *conn, const struct rpma_mr_remote *dst,
			    enum rpma_flush_type type, enum rpma_flush_method *method);

static void *ext(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

/* the method rpma_flush() uses, by name ("read-after-write" on librpma 1.x) */
static const char *flush_method_name(struct rpma_conn *conn, struct rpma_mr_remote *dst, int type)
{
	static const char *const names[] = { "none", "read-after-write", "gpspm", "native" };
	flush_method_fn *get = ext("rpma_conn_get_flush_method");
	enum rpma_flush_method method;

	if (get == NULL)
		return "read-after-write";
	if (get(conn, dst, (enum rpma_flush_type)type, &method) != 0 ||
	    (unsigned)method >= sizeof(names) / sizeof(names[0]))
		return "none";
	return names[method];
}

static bool is_siw(void)
{
	const char *p = getenv("RPMA_TEST_PROVIDER");

	return p != NULL && strcmp(p, "siw") == 0;
}

/* wait for the next completion and check it is OPCODE and successful */
static void expect_completion(struct rpma_cq *cq, enum ibv_wc_opcode opcode, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int ret;

	for (;;) {
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == 0)
			break;
		if (ret != RPMA_E_NO_COMPLETION)
			FAIL("rpma_cq_get_wc: %s", rpma_err_2str(ret));
		CHECK_RPMA(rpma_cq_wait(cq));
	}
	if (wc.status != IBV_WC_SUCCESS) {
		/* what else the queue holds, for the diagnosis */
		struct ibv_wc more;
		for (int i = 0; i < 8 && rpma_cq_get_wc(cq, 1, &more, NULL) == 0; i++)
			fprintf(stderr, "%s: then: %s, wr_id 0x%" PRIx64 ", vendor_err %u\n", who,
				ibv_wc_status_str(more.status), more.wr_id, more.vendor_err);
		FAIL("a completion failed: %s (wr_id 0x%" PRIx64 ", vendor_err %u)",
		     ibv_wc_status_str(wc.status), wc.wr_id, wc.vendor_err);
	}
	if (wc.opcode != opcode)
		FAIL("completion opcode %d, expected %d", wc.opcode, opcode);
	if (out)
		*out = wc;
}

struct memory {
	void *addr;
	size_t size;
	bool pmem;
	struct pmem2_map *map;
};

static void memory_get(struct memory *m, size_t size, const char *pmem_path)
{
	m->size = size;
	m->pmem = false;
	m->map = NULL;
	if (pmem_path == NULL || pmem_path[0] == '\0') {
		if (posix_memalign(&m->addr, 4096, size) != 0)
			FAIL("cannot allocate %zu bytes", size);
		memset(m->addr, 0, size);
		return;
	}
	int fd = open(pmem_path, O_RDWR);
	if (fd < 0)
		FAIL("cannot open %s: %s", pmem_path, strerror(errno));
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_map_new(&m->map, cfg, src))
		FAIL("cannot map %s: %s", pmem_path, pmem2_errormsg());
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
	if (pmem2_map_get_size(m->map) < size)
		FAIL("%s holds %zu bytes, fewer than %zu", pmem_path, pmem2_map_get_size(m->map),
		     size);
	m->addr = pmem2_map_get_address(m->map);
	m->pmem = true;
}

static struct rpma_peer *peer_for(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ctx;
	struct rpma_peer *peer;

	CHECK_RPMA(rpma_utils_get_ibv_context(addr, type, &ctx));
	CHECK_RPMA(rpma_peer_new(ctx, &peer));
	return peer;
}

static int server(const char *addr, const char *port, size_t size, const char *pmem_path)
{
	struct memory mem;
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *mr, *msg_mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	enum rpma_conn_event ev;
	struct pdata pd;
	uint8_t *msgs;
	size_t n;

	who = "xfer server";
	memory_get(&mem, size, pmem_path);
	CHECK_RPMA(rpma_mr_reg(peer, mem.addr, size,
			       RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
				   (mem.pmem ? RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT
					     : RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY),
			       &mr));
	if (posix_memalign((void **)&msgs, 4096, 2 * MSG_SIZE))
		FAIL("out of memory");
	CHECK_RPMA(rpma_mr_reg(peer, msgs, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			       &msg_mr));

	memset(&pd, 0, sizeof(pd));
	pd.size = size;
	pd.pmem = mem.pmem;
	/*
	 * On pmem, the region says how it is made persistent: with this
	 * library that offers GPSPM, and native persistent flush where the
	 * devices have it.
	 */
	set_persist_fn_fn *set_persist = ext("rpma_mr_set_persist_fn");
	if (mem.pmem && set_persist)
		CHECK_RPMA(set_persist(mr, pmem2_get_persist_fn(mem.map)));
	/*
	 * This library's versioned descriptors name the flush methods the
	 * region offers, so that the peers agree on the best both have; a
	 * librpma 1.x server has only the 1.x forms (read-after-write).
	 */
	mr_desc_size_fn *mr_size = ext("rpma_mr_get_versioned_descriptor_size");
	mr_desc_fn *mr_desc = ext("rpma_mr_get_versioned_descriptor");
	if (mr_size == NULL || mr_desc == NULL) {
		mr_size = rpma_mr_get_descriptor_size;
		mr_desc = rpma_mr_get_descriptor;
	}
	CHECK_RPMA(mr_size(mr, &n));
	if (n > sizeof(pd.mr_desc))
		FAIL("descriptor of %zu bytes", n);
	pd.mr_desc_size = (uint8_t)n;
	CHECK_RPMA(mr_desc(mr, pd.mr_desc));
	CHECK_RPMA(rpma_peer_cfg_new(&pcfg));
	CHECK_RPMA(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, mem.pmem));
	pcfg_desc_size_fn *cfg_size = ext("rpma_peer_cfg_get_versioned_descriptor_size");
	pcfg_versioned_desc_fn *cfg_versioned = ext("rpma_peer_cfg_get_versioned_descriptor");
	if (cfg_size == NULL || cfg_versioned == NULL)
		cfg_size = rpma_peer_cfg_get_descriptor_size;
	CHECK_RPMA(cfg_size(pcfg, &n));
	if (n > sizeof(pd.cfg_desc))
		FAIL("peer configuration descriptor of %zu bytes", n);
	pd.cfg_desc_size = (uint8_t)n;
	if (cfg_versioned)
		CHECK_RPMA(cfg_versioned(pcfg, NULL, pd.cfg_desc));
	else
		CHECK_RPMA(rpma_peer_cfg_get_descriptor(pcfg, pd.cfg_desc));

	CHECK_RPMA(rpma_ep_listen(peer, addr, port, &ep));
	printf("server: listening on %s:%s, %zu bytes of %s\n", addr, port, size,
	       mem.pmem ? pmem_path : "DRAM");
	fflush(stdout);
	CHECK_RPMA(rpma_ep_next_conn_req(ep, NULL, &req));
	CHECK_RPMA(rpma_conn_req_recv(req, msg_mr, 0, MSG_SIZE, NULL));
	struct rpma_conn_private_data priv = { &pd, sizeof(pd) };
	CHECK_RPMA(rpma_conn_req_connect(&req, &priv, &conn));
	CHECK_RPMA(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED)
		FAIL("connection event %s", rpma_utils_conn_event_2str(ev));
	CHECK_RPMA(rpma_conn_get_cq(conn, &cq));

	/* the check request */
	struct ibv_wc wc;
	expect_completion(cq, IBV_WC_RECV, &wc);
	if (wc.byte_len != MSG_SIZE)
		FAIL("a check request of %u bytes", wc.byte_len);
	struct check_msg chk;
	memcpy(&chk, msgs, sizeof(chk));
	if (memcmp(chk.magic, "XFERCHK", 8) != 0)
		FAIL("the check request's magic is wrong");
	if (!is_siw()) {
		if (!(wc.wc_flags & IBV_WC_WITH_IMM))
			FAIL("the check request came without immediate data");
		if (ntohl(wc.imm_data) != (uint32_t)chk.seed)
			FAIL("immediate data 0x%x, expected 0x%x", ntohl(wc.imm_data),
			     (uint32_t)chk.seed);
	}
	uint8_t expected[MSG_PATTERN];
	pattern_fill(expected, chk.seed ^ 0x5a5a5a5a5a5a5a5aULL, MSG_PATTERN);
	if (memcmp(chk.pattern, expected, MSG_PATTERN) != 0)
		FAIL("the check request's bytes differ from what was sent");

	struct result_msg res;
	memset(&res, 0, sizeof(res));
	memcpy(res.magic, "XFERRES", 8);
	if (chk.size > size) {
		res.status = 1; /* nothing to compare: reported as offset 0 */
		fprintf(stderr, "server: asked to check %" PRIu64 " bytes of %zu\n", chk.size,
			size);
	} else {
		double t0 = now_s();
		res.status = pattern_check(mem.addr, chk.seed, chk.size);
		printf("server: %" PRIu64 " bytes compared in %.1f s: %s\n", chk.size, now_s() - t0,
		       res.status ? "DIFFERENT" : "all match");
		if (res.status)
			printf("server: first difference at offset %" PRIu64 "\n", res.status - 1);
	}
	memcpy(msgs + MSG_SIZE, &res, sizeof(res));
	CHECK_RPMA(rpma_send(conn, msg_mr, MSG_SIZE, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL));
	expect_completion(cq, IBV_WC_SEND, NULL);

	/*
	 * The server disconnects, once its send has completed: a client that
	 * disconnected as soon as the answer arrived could flush the send
	 * before siw marked it done (it would complete with a local QP
	 * operation error, delivered all the same)
	 */
	CHECK_RPMA(rpma_conn_disconnect(conn));
	CHECK_RPMA(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_CLOSED)
		FAIL("connection event %s, expected closed", rpma_utils_conn_event_2str(ev));
	CHECK_RPMA(rpma_conn_delete(&conn));
	CHECK_RPMA(rpma_ep_shutdown(&ep));
	CHECK_RPMA(rpma_mr_dereg(&msg_mr));
	CHECK_RPMA(rpma_mr_dereg(&mr));
	CHECK_RPMA(rpma_peer_cfg_delete(&pcfg));
	CHECK_RPMA(rpma_peer_delete(&peer));
	return res.status ? 1 : 0;
}

static struct rpma_conn *client_connect(struct rpma_peer *peer, const char *addr, const char *port,
					const struct rpma_conn_cfg *cfg)
{
	double deadline = now_s() + CONNECT_TRIES_S;

	for (;;) {
		struct rpma_conn_req *req;
		struct rpma_conn *conn = NULL;
		enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
		int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);

		if (ret == 0)
			ret = rpma_conn_req_connect(&req, NULL, &conn);
		if (ret == 0)
			ret = rpma_conn_next_event(conn, &ev);
		if (ret == 0 && ev == RPMA_CONN_ESTABLISHED)
			return conn;
		if (conn)
			(void)rpma_conn_delete(&conn);
		if (now_s() > deadline)
			FAIL("cannot connect to %s:%s within %d s (%s)", addr, port,
			     CONNECT_TRIES_S,
			     ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(ev));
		usleep(200 * 1000);
	}
}

/*
 * What the server's private data offers: its region (at least size bytes)
 * as *dst, its peer configuration applied to conn; the connection's CQ in
 * *cq. Returns the flush type its memory takes.
 */
static int accept_offer(struct rpma_conn *conn, size_t size, struct rpma_mr_remote **dst,
			struct rpma_cq **cq)
{
	struct rpma_conn_private_data priv;
	struct rpma_peer_cfg *pcfg;
	struct pdata pd;

	CHECK_RPMA(rpma_conn_get_private_data(conn, &priv));
	if (priv.len < sizeof(pd))
		FAIL("private data of %u bytes", priv.len);
	memcpy(&pd, priv.ptr, sizeof(pd));
	if (pd.mr_desc_size > sizeof(pd.mr_desc) || pd.cfg_desc_size > sizeof(pd.cfg_desc))
		FAIL("descriptor sizes %u and %u in the private data", pd.mr_desc_size,
		     pd.cfg_desc_size);
	CHECK_RPMA(rpma_mr_remote_from_descriptor(pd.mr_desc, pd.mr_desc_size, dst));
	CHECK_RPMA(rpma_peer_cfg_from_descriptor(pd.cfg_desc, pd.cfg_desc_size, &pcfg));
	CHECK_RPMA(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	CHECK_RPMA(rpma_peer_cfg_delete(&pcfg));
	if (pd.size < size)
		FAIL("the server offers %" PRIu64 " bytes, fewer than %zu", pd.size, size);
	CHECK_RPMA(rpma_conn_get_cq(conn, cq));
	return pd.pmem ? RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;
}

/* a line every PROGRESS_S seconds: where a slow or stalled transfer was */
#define PROGRESS_S 10.0
static void progress(const char *what, size_t done, size_t size, double t0)
{
	static double last;
	double t = now_s();
	if (last < t0)
		last = t0;
	if (t - last < PROGRESS_S || done == size)
		return;
	last = t;
	printf("client: %zu of %zu bytes %s after %.1f s\n", done, size, what, t - t0);
}

static int client(const char *addr, const char *port, size_t size, uint64_t seed, size_t chunk)
{
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_mr_local *src_mr, *back_mr, *msg_mr;
	struct rpma_mr_remote *dst;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	uint8_t *src, *back, *msgs;
	enum rpma_conn_event ev;
	bool atomics = !is_siw();

	who = "xfer client";
	if (posix_memalign((void **)&src, 4096, size) ||
	    posix_memalign((void **)&back, 4096, size) ||
	    posix_memalign((void **)&msgs, 4096, 2 * MSG_SIZE))
		FAIL("cannot allocate 2 x %zu bytes", size);
	pattern_fill(src, seed, size);
	memset(back, 0, size);
	CHECK_RPMA(rpma_mr_reg(peer, src, size, RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	CHECK_RPMA(rpma_mr_reg(peer, back, size, RPMA_MR_USAGE_READ_DST, &back_mr));
	CHECK_RPMA(rpma_mr_reg(peer, msgs, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
			       &msg_mr));

	conn = client_connect(peer, addr, port, NULL);
	int flush_type = accept_offer(conn, size, &dst, &cq);

	printf("client: flush method %s\n", flush_method_name(conn, dst, flush_type));
	/* write and flush, chunk by chunk; the first word last, atomically */
	double t0 = now_s();
	size_t first = atomics ? 8 : 0;
	for (size_t off = first; off < size; off += chunk) {
		size_t len = size - off < chunk ? size - off : chunk;
		CHECK_RPMA(
		    rpma_write(conn, dst, off, src_mr, off, len, RPMA_F_COMPLETION_ON_ERROR, NULL));
		CHECK_RPMA(
		    rpma_flush(conn, dst, off, len, flush_type, RPMA_F_COMPLETION_ALWAYS, NULL));
		expect_completion(cq, IBV_WC_RDMA_READ, NULL);
		progress("written and flushed", off + len, size, t0);
	}
	if (atomics) {
		CHECK_RPMA(rpma_atomic_write(conn, dst, 0, (const char *)src,
					     RPMA_F_COMPLETION_ON_ERROR, NULL));
		CHECK_RPMA(rpma_flush(conn, dst, 0, 8, flush_type, RPMA_F_COMPLETION_ALWAYS, NULL));
		expect_completion(cq, IBV_WC_RDMA_READ, NULL);
	}
	double t1 = now_s();

	/* read it all back */
	for (size_t off = 0; off < size; off += chunk) {
		size_t len = size - off < chunk ? size - off : chunk;
		CHECK_RPMA(
		    rpma_read(conn, back_mr, off, dst, off, len, RPMA_F_COMPLETION_ALWAYS, NULL));
		expect_completion(cq, IBV_WC_RDMA_READ, NULL);
		progress("read back", off + len, size, t1);
	}
	double t2 = now_s();
	uint64_t bad = pattern_check(back, seed, size);
	if (bad)
		FAIL("read back: the first difference is at offset %" PRIu64, bad - 1);
	printf("client: %zu bytes written and flushed (%s, %s) in %.2f s, read back in %.2f s: "
	       "all match\n",
	       size, flush_type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visibility",
	       atomics ? "the first word by an atomic write" : "no atomic write on siw", t1 - t0,
	       t2 - t1);

	/* the server checks its memory */
	struct check_msg chk;
	memset(&chk, 0, sizeof(chk));
	memcpy(chk.magic, "XFERCHK", 8);
	chk.seed = seed;
	chk.size = size;
	pattern_fill(chk.pattern, seed ^ 0x5a5a5a5a5a5a5a5aULL, MSG_PATTERN);
	memcpy(msgs, &chk, sizeof(chk));
	CHECK_RPMA(rpma_recv(conn, msg_mr, MSG_SIZE, MSG_SIZE, NULL));
	if (atomics)
		CHECK_RPMA(rpma_send_with_imm(conn, msg_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
					      (uint32_t)seed, NULL));
	else
		CHECK_RPMA(rpma_send(conn, msg_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, NULL));
	/* the send's and the answer's completions come in either order */
	bool sent = false, answered = false;
	while (!sent || !answered) {
		struct ibv_wc wc;
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			CHECK_RPMA(rpma_cq_wait(cq));
			continue;
		}
		if (ret)
			FAIL("rpma_cq_get_wc: %s", rpma_err_2str(ret));
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("a message's completion failed: %s", ibv_wc_status_str(wc.status));
		if (wc.opcode == IBV_WC_SEND)
			sent = true;
		else if (wc.opcode == IBV_WC_RECV)
			answered = true;
		else
			FAIL("completion opcode %d", wc.opcode);
	}
	struct result_msg res;
	memcpy(&res, msgs + MSG_SIZE, sizeof(res));
	if (memcmp(res.magic, "XFERRES", 8) != 0)
		FAIL("the server's answer has a wrong magic");
	if (res.status)
		FAIL("the server's memory differs at offset %" PRIu64, res.status - 1);
	printf("client: the server's memory matches, checked by the server\n");

	/* the server disconnects once its answer's send has completed */
	CHECK_RPMA(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_CLOSED)
		FAIL("connection event %s, expected closed", rpma_utils_conn_event_2str(ev));
	CHECK_RPMA(rpma_conn_disconnect(conn));
	CHECK_RPMA(rpma_conn_delete(&conn));
	CHECK_RPMA(rpma_mr_remote_delete(&dst));
	CHECK_RPMA(rpma_mr_dereg(&msg_mr));
	CHECK_RPMA(rpma_mr_dereg(&back_mr));
	CHECK_RPMA(rpma_mr_dereg(&src_mr));
	CHECK_RPMA(rpma_peer_delete(&peer));
	free(src);
	free(back);
	free(msgs);
	return 0;
}

#define STREAM_WRITE		4096
#define STREAM_WRITES_PER_FLUSH 16
#define STREAM_IN_FLIGHT	4
#define STREAM_SPAN		(STREAM_WRITE * STREAM_WRITES_PER_FLUSH)

static void stream_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "xfer stream: rpma_cq_wait did not return within the limit\n";
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to say */
	}
	_exit(1);
}

static int stream(const char *addr, const char *port, size_t size, uint64_t seed, double limit_s,
		  bool wait)
{
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_mr_local *src_mr;
	struct rpma_mr_remote *dst;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	uint8_t *src;

	who = "xfer stream";
	size -= size % STREAM_SPAN;
	if (size == 0)
		FAIL("SIZE must be at least %d", STREAM_SPAN);
	if (posix_memalign((void **)&src, 4096, size))
		FAIL("cannot allocate %zu bytes", size);
	pattern_fill(src, seed, size);
	CHECK_RPMA(rpma_mr_reg(peer, src, size, RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	/* room for every write and flush in flight */
	struct rpma_conn_cfg *ccfg;
	CHECK_RPMA(rpma_conn_cfg_new(&ccfg));
	CHECK_RPMA(
	    rpma_conn_cfg_set_sq_size(ccfg, STREAM_IN_FLIGHT * (STREAM_WRITES_PER_FLUSH + 1)));
	CHECK_RPMA(
	    rpma_conn_cfg_set_cq_size(ccfg, STREAM_IN_FLIGHT * (STREAM_WRITES_PER_FLUSH + 1)));
	conn = client_connect(peer, addr, port, ccfg);
	CHECK_RPMA(rpma_conn_cfg_delete(&ccfg));
	int flush_type = accept_offer(conn, size, &dst, &cq);

	/* flush n covers [(n % spans) * SPAN, + SPAN); its op_context is n + 1 */
	const uint64_t spans = size / STREAM_SPAN;
	uint64_t posted = 0, completed = 0, durable = 0;
	double last_ok = now_s();
	bool announced = false;
	for (;;) {
		while (posted - completed < STREAM_IN_FLIGHT) {
			size_t base = (size_t)(posted % spans) * STREAM_SPAN;
			int ret = 0;
			for (int i = 0; i < STREAM_WRITES_PER_FLUSH && ret == 0; i++)
				ret = rpma_write(conn, dst, base + (size_t)i * STREAM_WRITE, src_mr,
						 base + (size_t)i * STREAM_WRITE, STREAM_WRITE,
						 RPMA_F_COMPLETION_ON_ERROR, NULL);
			if (ret == 0)
				ret = rpma_flush(conn, dst, base, STREAM_SPAN, flush_type,
						 RPMA_F_COMPLETION_ALWAYS,
						 (void *)(uintptr_t)(posted + 1));
			if (ret) {
				/* a post refused once the connection broke is an answer too */
				printf("stream: a post failed after %.2f s: %s\n",
				       now_s() - last_ok, rpma_err_2str(ret));
				goto broken;
			}
			posted++;
		}
		struct ibv_wc wc;
		int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
		if (ret == RPMA_E_NO_COMPLETION) {
			if (wait) {
				/* the alarm bounds the sleep: it is set anew at each success */
				CHECK_RPMA(rpma_cq_wait(cq));
				continue;
			}
			if (now_s() - last_ok > limit_s)
				FAIL("no error completion %.0f s after the last successful one "
				     "(%" PRIu64 " flushes in flight)",
				     limit_s, posted - completed);
			continue;
		}
		if (ret)
			FAIL("rpma_cq_get_wc: %s", rpma_err_2str(ret));
		if (wc.status != IBV_WC_SUCCESS) {
			printf(
			    "stream: error completion %.2f s after the last successful one: %s\n",
			    now_s() - last_ok, ibv_wc_status_str(wc.status));
			if (wc.wr_id != 0) {
				/* a failed flush: it must be the next one in post order */
				if (wc.wr_id != completed + 1)
					FAIL("failed flush %" PRIu64 ", expected %" PRIu64,
					     wc.wr_id, completed + 1);
				completed++;
			}
			goto broken;
		}
		if (wc.wr_id != completed + 1)
			FAIL("flush %" PRIu64 " completed, expected %" PRIu64 " (post order)",
			     wc.wr_id, completed + 1);
		completed++;
		if (durable < size)
			durable = completed >= spans ? size : completed * STREAM_SPAN;
		last_ok = now_s();
		if (wait)
			alarm((unsigned)limit_s + 1);
		if (!announced) {
			printf("streaming\n");
			fflush(stdout);
			announced = true;
		}
	}

broken:
	alarm(0);
	/* every flush still in flight comes back, failed, exactly once */
	{
		double deadline = now_s() + 20;
		while (completed < posted) {
			struct ibv_wc wc;
			int ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
			if (ret == RPMA_E_NO_COMPLETION) {
				if (now_s() > deadline)
					FAIL("%" PRIu64 " flushes in flight never came back",
					     posted - completed);
				continue;
			}
			if (ret)
				FAIL("rpma_cq_get_wc while draining: %s", rpma_err_2str(ret));
			if (wc.wr_id == 0)
				continue; /* a failed write: no context */
			if (wc.status == IBV_WC_SUCCESS)
				FAIL("flush %" PRIu64 " succeeded after the connection broke",
				     wc.wr_id);
			if (wc.wr_id != completed + 1)
				FAIL("flush %" PRIu64 " came back, expected %" PRIu64, wc.wr_id,
				     completed + 1);
			completed++;
		}
		struct ibv_wc wc;
		if (rpma_cq_get_wc(cq, 1, &wc, NULL) == 0 && wc.wr_id != 0)
			FAIL("flush %" PRIu64 " came back twice", wc.wr_id);
	}
	printf("stream: all %" PRIu64 " flushes came back once\n", posted);
	printf("durable %" PRIu64 "\n", durable);
	(void)rpma_conn_disconnect(conn);
	(void)rpma_conn_delete(&conn);
	(void)rpma_mr_remote_delete(&dst);
	(void)rpma_mr_dereg(&src_mr);
	(void)rpma_peer_delete(&peer);
	free(src);
	return 0;
}

static int verify(const char *pmem_path, size_t size, uint64_t seed)
{
	struct memory mem;

	who = "xfer verify";
	memory_get(&mem, size, pmem_path);
	uint64_t bad = pattern_check(mem.addr, seed, size);
	if (bad)
		FAIL("%s: the first difference from the pattern is at offset %" PRIu64, pmem_path,
		     bad - 1);
	printf("verify: the first %zu bytes of %s hold what was written\n", size, pmem_path);
	return 0;
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		FAIL("bad size '%s'", s);
	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	if (v > (1ull << 31))
		FAIL("size '%s' out of range (1 B to 2 GiB)", s);
	return (size_t)v;
}

int main(int argc, char *argv[])
{
	/* the harness reads the output of a program it had to stop, too */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* which library runs: this one has extensions librpma 1.x lacks */
	fprintf(stderr, "xfer %s: %s\n", argc > 1 ? argv[1] : "",
		dlsym(RTLD_DEFAULT, "rpma_cq_get_completion") ? "rpma-ng" : "librpma 1.x");
	if (argc >= 5 && strcmp(argv[1], "server") == 0)
		return server(argv[2], argv[3], parse_size(argv[4]), argc > 5 ? argv[5] : NULL);
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "client") == 0) {
		size_t chunk = argc == 7 ? parse_size(argv[6]) : CHUNK;
		if (chunk == 0)
			FAIL("CHUNK must not be 0");
		return client(argv[2], argv[3], parse_size(argv[4]), strtoull(argv[5], NULL, 0),
			      chunk);
	}
	if ((argc == 7 || argc == 8) && strcmp(argv[1], "stream") == 0) {
		bool wait = argc == 8 && strcmp(argv[7], "wait") == 0;
		if (argc == 8 && !wait && strcmp(argv[7], "poll") != 0)
			FAIL("the style is poll or wait, not '%s'", argv[7]);
		if (wait)
			signal(SIGALRM, stream_alarm);
		return stream(argv[2], argv[3], parse_size(argv[4]), strtoull(argv[5], NULL, 0),
			      atof(argv[6]), wait);
	}
	if (argc == 5 && strcmp(argv[1], "verify") == 0)
		return verify(argv[2], parse_size(argv[3]), strtoull(argv[4], NULL, 0));
	fprintf(stderr,
		"usage: %s server ADDR PORT SIZE [PMEM]\n"
		"       %s client ADDR PORT SIZE SEED [CHUNK]\n"
		"       %s stream ADDR PORT SIZE SEED LIMIT_S [poll|wait]\n"
		"       %s verify PMEM SIZE SEED\n",
		argv[0], argv[0], argv[0], argv[0]);
	return 2;
}
