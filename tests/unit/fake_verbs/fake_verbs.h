/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fake_verbs.h -- control of the fake rdma-core used by the unit tests
 *
 * The unit tests link the library's objects with a fake implementation of
 * src/verbs/verbs.hpp instead of rdma-core. The fake hands out real
 * rdma-core structures (struct ibv_pd, ibv_mr, ibv_cq, ibv_qp, rdma_cm_id,
 * rdma_cm_event, ...) with plausible fields, keeps every object it created
 * on a list so that leaks show, records what was posted, and lets a test
 * fail any call with any errno, queue any completion and any connection
 * event.
 */

#ifndef FAKE_VERBS_H
#define FAKE_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#ifdef __cplusplus
extern "C" {
#endif

/* one value per function of src/verbs/verbs.hpp */
enum fake_call {
	FAKE_QUERY_DEVICE_EX,
	FAKE_ALLOC_PD,
	FAKE_DEALLOC_PD,
	FAKE_REG_MR,
	FAKE_DEREG_MR,
	FAKE_ADVISE_MR,
	FAKE_CREATE_COMP_CHANNEL,
	FAKE_DESTROY_COMP_CHANNEL,
	FAKE_CREATE_CQ,
	FAKE_DESTROY_CQ,
	FAKE_REQ_NOTIFY_CQ,
	FAKE_GET_CQ_EVENT,
	FAKE_ACK_CQ_EVENTS,
	FAKE_POLL_CQ,
	FAKE_CREATE_SRQ,
	FAKE_DESTROY_SRQ,
	FAKE_POST_SEND,
	FAKE_POST_RECV,
	FAKE_POST_SRQ_RECV,
	FAKE_POST_ATOMIC_WRITE,
	FAKE_CREATE_EVENT_CHANNEL,
	FAKE_DESTROY_EVENT_CHANNEL,
	FAKE_CREATE_ID,
	FAKE_DESTROY_ID,
	FAKE_MIGRATE_ID,
	FAKE_GETADDRINFO,
	FAKE_FREEADDRINFO,
	FAKE_BIND_ADDR,
	FAKE_RESOLVE_ADDR,
	FAKE_RESOLVE_ROUTE,
	FAKE_LISTEN,
	FAKE_GET_CM_EVENT,
	FAKE_ACK_CM_EVENT,
	FAKE_CREATE_QP_EX,
	FAKE_DESTROY_QP,
	FAKE_CONNECT,
	FAKE_ACCEPT,
	FAKE_REJECT,
	FAKE_DISCONNECT,
	FAKE_MODIFY_QP_TO_ERROR,
	FAKE_POST_SEND_EX,
	FAKE_SET_ACK_TIMEOUT,
	FAKE_CALL_MAX
};

/* Whether modify_qp_to_error moved qp to the error state. */
bool fake_verbs_qp_in_error(struct ibv_qp *qp);

/* Forget everything: objects, queues, failures, counters. */
void fake_verbs_reset(void);

/* How many objects the fake handed out and were not destroyed yet. */
int fake_verbs_live_objects(void);

/* The device context the fake pretends to have. */
struct ibv_context *fake_verbs_context(void);

/* Make the device look like iWARP (true) or InfiniBand/RoCE (false). */
void fake_verbs_set_iwarp(bool iwarp);

/*
 * Completion channels made from now on are blocking, as rdma-core's are by
 * default: ibv_get_cq_event() when no event is queued is a misuse (it would
 * wait for the next event), reported by fake_verbs_misuse().
 */
void fake_verbs_set_blocking_channels(bool blocking);

/*
 * ibv_get_cq_event() waits ms milliseconds before it takes the event, as a
 * thread descheduled between poll() and its read would: two threads woken
 * for one event both get to read.
 */
void fake_verbs_set_cq_event_delay(int ms);

/* Make the device report on-demand paging support for RC (and implicit ODP). */
void fake_verbs_set_odp(bool odp);
/*
 * Make the device report on-demand paging with only rc_caps
 * (IBV_ODP_SUPPORT_*) for RC: a device that can fault in pages for some
 * operations and not others.
 */
void fake_verbs_set_odp_rc_caps(uint32_t rc_caps);

/* Make the device report the native 8-byte atomic write. */
void fake_verbs_set_native_atomic_write(bool supported);

/*
 * The nth next call (1 = the very next one) of `call` fails with errno `err`
 * (int-returning calls return -1 or err as rdma-core does; pointer-returning
 * calls return NULL; poll_cq returns -err). Calls before it succeed.
 * (Addition:) err may be 0, a provider failing without setting errno: the
 * call still fails (ibv_* int calls and poll_cq then return -1) with errno 0.
 * Several failures may be planned for one call; void calls cannot fail.
 */
void fake_verbs_fail(enum fake_call call, int nth, int err);

/* How many times `call` was made since the last reset. */
unsigned fake_verbs_calls(enum fake_call call);
/*
 * How many times the calling thread made `call` since it started (a
 * reset does not clear it): what a library thread (GPSPM's serving
 * thread) calls meanwhile is not counted.
 */
unsigned fake_verbs_thread_calls(enum fake_call call);

/* A send work request as it was posted (deep copy, sg_list included). */
struct fake_send_record {
	struct ibv_send_wr wr; /* wr.sg_list points at sge, wr.next is NULL */
	struct ibv_sge sge[4];
	uint8_t inline_data[64]; /* copy of the bytes of IBV_SEND_INLINE posts */
	struct ibv_qp *qp;
	/* where the work request was: post_send's only (else NULL) */
	const struct ibv_send_wr *posted_from;
	bool native_atomic_write; /* posted through post_atomic_write */
	/* posted through post_send_ex (the ibv_qp_ex work-request API) */
	bool posted_ex;
	/*
	 * A native flush (post_send_ex): its placement, FAKE_FLUSH_GLOBAL or
	 * FAKE_FLUSH_PERSISTENT (0: not a flush), its length and whether it
	 * flushes the whole region (wr.wr.rdma holds the address and rkey).
	 */
	uint8_t native_flush;
	uint32_t flush_len;
	bool flush_whole_region;
};

struct fake_recv_record {
	struct ibv_recv_wr wr;
	struct ibv_sge sge[4];
	struct ibv_qp *qp;   /* NULL for SRQ receives */
	struct ibv_srq *srq; /* NULL for QP receives */
};

/* The posted work requests, oldest first, since the last reset. */
unsigned fake_verbs_sends(void);
const struct fake_send_record *fake_verbs_send(unsigned index);
unsigned fake_verbs_recvs(void);
const struct fake_recv_record *fake_verbs_recv(unsigned index);

/* Queue a completion on cq (FIFO); poll_cq returns them in order. */
void fake_verbs_push_wc(struct ibv_cq *cq, const struct ibv_wc *wc);

/* Make get_cq_event on channel return cq (one completion event). */
void fake_verbs_push_cq_event(struct ibv_comp_channel *channel, struct ibv_cq *cq);

/*
 * The device behind channel is gone, as after a device removal: the fd
 * stays readable and get_cq_event fails with EIO from now on.
 */
void fake_verbs_break_comp_channel(struct ibv_comp_channel *channel);

/* Number of events acknowledged with ack_cq_events on cq. */
unsigned fake_verbs_cq_acks(struct ibv_cq *cq);

/* Whether req_notify_cq was called on cq since its last cq event. */
bool fake_verbs_cq_armed(struct ibv_cq *cq);

/*
 * Queue a connection-manager event on channel. For
 * RDMA_CM_EVENT_CONNECT_REQUEST, id == NULL makes the fake create a new
 * rdma_cm_id for the incoming connection. pdata (len bytes) becomes
 * event->param.conn.private_data.
 */
void fake_verbs_push_cm_event(struct rdma_event_channel *channel, enum rdma_cm_event_type type,
			      struct rdma_cm_id *id, const void *pdata, uint8_t len);

/* The last private data given to rdma_connect / rdma_accept / rdma_reject. */
const void *fake_verbs_last_conn_pdata(uint8_t *len);

/* The last rdma_cm_id the fake created (e.g. by rpma_conn_req_new). */
struct rdma_cm_id *fake_verbs_last_id(void);

/*
 * ---------------------------------------------------------------------------
 * Additions (for every unit test; the declarations above are unchanged,
 * only the comment of fake_verbs_fail gained a note)
 * ---------------------------------------------------------------------------
 *
 * Behaviour of the fake worth knowing when writing a test:
 * - fake_verbs_live_objects() counts: protection domains, memory regions,
 *   completion channels, CQs, SRQs, QPs, event channels, rdma_cm_ids,
 *   rdma_addrinfo lists and rdma_cm_events taken with get_cm_event and not
 *   acknowledged yet. The device context and the protection domain that
 *   librdmacm gives every bound or resolved id (rdma_cm_id->pd) are the
 *   fake's own and are not counted. The rdma_cm_id that
 *   fake_verbs_push_cm_event creates for a CONNECT_REQUEST starts being
 *   counted when get_cm_event hands its event out, so a baseline taken before
 *   or after pushing the event is the same once the library cleaned up.
 * - A CONNECT_REQUEST event carries in param.conn.qp_num the client's queue
 *   pair number, as a REQ of InfiniBand or RoCE does: FAKE_FIRST_PEER_QP_NUM
 *   for the first after a reset, one more for each next one, never the
 *   number of a QP the fake made. On a device made iWARP
 *   (fake_verbs_set_iwarp) it carries 0, as librdmacm gives for an MPA
 *   request. fake_verbs_last_pushed_cm_event() lets a test change it before
 *   the library takes the event.
 * - A call made to fail by fake_verbs_fail has no effect at all, as if the
 *   kernel refused it: dereg_mr / destroy_* keep the object live (a library
 *   that forgets it leaks, and the count shows it), ack_cm_event leaves the
 *   event taken and unacknowledged, post_* record nothing.
 * - Nothing is queued by itself: resolve_addr, resolve_route, connect,
 *   accept and disconnect never produce a connection event; a test pushes the
 *   events it wants. An id created with a NULL channel is synchronous (as in
 *   librdmacm): id->channel is an internal channel, not counted, not
 *   poll-able by the test.
 * - get_cm_event on an empty channel fails with ENODATA; get_cq_event with
 *   no event queued fails with EAGAIN (neither ever blocks). The fds of
 *   completion channels and event channels are eventfds that are readable
 *   exactly while an event is queued.
 * - rdma-core rules the fake enforces like the kernel does: reg_mr with
 *   REMOTE_WRITE or REMOTE_ATOMIC needs LOCAL_WRITE (EINVAL); reg_mr with
 *   IBV_ACCESS_ON_DEMAND needs fake_verbs_set_odp(true) (EOPNOTSUPP);
 *   dealloc_pd with MRs/SRQs/QPs on it, destroy_cq with a QP or unacked
 *   events on it, destroy_comp_channel with CQs on it and destroy_srq with a
 *   QP on it fail with EBUSY; an inline post larger than the QP's
 *   max_inline_data fails with ENOMEM; post_recv on a QP with an SRQ fails
 *   with EINVAL; create_qp_ex needs send_cq and recv_cq, and a device with
 *   the native atomic write if FAKE_QP_EX_WITH_ATOMIC_WRITE is asked for,
 *   and native flush if FAKE_QP_EX_WITH_FLUSH is (EOPNOTSUPP);
 *   post_atomic_write and post_send_ex need a QP created with send_ops_flags,
 *   a native flush in post_send_ex with IBV_QP_EX_WITH_FLUSH (EINVAL);
 *   post_send_ex posts all or nothing (fake_verbs_fail_send_at: nothing);
 *   advise_mr needs ODP on the device (EOPNOTSUPP), an lkey and range
 *   inside a live MR (EINVAL) registered with IBV_ACCESS_ON_DEMAND (ENOENT).
 * - getaddrinfo accepts only numeric IPv4/IPv6 nodes and numeric services;
 *   anything else fails with errno EADDRNOTAVAIL (names) or EINVAL (bad
 *   service). With RAI_PASSIVE in hints the address is ai_src_addr, else
 *   ai_dst_addr (a NULL node: the wildcard, resp. the loopback address).
 *   Binding to a wildcard address leaves id->verbs NULL; binding to another
 *   address or resolving one sets id->verbs to fake_verbs_context().
 */

/*
 * Misuse of rdma-core the real one would not survive or would leak on
 * (an object that is not live, a double destroy, destroying an id that still
 * has a QP or unacknowledged events, destroying a CQ with unacknowledged
 * events, acknowledging more events than were taken, destroying an event
 * channel that still has ids, ...). Each one is counted and described on
 * stderr; tests should expect 0. (Calling an inline rdma-core verb such as
 * ibv_post_send or ibv_poll_cq directly, instead of through rpma::verbs,
 * aborts the test with a message: the fake context's ops trap it.)
 */
unsigned fake_verbs_misuse(void);
/* The description of the last misuse, "" when none. */
const char *fake_verbs_last_misuse(void);

/* Make the device report native RDMA FLUSH (global and persistent). */
void fake_verbs_set_native_flush(bool supported);

/*
 * Make failing ibv_post_* calls return the negated errno and leave errno
 * at an unrelated value, as siw does (default: the positive errno).
 */
void fake_verbs_set_negative_post_errors(bool negative);

/*
 * The next post_send fails with err at element index of its chain: the
 * elements before it are recorded (posted), *bad_wr names that element.
 * The next post_send_ex fails with err there too, and posts nothing, as
 * ibv_wr_complete does.
 */
void fake_verbs_fail_send_at(int index, int err);

/*
 * The next post_send calls fn(arg) first, before it looks at its chain and
 * outside the fake's lock: what another thread posting in the middle of a
 * post would do (fn may post itself). Once; fn NULL takes it back.
 */
void fake_verbs_before_next_post_send(void (*fn)(void *arg), void *arg);

/*
 * device_cap_flags_ex bits the fake reports (kernel uapi values; rdma-core
 * of the build may not have names for them yet).
 */
#define FAKE_DEVICE_FLUSH_GLOBAL     (1ULL << 38)
#define FAKE_DEVICE_FLUSH_PERSISTENT (1ULL << 39)
#define FAKE_DEVICE_ATOMIC_WRITE     (1ULL << 40)

/*
 * The IBTA 1.5 names the fake uses, with rdma-core's values (rdma-core of
 * the build may not have the names): the send_ops_flags of a QP that posts
 * them (rpma::verbs::native_send_ops), the opcodes of their send records.
 */
#define FAKE_QP_EX_WITH_FLUSH	     (1ULL << 11)
#define FAKE_QP_EX_WITH_ATOMIC_WRITE (1ULL << 12)
#define FAKE_WR_FLUSH		     14
#define FAKE_WR_ATOMIC_WRITE	     15
#define FAKE_WC_FLUSH		     8
#define FAKE_WC_ATOMIC_WRITE	     9
/* the access flags of a region a peer may flush to visibility / persistence */
#define FAKE_ACCESS_FLUSH_GLOBAL     (1 << 8)
#define FAKE_ACCESS_FLUSH_PERSISTENT (1 << 9)
/* the placements of post_send_ex's flushes (rpma::verbs::NATIVE_FLUSH_*) */
#define FAKE_FLUSH_GLOBAL     1
#define FAKE_FLUSH_PERSISTENT 2

/*
 * The client's queue pair number the first CONNECT_REQUEST after a reset
 * carries (param.conn.qp_num; 24 bits, as QP numbers are, and far above
 * the fake's own, which start at 0x000100)
 */
#define FAKE_FIRST_PEER_QP_NUM 0xc00100u

/*
 * The memory the fake's kernel knows to be persistent: reg_mr with
 * FAKE_ACCESS_FLUSH_PERSISTENT of anything else fails with EINVAL, as
 * rxe does (none after a reset). The flush access flags on a device
 * without native flush fail with EOPNOTSUPP.
 */
void fake_verbs_set_pmem(const void *addr, size_t len);

/* Every reg_mr call, failed ones included, oldest first, since the reset. */
struct fake_reg_mr_record {
	struct ibv_pd *pd;
	void *addr;
	size_t length;
	int access;
	struct ibv_mr *mr; /* NULL when the call failed; may be freed since */
	uint32_t lkey;	   /* of the MR handed out, 0 when the call failed */
	uint32_t rkey;
};
unsigned fake_verbs_reg_mrs(void);
const struct fake_reg_mr_record *fake_verbs_reg_mr(unsigned index);

/* Every advise_mr call, failed ones included, oldest first. */
struct fake_advise_record {
	struct ibv_pd *pd;
	enum ibv_advise_mr_advice advice;
	uint32_t flags;
	struct ibv_sge sge[4];
	uint32_t num_sge;
};
unsigned fake_verbs_advises(void);
const struct fake_advise_record *fake_verbs_advise(unsigned index);

/* The attributes create_qp_ex was given for qp (a copy; NULL if unknown). */
const struct ibv_qp_init_attr_ex *fake_verbs_qp_init_attr(struct ibv_qp *qp);

/* The attributes create_srq was given for srq (a copy; NULL if unknown). */
const struct ibv_srq_init_attr *fake_verbs_srq_init_attr(struct ibv_srq *srq);

/*
 * The last rdma_conn_param given to connect or accept (a copy, NULL before
 * the first; its private_data points at the fake's copy of the bytes).
 */
const struct rdma_conn_param *fake_verbs_last_conn_param(void);

/* The timeout_ms of the last resolve_addr or resolve_route (call), -1 before. */
int fake_verbs_last_timeout(enum fake_call call);

/* The exponent of the last set_ack_timeout call, -1 before. */
int fake_verbs_last_ack_timeout(void);

/* The backlog of the last listen call, -1 before. */
int fake_verbs_last_backlog(void);

/* The node, service and ai_flags of hints of the last getaddrinfo call. */
const char *fake_verbs_last_getaddrinfo_node(void);    /* NULL if node was NULL */
const char *fake_verbs_last_getaddrinfo_service(void); /* NULL if service was NULL */
int fake_verbs_last_getaddrinfo_flags(void);	       /* -1 when hints was NULL */

/*
 * The event the last fake_verbs_push_cm_event queued, still owned by the
 * fake: a test may change e.g. its status, or the client's queue pair
 * number a CONNECT_REQUEST carries (param.conn.qp_num), before the library
 * takes it.
 */
struct rdma_cm_event *fake_verbs_last_pushed_cm_event(void);

/* Number of events queued and not taken yet on a channel of either kind. */
unsigned fake_verbs_cm_events_queued(struct rdma_event_channel *channel);
unsigned fake_verbs_cq_events_queued(struct ibv_comp_channel *channel);

/* Number of completions pushed on cq and not polled yet. */
unsigned fake_verbs_wcs_queued(struct ibv_cq *cq);

/* Whether id is live, and whether listen / connect / accept / reject /
 * disconnect was called on it. */
bool fake_verbs_id_live(struct rdma_cm_id *id);
bool fake_verbs_id_listening(struct rdma_cm_id *id);
unsigned fake_verbs_id_calls(struct rdma_cm_id *id, enum fake_call call);

#ifdef __cplusplus
}
#endif

#endif /* FAKE_VERBS_H */
