/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fixture.h -- what the connection tests share: a peer on the fake device,
 * connection requests and connections on both sides, memory regions, and a
 * driver that fails every rdma-core call a constructor makes, one at a time.
 */

#ifndef CONN_FIXTURE_H
#define CONN_FIXTURE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <librpma.h>

#include "fake_verbs.h"

#define FX_ADDR "127.0.0.1"
#define FX_PORT "7204"

/* What an out-pointer holds before a call that must not write it. */
#define FX_POISON ((void *)(uintptr_t)0x5eed5eedUL)

/* the peer of the current test, on fake_verbs_context() */
extern struct rpma_peer *fx_peer;

/* cmocka setup/teardown: fresh fake and a peer; then no object may remain. */
int fx_setup(void **state);
int fx_teardown(void **state);
/* the same, for a test that needs the native atomic write on its device */
int fx_setup_native_atomic_write(void **state);
/* the same, for a device with every IBTA 1.5 verb: RDMA FLUSH and ATOMIC WRITE */
int fx_setup_native(void **state);

/* Deletes the peer and checks that the fake holds nothing any more. */
void fx_release(void);
/* Resets the fake and creates a new peer. */
void fx_fresh(void);
/* Starts over after a test that knowingly left objects in the fake. */
void fx_discard(void);

/* a connection configuration; the caller deletes it */
struct rpma_conn_cfg *fx_cfg(uint32_t cq_size, uint32_t rcq_size, bool shared_channel);
void fx_cfg_delete(struct rpma_conn_cfg **cfg);

/* active side: rpma_conn_req_new() (and rpma_conn_req_connect()) */
struct rpma_conn_req *fx_req_active(const struct rpma_conn_cfg *cfg, struct rdma_cm_id **id);
struct rpma_conn *fx_conn_active(const struct rpma_conn_cfg *cfg, struct rdma_cm_id **id);

/* passive side: an endpoint, a CONNECT_REQUEST on its channel, the request */
struct rpma_ep *fx_listen(struct rdma_event_channel **evch);
void fx_shutdown(struct rpma_ep **ep);
struct rpma_conn_req *fx_req_passive(struct rpma_ep *ep, struct rdma_event_channel *evch,
				     const struct rpma_conn_cfg *cfg, const void *pdata,
				     uint8_t len, struct rdma_cm_id **id);
struct rpma_conn *fx_conn_passive(struct rpma_ep *ep, struct rdma_event_channel *evch,
				  const struct rpma_conn_cfg *cfg, const void *pdata, uint8_t len,
				  struct rdma_cm_id **id);

/* rpma_conn_delete() that must succeed */
void fx_conn_delete(struct rpma_conn **conn);

/* the connection's rdma_cm event channel (the one rpma_conn_next_event reads) */
struct rdma_event_channel *fx_conn_channel(struct rdma_cm_id *id);

/* whether fd is readable now (poll with no timeout) */
bool fx_fd_readable(int fd);

/* memory regions */
struct rpma_mr_local *fx_mr(void *buf, size_t size, int usage);
void fx_mr_dereg(struct rpma_mr_local **mr);
uint32_t fx_mr_rkey(const struct rpma_mr_local *mr);
/*
 * The lkey of the latest registration covering [addr, addr + len), as
 * the fake handed it out; fails the test when there is none.
 */
uint32_t fx_lkey_of(const void *addr, size_t len);
/* a remote region from a librpma 1.x descriptor (21 bytes, no trailer) */
struct rpma_mr_remote *fx_mr_remote(uint64_t addr, uint64_t len, uint32_t rkey, uint8_t usage);
void fx_mr_remote_delete(struct rpma_mr_remote **mr);

/* a work completion */
struct ibv_wc fx_wc(uint64_t wr_id, enum ibv_wc_opcode opcode, enum ibv_wc_status status);

/* call counting across a step */
struct fx_calls {
	unsigned n[FAKE_CALL_MAX];
	bool this_thread; /* fx_thread_calls_snap(): the calling thread's calls only */
};
void fx_calls_snap(struct fx_calls *calls);
unsigned fx_calls_since(const struct fx_calls *calls, enum fake_call call);
const char *fx_call_name(enum fake_call call);
/* fails the test when any rdma-core call was made since the snapshot */
void fx_assert_no_calls(const struct fx_calls *calls);
/*
 * A snapshot of the calling thread's calls only, for fx_calls_since() and
 * fx_assert_no_calls(): a thread of the library (GPSPM's) may poll
 * meanwhile.
 */
void fx_thread_calls_snap(struct fx_calls *calls);

/*
 * The call must return `code` without calling rdma-core and without creating
 * or destroying anything. Only the calling thread's calls count: a thread
 * of the library (GPSPM's serving thread) polls whenever it likes.
 */
#define FX_REFUSED(code, call)                                                                     \
	do {                                                                                       \
		struct fx_calls fx_refused_calls_;                                                 \
		int fx_refused_live_ = fake_verbs_live_objects();                                  \
		fx_thread_calls_snap(&fx_refused_calls_);                                          \
		assert_int_equal((call), (code));                                                  \
		fx_assert_no_calls(&fx_refused_calls_);                                            \
		assert_int_equal(fake_verbs_live_objects(), fx_refused_live_);                     \
	} while (0)

#define FX_INVAL(call) FX_REFUSED(RPMA_E_INVAL, call)

/* log messages the library emitted at a level since the last reset */
unsigned fx_log_count(enum rpma_log_level level);
void fx_log_reset(void);
/* the last message logged, formatted ("" after a reset) */
const char *fx_log_last(void);

/*
 * A constructor under test. setup() makes what stays (an endpoint),
 * prelude() what the constructor consumes (a request, a pending event);
 * run() calls the constructor and returns its result; untouched() checks the
 * out-pointer after a failure; cleanup() deletes the result (when run()
 * succeeded) and what setup() made.
 */
struct fx_ctor {
	void (*setup)(void *arg);
	void (*prelude)(void *arg);
	int (*run)(void *arg);
	void (*untouched)(void *arg);
	void (*cleanup)(void *arg, bool succeeded);
};

/*
 * Runs the constructor once to learn which rdma-core calls it makes, then,
 * on a fresh fake each time, fails each of those calls in turn (every
 * occurrence) with errno `err`: the constructor must return RPMA_E_PROVIDER,
 * record err as the provider error, leave its out-pointer untouched and
 * leave no object behind (beyond what setup() made). Returns how many
 * failures were injected.
 */
unsigned fx_each_provider_failure(const struct fx_ctor *ctor, void *arg, int err);

/*
 * Runs the constructor once with the library's allocations counted (see
 * alloc_hooks.h), then, on a fresh fake each time, fails each of them in
 * turn: the constructor must return RPMA_E_NOMEM, leave its out-pointer
 * untouched (untouched()), and leave no rdma-core object and no block of the
 * library's memory behind (beyond what setup() made), which cleanup() must
 * still be able to delete. Returns how many failures were injected; fails
 * the test when the constructor allocates nothing.
 */
unsigned fx_each_alloc_failure(const struct fx_ctor *ctor, void *arg);

#endif /* CONN_FIXTURE_H */
