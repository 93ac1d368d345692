/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.hpp -- what the files of the fake rdma-core share, and no test
 * includes: the objects it hands out, its one state, and the helpers every
 * call uses
 *
 * The fake implements src/verbs/verbs.hpp: the unit tests link the
 * library's objects with it instead of verbs.cpp. It hands out real
 * rdma-core structures, keeps every object it created so that leaks and
 * misuse show, records what was posted and registered, and lets a test fail
 * any call and produce any completion or connection event. fake_verbs.h is
 * the control interface the tests use.
 *
 * One file per concern: control.cpp (the state, the calls counted and
 * failed, misuse, reset), device.cpp (the device and protection domains),
 * mr.cpp, cq.cpp (completion channels and CQs), qp.cpp (SRQs and QPs),
 * post.cpp, cm_event.cpp (event channels and connection events), cm_id.cpp
 * and addrinfo.cpp; each also holds the functions of fake_verbs.h about its
 * objects.
 *
 * Every function of the fake takes st().lock first (guard), counts itself
 * and fails when a test asked it to (enter), checks the objects it is given
 * (is_live: a misuse when one is not a live object of its kind), and keeps
 * the objects it creates on the live list (add_live, drop_live) until they
 * are destroyed or fake_verbs_reset() frees what was left behind.
 */

#ifndef FAKE_VERBS_INTERNAL_HPP
#define FAKE_VERBS_INTERNAL_HPP

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fake_verbs.h"
#include "verbs/verbs.hpp"

namespace fake
{

enum class kind { pd, mr, comp_channel, cq, srq, qp, event_channel, id, addrinfo, cm_event };

/*
 * The objects handed out: the rdma-core structure first, so that a pointer
 * to it is a pointer to the fake object (as<>()), then what the fake keeps.
 */

struct fake_pd {
	ibv_pd pd;
	unsigned users; /* MRs, SRQs and QPs on it */
};

struct fake_mr {
	ibv_mr mr;
	int access;
};

struct fake_cq;

struct fake_comp_channel {
	ibv_comp_channel ch;
	std::deque<fake_cq *> events;
	unsigned cqs;
	bool broken; /* fake_verbs_break_comp_channel() */
};

struct fake_cq {
	ibv_cq cq;
	fake_comp_channel *channel;
	std::deque<ibv_wc> wcs;
	unsigned acks;
	unsigned unacked;
	unsigned qps;
	bool armed;
};

struct fake_srq {
	ibv_srq srq;
	ibv_srq_init_attr attr;
	fake_pd *pd;
	unsigned qps;
};

struct fake_qp {
	ibv_qp qp;
	ibv_qp_init_attr_ex attr;
	fake_pd *pd;
	fake_cq *send_cq;
	fake_cq *recv_cq;
	fake_srq *srq;
	bool atomic_write;
	bool flush;
	bool in_error; /* modify_qp_to_error */
};

struct fake_id;
struct fake_cm_event;

struct fake_event_channel {
	rdma_event_channel ch;
	std::deque<fake_cm_event *> events;
	unsigned ids;
	bool internal; /* the hidden channel of a synchronous id */
};

struct fake_id {
	rdma_cm_id id;
	fake_event_channel *channel;
	bool sync;
	bool listening;
	bool pending; /* created for a CONNECT_REQUEST not handed out yet */
	unsigned unacked;
};

struct fake_cm_event {
	rdma_cm_event ev;
	uint8_t pdata[256];
	fake_id *id;	 /* the id the event is about */
	fake_id *new_id; /* created for this CONNECT_REQUEST, pending until taken */
};

struct fake_addrinfo {
	rdma_addrinfo ai;
	sockaddr_storage src;
	sockaddr_storage dst;
};

struct failure {
	unsigned at; /* the value of the call counter that fails */
	int err;
};

struct id_stats {
	unsigned calls[FAKE_CALL_MAX];
};

/* The one state of the fake, behind one lock (control.cpp). */
struct state {
	std::recursive_mutex lock;

	/* every object handed out, and what it is */
	std::map<void *, kind> live;
	/* created for a CONNECT_REQUEST, not counted until handed out */
	std::map<fake_id *, bool> pending_ids;

	unsigned calls[FAKE_CALL_MAX];
	std::vector<failure> failures[FAKE_CALL_MAX];

