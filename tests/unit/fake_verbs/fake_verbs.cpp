// SPDX-License-Identifier: BSD-3-Clause
/*
 * fake_verbs.cpp -- a fake rdma-core behind src/verbs/verbs.hpp
 *
 * The unit tests link the library's objects with this file instead of
 * verbs.cpp. It hands out real rdma-core structures, keeps every object it
 * created so that leaks and misuse show, records what was posted and
 * registered, and lets a test fail any call and produce any completion or
 * connection event. See fake_verbs.h for the control interface.
 */

#include "fake_verbs.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <deque>
#include <endian.h>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/eventfd.h>
#include <unistd.h>
#include <algorithm>
#include <vector>

#include "verbs/verbs.hpp"

namespace
{

enum class kind { pd, mr, comp_channel, cq, srq, qp, event_channel, id, addrinfo, cm_event };

const char *kind_name(kind k)
{
	switch (k) {
	case kind::pd:
		return "ibv_pd";
	case kind::mr:
		return "ibv_mr";
	case kind::comp_channel:
		return "ibv_comp_channel";
	case kind::cq:
		return "ibv_cq";
	case kind::srq:
		return "ibv_srq";
	case kind::qp:
		return "ibv_qp";
	case kind::event_channel:
		return "rdma_event_channel";
	case kind::id:
		return "rdma_cm_id";
	case kind::addrinfo:
		return "rdma_addrinfo";
	case kind::cm_event:
		return "rdma_cm_event";
	}
	return "?";
}

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
	bool broken;	       /* fake_verbs_break_comp_channel() */
	bool blocking = false; /* fake_verbs_set_blocking_channels() */
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
	int backlog = -1;
	std::string gai_node, gai_service;
	bool gai_node_set = false, gai_service_set = false;
	int gai_flags = -1;

	fake_cm_event *last_pushed = nullptr;
	rdma_cm_id *last_id = nullptr;

	std::map<rdma_cm_id *, id_stats> id_calls;

	uint32_t next_key = 1;
	uint32_t next_qp_num = 0x000100;
	uint32_t next_handle = 1;
};

state &st()
{
	static state s;
	return s;
}

using guard = std::lock_guard<std::recursive_mutex>;

/* the device */
ibv_device fake_device;
ibv_context fake_context;
fake_pd cm_pd; /* the protection domain librdmacm gives ids */
bool device_ready;

/*
 * rdma-core's inline verbs (ibv_post_send, ibv_poll_cq, ...) jump through
 * these; the library must use rpma::verbs instead, so reaching one is a bug.
 */
[[noreturn]] void direct_call(const char *what)
{
	fprintf(stderr,
		"fake_verbs: the library called %s directly instead of through rpma::verbs\n",
		what);
	abort();
}

int trap_poll_cq(ibv_cq *, int, ibv_wc *)
{
	direct_call("ibv_poll_cq");
}
int trap_req_notify_cq(ibv_cq *, int)
{
	direct_call("ibv_req_notify_cq");
}
int trap_post_srq_recv(ibv_srq *, ibv_recv_wr *, ibv_recv_wr **)
{
	direct_call("ibv_post_srq_recv");
}
int trap_post_send(ibv_qp *, ibv_send_wr *, ibv_send_wr **)
{
	direct_call("ibv_post_send");
}
int trap_post_recv(ibv_qp *, ibv_recv_wr *, ibv_recv_wr **)
{
	direct_call("ibv_post_recv");
}

void setup_device()
{
	state &s = st();
	memset(&fake_device, 0, sizeof(fake_device));
	fake_device.node_type = s.iwarp ? IBV_NODE_RNIC : IBV_NODE_CA;
	fake_device.transport_type = s.iwarp ? IBV_TRANSPORT_IWARP : IBV_TRANSPORT_IB;
	snprintf(fake_device.name, sizeof(fake_device.name), "%s",
		 s.iwarp ? "fake_iw0" : "fake_ib0");
	snprintf(fake_device.dev_name, sizeof(fake_device.dev_name), "uverbs0");
	snprintf(fake_device.dev_path, sizeof(fake_device.dev_path),
		 "/sys/class/infiniband_verbs/uverbs0");
	snprintf(fake_device.ibdev_path, sizeof(fake_device.ibdev_path), "/sys/class/infiniband/%s",
		 fake_device.name);

	if (!device_ready) {
		memset(&fake_context, 0, sizeof(fake_context));
		pthread_mutex_init(&fake_context.mutex, nullptr);
		fake_context.cmd_fd = eventfd(0, EFD_CLOEXEC);
		fake_context.async_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		device_ready = true;
	}
	fake_context.device = &fake_device;
	fake_context.num_comp_vectors = 1;
	fake_context.ops.poll_cq = trap_poll_cq;
	fake_context.ops.req_notify_cq = trap_req_notify_cq;
	fake_context.ops.post_srq_recv = trap_post_srq_recv;
	fake_context.ops.post_send = trap_post_send;
	fake_context.ops.post_recv = trap_post_recv;

	memset(&cm_pd, 0, sizeof(cm_pd));
	cm_pd.pd.context = &fake_context;
	cm_pd.pd.handle = 0xcafe;
}

void misuse(const char *format, ...) __attribute__((format(printf, 1, 2)));

void misuse(const char *format, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, format);
	vsnprintf(buf, sizeof(buf), format, ap);
	va_end(ap);
	state &s = st();
	s.misuse++;
	s.last_misuse = buf;
	fprintf(stderr, "fake_verbs: misuse: %s\n", buf);
}

/* what enter() returns when the call goes on */
constexpr int GO_ON = -1;

/*
 * Counts the call; returns the errno it must fail with (0 included: a
 * provider that fails without setting errno), GO_ON to go on.
 */
int enter(fake_call call)
{
	state &s = st();
	unsigned n = ++s.calls[call];
	auto &fl = s.failures[call];
	for (auto it = fl.begin(); it != fl.end(); ++it) {
		if (it->at == n) {
			int err = it->err;
			fl.erase(it);
			return err;
		}
	}
	return GO_ON;
}

void add_live(void *obj, kind k)
{
	st().live[obj] = k;
}

/* Whether obj is a live object of kind k; a misuse when not. */
bool is_live(const void *obj, kind k, const char *call)
{
	state &s = st();
	auto it = s.live.find(const_cast<void *>(obj));
	if (it == s.live.end()) {
		misuse("%s: %s %p is not a live object (never created or destroyed already)", call,
		       kind_name(k), obj);
		return false;
	}
	if (it->second != k) {
		misuse("%s: %p is a %s, not a %s", call, obj, kind_name(it->second), kind_name(k));
		return false;
	}
	return true;
}

void drop_live(void *obj)
{
	st().live.erase(obj);
}

/* rdma-core style failures */
int fail_ret(int err) /* ibv_* calls returning the errno (-1 when there is none) */
{
	errno = err;
	return err ? err : -1;
}

/*
 * ibv_post_* failures: the errno as the return value, positive as most
 * providers do, or negated with errno left alone as siw does.
 */
bool negative_post_errors;
/* fake_verbs_fail_send_at: the chain element the next post_send fails at */
int send_fail_index = -1;
int send_fail_err;

int post_fail_ret(int err)
{
	if (negative_post_errors && err) {
		errno = EPERM; /* whatever errno held: the library must not trust it */
		return -err;
	}
	return fail_ret(err);
}

int fail_minus1(int err) /* rdma_* calls returning -1 */
{
	errno = err;
	return -1;
}

template <typename T> T *fail_null(int err)
{
	errno = err;
	return nullptr;
}

template <typename T> T *as(void *obj)
{
	return reinterpret_cast<T *>(obj);
}

fake_pd *pd_of(ibv_pd *pd)
{
	if (pd == &cm_pd.pd)
		return &cm_pd;
	return reinterpret_cast<fake_pd *>(pd);
}

bool pd_ok(ibv_pd *pd, const char *call)
{
	if (pd == &cm_pd.pd)
		return true;
	return pd && is_live(pd, kind::pd, call);
}

bool context_ok(ibv_context *ctx, const char *call)
{
	if (ctx == &fake_context)
		return true;
	misuse("%s: %p is not the fake device context", call, (void *)ctx);
	return false;
}

void pd_put(fake_pd *pd)
{
	if (pd && pd != &cm_pd && pd->users)
		pd->users--;
}

void pd_get(fake_pd *pd)
{
	if (pd && pd != &cm_pd)
		pd->users++;
}

int new_eventfd(int flags = 0)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE | flags);
	if (fd < 0) {
		perror("fake_verbs: eventfd");
		abort();
	}
	return fd;
}

void eventfd_signal(int fd)
{
	uint64_t one = 1;
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		perror("fake_verbs: eventfd write");
}

void eventfd_consume(int fd)
{
	/* EFD_SEMAPHORE: one read takes one event; the fd is never empty here */
	uint64_t v;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		perror("fake_verbs: eventfd read");
}

fake_event_channel *new_event_channel(bool internal)
{
	auto *ch = new fake_event_channel();
	ch->ch.fd = new_eventfd();
	ch->internal = internal;
	return ch;
}

