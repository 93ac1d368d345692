/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- plumbing shared by the rdma tests
 *
 * Every test is one program that forks a server and a client process, each
 * opening its own RDMA device context (nothing RDMA is done in the parent,
 * which only supervises). The two children synchronize through a pair of
 * pipes; the parent kills what is left at the deadline and maps the exit
 * codes of the children to the test protocol: 0 pass, 1 fail, 77 skip (the
 * reason printed as the last line).
 *
 * Environment: RPMA_TEST_ADDR (the address of the RDMA device; required,
 * the test skips without it), RPMA_TEST_PROVIDER (rxe, siw; optional).
 */

#ifndef RDMA_TEST_COMMON_H
#define RDMA_TEST_COMMON_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <librpma.h>

/* how long a whole test may run before the parent kills it (seconds) */
#define T_DEADLINE_S t_deadline_s
extern int t_deadline_s; /* 60 unless t_set_deadline() changed it */
/* how long one wait for a peer, an event or a completion may take (ms) */
#define T_WAIT_MS 20000

enum t_role { T_PARENT, T_SERVER, T_CLIENT };

struct t_env {
	const char *name;     /* the test's name, for messages */
	const char *addr;     /* RPMA_TEST_ADDR */
	const char *provider; /* "rxe", "siw" or "unknown" */
	char port[16];	      /* 7300 + the test's index */
	enum t_role role;
};

extern struct t_env t_env;

/* Read the environment (skip without RPMA_TEST_ADDR) and pick the port. */
void t_init(const char *name, int index);

/* A longer (or shorter) deadline for the whole test, before t_run(). */
void t_set_deadline(int seconds);

/* true when the tests run over soft iWARP */
bool t_is_siw(void);

/*
 * Fork the server (may be NULL) and the client, wait for both and return
 * the exit code of the test. Either function returns to mean success.
 */
int t_run(void (*server)(void), void (*client)(void));

/* failing and skipping, from any process */
void t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
void t_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void t_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void t_check_ret(int ret, int expected, const char *call, const char *file, int line);
void t_check_eq(unsigned long long a, unsigned long long b, const char *sa, const char *sb,
		const char *file, int line);