	bool iwarp = false;
	bool blocking_channels = false;
	/* ibv_get_cq_event() takes this long before it takes its event */
	std::atomic<int> cq_event_delay_ms{ 0 };
	bool odp = false;
	/* the RC transport's ODP capabilities when odp; 0: every one */
	uint32_t odp_rc_caps = 0;
	bool atomic_write = false;
	bool flush = false;
	const uint8_t *pmem = nullptr;
	size_t pmem_len = 0;

	unsigned misuse = 0;
	std::string last_misuse;

	std::deque<fake_send_record> sends; /* deque: records never move */
	std::deque<fake_recv_record> recvs;
	std::deque<fake_reg_mr_record> reg_mrs;
	std::deque<fake_advise_record> advises;

	uint8_t conn_pdata[256];
	uint8_t conn_pdata_len = 0;
	bool conn_pdata_set = false;
	rdma_conn_param conn_param;
	bool conn_param_set = false;

	int timeout_resolve_addr = -1;
	int timeout_resolve_route = -1;
	int ack_timeout = -1;
	int backlog = -1;
	std::string gai_node, gai_service;
	bool gai_node_set = false, gai_service_set = false;
	int gai_flags = -1;

	fake_cm_event *last_pushed = nullptr;
	rdma_cm_id *last_id = nullptr;

	std::map<rdma_cm_id *, id_stats> id_calls;

	uint32_t next_key = 1;
	uint32_t next_qp_num = 0x000100;
	/* the client's QP a CONNECT_REQUEST names: never one of the fake's own */
	uint32_t next_peer_qp_num = FAKE_FIRST_PEER_QP_NUM;
	uint32_t next_handle = 1;
};

state &st();

using guard = std::lock_guard<std::recursive_mutex>;

/*
 * control.cpp: the calls counted and failed, misuse, the live objects,
 * the errors as rdma-core returns them, eventfds, reset
 */

/* Counts a misuse of rdma-core and says what it was (on stderr). */
void misuse(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* what enter() returns when the call goes on */
constexpr int GO_ON = -1;

/*
 * Counts the call; returns the errno it must fail with (0 included: a
 * provider that fails without setting errno), GO_ON to go on.
 */
int enter(fake_call call);

void add_live(void *obj, kind k);
/* Whether obj is a live object of kind k; a misuse when not. */
bool is_live(const void *obj, kind k, const char *call);
void drop_live(void *obj);

/* rdma-core style failures */
int fail_ret(int err);	  /* ibv_* calls returning the errno (-1 when there is none) */
int fail_minus1(int err); /* rdma_* calls returning -1 */

template <typename T> T *fail_null(int err)
{
	errno = err;
	return nullptr;
}

template <typename T> T *as(void *obj)
{
	return reinterpret_cast<T *>(obj);
}

/* an eventfd counting events one by one (EFD_SEMAPHORE) */
int new_eventfd(int flags = 0);
void eventfd_signal(int fd);
void eventfd_consume(int fd);

/* Frees every object left behind and forgets everything; under the lock. */
void reset_locked();

/* device.cpp: the device, its context and the protection domains */

extern ibv_context fake_context;
extern fake_pd cm_pd; /* the protection domain librdmacm gives ids */

/* (Re)makes the device as the state says (iwarp or not). */
void setup_device();
fake_pd *pd_of(ibv_pd *pd);
bool pd_ok(ibv_pd *pd, const char *call);
bool context_ok(ibv_context *ctx, const char *call);
void pd_put(fake_pd *pd);
void pd_get(fake_pd *pd);

/*
 * post.cpp: ibv_post_* failures: the errno as the return value, positive
 * as most providers do, or negated with errno left alone as siw does.
 */
extern bool negative_post_errors;
/* fake_verbs_fail_send_at: the chain element the next post_send fails at */
extern int send_fail_index;
extern int send_fail_err;
/* fake_verbs_before_next_post_send: what the next post_send calls first */
extern void (*before_post_send)(void *arg);
extern void *before_post_send_arg;

/* cm_event.cpp: event channels and connection events */

fake_event_channel *new_event_channel(bool internal);
void free_event_channel(fake_event_channel *ch);
/* An event never handed out: free it and the id it would have brought. */
void free_cm_event(fake_cm_event *ev);
fake_event_channel *channel_of(rdma_event_channel *ch);

/* cm_id.cpp: connection ids */

fake_id *new_id(fake_event_channel *ch, void *context);
void free_id(fake_id *id);
/* as rdma_resolve_addr: the id is on the fake device now */
void attach_device(rdma_cm_id *id);

} /* namespace fake */

#endif /* FAKE_VERBS_INTERNAL_HPP */