void free_cm_event(fake_cm_event *ev);
void free_id(fake_id *id);

void free_event_channel(fake_event_channel *ch)
{
	while (!ch->events.empty()) {
		fake_cm_event *ev = ch->events.front();
		ch->events.pop_front();
		free_cm_event(ev);
	}
	close(ch->ch.fd);
	delete ch;
}

/* An event never handed out: free it and the id it would have brought. */
void free_cm_event(fake_cm_event *ev)
{
	state &s = st();
	if (ev->new_id) {
		s.pending_ids.erase(ev->new_id);
		free_id(ev->new_id);
	}
	if (s.last_pushed == ev)
		s.last_pushed = nullptr;
	delete ev;
}

void free_id(fake_id *id)
{
	if (id->pending && id->channel && id->channel->ids)
		id->channel->ids--;
	if (id->sync && id->channel)
		free_event_channel(id->channel);
	delete id;
}

fake_event_channel *channel_of(rdma_event_channel *ch)
{
	return reinterpret_cast<fake_event_channel *>(ch);
}

/* Takes the events about id out of its channel's queue. */
void drop_queued_events(fake_id *id)
{
	fake_event_channel *ch = id->channel;
	if (!ch)
		return;
	for (auto it = ch->events.begin(); it != ch->events.end();) {
		if ((*it)->id == id) {
			fake_cm_event *ev = *it;
			it = ch->events.erase(it);
			eventfd_consume(ch->ch.fd);
			free_cm_event(ev);
		} else {
			++it;
		}
	}
}

void copy_sockaddr(sockaddr_storage *to, const sockaddr *from)
{
	memset(to, 0, sizeof(*to));
	if (!from)
		return;
	if (from->sa_family == AF_INET)
		memcpy(to, from, sizeof(sockaddr_in));
	else if (from->sa_family == AF_INET6)
		memcpy(to, from, sizeof(sockaddr_in6));
	else
		to->ss_family = from->sa_family;
}

bool is_wildcard(const sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return reinterpret_cast<const sockaddr_in *>(sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
		    &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr);
	return false;
}

bool sockaddr_ok(const sockaddr *sa)
{
	return sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
}

void count_id_call(rdma_cm_id *id, fake_call call)
{
	st().id_calls[id].calls[call]++;
}

void record_conn_pdata(const void *pdata, uint8_t len)
{
	state &s = st();
	s.conn_pdata_len = pdata ? len : 0;
	if (pdata && len)
		memcpy(s.conn_pdata, pdata, len);
	s.conn_pdata_set = true;
}

void reset_locked()
{
	state &s = st();
	negative_post_errors = false;
	send_fail_index = -1;

	/* free what the library left behind, in an order that is always safe */
	std::vector<std::pair<void *, kind>> objs(s.live.begin(), s.live.end());
	for (auto &o : objs) {
		if (o.second == kind::cm_event)
			delete as<fake_cm_event>(o.first);
	}
	for (auto &o : objs) {
		if (o.second == kind::id) {
			fake_id *id = as<fake_id>(o.first);
			if (id->sync && id->channel) {
				/* queued events of a synchronous id live on its channel */
				free_event_channel(id->channel);
				id->channel = nullptr;
			}
		}
	}
	for (auto &o : objs) {
		if (o.second == kind::event_channel)
			free_event_channel(as<fake_event_channel>(o.first));
	}
	for (auto &p : s.pending_ids)
		delete p.first;
	s.pending_ids.clear();
	for (auto &o : objs) {
		switch (o.second) {
		case kind::pd:
			delete as<fake_pd>(o.first);
			break;
		case kind::mr:
			delete as<fake_mr>(o.first);
			break;
		case kind::comp_channel:
			close(as<fake_comp_channel>(o.first)->ch.fd);
			delete as<fake_comp_channel>(o.first);
			break;
		case kind::cq:
			delete as<fake_cq>(o.first);
			break;
		case kind::srq:
			delete as<fake_srq>(o.first);
			break;
		case kind::qp:
			delete as<fake_qp>(o.first);
			break;
		case kind::id:
			delete as<fake_id>(o.first);
			break;
		case kind::addrinfo:
			delete as<fake_addrinfo>(o.first);
			break;
		case kind::event_channel:
		case kind::cm_event:
			break;
		}
	}
	s.live.clear();

	for (unsigned i = 0; i < FAKE_CALL_MAX; ++i) {
		s.calls[i] = 0;
		s.failures[i].clear();
	}
	s.iwarp = s.odp = s.atomic_write = s.flush = false;
	s.blocking_channels = false;
	s.cq_event_delay_ms = 0;
	s.pmem = nullptr;
	s.pmem_len = 0;
	s.misuse = 0;
	s.last_misuse.clear();
	s.sends.clear();
	s.recvs.clear();
	s.reg_mrs.clear();
	s.advises.clear();
	s.conn_pdata_len = 0;
	s.conn_pdata_set = false;
	memset(&s.conn_param, 0, sizeof(s.conn_param));
	s.conn_param_set = false;
	s.timeout_resolve_addr = s.timeout_resolve_route = -1;
	s.backlog = -1;
	s.gai_node.clear();
	s.gai_service.clear();
	s.gai_node_set = s.gai_service_set = false;
	s.gai_flags = -1;
	s.last_pushed = nullptr;
	s.last_id = nullptr;
	s.id_calls.clear();
	s.next_key = 1;
	s.next_qp_num = 0x000100;
	s.next_handle = 1;
	setup_device();
}

struct initializer {
	initializer()
	{
		guard g(st().lock);
		setup_device();
	}
} init_once;

} /* namespace */

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

int query_device_ex(ibv_context *ctx, ibv_device_attr_ex *attr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_QUERY_DEVICE_EX); err != GO_ON)
		return fail_ret(err);
	if (!attr || !context_ok(ctx, "ibv_query_device_ex"))
		return fail_ret(EINVAL);

	memset(attr, 0, sizeof(*attr));
	ibv_device_attr &a = attr->orig_attr;
	snprintf(a.fw_ver, sizeof(a.fw_ver), "16.35.1012");
	a.node_guid = htobe64(0x0002c90300a1b2c3ULL);
	a.sys_image_guid = a.node_guid;
	a.max_mr_size = UINT64_MAX;
	a.page_size_cap = 0xfffff000;
	a.vendor_id = s.iwarp ? 0x8086 : 0x02c9;
	a.vendor_part_id = s.iwarp ? 0x37d2 : 4119;
	a.hw_ver = 0;
	a.max_qp = 262144;
	a.max_qp_wr = 32768;
	a.device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
			     IBV_DEVICE_AUTO_PATH_MIG | IBV_DEVICE_CHANGE_PHY_PORT |
			     IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SYS_IMAGE_GUID |
			     IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_MEM_MGT_EXTENSIONS;
	a.max_sge = 30;
	a.max_sge_rd = 30;
	a.max_cq = 16777216;
	a.max_cqe = 4194303;
	a.max_mr = 16777216;
	a.max_pd = 16777216;
	a.max_qp_rd_atom = 16;
	a.max_ee_rd_atom = 0;
	a.max_res_rd_atom = 4194304;
	a.max_qp_init_rd_atom = 16;
	a.atomic_cap = IBV_ATOMIC_HCA;
	a.max_srq = 8388608;
	a.max_srq_wr = 32767;
	a.max_srq_sge = 31;
	a.max_pkeys = 128;
	a.local_ca_ack_delay = 16;
	a.phys_port_cnt = 1;

	if (s.odp) {
		attr->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
		attr->odp_caps.per_transport_caps.rc_odp_caps =
		    IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		    IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
		attr->odp_caps.per_transport_caps.uc_odp_caps = 0;
		attr->odp_caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND;
		attr->xrc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_SRQ_RECV;
	}
	attr->device_cap_flags_ex = a.device_cap_flags;
	if (s.atomic_write)
		attr->device_cap_flags_ex |= FAKE_DEVICE_ATOMIC_WRITE;
	if (s.flush)
		attr->device_cap_flags_ex |=
		    FAKE_DEVICE_FLUSH_GLOBAL | FAKE_DEVICE_FLUSH_PERSISTENT;
	attr->completion_timestamp_mask = 0x7fffffffffffffffULL;
	attr->hca_core_clock = 156250;
	attr->max_dm_size = 131072;
	attr->phys_port_cnt_ex = 1;
	return 0;
}

uint8_t native_ops(const ibv_device_attr_ex &attr)
{
	/* as a build whose rdma-core has every name: the device decides */
	uint8_t ops = 0;
	if (attr.device_cap_flags_ex & FAKE_DEVICE_FLUSH_GLOBAL)
		ops |= NATIVE_FLUSH_GLOBAL;
	if (attr.device_cap_flags_ex & FAKE_DEVICE_FLUSH_PERSISTENT)
		ops |= NATIVE_FLUSH_PERSISTENT;
	if (attr.device_cap_flags_ex & FAKE_DEVICE_ATOMIC_WRITE)
		ops |= NATIVE_ATOMIC_WRITE;
	return ops;
}