/* the call must return 0 */
#define T_OK(call) t_check_ret((call), 0, #call, __FILE__, __LINE__)
/* the call must return exactly the given code */
#define T_RET(call, expected) t_check_ret((call), (expected), #call, __FILE__, __LINE__)
/* two integers (or pointers) must be equal */
#define T_EQ(a, b)                                                                                 \
	t_check_eq((unsigned long long)(a), (unsigned long long)(b), #a, #b, __FILE__, __LINE__)
#define T_PTR_EQ(a, b) T_EQ((uintptr_t)(a), (uintptr_t)(b))
#define T_ASSERT(cond)                                                                             \
	do {                                                                                       \
		if (!(cond))                                                                       \
			t_fail(__FILE__, __LINE__, "assertion failed: %s", #cond);                 \
	} while (0)
#define T_FAIL(...) t_fail(__FILE__, __LINE__, __VA_ARGS__)

/* synchronization between server and client: one tagged byte each way */
void t_signal(char tag);
void t_await(char tag);
/* a blob of a known size through the same pipe */
void t_send_blob(const void *buf, size_t len);
void t_recv_blob(void *buf, size_t len);

/*
 * The calling child kills itself with SIGKILL, as a crashed peer; t_run()
 * counts that as the child's success.
 */
void t_die(void) __attribute__((noreturn));

/* whether the peer has signaled something not read yet */
bool t_peer_signaled(void);
/*
 * A GPSPM target (RPMA_GPSPM_POLLED) serves its peer's flushes by polling
 * its CQ: this does until the peer signals tag. Nothing else may complete.
 */
void t_serve_until(struct rpma_conn *conn, char tag);

/* what the process waits for, told if the alarm fires */
void t_waiting(const char *what);

/* time */
long long t_now_ms(void);
void t_sleep_ms(int ms);

/* memory: page aligned, zeroed, never freed before exit */
void *t_alloc(size_t size);
/* a pattern that differs for every offset and seed */
void t_fill(void *buf, size_t len, unsigned seed);
/*
 * The offset of the first byte of buf that differs from the pattern's bytes
 * [origin, origin + len), or -1.
 */
long t_check_pattern(const void *buf, size_t len, size_t origin, unsigned seed);
#define T_PATTERN(buf, len, origin, seed)                                                          \
	do {                                                                                       \
		long bad_ = t_check_pattern((buf), (len), (origin), (seed));                       \
		if (bad_ >= 0)                                                                     \
			t_fail(__FILE__, __LINE__, "%s: byte %ld differs from pattern %u at %zu",  \
			       #buf, bad_, (unsigned)(seed), (size_t)(origin));                    \
	} while (0)
/* every byte of the range must be the given value */
#define T_BYTES(buf, len, value)                                                                   \
	do {                                                                                       \
		const unsigned char *b_ = (const unsigned char *)(buf);                            \
		for (size_t i_ = 0; i_ < (size_t)(len); i_++)                                      \
			if (b_[i_] != (unsigned char)(value))                                      \
				t_fail(__FILE__, __LINE__, "%s: byte %zu is %#x, expected %#x",    \
				       #buf, i_, b_[i_], (unsigned)(unsigned char)(value));        \
	} while (0)

/*
 * Persistent memory: RPMA_TEST_PMEM mapped with libpmem2 (DRAM without
 * it), zeroed. *persist persists a range of it and records the call in
 * t_persist_log (offsets from the start of the mapping).
 */
struct t_persist_log {
	unsigned calls;
	size_t offset, len; /* of the last call */
	size_t total;	    /* bytes over all calls */
};
extern struct t_persist_log t_persist_log;
void *t_pmem_map(size_t size, rpma_persist_fn **persist);
/* whether t_pmem_map maps persistent memory (RPMA_TEST_PMEM and libpmem2) */
bool t_pmem_is_device(void);

/*
 * Whether the library flushes (both placements) or atomically writes
 * natively on this process's device: the device offers the IBTA 1.5 verb
 * (device_cap_flags_ex) and the library was built with an rdma-core that
 * names it (NATIVE_*_VERBS, as src/meson.build found them).
 */
bool t_native_flush(void);
bool t_native_atomic_write(void);
const char *t_method_str(enum rpma_flush_method method);

/* peers and regions */
struct rpma_peer *t_peer_new(void);
struct rpma_mr_local *t_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage);

/*
 * Private data is a sequence of items, each a length byte and its bytes,
 * so that descriptors survive the padding RoCE adds to private data.
 */
struct t_pdata {
	unsigned char buf[196];
	uint8_t len;
};
void t_pdata_add(struct t_pdata *pd, const void *item, size_t len);
void t_pdata_add_mr(struct t_pdata *pd, const struct rpma_mr_local *mr);
void t_pdata_add_peer_cfg(struct t_pdata *pd, const struct rpma_peer_cfg *pcfg);
/* the versioned forms, which say which flush methods the target offers */
void t_pdata_add_mr_versioned(struct t_pdata *pd, const struct rpma_mr_local *mr);
/*
 * The versioned region descriptor offering methods (T_METHOD_* bits)
 * instead of what the region offers, its checksum made good: what a
 * target that lacks some would send, or one that claims too much.
 */
void t_pdata_add_mr_versioned_methods(struct t_pdata *pd, const struct rpma_mr_local *mr,
				      uint8_t methods);
/* the flush methods (T_METHOD_* bits) the region's versioned descriptor offers */
uint8_t t_mr_methods(const struct rpma_mr_local *mr);
#define T_MR_VERSIONED_SIZE  25
#define T_METHOD_RAW	     0x01
#define T_METHOD_GPSPM	     0x02
#define T_METHOD_NATIVE_VIS  0x04
#define T_METHOD_NATIVE_PERS 0x08
#define T_METHOD_NATIVE	     (T_METHOD_NATIVE_VIS | T_METHOD_NATIVE_PERS)
#define T_METHOD_NATIVE_AW   0x10 /* RDMA ATOMIC WRITE, not a flush method */
void t_pdata_add_peer_cfg_versioned(struct t_pdata *pd, const struct rpma_peer_cfg *pcfg,
				    const struct rpma_conn_cfg *cfg);
/* the item-th item of received private data; its length in *len */
const void *t_pdata_item(const struct rpma_conn_private_data *pd, int item, size_t *len);
struct rpma_mr_remote *t_pdata_mr(const struct rpma_conn_private_data *pd, int item);

/*
 * Connections. Listening signals the client that it may connect. Both
 * sides return an established connection only when the other side has seen
 * RPMA_CONN_ESTABLISHED too (t_accept* signals it, t_connect* waits for
 * it): on siw a message that reaches the passive side before its QP is
 * ready stalls until more data arrives (seen on Linux 6.1).
 */

/* server side */
struct rpma_ep *t_listen(struct rpma_peer *peer);
struct rpma_conn_req *t_next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg);
struct rpma_conn *t_accept_req(struct rpma_conn_req **req, const struct t_pdata *pd);
struct rpma_conn *t_accept(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			   const struct t_pdata *pd);

/* client side: the first call waits for the server to listen */
void t_wait_listener(void);
struct rpma_conn_req *t_client_req(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg);
struct rpma_conn *t_connect_req(struct rpma_conn_req **req, const struct t_pdata *pd);
struct rpma_conn *t_connect(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg,
			    const struct t_pdata *pd);

/* events */
void t_expect_event(struct rpma_conn *conn, enum rpma_conn_event expected);
/* the next event, waiting at most timeout_ms; RPMA_CONN_UNDEFINED when none came */
enum rpma_conn_event t_next_event_timeout(struct rpma_conn *conn, int timeout_ms);
/* the peer's private data of an established connection */
void t_conn_pdata(const struct rpma_conn *conn, struct rpma_conn_private_data *pd);
/*
 * Close and delete a connection: the initiator disconnects first, the
 * other side waits for RPMA_CONN_CLOSED first; both see RPMA_CONN_CLOSED.
 * The initiator must know that the peer has all its completions: on rxe a
 * receive completes before its acknowledgement leaves, and a disconnect in
 * between leaves the peer's send without a completion.
 */
void t_close(struct rpma_conn **conn, bool initiator);

/* completions */
struct rpma_cq *t_cq(const struct rpma_conn *conn);
struct rpma_cq *t_rcq(const struct rpma_conn *conn);
/* wait (polling) for the next completion of any status */
void t_next_cmpl_at(struct rpma_cq *cq, struct rpma_completion *cmpl, const char *file, int line);
#define t_next_cmpl(cq, cmpl) t_next_cmpl_at((cq), (cmpl), __FILE__, __LINE__)
/* like t_next_cmpl, but false when none came within ms */
bool t_try_cmpl(struct rpma_cq *cq, struct rpma_completion *cmpl, int ms);
/* the next completion must be a successful op with this context */
void t_expect_cmpl_at(struct rpma_cq *cq, const void *ctx, enum rpma_op op,
		      struct rpma_completion *out, const char *file, int line);
#define T_CMPL(cq, ctx, op, out) t_expect_cmpl_at((cq), (ctx), (op), (out), __FILE__, __LINE__)
/*
 * A send and a receive on the same CQ, both successful, in either order (on
 * rxe a send completes with its ACK, and the peer's answer can beat it);
 * the receive must carry recv_len bytes.
 */
void t_expect_send_and_recv(struct rpma_cq *cq, const void *send_ctx, const void *recv_ctx,
			    uint32_t recv_len);
/* no completion may arrive within ms */
void t_expect_no_cmpl_at(struct rpma_cq *cq, int ms, const char *file, int line);
#define T_NO_CMPL(cq, ms) t_expect_no_cmpl_at((cq), (ms), __FILE__, __LINE__)

/*
 * iWARP: a write fails at the target, which terminates the connection.
 * Wait for RPMA_CONN_CLOSED (no disconnect from this side); an operation
 * posted behind the write, with context ctx, may then complete, and only
 * with an error (siw does not always flush it).
 */
void t_expect_terminated(struct rpma_conn *conn, struct rpma_cq *cq, const void *ctx);
/*
 * The same where the failed write itself was posted with
 * RPMA_F_COMPLETION_ON_ERROR (context write_ctx): when the termination
 * catches it before siw has sent it, it is flushed with an error and shows,
 * once, before or after ctx's.
 */
void t_expect_terminated_after_write(struct rpma_conn *conn, struct rpma_cq *cq, const void *ctx,
				     const void *write_ctx);

/* names for messages */
const char *t_op_str(enum rpma_op op);

/* fake context values: distinct and easy to recognize */
#define T_CTX(n) ((void *)(uintptr_t)(0xC0DE0000u + (unsigned)(n)))

#endif /* RDMA_TEST_COMMON_H */
