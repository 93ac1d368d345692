/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * interop.h -- what the interop client and server share
 *
 * The client and the server are written against the librpma 1.x interface
 * only, and each is built twice: against Debian's librpma 1.x (its header
 * and librpma.so.0) and against this tree. The session they run, byte by
 * byte, is described in tests/interop/README.md.
 *
 * What a build may vary (its options, the connection configuration, the
 * descriptors it sends, checks once connected) sits behind the hooks at the
 * end of this file: hooks-1x.c is a plain librpma 1.x application's;
 * hooks-ng.c, built only against this tree, uses the rpma-ng extensions
 * (versioned descriptors, GPSPM, the flush-method agreement).
 */

#ifndef INTEROP_H
#define INTEROP_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

#if defined(INTEROP_DEBIAN_HEADER) && defined(RPMA_NG_EXTENSIONS)
#error "this build must use Debian's librpma 1.x header, not this tree's"
#endif

/* how long one wait for the peer, an event or a completion may take (ms) */
#define IO_WAIT_MS 30000

/*
 * The server's region: filled with pattern P; the client writes pattern W
 * into the write range and flushes it, reads the read range back, writes 8
 * bytes atomically, and with immediate data writes pattern I into the
 * immediate range. Everything else must keep P.
 */
#define IO_REGION_SIZE 8192
#define IO_WRITE_OFF   123
#define IO_WRITE_LEN   3001
#define IO_READ_OFF    4096
#define IO_READ_LEN    2048
#define IO_ATOMIC_OFF  6400
#define IO_IMM_OFF     7001
#define IO_IMM_LEN     777

/*
 * messages: the client's request, the server's reply, the client's message
 * with immediate data
 */
#define IO_REQUEST_LEN 300
#define IO_REPLY_LEN   257
#define IO_IMM_MSG_LEN 64

/* patterns, each a seed offset from the session's seed */
enum io_stream {
	IO_P = 1,     /* the server's fill */
	IO_W,	      /* the client's write */
	IO_REQUEST,   /* client -> server message */
	IO_REPLY,     /* server -> client message */
	IO_IMM_MSG,   /* client -> server message with immediate data */
	IO_IMM_WRITE, /* client's write with immediate data */
	IO_ATOMIC,    /* the 8 bytes written atomically */
};

/*
 * The client's connection private data: what the session holds, and the
 * seed of its patterns. Fixed layout (RoCE pads private data with zeros).
 */
#define IO_PLAN_MAGIC "IOP1"
#define IO_PLAN_LEN   9
enum io_plan_flags {
	IO_PLAN_PERSISTENT = 1 << 0, /* the flush is RPMA_FLUSH_TYPE_PERSISTENT */
	IO_PLAN_MESSAGES = 1 << 1,   /* request and reply (send/recv) */
	IO_PLAN_IMM = 1 << 2,	     /* send and write with immediate data, both ways */
};
struct io_plan {
	uint8_t flags;
	uint32_t seed;
};
void io_plan_encode(const struct io_plan *plan, uint8_t buf[IO_PLAN_LEN]);
/* 0, or -1 when buf does not hold a plan */
int io_plan_decode(const void *buf, size_t len, struct io_plan *plan);

/* the immediate values of a session */
uint32_t io_imm(uint32_t seed, enum io_stream stream);

/* pattern bytes: byte i of stream s differs with every offset and seed */
void io_fill(void *buf, size_t len, size_t origin, uint32_t seed, enum io_stream stream);
/* the offset of the first byte that differs from the pattern, or -1 */
long io_mismatch(const void *buf, size_t len, size_t origin, uint32_t seed, enum io_stream stream);

/* the program's name and role, for messages */
void io_init(const char *role);
void io_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void io_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
void io_check_ret(int ret, int expected, const char *call, const char *file, int line);