uint64_t native_send_ops(uint8_t ops)
{
	uint64_t send_ops = 0;
	if (ops & (NATIVE_FLUSH_GLOBAL | NATIVE_FLUSH_PERSISTENT))
		send_ops |= FAKE_QP_EX_WITH_FLUSH;
	if (ops & NATIVE_ATOMIC_WRITE)
		send_ops |= FAKE_QP_EX_WITH_ATOMIC_WRITE;
	return send_ops;
}

static_assert(FAKE_FLUSH_GLOBAL == NATIVE_FLUSH_GLOBAL &&
		  FAKE_FLUSH_PERSISTENT == NATIVE_FLUSH_PERSISTENT,
	      "the fake's placements are the library's");

int native_flush_access(uint8_t placements)
{
	int access = 0;
	if (placements & NATIVE_FLUSH_GLOBAL)
		access |= FAKE_ACCESS_FLUSH_GLOBAL;
	if (placements & NATIVE_FLUSH_PERSISTENT)
		access |= FAKE_ACCESS_FLUSH_PERSISTENT;
	return access;
}

ibv_pd *alloc_pd(ibv_context *ctx)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_ALLOC_PD); err != GO_ON)
		return fail_null<ibv_pd>(err);
	if (!context_ok(ctx, "ibv_alloc_pd"))
		return fail_null<ibv_pd>(EINVAL);
	auto *pd = new fake_pd();
	pd->pd.context = ctx;
	pd->pd.handle = s.next_handle++;
	add_live(pd, kind::pd);
	return &pd->pd;
}

int dealloc_pd(ibv_pd *pd)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DEALLOC_PD); err != GO_ON)
		return fail_ret(err);
	if (pd == &cm_pd.pd) {
		misuse(
		    "ibv_dealloc_pd: the protection domain belongs to librdmacm (rdma_cm_id->pd)");
		return fail_ret(EINVAL);
	}
	if (!is_live(pd, kind::pd, "ibv_dealloc_pd"))
		return fail_ret(EINVAL);
	fake_pd *p = pd_of(pd);
	if (p->users)
		return fail_ret(EBUSY);
	drop_live(p);
	delete p;
	return 0;
}

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, int access)
{
	state &s = st();
	guard g(s.lock);
	fake_reg_mr_record rec{};
	rec.pd = pd;
	rec.addr = addr;
	rec.length = length;
	rec.access = access;
	s.reg_mrs.push_back(rec);

	if (int err = enter(FAKE_REG_MR); err != GO_ON)
		return fail_null<ibv_mr>(err);
	if (!pd_ok(pd, "ibv_reg_mr"))
		return fail_null<ibv_mr>(EINVAL);
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return fail_null<ibv_mr>(EINVAL);
	if ((access & IBV_ACCESS_ON_DEMAND) && !s.odp)
		return fail_null<ibv_mr>(EOPNOTSUPP);
	if ((access & (FAKE_ACCESS_FLUSH_GLOBAL | FAKE_ACCESS_FLUSH_PERSISTENT)) && !s.flush)
		return fail_null<ibv_mr>(EOPNOTSUPP);
	if (access & FAKE_ACCESS_FLUSH_PERSISTENT) {
		/* rxe: every page must be persistent memory */
		const auto *p = static_cast<const uint8_t *>(addr);
		if (s.pmem == nullptr || p < s.pmem || length > s.pmem_len ||
		    static_cast<size_t>(p - s.pmem) > s.pmem_len - length)
			return fail_null<ibv_mr>(EINVAL);
	}
	if (length == 0)
		return fail_null<ibv_mr>(EINVAL);
	if (!addr && !(access & IBV_ACCESS_ON_DEMAND))
		return fail_null<ibv_mr>(EFAULT);

	auto *mr = new fake_mr();
	uint32_t n = s.next_key++;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = s.next_handle++;
	mr->mr.lkey = 0x00a10000u | n;
	mr->mr.rkey = 0x1b2c0000u | (n << 8) | 0x3du;
	mr->access = access;
	pd_get(pd_of(pd));
	add_live(mr, kind::mr);

	fake_reg_mr_record &r = s.reg_mrs.back();
	r.mr = &mr->mr;
	r.lkey = mr->mr.lkey;
	r.rkey = mr->mr.rkey;
	return &mr->mr;
}

int dereg_mr(ibv_mr *mr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DEREG_MR); err != GO_ON)
		return fail_ret(err);
	if (!is_live(mr, kind::mr, "ibv_dereg_mr"))
		return fail_ret(EINVAL);
	pd_put(pd_of(mr->pd));
	drop_live(mr);
	delete as<fake_mr>(mr);
	return 0;
}

int advise_mr(ibv_pd *pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge *sg_list,
	      uint32_t num_sge)
{
	state &s = st();
	guard g(s.lock);
	fake_advise_record rec{};
	rec.pd = pd;
	rec.advice = advice;
	rec.flags = flags;
	rec.num_sge = num_sge;
	for (uint32_t i = 0; sg_list && i < num_sge && i < 4; ++i)
		rec.sge[i] = sg_list[i];
	s.advises.push_back(rec);

	if (int err = enter(FAKE_ADVISE_MR); err != GO_ON)
		return fail_ret(err);
	if (!pd_ok(pd, "ibv_advise_mr"))
		return fail_ret(EINVAL);
	if (!s.odp)
		return fail_ret(EOPNOTSUPP);
	if (advice > IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~IBV_ADVISE_MR_FLAG_FLUSH) || !sg_list || num_sge == 0)
		return fail_ret(EINVAL);
	for (uint32_t i = 0; i < num_sge; ++i) {
		const ibv_sge &sge = sg_list[i];
		fake_mr *found = nullptr;
		for (auto &o : s.live) {
			if (o.second != kind::mr)
				continue;
			fake_mr *m = as<fake_mr>(o.first);
			if (m->mr.lkey == sge.lkey && m->mr.pd == pd)
				found = m;
		}
		if (!found)
			return fail_ret(EINVAL);
		if (!(found->access & IBV_ACCESS_ON_DEMAND))
			return fail_ret(ENOENT);
		uint64_t start = (uint64_t)(uintptr_t)found->mr.addr;
		uint64_t end = start + found->mr.length;
		if (sge.addr < start || sge.addr > end || sge.length > end - sge.addr)
			return fail_ret(EINVAL);
	}
	return 0;
}

ibv_comp_channel *create_comp_channel(ibv_context *ctx)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_COMP_CHANNEL); err != GO_ON)
		return fail_null<ibv_comp_channel>(err);
	if (!context_ok(ctx, "ibv_create_comp_channel"))
		return fail_null<ibv_comp_channel>(EINVAL);
	auto *ch = new fake_comp_channel();
	ch->ch.context = ctx;
	/*
	 * ibv_get_cq_event() on it never blocks: the fd says so, as an
	 * O_NONBLOCK one would; with blocking channels, as rdma-core's are by
	 * default, a read of an empty one is a misuse (it would hang)
	 */
	ch->ch.fd = new_eventfd(s.blocking_channels ? 0 : EFD_NONBLOCK);
	ch->blocking = s.blocking_channels;
	ch->ch.refcnt = 0;
	add_live(ch, kind::comp_channel);
	return &ch->ch;
}

int destroy_comp_channel(ibv_comp_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_COMP_CHANNEL); err != GO_ON)
		return fail_ret(err);
	if (!is_live(channel, kind::comp_channel, "ibv_destroy_comp_channel"))
		return fail_ret(EINVAL);
	auto *ch = as<fake_comp_channel>(channel);
	if (ch->cqs)
		return fail_ret(EBUSY);
	close(ch->ch.fd);
	drop_live(ch);
	delete ch;
	return 0;
}

ibv_cq *create_cq(ibv_context *ctx, int cqe, void *cq_context, ibv_comp_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_CQ); err != GO_ON)
		return fail_null<ibv_cq>(err);
	if (!context_ok(ctx, "ibv_create_cq"))
		return fail_null<ibv_cq>(EINVAL);
	if (channel && !is_live(channel, kind::comp_channel, "ibv_create_cq"))
		return fail_null<ibv_cq>(EINVAL);
	if (cqe < 1 || cqe > 4194303)
		return fail_null<ibv_cq>(EINVAL);
	auto *cq = new fake_cq();
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = s.next_handle++;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, nullptr);
	pthread_cond_init(&cq->cq.cond, nullptr);
	cq->channel = as<fake_comp_channel>(channel);
	if (cq->channel) {
		cq->channel->cqs++;
		cq->channel->ch.refcnt++;
	}
	add_live(cq, kind::cq);
	return &cq->cq;
}

