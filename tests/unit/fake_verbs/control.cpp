// SPDX-License-Identifier: BSD-3-Clause
/*
 * control.cpp -- the state of the fake: the calls it counts and fails on
 * demand, misuse, the objects it handed out, and the reset
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/eventfd.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace fake;

namespace
{

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

} /* namespace */

namespace fake
{

state &st()
{
	static state s;
	return s;
}

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

/* the calls of this thread: fake_verbs_thread_calls() */
thread_local unsigned thread_calls[FAKE_CALL_MAX];

int enter(fake_call call)
{
	state &s = st();
	unsigned n = ++s.calls[call];
	thread_calls[call]++;
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

int fail_ret(int err) /* ibv_* calls returning the errno (-1 when there is none) */
{
	errno = err;
	return err ? err : -1;
}

int fail_minus1(int err) /* rdma_* calls returning -1 */
{
	errno = err;
	return -1;
}

int new_eventfd(int flags)
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

void reset_locked()
{
	state &s = st();
	negative_post_errors = false;
	send_fail_index = -1;
	before_post_send = nullptr;

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
	s.odp_rc_caps = 0;
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
	s.ack_timeout = -1;
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
	s.next_peer_qp_num = FAKE_FIRST_PEER_QP_NUM;
	s.next_handle = 1;
	setup_device();
}

} /* namespace fake */

/*
 * The control interface
 */

extern "C" {

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

unsigned fake_verbs_thread_calls(enum fake_call call)
{
	return (unsigned)call < FAKE_CALL_MAX ? thread_calls[call] : 0;
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

} /* extern "C" */