#define IO_OK(call)	       io_check_ret((call), 0, #call, __FILE__, __LINE__)
#define IO_RET(call, expected) io_check_ret((call), (expected), #call, __FILE__, __LINE__)
#define IO_FAIL(...)	       io_fail(__FILE__, __LINE__, __VA_ARGS__)
#define IO_ASSERT(cond)                                                                            \
	do {                                                                                       \
		if (!(cond))                                                                       \
			io_fail(__FILE__, __LINE__, "assertion failed: %s", #cond);                \
	} while (0)
#define IO_EQ(a, b)                                                                                \
	do {                                                                                       \
		unsigned long long a_ = (unsigned long long)(a);                                   \
		unsigned long long b_ = (unsigned long long)(b);                                   \
		if (a_ != b_)                                                                      \
			io_fail(__FILE__, __LINE__, "%s == %s: %llu (%#llx) != %llu (%#llx)", #a,  \
				#b, a_, a_, b_, b_);                                               \
	} while (0)
/* every byte of buf must be the pattern's */
#define IO_PATTERN(buf, len, origin, seed, stream)                                                 \
	do {                                                                                       \
		long bad_ = io_mismatch((buf), (len), (origin), (seed), (stream));                 \
		if (bad_ >= 0)                                                                     \
			io_fail(__FILE__, __LINE__,                                                \
				"%s: byte %ld (offset %zu) is %#x, not stream %d's %#x", #buf,     \
				bad_, (size_t)(origin) + (size_t)bad_,                             \
				((const unsigned char *)(buf))[bad_], (int)(stream),               \
				io_byte((size_t)(origin) + (size_t)bad_, (seed), (stream)));       \
	} while (0)
unsigned io_byte(size_t offset, uint32_t seed, enum io_stream stream);

/*
 * Options of the programs: --name or --name=VALUE; value is NULL without
 * '='. Fails on anything else.
 */
void io_option_split(const char *arg, char *name, size_t name_size, const char **value);

/* command line: --addr, --port, --sync and --expect-lib, common to both */
struct io_args {
	const char *addr;
	const char *port;
	const char *sync;	/* a directory the two processes share */
	const char *expect_lib; /* the librpma.so.0 this process must run on */
};
/*
 * Take the common options out of argv (the others stay, in order, for the
 * program); fail when one is missing. Then check the library.
 */
void io_args_parse(int *argc, char **argv, struct io_args *args);

/*
 * The process must run on the library it was told: the test would prove
 * nothing if the dynamic linker picked the other librpma.so.0.
 */
void io_check_library(const char *expected);

/* synchronization through files in the sync directory */
void io_sync_mark(const struct io_args *args, const char *name);
void io_sync_await(const struct io_args *args, const char *name);

/* librpma 1.x calls with a time limit */
struct rpma_peer *io_peer_new(const char *addr, enum rpma_util_ibv_context_type type);
struct rpma_conn_req *io_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg);
void io_expect_event(struct rpma_conn *conn, enum rpma_conn_event expected);
/* the next completion (any status) */
void io_next_wc(struct rpma_cq *cq, struct ibv_wc *wc);
/* the next completion must be a success of this opcode and context */
void io_expect_wc_at(struct rpma_cq *cq, enum ibv_wc_opcode opcode, const void *ctx,
		     struct ibv_wc *out, const char *file, int line);
#define IO_WC(cq, opcode, ctx, out)                                                                \
	io_expect_wc_at((cq), (opcode), (ctx), (out), __FILE__, __LINE__)
/*
 * Completions that come in no set order (a send's own and the peer's
 * messages): take n of them, each one expected once, and check each
 * against its entry: status, opcode, length (when not 0) and, for a
 * receive, the immediate data.
 */
struct io_expected_wc {
	const void *ctx;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	bool with_imm; /* receives only: rxe flags a send's own completion too */
	uint32_t imm;
	bool seen;
};
void io_expect_wcs(struct rpma_cq *cq, struct io_expected_wc *exp, int n);
/* fake context values, distinct and easy to recognize */
#define IO_CTX(n) ((void *)(uintptr_t)(0x10C0DE00u + (unsigned)(n)))

/*
 * Private data sent by the server: items, each a length byte and its bytes,
 * so that descriptors of any length survive RoCE's padding.
 */
struct io_pdata {
	uint8_t buf[196];
	uint8_t len;
};
void io_pdata_add(struct io_pdata *pd, const void *item, size_t len);
/* the item-th item; its length in *len */
const void *io_pdata_item(const void *pd, size_t pd_len, int item, size_t *len);

/* the librpma 1.x descriptors of a region (21 bytes) and a peer configuration (1) */
void io_describe_1x(const struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
		    struct io_pdata *pd);

/* hooks: the variations of hooks-1x.c and hooks-ng.c */

/* an option the program does not know: consumed (true) or not (false) */
bool io_hook_option(const char *name, const char *value);
/* the usage lines of the hooks' options, for messages */
extern const char io_hook_usage[];
/* client: the connection configuration, before connecting */
void io_hook_client_cfg(struct rpma_conn_cfg *cfg);
/* client: once the server's descriptors are applied, before any transfer */
void io_hook_client_connected(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			      const struct io_plan *plan);
/*
 * server: add the region's and the peer configuration's descriptors to pd
 * (the 1.x forms, or the versioned ones)
 */
void io_hook_server_describe(struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
			     struct io_pdata *pd);

#endif /* INTEROP_H */