int destroy_cq(ibv_cq *cq)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_CQ); err != GO_ON)
		return fail_ret(err);
	if (!is_live(cq, kind::cq, "ibv_destroy_cq"))
		return fail_ret(EINVAL);
	auto *c = as<fake_cq>(cq);
	if (c->qps)
		return fail_ret(EBUSY);
	if (c->unacked) {
		/* ibv_destroy_cq waits for the acknowledgements forever */
		misuse("ibv_destroy_cq: %u completion event(s) were never acknowledged",
		       c->unacked);
		return fail_ret(EBUSY);
	}
	if (c->channel) {
		/* events of this CQ still queued on the channel disappear with it */
		auto &q = c->channel->events;
		for (auto it = q.begin(); it != q.end();) {
			if (*it == c) {
				it = q.erase(it);
				eventfd_consume(c->channel->ch.fd);
			} else {
				++it;
			}
		}
		c->channel->cqs--;
		c->channel->ch.refcnt--;
	}
	pthread_mutex_destroy(&c->cq.mutex);
	pthread_cond_destroy(&c->cq.cond);
	drop_live(c);
	delete c;
	return 0;
}

int req_notify_cq(ibv_cq *cq)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_REQ_NOTIFY_CQ); err != GO_ON)
		return fail_ret(err);
	if (!is_live(cq, kind::cq, "ibv_req_notify_cq"))
		return fail_ret(EINVAL);
	as<fake_cq>(cq)->armed = true;
	return 0;
}

int get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context)
{
	state &s = st();
	if (const int delay = s.cq_event_delay_ms.load())
		usleep(static_cast<useconds_t>(delay) * 1000);
	guard g(s.lock);
	if (int err = enter(FAKE_GET_CQ_EVENT); err != GO_ON)
		return fail_minus1(err);
	if (!cq || !cq_context || !is_live(channel, kind::comp_channel, "ibv_get_cq_event"))
		return fail_minus1(EINVAL);
	auto *ch = as<fake_comp_channel>(channel);
	if (ch->broken)
		return fail_minus1(EIO);
	if (ch->events.empty()) {
		if (ch->blocking)
			misuse("ibv_get_cq_event on a blocking channel with no event: it would "
			       "wait for the next one");
		return fail_minus1(EAGAIN);
	}
	fake_cq *c = ch->events.front();
	ch->events.pop_front();
	eventfd_consume(ch->ch.fd);
	c->unacked++;
	*cq = &c->cq;
	*cq_context = c->cq.cq_context;
	return 0;
}

void ack_cq_events(ibv_cq *cq, unsigned int nevents)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_ACK_CQ_EVENTS);
	if (!is_live(cq, kind::cq, "ibv_ack_cq_events"))
		return;
	auto *c = as<fake_cq>(cq);
	if (nevents > c->unacked) {
		misuse("ibv_ack_cq_events: %u event(s) acknowledged, only %u taken", nevents,
		       c->unacked);
		c->unacked = 0;
	} else {
		c->unacked -= nevents;
	}
	c->acks += nevents;
}

int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_POLL_CQ); err != GO_ON) {
		errno = err;
		return err ? -err : -1;
	}
	if (!is_live(cq, kind::cq, "ibv_poll_cq")) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (num_entries < 0 || (num_entries > 0 && !wc)) {
		misuse("ibv_poll_cq: num_entries %d with wc %p", num_entries, (void *)wc);
		errno = EINVAL;
		return -EINVAL;
	}
	auto *c = as<fake_cq>(cq);
	int n = 0;
	while (n < num_entries && !c->wcs.empty()) {
		wc[n++] = c->wcs.front();
		c->wcs.pop_front();
	}
	return n;
}

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_SRQ); err != GO_ON)
		return fail_null<ibv_srq>(err);
	if (!attr || !pd_ok(pd, "ibv_create_srq"))
		return fail_null<ibv_srq>(EINVAL);
	if (attr->attr.max_wr < 1 || attr->attr.max_wr > 32767 || attr->attr.max_sge < 1 ||
	    attr->attr.max_sge > 31)
		return fail_null<ibv_srq>(EINVAL);
	auto *srq = new fake_srq();
	srq->srq.context = pd->context;
	srq->srq.srq_context = attr->srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = s.next_handle++;
	pthread_mutex_init(&srq->srq.mutex, nullptr);
	pthread_cond_init(&srq->srq.cond, nullptr);
	srq->attr = *attr;
	srq->pd = pd_of(pd);
	pd_get(srq->pd);
	add_live(srq, kind::srq);
	return &srq->srq;
}

int destroy_srq(ibv_srq *srq)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_SRQ); err != GO_ON)
		return fail_ret(err);
	if (!is_live(srq, kind::srq, "ibv_destroy_srq"))
		return fail_ret(EINVAL);
	auto *q = as<fake_srq>(srq);
	if (q->qps)
		return fail_ret(EBUSY);
	pd_put(q->pd);
	pthread_mutex_destroy(&q->srq.mutex);
	pthread_cond_destroy(&q->srq.cond);
	drop_live(q);
	delete q;
	return 0;
}

int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr)
{
	state &s = st();
	guard g(s.lock);
	if (bad_wr)
		*bad_wr = nullptr;
	if (int err = enter(FAKE_POST_SEND); err != GO_ON) {
		if (bad_wr)
			*bad_wr = wr;
		return post_fail_ret(err);
	}
	if (!wr || !bad_wr || !is_live(qp, kind::qp, "ibv_post_send")) {
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	auto *q = as<fake_qp>(qp);
	const int fail_at = send_fail_index;
	send_fail_index = -1;
	int index = 0;
	for (ibv_send_wr *w = wr; w; w = w->next, index++) {
		if (index == fail_at) {
			/* the elements before it are posted, as a provider does */
			*bad_wr = w;
			return post_fail_ret(send_fail_err);
		}
		if (w->num_sge < 0 || (w->num_sge > 0 && !w->sg_list) ||
		    (uint32_t)w->num_sge >
			(q->attr.cap.max_send_sge ? q->attr.cap.max_send_sge : 1)) {
			*bad_wr = w;
			return fail_ret(EINVAL);
		}
		fake_send_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.wr = *w;
		rec.wr.next = nullptr;
		rec.qp = qp;
		for (int i = 0; i < w->num_sge && i < 4; ++i)
			rec.sge[i] = w->sg_list[i];
		rec.wr.sg_list = w->num_sge > 0 ? rec.sge : nullptr;
		if (w->send_flags & IBV_SEND_INLINE) {
			size_t total = 0;
			for (int i = 0; i < w->num_sge; ++i)
				total += w->sg_list[i].length;
			if (total > q->attr.cap.max_inline_data) {
				*bad_wr = w;
				return fail_ret(ENOMEM);
			}
			size_t off = 0;
			for (int i = 0; i < w->num_sge && off < sizeof(rec.inline_data); ++i) {
				size_t n = w->sg_list[i].length;
				if (n > sizeof(rec.inline_data) - off)
					n = sizeof(rec.inline_data) - off;
				if (n)
					memcpy(rec.inline_data + off,
					       (const void *)(uintptr_t)w->sg_list[i].addr, n);
				off += n;
			}
		}
		s.sends.push_back(rec);
		fake_send_record &kept = s.sends.back();
		kept.wr.sg_list = w->num_sge > 0 ? kept.sge : nullptr;
	}
	return 0;
}

static int post_recv_common(fake_call call, ibv_qp *qp, ibv_srq *srq, ibv_recv_wr *wr,
			    ibv_recv_wr **bad_wr)
{
	state &s = st();
	if (bad_wr)
		*bad_wr = nullptr;
	if (int err = enter(call); err != GO_ON) {
		if (bad_wr)
			*bad_wr = wr;
		return post_fail_ret(err);
	}
	const char *name = qp ? "ibv_post_recv" : "ibv_post_srq_recv";
	bool ok = qp ? is_live(qp, kind::qp, name) : is_live(srq, kind::srq, name);
	if (!wr || !bad_wr || !ok) {
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	uint32_t max_sge;
	if (qp) {
		auto *q = as<fake_qp>(qp);
		if (q->srq) {
			*bad_wr = wr;
			return fail_ret(EINVAL);
		}
		max_sge = q->attr.cap.max_recv_sge ? q->attr.cap.max_recv_sge : 1;
	} else {
		max_sge = as<fake_srq>(srq)->attr.attr.max_sge;
	}
	for (ibv_recv_wr *w = wr; w; w = w->next) {
		if (w->num_sge < 0 || (w->num_sge > 0 && !w->sg_list) ||
		    (uint32_t)w->num_sge > max_sge) {
			*bad_wr = w;
			return fail_ret(EINVAL);
		}
		fake_recv_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.wr = *w;
		rec.wr.next = nullptr;
		for (int i = 0; i < w->num_sge && i < 4; ++i)
			rec.sge[i] = w->sg_list[i];
		rec.wr.sg_list = w->num_sge > 0 ? rec.sge : nullptr;
		rec.qp = qp;
		rec.srq = srq;
		s.recvs.push_back(rec);
		fake_recv_record &kept = s.recvs.back();
		kept.wr.sg_list = w->num_sge > 0 ? kept.sge : nullptr;
	}
	return 0;
}

int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	guard g(st().lock);
	if (!qp) {
		misuse("ibv_post_recv: NULL qp");
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	return post_recv_common(FAKE_POST_RECV, qp, nullptr, wr, bad_wr);
}

int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	guard g(st().lock);
	if (!srq) {
		misuse("ibv_post_srq_recv: NULL srq");
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	return post_recv_common(FAKE_POST_SRQ_RECV, nullptr, srq, wr, bad_wr);
}

int post_atomic_write(ibv_qp *qp, uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
		      uint64_t remote_addr, const void *src8)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_POST_ATOMIC_WRITE); err != GO_ON)
		return fail_ret(err);
	if (!src8 || !is_live(qp, kind::qp, "ibv_wr_atomic_write"))
		return fail_ret(EINVAL);
	if (!as<fake_qp>(qp)->atomic_write) {
		misuse(
		    "ibv_wr_atomic_write: the QP was not created with IBV_QP_EX_WITH_ATOMIC_WRITE");
		return fail_ret(EINVAL);
	}
	fake_send_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.wr.wr_id = wr_id;
	rec.wr.opcode = static_cast<ibv_wr_opcode>(FAKE_WR_ATOMIC_WRITE);
	rec.wr.send_flags = send_flags;
	rec.wr.wr.rdma.remote_addr = remote_addr;
	rec.wr.wr.rdma.rkey = rkey;
	rec.wr.num_sge = 0;
	rec.wr.sg_list = nullptr;
	memcpy(rec.inline_data, src8, 8);
	rec.qp = qp;
	rec.native_atomic_write = true;
	s.sends.push_back(rec);
	return 0;
}

int post_send_ex(ibv_qp *qp, ibv_send_wr *wr, const native_flush_wr *flush)
{
	state &s = st();
	guard g(s.lock);
	const int fail_at = send_fail_index;
	send_fail_index = -1;
	if (int err = enter(FAKE_POST_SEND_EX); err != GO_ON)
		return fail_ret(err);
	if (!wr || !flush || !is_live(qp, kind::qp, "ibv_wr_start"))
		return fail_ret(EINVAL);
	auto *q = as<fake_qp>(qp);
	if (!q->flush && !q->atomic_write) {
		misuse("ibv_wr_start: the QP was not created with send_ops_flags");
		return fail_ret(EINVAL);
	}
	/* nothing is posted unless ibv_wr_complete succeeds: built aside first */
	std::vector<fake_send_record> built;
	int index = 0;
	for (ibv_send_wr *w = wr; w; w = w->next, index++) {
		if (index == fail_at)
			return fail_ret(send_fail_err);
		fake_send_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.qp = qp;
		rec.wr.wr_id = w->wr_id;
		rec.wr.send_flags = w->send_flags;
		rec.posted_ex = true;
		const native_flush_wr &f = flush[index];
		if (f.placement) {
			if (!q->flush) {
				misuse("ibv_wr_flush: the QP was not created with "
				       "IBV_QP_EX_WITH_FLUSH");
				return fail_ret(EINVAL);
			}
			if (f.placement != NATIVE_FLUSH_GLOBAL &&
			    f.placement != NATIVE_FLUSH_PERSISTENT) {
				misuse(
				    "ibv_wr_flush: placement %u is neither global nor persistent",
				    f.placement);
				return fail_ret(EINVAL);
			}
			rec.wr.opcode = static_cast<ibv_wr_opcode>(FAKE_WR_FLUSH);
			rec.wr.wr.rdma = w->wr.rdma;
			rec.native_flush = f.placement;
			rec.flush_len = f.len;
			rec.flush_whole_region = f.whole_region;
			built.push_back(rec);
			continue;
		}
		switch (w->opcode) {
		case IBV_WR_RDMA_READ:
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
			break;
		default:
			misuse("ibv_wr_*: opcode %d has no builder the library uses", w->opcode);
			return fail_ret(EINVAL);
		}
		if (w->num_sge < 0 || w->num_sge > 1 || (w->num_sge > 0 && !w->sg_list))
			return fail_ret(EINVAL);
		rec.wr.opcode = w->opcode;
		rec.wr.imm_data = w->imm_data;
		rec.wr.wr.rdma = w->wr.rdma;
		rec.wr.num_sge = w->num_sge;
		if (w->num_sge)
			rec.sge[0] = w->sg_list[0];
		if ((w->send_flags & IBV_SEND_INLINE) && w->num_sge) {
			if (w->sg_list[0].length > q->attr.cap.max_inline_data)
				return fail_ret(ENOMEM);
			memcpy(rec.inline_data, (const void *)(uintptr_t)w->sg_list[0].addr,
			       std::min<size_t>(w->sg_list[0].length, sizeof(rec.inline_data)));
		}
		built.push_back(rec);
	}
	for (const fake_send_record &rec : built) {
		s.sends.push_back(rec);
		fake_send_record &kept = s.sends.back();
		kept.wr.sg_list = kept.wr.num_sge > 0 ? kept.sge : nullptr;
	}
	return 0;
}

rdma_event_channel *create_event_channel()
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_EVENT_CHANNEL); err != GO_ON)
		return fail_null<rdma_event_channel>(err);
	fake_event_channel *ch = new_event_channel(false);
	add_live(ch, kind::event_channel);
	return &ch->ch;
}

void destroy_event_channel(rdma_event_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_DESTROY_EVENT_CHANNEL);
	if (!is_live(channel, kind::event_channel, "rdma_destroy_event_channel"))
		return;
	fake_event_channel *ch = channel_of(channel);
	if (ch->ids)
		misuse("rdma_destroy_event_channel: %u rdma_cm_id(s) still use the channel",
		       ch->ids);
	for (auto &o : s.live) {
		if (o.second == kind::id && as<fake_id>(o.first)->channel == ch) {
			as<fake_id>(o.first)->channel = nullptr;
			as<fake_id>(o.first)->id.channel = nullptr;
		}
	}
	drop_live(ch);
	free_event_channel(ch);
}

static fake_id *new_id(fake_event_channel *ch, void *context)
{
	state &s = st();
	auto *id = new fake_id();
	id->id.channel = &ch->ch;
	id->id.context = context;
	id->id.ps = RDMA_PS_TCP;
	id->id.qp_type = IBV_QPT_RC;
	id->id.port_num = 0;
	id->channel = ch;
	ch->ids++;
	s.id_calls.erase(&id->id);
	return id;
}

int create_id(rdma_event_channel *channel, rdma_cm_id **id, void *context)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_ID); err != GO_ON)
		return fail_minus1(err);
	if (!id)
		return fail_minus1(EINVAL);
	if (channel && !is_live(channel, kind::event_channel, "rdma_create_id"))
		return fail_minus1(EINVAL);
	fake_id *fid;
	if (channel) {
		fid = new_id(channel_of(channel), context);
	} else {
		fid = new_id(new_event_channel(true), context);
		fid->sync = true;
	}
	add_live(fid, kind::id);
	s.last_id = &fid->id;
	*id = &fid->id;
	return 0;
}

int destroy_id(rdma_cm_id *id)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_ID); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_destroy_id"))
		return fail_minus1(EINVAL);
	auto *fid = as<fake_id>(id);
	if (id->qp)
		misuse("rdma_destroy_id: the id still has a QP (rdma_destroy_qp first)");
	if (fid->unacked) {
		/* rdma_destroy_id waits for the acknowledgements forever */
		misuse("rdma_destroy_id: %u event(s) of the id were never acknowledged",
		       fid->unacked);
	}
	/* events for an id being destroyed are dropped */
	if (fid->channel && !fid->sync)
		drop_queued_events(fid);
	if (fid->channel && fid->channel->ids)
		fid->channel->ids--;
	/* events already handed out keep pointing at the id: forget the link */
	for (auto &o : s.live) {
		if (o.second == kind::cm_event) {
			auto *ev = as<fake_cm_event>(o.first);
			if (ev->id == fid)
				ev->id = nullptr;
		}
	}
	if (s.last_id == id)
		s.last_id = nullptr;
	drop_live(fid);
	free_id(fid);
	return 0;
}

int migrate_id(rdma_cm_id *id, rdma_event_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_MIGRATE_ID); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_migrate_id"))
		return fail_minus1(EINVAL);
	if (channel && !is_live(channel, kind::event_channel, "rdma_migrate_id"))
		return fail_minus1(EINVAL);
	auto *fid = as<fake_id>(id);
	if (fid->unacked)
		misuse("rdma_migrate_id: %u event(s) of the id were never acknowledged (it would "
		       "wait forever)",
		       fid->unacked);
	fake_event_channel *from = fid->channel;
	fake_event_channel *to = channel ? channel_of(channel) : new_event_channel(true);

	/* the id's queued events move along */
	if (from) {
		for (auto it = from->events.begin(); it != from->events.end();) {
			if ((*it)->id == fid) {
				to->events.push_back(*it);
				eventfd_signal(to->ch.fd);
				eventfd_consume(from->ch.fd);
				it = from->events.erase(it);
			} else {
				++it;
			}
		}
		if (from->ids)
			from->ids--;
		if (fid->sync)
			free_event_channel(from);
	}
	fid->channel = to;
	fid->sync = !channel;
	fid->id.channel = &to->ch;
	to->ids++;
	return 0;
}

int getaddrinfo(const char *node, const char *service, const rdma_addrinfo *hints,
		rdma_addrinfo **res)
{
	state &s = st();
	guard g(s.lock);
	s.gai_node_set = node != nullptr;
	s.gai_node = node ? node : "";
	s.gai_service_set = service != nullptr;
	s.gai_service = service ? service : "";
	s.gai_flags = hints ? hints->ai_flags : -1;
	if (int err = enter(FAKE_GETADDRINFO); err != GO_ON)
		return fail_minus1(err);
	if (!res || (!node && !service))
		return fail_minus1(EINVAL);

	unsigned long port = 0;
	if (service) {
		char *end = nullptr;
		errno = 0;
		port = strtoul(service, &end, 10);
		if (!*service || *end || errno || port > 65535 || service[0] == '-' ||
		    service[0] == '+' || service[0] == ' ')
			return fail_minus1(EINVAL);
	}
	bool passive = hints && (hints->ai_flags & RAI_PASSIVE);

	auto *ai = new fake_addrinfo();
	sockaddr_storage *ss = passive ? &ai->src : &ai->dst;
	socklen_t len;
	in_addr a4;
	in6_addr a6;
	if (!node) {
		auto *sin = reinterpret_cast<sockaddr_in *>(ss);
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = passive ? htonl(INADDR_ANY) : htonl(INADDR_LOOPBACK);
		sin->sin_port = htons((uint16_t)port);
		len = sizeof(sockaddr_in);
	} else if (inet_pton(AF_INET, node, &a4) == 1) {
		auto *sin = reinterpret_cast<sockaddr_in *>(ss);
		sin->sin_family = AF_INET;
		sin->sin_addr = a4;
		sin->sin_port = htons((uint16_t)port);
		len = sizeof(sockaddr_in);
	} else if (inet_pton(AF_INET6, node, &a6) == 1) {
		auto *sin6 = reinterpret_cast<sockaddr_in6 *>(ss);
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = a6;
		sin6->sin6_port = htons((uint16_t)port);
		len = sizeof(sockaddr_in6);
	} else {
		delete ai;
		return fail_minus1(EADDRNOTAVAIL);
	}
	ai->ai.ai_flags = hints ? hints->ai_flags : 0;
	ai->ai.ai_family = ss->ss_family;
	ai->ai.ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	ai->ai.ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space : RDMA_PS_TCP;
	if (passive) {
		ai->ai.ai_src_addr = reinterpret_cast<sockaddr *>(&ai->src);
		ai->ai.ai_src_len = len;
	} else {
		ai->ai.ai_dst_addr = reinterpret_cast<sockaddr *>(&ai->dst);
		ai->ai.ai_dst_len = len;
	}
	add_live(ai, kind::addrinfo);
	*res = &ai->ai;
	return 0;
}

void freeaddrinfo(rdma_addrinfo *res)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_FREEADDRINFO);
	if (!res)
		return; /* as verbs.cpp: nothing to free */
	if (!is_live(res, kind::addrinfo, "rdma_freeaddrinfo"))
		return;
	drop_live(res);
	delete as<fake_addrinfo>(res);
}

static void attach_device(rdma_cm_id *id)
{
	id->verbs = &fake_context;
	id->pd = &cm_pd.pd;
	id->port_num = 1;
}

int bind_addr(rdma_cm_id *id, sockaddr *addr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_BIND_ADDR); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_bind_addr") || !sockaddr_ok(addr))
		return fail_minus1(EINVAL);
	copy_sockaddr(&id->route.addr.src_storage, addr);
	if (!is_wildcard(addr))
		attach_device(id);
	return 0;
}

int resolve_addr(rdma_cm_id *id, sockaddr *src_addr, sockaddr *dst_addr, int timeout_ms)
{
	state &s = st();
	guard g(s.lock);
	s.timeout_resolve_addr = timeout_ms;
	if (int err = enter(FAKE_RESOLVE_ADDR); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_resolve_addr") || !sockaddr_ok(dst_addr) ||
	    (src_addr && !sockaddr_ok(src_addr)))
		return fail_minus1(EINVAL);
	if (src_addr)
		copy_sockaddr(&id->route.addr.src_storage, src_addr);
	else if (id->route.addr.src_addr.sa_family == 0)
		id->route.addr.src_addr.sa_family = dst_addr->sa_family;
	copy_sockaddr(&id->route.addr.dst_storage, dst_addr);
	attach_device(id);
	return 0;
}

int resolve_route(rdma_cm_id *id, int timeout_ms)
{
	state &s = st();
	guard g(s.lock);
	s.timeout_resolve_route = timeout_ms;
	if (int err = enter(FAKE_RESOLVE_ROUTE); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_resolve_route"))
		return fail_minus1(EINVAL);
	if (!id->verbs)
		return fail_minus1(EINVAL);
	id->route.num_paths = 1;
	return 0;
}

int listen(rdma_cm_id *id, int backlog)
{
	state &s = st();
	guard g(s.lock);
	s.backlog = backlog;
	if (int err = enter(FAKE_LISTEN); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_listen"))
		return fail_minus1(EINVAL);
	if (id->route.addr.src_addr.sa_family == 0)
		return fail_minus1(EINVAL); /* not bound */
	as<fake_id>(id)->listening = true;
	count_id_call(id, FAKE_LISTEN);
	return 0;
}

int get_cm_event(rdma_event_channel *channel, rdma_cm_event **event)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_GET_CM_EVENT); err != GO_ON)
		return fail_minus1(err);
	if (!event || !is_live(channel, kind::event_channel, "rdma_get_cm_event"))
		return fail_minus1(EINVAL);
	fake_event_channel *ch = channel_of(channel);
	if (ch->events.empty())
		return fail_minus1(ENODATA);
	fake_cm_event *ev = ch->events.front();
	ch->events.pop_front();
	eventfd_consume(ch->ch.fd);
	if (ev->new_id) {
		s.pending_ids.erase(ev->new_id);
		ev->new_id->pending = false;
		add_live(ev->new_id, kind::id);
		ev->new_id = nullptr;
	}
	if (ev->id)
		ev->id->unacked++;
	if (s.last_pushed == ev)
		s.last_pushed = nullptr;
	add_live(ev, kind::cm_event);
	*event = &ev->ev;
	return 0;
}

int ack_cm_event(rdma_cm_event *event)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_ACK_CM_EVENT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(event, kind::cm_event, "rdma_ack_cm_event"))
		return fail_minus1(EINVAL);
	auto *ev = as<fake_cm_event>(event);
	if (ev->id && ev->id->unacked)
		ev->id->unacked--;
	drop_live(ev);
	/* the private data dies with the event: whoever kept a pointer sees garbage */
	memset(ev->pdata, 0xa5, sizeof(ev->pdata));
	delete ev;
	return 0;
}

int create_qp_ex(rdma_cm_id *id, ibv_qp_init_attr_ex *attr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_QP_EX); err != GO_ON)
		return fail_minus1(err);
	if (!attr || !is_live(id, kind::id, "rdma_create_qp_ex"))
		return fail_minus1(EINVAL);
	if (id->qp)
		return fail_minus1(EINVAL);
	if (!id->verbs) {
		misuse("rdma_create_qp_ex: the id has no device (neither bound nor resolved)");
		return fail_minus1(EINVAL);
	}
	ibv_pd *pd = (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : nullptr;
	if (!pd)
		pd = id->pd;
	if (!pd || !pd_ok(pd, "rdma_create_qp_ex") || pd->context != id->verbs)
		return fail_minus1(EINVAL);
	if (!attr->send_cq || !attr->recv_cq) {
		misuse("rdma_create_qp_ex: send_cq %p recv_cq %p (the library must give both)",
		       (void *)attr->send_cq, (void *)attr->recv_cq);
		return fail_minus1(EINVAL);
	}
	if (!is_live(attr->send_cq, kind::cq, "rdma_create_qp_ex") ||
	    !is_live(attr->recv_cq, kind::cq, "rdma_create_qp_ex"))
		return fail_minus1(EINVAL);
	if (attr->srq && !is_live(attr->srq, kind::srq, "rdma_create_qp_ex"))
		return fail_minus1(EINVAL);
	if (attr->qp_type != IBV_QPT_RC)
		return fail_minus1(EINVAL);
	if (attr->cap.max_send_wr > 32768 || (!attr->srq && attr->cap.max_recv_wr > 32768) ||
	    attr->cap.max_send_sge > 30 || attr->cap.max_recv_sge > 30 ||
	    attr->cap.max_inline_data > 1024)
		return fail_minus1(EINVAL);
	bool atomic_write = false;
	bool flush = false;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		if ((attr->send_ops_flags & FAKE_QP_EX_WITH_ATOMIC_WRITE) && !s.atomic_write)
			return fail_minus1(EOPNOTSUPP);
		if ((attr->send_ops_flags & FAKE_QP_EX_WITH_FLUSH) && !s.flush)
			return fail_minus1(EOPNOTSUPP);
		atomic_write = attr->send_ops_flags & FAKE_QP_EX_WITH_ATOMIC_WRITE;
		flush = attr->send_ops_flags & FAKE_QP_EX_WITH_FLUSH;
	}

	auto *qp = new fake_qp();
	qp->attr = *attr;
	qp->attr.pd = pd;
	qp->qp.context = id->verbs;
	qp->qp.qp_context = attr->qp_context;
	qp->qp.pd = pd;
	qp->qp.send_cq = attr->send_cq;
	qp->qp.recv_cq = attr->recv_cq;
	qp->qp.srq = attr->srq;
	qp->qp.handle = s.next_handle++;
	qp->qp.qp_num = s.next_qp_num++;
	qp->qp.state = IBV_QPS_INIT;
	qp->qp.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&qp->qp.mutex, nullptr);
	pthread_cond_init(&qp->qp.cond, nullptr);
	qp->pd = pd_of(pd);
	qp->send_cq = as<fake_cq>(attr->send_cq);
	qp->recv_cq = as<fake_cq>(attr->recv_cq);
	qp->srq = attr->srq ? as<fake_srq>(attr->srq) : nullptr;
	qp->atomic_write = atomic_write;
	qp->flush = flush;
	pd_get(qp->pd);
	qp->send_cq->qps++;
	qp->recv_cq->qps++;
	if (qp->srq)
		qp->srq->qps++;
	add_live(qp, kind::qp);

	/* as librdmacm: the id remembers the QP and what it was built on */
	id->qp = &qp->qp;
	id->send_cq = attr->send_cq;
	id->recv_cq = attr->recv_cq;
	id->send_cq_channel = attr->send_cq->channel;
	id->recv_cq_channel = attr->recv_cq->channel;
	id->srq = attr->srq;
	return 0;
}

void destroy_qp(rdma_cm_id *id)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_DESTROY_QP);
	if (!is_live(id, kind::id, "rdma_destroy_qp"))
		return;
	if (!id->qp) {
		misuse("rdma_destroy_qp: the id has no QP");
		return;
	}
	auto *qp = as<fake_qp>(id->qp);
	if (is_live(qp, kind::qp, "rdma_destroy_qp")) {
		pd_put(qp->pd);
		qp->send_cq->qps--;
		qp->recv_cq->qps--;
		if (qp->srq)
			qp->srq->qps--;
		pthread_mutex_destroy(&qp->qp.mutex);
		pthread_cond_destroy(&qp->qp.cond);
		drop_live(qp);
		delete qp;
	}
	id->qp = nullptr;
	id->send_cq = id->recv_cq = nullptr;
	id->send_cq_channel = id->recv_cq_channel = nullptr;
	id->srq = nullptr;
}

static void record_conn_param(const rdma_conn_param *param)
{
	state &s = st();
	if (!param) {
		record_conn_pdata(nullptr, 0);
		memset(&s.conn_param, 0, sizeof(s.conn_param));
		s.conn_param_set = false;
		return;
	}
	record_conn_pdata(param->private_data, param->private_data_len);
	s.conn_param = *param;
	s.conn_param.private_data = s.conn_pdata_len ? s.conn_pdata : nullptr;
	s.conn_param_set = true;
}

/*
 * rdma_connect, rdma_accept, rdma_reject and rdma_disconnect write their
 * command to the id's event channel: one destroyed under the id is a use
 * after free in librdmacm, and the peer never hears the command.
 */
static bool has_channel(rdma_cm_id *id, const char *call)
{
	if (as<fake_id>(id)->channel == nullptr) {
		misuse("%s: the event channel of the id was destroyed", call);
		return false;
	}
	return true;
}

int connect(rdma_cm_id *id, rdma_conn_param *param)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CONNECT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_connect"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_connect"))
		return fail_minus1(EBADF);
	if (!id->verbs || id->route.num_paths == 0) {
		misuse("rdma_connect: the route of the id was not resolved");
		return fail_minus1(EINVAL);
	}
	if (param && param->private_data_len > 56)
		return fail_minus1(EINVAL);
	record_conn_param(param);
	count_id_call(id, FAKE_CONNECT);
	return 0;
}

int accept(rdma_cm_id *id, rdma_conn_param *param)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_ACCEPT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_accept"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_accept"))
		return fail_minus1(EBADF);
	if (param && param->private_data_len > 196)
		return fail_minus1(EINVAL);
	record_conn_param(param);
	count_id_call(id, FAKE_ACCEPT);
	return 0;
}

int reject(rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_REJECT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_reject"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_reject"))
		return fail_minus1(EBADF);
	if (private_data && private_data_len > 148)
		return fail_minus1(EINVAL);
	record_conn_pdata(private_data, private_data_len);
	count_id_call(id, FAKE_REJECT);
	return 0;
}

int disconnect(rdma_cm_id *id)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DISCONNECT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_disconnect"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_disconnect"))
		return fail_minus1(EBADF);
	count_id_call(id, FAKE_DISCONNECT);
	return 0;
}

const char *wc_status_str(ibv_wc_status status)
{
	/* the fake's own names: the test output says which status it was */
	switch (status) {
	case IBV_WC_SUCCESS:
		return "success";
	case IBV_WC_WR_FLUSH_ERR:
		return "flushed";
	case IBV_WC_REM_ACCESS_ERR:
		return "remote access error";
	default:
		return "an error status";
	}
}

int modify_qp_to_error(ibv_qp *qp)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_MODIFY_QP_TO_ERROR); err != GO_ON)
		return fail_ret(err);
	if (!is_live(qp, kind::qp, "ibv_modify_qp"))
		return EINVAL;
	as<fake_qp>(qp)->in_error = true;
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

bool fake_verbs_qp_in_error(struct ibv_qp *qp)
{
	guard g(st().lock);
	return is_live(qp, kind::qp, "fake_verbs_qp_in_error") && as<fake_qp>(qp)->in_error;
}

void fake_verbs_reset(void)
{
	guard g(st().lock);
	reset_locked();
}

int fake_verbs_live_objects(void)
{
	guard g(st().lock);
	return (int)st().live.size();
}

struct ibv_context *fake_verbs_context(void)
{
	return &fake_context;
}

void fake_verbs_set_cq_event_delay(int ms)
{
	st().cq_event_delay_ms = ms;
}

void fake_verbs_set_blocking_channels(bool blocking)
{
	guard g(st().lock);
	st().blocking_channels = blocking;
}

void fake_verbs_set_iwarp(bool iwarp)
{
	guard g(st().lock);
	st().iwarp = iwarp;
	setup_device();
}

void fake_verbs_set_odp(bool odp)
{
	guard g(st().lock);
	st().odp = odp;
}

void fake_verbs_set_native_atomic_write(bool supported)
{
	guard g(st().lock);
	st().atomic_write = supported;
}

void fake_verbs_fail_send_at(int index, int err)
{
	guard g(st().lock);
	send_fail_index = index;
	send_fail_err = err;
}

void fake_verbs_set_negative_post_errors(bool negative)
{
	guard g(st().lock);
	negative_post_errors = negative;
}

void fake_verbs_set_native_flush(bool supported)
{
	guard g(st().lock);
	st().flush = supported;
}

void fake_verbs_set_pmem(const void *addr, size_t len)
{
	guard g(st().lock);
	st().pmem = static_cast<const uint8_t *>(addr);
	st().pmem_len = len;
}

void fake_verbs_fail(enum fake_call call, int nth, int err)
{
	state &s = st();
	guard g(s.lock);
	if ((unsigned)call >= FAKE_CALL_MAX || nth < 1) {
		fprintf(stderr, "fake_verbs_fail: bad call %d or nth %d\n", (int)call, nth);
		abort();
	}
	s.failures[call].push_back(failure{ s.calls[call] + (unsigned)nth, err });
}

unsigned fake_verbs_calls(enum fake_call call)
{
	guard g(st().lock);
	return (unsigned)call < FAKE_CALL_MAX ? st().calls[call] : 0;
}

unsigned fake_verbs_sends(void)
{
	guard g(st().lock);
	return (unsigned)st().sends.size();
}

const struct fake_send_record *fake_verbs_send(unsigned index)
{
	guard g(st().lock);
	return index < st().sends.size() ? &st().sends[index] : nullptr;
}

unsigned fake_verbs_recvs(void)
{
	guard g(st().lock);
	return (unsigned)st().recvs.size();
}

const struct fake_recv_record *fake_verbs_recv(unsigned index)
{
	guard g(st().lock);
	return index < st().recvs.size() ? &st().recvs[index] : nullptr;
}

void fake_verbs_push_wc(struct ibv_cq *cq, const struct ibv_wc *wc)
{
	guard g(st().lock);
	if (!wc || !is_live(cq, kind::cq, "fake_verbs_push_wc"))
		return;
	as<fake_cq>(cq)->wcs.push_back(*wc);
}

void fake_verbs_push_cq_event(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	guard g(st().lock);
	if (!is_live(channel, kind::comp_channel, "fake_verbs_push_cq_event") ||
	    !is_live(cq, kind::cq, "fake_verbs_push_cq_event"))
		return;
	auto *ch = as<fake_comp_channel>(channel);
	auto *c = as<fake_cq>(cq);
	if (c->channel != ch)
		misuse("fake_verbs_push_cq_event: the CQ does not use this channel");
	c->armed = false;
	ch->events.push_back(c);
	eventfd_signal(ch->ch.fd);
}

void fake_verbs_break_comp_channel(struct ibv_comp_channel *channel)
{
	guard g(st().lock);
	if (!is_live(channel, kind::comp_channel, "fake_verbs_break_comp_channel"))
		return;
	auto *ch = as<fake_comp_channel>(channel);
	ch->broken = true;
	/* readable from now on, as the channel of a removed device is */
	eventfd_signal(ch->ch.fd);
}

unsigned fake_verbs_cq_acks(struct ibv_cq *cq)
{
	guard g(st().lock);
	auto it = st().live.find(cq);
	if (it == st().live.end() || it->second != kind::cq)
		return 0;
	return as<fake_cq>(cq)->acks;
}

bool fake_verbs_cq_armed(struct ibv_cq *cq)
{
	guard g(st().lock);
	auto it = st().live.find(cq);
	if (it == st().live.end() || it->second != kind::cq)
		return false;
	return as<fake_cq>(cq)->armed;
}

void fake_verbs_push_cm_event(struct rdma_event_channel *channel, enum rdma_cm_event_type type,
			      struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	state &s = st();
	guard g(s.lock);
	/* a synchronous id's hidden channel is not in the live list */
	fake_event_channel *ch = nullptr;
	if (channel) {
		auto it = s.live.find(channel);
		if (it != s.live.end() && it->second == kind::event_channel) {
			ch = channel_of(channel);
		} else {
			for (auto &o : s.live)
				if (o.second == kind::id && as<fake_id>(o.first)->channel &&
				    &as<fake_id>(o.first)->channel->ch == channel)
					ch = as<fake_id>(o.first)->channel;
		}
	}
	if (!ch) {
		misuse("fake_verbs_push_cm_event: %p is not a live event channel", (void *)channel);
		return;
	}
	if (id && !is_live(id, kind::id, "fake_verbs_push_cm_event"))
		return;

	auto *ev = new fake_cm_event();
	ev->ev.event = type;
	ev->ev.status = 0;
	if (pdata && len) {
		memcpy(ev->pdata, pdata, len);
		ev->ev.param.conn.private_data = ev->pdata;
		ev->ev.param.conn.private_data_len = len;
	}
	ev->ev.param.conn.responder_resources = 16;
	ev->ev.param.conn.initiator_depth = 16;
	ev->ev.param.conn.flow_control = 1;
	ev->ev.param.conn.retry_count = 7;
	ev->ev.param.conn.rnr_retry_count = 7;

	fake_id *listener = nullptr;
	for (auto &o : s.live) {
		if (o.second == kind::id && as<fake_id>(o.first)->channel == ch &&
		    as<fake_id>(o.first)->listening)
			listener = as<fake_id>(o.first);
	}
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ev->ev.listen_id = listener ? &listener->id : nullptr;
		if (!id) {
			fake_id *nid =
			    rpma::verbs::new_id(ch, listener ? listener->id.context : nullptr);
			nid->pending = true;
			rpma::verbs::attach_device(&nid->id);
			nid->id.route.num_paths = 1;
			if (listener)
				nid->id.route.addr.src_storage =
				    listener->id.route.addr.src_storage;
			auto *peer =
			    reinterpret_cast<sockaddr_in *>(&nid->id.route.addr.dst_storage);
			peer->sin_family = AF_INET;
			peer->sin_addr.s_addr = htonl(0xc0a80102); /* 192.168.1.2 */
			peer->sin_port = htons(40000);
			s.pending_ids[nid] = true;
			ev->new_id = nid;
			s.last_id = &nid->id;
			id = &nid->id;
		}
	}
	ev->ev.id = id;
	ev->id = id ? as<fake_id>(id) : nullptr;
	if (type == RDMA_CM_EVENT_REJECTED)
		ev->ev.status = 28; /* IB_CM_REJ_CONSUMER_DEFINED */
	ch->events.push_back(ev);
	eventfd_signal(ch->ch.fd);
	s.last_pushed = ev;
}

const void *fake_verbs_last_conn_pdata(uint8_t *len)
{
	state &s = st();
	guard g(s.lock);
	if (len)
		*len = s.conn_pdata_len;
	return s.conn_pdata_set && s.conn_pdata_len ? s.conn_pdata : nullptr;
}

struct rdma_cm_id *fake_verbs_last_id(void)
{
	guard g(st().lock);
	return st().last_id;
}

unsigned fake_verbs_misuse(void)
{
	guard g(st().lock);
	return st().misuse;
}

const char *fake_verbs_last_misuse(void)
{
	guard g(st().lock);
	return st().last_misuse.c_str();
}

unsigned fake_verbs_reg_mrs(void)
{
	guard g(st().lock);
	return (unsigned)st().reg_mrs.size();
}

const struct fake_reg_mr_record *fake_verbs_reg_mr(unsigned index)
{
	guard g(st().lock);
	return index < st().reg_mrs.size() ? &st().reg_mrs[index] : nullptr;
}

unsigned fake_verbs_advises(void)
{
	guard g(st().lock);
	return (unsigned)st().advises.size();
}

const struct fake_advise_record *fake_verbs_advise(unsigned index)
{
	guard g(st().lock);
	return index < st().advises.size() ? &st().advises[index] : nullptr;
}

const struct ibv_qp_init_attr_ex *fake_verbs_qp_init_attr(struct ibv_qp *qp)
{
	guard g(st().lock);
	auto it = st().live.find(qp);
	if (it == st().live.end() || it->second != kind::qp)
		return nullptr;
	return &as<fake_qp>(qp)->attr;
}

const struct ibv_srq_init_attr *fake_verbs_srq_init_attr(struct ibv_srq *srq)
{
	guard g(st().lock);
	auto it = st().live.find(srq);
	if (it == st().live.end() || it->second != kind::srq)
		return nullptr;
	return &as<fake_srq>(srq)->attr;
}

const struct rdma_conn_param *fake_verbs_last_conn_param(void)
{
	guard g(st().lock);
	return st().conn_param_set ? &st().conn_param : nullptr;
}

int fake_verbs_last_timeout(enum fake_call call)
{
	guard g(st().lock);
	if (call == FAKE_RESOLVE_ADDR)
		return st().timeout_resolve_addr;
	if (call == FAKE_RESOLVE_ROUTE)
		return st().timeout_resolve_route;
	return -1;
}

int fake_verbs_last_backlog(void)
{
	guard g(st().lock);
	return st().backlog;
}

const char *fake_verbs_last_getaddrinfo_node(void)
{
	guard g(st().lock);
	return st().gai_node_set ? st().gai_node.c_str() : nullptr;
}

const char *fake_verbs_last_getaddrinfo_service(void)
{
	guard g(st().lock);
	return st().gai_service_set ? st().gai_service.c_str() : nullptr;
}

int fake_verbs_last_getaddrinfo_flags(void)
{
	guard g(st().lock);
	return st().gai_flags;
}

struct rdma_cm_event *fake_verbs_last_pushed_cm_event(void)
{
	guard g(st().lock);
	return st().last_pushed ? &st().last_pushed->ev : nullptr;
}

unsigned fake_verbs_cm_events_queued(struct rdma_event_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	auto it = s.live.find(channel);
	if (it != s.live.end() && it->second == kind::event_channel)
		return (unsigned)channel_of(channel)->events.size();
	for (auto &o : s.live)
		if (o.second == kind::id && as<fake_id>(o.first)->channel &&
		    &as<fake_id>(o.first)->channel->ch == channel)
			return (unsigned)as<fake_id>(o.first)->channel->events.size();
	return 0;
}

unsigned fake_verbs_cq_events_queued(struct ibv_comp_channel *channel)
{
	guard g(st().lock);
	auto it = st().live.find(channel);
	if (it == st().live.end() || it->second != kind::comp_channel)
		return 0;
	return (unsigned)as<fake_comp_channel>(channel)->events.size();
}

unsigned fake_verbs_wcs_queued(struct ibv_cq *cq)
{
	guard g(st().lock);
	auto it = st().live.find(cq);
	if (it == st().live.end() || it->second != kind::cq)
		return 0;
	return (unsigned)as<fake_cq>(cq)->wcs.size();
}

bool fake_verbs_id_live(struct rdma_cm_id *id)
{
	guard g(st().lock);
	auto it = st().live.find(id);
	return it != st().live.end() && it->second == kind::id;
}

bool fake_verbs_id_listening(struct rdma_cm_id *id)
{
	guard g(st().lock);
	if (!fake_verbs_id_live(id))
		return false;
	return as<fake_id>(id)->listening;
}

unsigned fake_verbs_id_calls(struct rdma_cm_id *id, enum fake_call call)
{
	guard g(st().lock);
	if ((unsigned)call >= FAKE_CALL_MAX)
		return 0;
	auto it = st().id_calls.find(id);
	return it == st().id_calls.end() ? 0 : it->second.calls[call];
}

} /* extern "C" */
