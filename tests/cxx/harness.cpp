/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.cpp -- the TAP runner and the tracker of librpma objects
 *
 * The tracker's __wrap_* functions stand in for the librpma constructors
 * and destructors (the test is linked with -Wl,--wrap=...); each calls the
 * library through __real_*. Calls the library makes to itself while inside
 * one of them (rpma_conn_req_connect cleaning up with rpma_conn_delete, ...)
 * pass straight through: only what the test program does is tracked.
 */

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include <librpma.h>

#include "fake_verbs.h"
#include "harness.hpp"

/* ------------------------------------------------------------------ tracker */

namespace tracker
{
namespace
{

struct state {
	std::map<const void *, kind> objects;
	unsigned deletes[K_COUNT];
	unsigned null_deletes[K_COUNT];
	const void *last_deleted;
	unsigned violations;
	std::string last_violation;
};

state &st()
{
	static state s;
	return s;
}

/* > 0 while the library runs on behalf of a tracked call */
thread_local int depth;

void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void violation(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	st().violations++;
	st().last_violation = buf;
	std::printf("# tracker: %s\n", buf);
}

void created(const void *p, kind k)
{
	if (p == nullptr) {
		violation("%s constructor succeeded without an object", kind_name(k));
		return;
	}
	auto it = st().objects.find(p);
	if (it != st().objects.end())
		violation("%s %p created while still alive", kind_name(k), p);
	st().objects[p] = k;
}

/* the object a destructor is about to get: false when it must not */
bool deleting(const void *p, kind k)
{
	if (p == nullptr) {
		st().null_deletes[k]++;
		return true;
	}
	auto it = st().objects.find(p);
	if (it == st().objects.end()) {
		violation("%s %p deleted but not alive (deleted twice?)", kind_name(k), p);
		return false;
	}
	if (it->second != k) {
		violation("%p is a %s, deleted as a %s", p, kind_name(it->second), kind_name(k));
		return false;
	}
	st().deletes[k]++;
	st().last_deleted = p;
	return true;
}

void gone(const void *p)
{
	st().objects.erase(p);
}

/* calls the library with depth raised */
template <class F> int inside(F &&call)
{
	depth++;
	int ret = call();
	depth--;
	return ret;
}

template <class T, class F> int tracked_new(kind k, T **out, F &&call)
{
	if (depth > 0)
		return call();
	int ret = inside(call);
	if (ret == 0 && out != nullptr)
		created(*out, k);
	return ret;
}

template <class T> int tracked_delete(kind k, int (*real)(T **), T **ptr)
{
	if (depth > 0 || ptr == nullptr)
		return real(ptr);
	T *before = *ptr;
	if (!deleting(before, k))
		return RPMA_E_INVAL;
	int ret = inside([&] { return real(ptr); });
	if (before != nullptr && *ptr != before)
		gone(before);
	return ret;
}

} /* namespace */

const char *kind_name(kind k)
{
	static const char *const names[K_COUNT] = { "peer",	"peer_cfg", "mr_local", "mr_remote",
						    "conn_cfg", "conn_req", "conn",	"ep",
						    "srq",	"srq_cfg" };
	return k >= 0 && k < K_COUNT ? names[k] : "?";
}

void reset()
{
	state &s = st();
	s.objects.clear();
	std::memset(s.deletes, 0, sizeof(s.deletes));
	std::memset(s.null_deletes, 0, sizeof(s.null_deletes));
	s.last_deleted = nullptr;
	s.violations = 0;
	s.last_violation.clear();
}

int live()
{
	return static_cast<int>(st().objects.size());
}

int live(kind k)
{
	int n = 0;
	for (const auto &o : st().objects)
		n += o.second == k;
	return n;
}

bool is_live(const void *p)
{
	return st().objects.count(p) != 0;
}

unsigned deletes(kind k)
{
	return st().deletes[k];
}

unsigned null_deletes(kind k)
{
	return st().null_deletes[k];
}

const void *last_deleted()
{
	return st().last_deleted;
}

unsigned violations()
{
	return st().violations;
}

const char *last_violation()
{
	return st().last_violation.c_str();
}

} /* namespace tracker */

/* ------------------------------------------------------------------- wraps */

using tracker::tracked_delete;
using tracker::tracked_new;

extern "C" {

int __real_rpma_peer_new(ibv_context *, rpma_peer **);
int __real_rpma_peer_delete(rpma_peer **);
int __real_rpma_peer_cfg_new(rpma_peer_cfg **);
int __real_rpma_peer_cfg_from_descriptor(const void *, size_t, rpma_peer_cfg **);
int __real_rpma_peer_cfg_delete(rpma_peer_cfg **);
int __real_rpma_mr_reg(rpma_peer *, void *, size_t, int, rpma_mr_local **);
int __real_rpma_mr_dereg(rpma_mr_local **);
int __real_rpma_mr_remote_from_descriptor(const void *, size_t, rpma_mr_remote **);
int __real_rpma_mr_remote_delete(rpma_mr_remote **);
int __real_rpma_conn_cfg_new(rpma_conn_cfg **);
int __real_rpma_conn_cfg_delete(rpma_conn_cfg **);
int __real_rpma_conn_req_new(rpma_peer *, const char *, const char *, const rpma_conn_cfg *,
			     rpma_conn_req **);
int __real_rpma_conn_req_delete(rpma_conn_req **);
int __real_rpma_conn_req_connect(rpma_conn_req **, const rpma_conn_private_data *, rpma_conn **);
int __real_rpma_conn_req_reject(rpma_conn_req **, const rpma_conn_private_data *);
int __real_rpma_conn_delete(rpma_conn **);
int __real_rpma_ep_listen(rpma_peer *, const char *, const char *, rpma_ep **);
int __real_rpma_ep_next_conn_req(rpma_ep *, const rpma_conn_cfg *, rpma_conn_req **);
int __real_rpma_ep_shutdown(rpma_ep **);
int __real_rpma_srq_cfg_new(rpma_srq_cfg **);
int __real_rpma_srq_cfg_delete(rpma_srq_cfg **);
int __real_rpma_srq_new(rpma_peer *, rpma_srq_cfg *, rpma_srq **);
int __real_rpma_srq_delete(rpma_srq **);

int __wrap_rpma_peer_new(ibv_context *ctx, rpma_peer **ptr);
int __wrap_rpma_peer_delete(rpma_peer **ptr);
int __wrap_rpma_peer_cfg_new(rpma_peer_cfg **ptr);
int __wrap_rpma_peer_cfg_from_descriptor(const void *desc, size_t size, rpma_peer_cfg **ptr);
int __wrap_rpma_peer_cfg_delete(rpma_peer_cfg **ptr);
int __wrap_rpma_mr_reg(rpma_peer *peer, void *p, size_t size, int usage, rpma_mr_local **ptr);
int __wrap_rpma_mr_dereg(rpma_mr_local **ptr);
int __wrap_rpma_mr_remote_from_descriptor(const void *desc, size_t size, rpma_mr_remote **ptr);
int __wrap_rpma_mr_remote_delete(rpma_mr_remote **ptr);
int __wrap_rpma_conn_cfg_new(rpma_conn_cfg **ptr);
int __wrap_rpma_conn_cfg_delete(rpma_conn_cfg **ptr);
int __wrap_rpma_conn_req_new(rpma_peer *peer, const char *addr, const char *port,
			     const rpma_conn_cfg *cfg, rpma_conn_req **ptr);
int __wrap_rpma_conn_req_delete(rpma_conn_req **ptr);
int __wrap_rpma_conn_req_connect(rpma_conn_req **req_ptr, const rpma_conn_private_data *pdata,
				 rpma_conn **conn_ptr);
int __wrap_rpma_conn_req_reject(rpma_conn_req **req_ptr, const rpma_conn_private_data *pdata);
int __wrap_rpma_conn_delete(rpma_conn **ptr);
int __wrap_rpma_ep_listen(rpma_peer *peer, const char *addr, const char *port, rpma_ep **ptr);
int __wrap_rpma_ep_next_conn_req(rpma_ep *ep, const rpma_conn_cfg *cfg, rpma_conn_req **ptr);
int __wrap_rpma_ep_shutdown(rpma_ep **ptr);
int __wrap_rpma_srq_cfg_new(rpma_srq_cfg **ptr);
int __wrap_rpma_srq_cfg_delete(rpma_srq_cfg **ptr);
int __wrap_rpma_srq_new(rpma_peer *peer, rpma_srq_cfg *cfg, rpma_srq **ptr);
int __wrap_rpma_srq_delete(rpma_srq **ptr);

int __wrap_rpma_peer_new(ibv_context *ctx, rpma_peer **ptr)
{
	return tracked_new(tracker::K_PEER, ptr, [&] { return __real_rpma_peer_new(ctx, ptr); });
}

int __wrap_rpma_peer_delete(rpma_peer **ptr)
{
	return tracked_delete(tracker::K_PEER, __real_rpma_peer_delete, ptr);
}

int __wrap_rpma_peer_cfg_new(rpma_peer_cfg **ptr)
{
	return tracked_new(tracker::K_PEER_CFG, ptr, [&] { return __real_rpma_peer_cfg_new(ptr); });
}

int __wrap_rpma_peer_cfg_from_descriptor(const void *desc, size_t size, rpma_peer_cfg **ptr)
{
	return tracked_new(tracker::K_PEER_CFG, ptr,
			   [&] { return __real_rpma_peer_cfg_from_descriptor(desc, size, ptr); });
}

int __wrap_rpma_peer_cfg_delete(rpma_peer_cfg **ptr)
{
	return tracked_delete(tracker::K_PEER_CFG, __real_rpma_peer_cfg_delete, ptr);
}

int __wrap_rpma_mr_reg(rpma_peer *peer, void *p, size_t size, int usage, rpma_mr_local **ptr)
{
	return tracked_new(tracker::K_MR_LOCAL, ptr,
			   [&] { return __real_rpma_mr_reg(peer, p, size, usage, ptr); });
}

int __wrap_rpma_mr_dereg(rpma_mr_local **ptr)
{
	return tracked_delete(tracker::K_MR_LOCAL, __real_rpma_mr_dereg, ptr);
}

int __wrap_rpma_mr_remote_from_descriptor(const void *desc, size_t size, rpma_mr_remote **ptr)
{
	return tracked_new(tracker::K_MR_REMOTE, ptr,
			   [&] { return __real_rpma_mr_remote_from_descriptor(desc, size, ptr); });
}

int __wrap_rpma_mr_remote_delete(rpma_mr_remote **ptr)
{
	return tracked_delete(tracker::K_MR_REMOTE, __real_rpma_mr_remote_delete, ptr);
}

int __wrap_rpma_conn_cfg_new(rpma_conn_cfg **ptr)
{
	return tracked_new(tracker::K_CONN_CFG, ptr, [&] { return __real_rpma_conn_cfg_new(ptr); });
}

int __wrap_rpma_conn_cfg_delete(rpma_conn_cfg **ptr)
{
	return tracked_delete(tracker::K_CONN_CFG, __real_rpma_conn_cfg_delete, ptr);
}

int __wrap_rpma_conn_req_new(rpma_peer *peer, const char *addr, const char *port,
			     const rpma_conn_cfg *cfg, rpma_conn_req **ptr)
{
	return tracked_new(tracker::K_CONN_REQ, ptr,
			   [&] { return __real_rpma_conn_req_new(peer, addr, port, cfg, ptr); });
}

int __wrap_rpma_conn_req_delete(rpma_conn_req **ptr)
{
	return tracked_delete(tracker::K_CONN_REQ, __real_rpma_conn_req_delete, ptr);
}

/* consumes the request (whatever happens, once past the argument checks) */
int __wrap_rpma_conn_req_connect(rpma_conn_req **req_ptr, const rpma_conn_private_data *pdata,
				 rpma_conn **conn_ptr)
{
	if (tracker::depth > 0)
		return __real_rpma_conn_req_connect(req_ptr, pdata, conn_ptr);
	rpma_conn_req *req = req_ptr != nullptr ? *req_ptr : nullptr;
	if (req != nullptr && !tracker::is_live(req)) {
		tracker::violation("conn_req %p connected but not alive", static_cast<void *>(req));
		return RPMA_E_INVAL;
	}
	int ret =
	    tracker::inside([&] { return __real_rpma_conn_req_connect(req_ptr, pdata, conn_ptr); });
	if (req != nullptr && *req_ptr != req)
		tracker::gone(req);
	if (ret == 0 && conn_ptr != nullptr)
		tracker::created(*conn_ptr, tracker::K_CONN);
	return ret;
}

/* consumes the request once past the argument checks, as connect does */
int __wrap_rpma_conn_req_reject(rpma_conn_req **req_ptr, const rpma_conn_private_data *pdata)
{
	if (tracker::depth > 0)
		return __real_rpma_conn_req_reject(req_ptr, pdata);
	rpma_conn_req *req = req_ptr != nullptr ? *req_ptr : nullptr;
	if (req != nullptr && !tracker::is_live(req)) {
		tracker::violation("conn_req %p rejected but not alive", static_cast<void *>(req));
		return RPMA_E_INVAL;
	}
	int ret = tracker::inside([&] { return __real_rpma_conn_req_reject(req_ptr, pdata); });
	if (req != nullptr && *req_ptr != req)
		tracker::gone(req);
	return ret;
}

int __wrap_rpma_conn_delete(rpma_conn **ptr)
{
	return tracked_delete(tracker::K_CONN, __real_rpma_conn_delete, ptr);
}

int __wrap_rpma_ep_listen(rpma_peer *peer, const char *addr, const char *port, rpma_ep **ptr)
{
	return tracked_new(tracker::K_EP, ptr,
			   [&] { return __real_rpma_ep_listen(peer, addr, port, ptr); });
}

int __wrap_rpma_ep_next_conn_req(rpma_ep *ep, const rpma_conn_cfg *cfg, rpma_conn_req **ptr)
{
	return tracked_new(tracker::K_CONN_REQ, ptr,
			   [&] { return __real_rpma_ep_next_conn_req(ep, cfg, ptr); });
}

int __wrap_rpma_ep_shutdown(rpma_ep **ptr)
{
	return tracked_delete(tracker::K_EP, __real_rpma_ep_shutdown, ptr);
}

int __wrap_rpma_srq_cfg_new(rpma_srq_cfg **ptr)
{
	return tracked_new(tracker::K_SRQ_CFG, ptr, [&] { return __real_rpma_srq_cfg_new(ptr); });
}

int __wrap_rpma_srq_cfg_delete(rpma_srq_cfg **ptr)
{
	return tracked_delete(tracker::K_SRQ_CFG, __real_rpma_srq_cfg_delete, ptr);
}

int __wrap_rpma_srq_new(rpma_peer *peer, rpma_srq_cfg *cfg, rpma_srq **ptr)
{
	return tracked_new(tracker::K_SRQ, ptr,
			   [&] { return __real_rpma_srq_new(peer, cfg, ptr); });
}

int __wrap_rpma_srq_delete(rpma_srq **ptr)
{
	return tracked_delete(tracker::K_SRQ, __real_rpma_srq_delete, ptr);
}

} /* extern "C" */

/* ------------------------------------------------------------------ runner */

namespace harness
{
namespace
{

int case_failures;

void quiet_log(rpma_log_level level, const char *file_name, const int line_no,
	       const char *function_name, const char *message_format, ...)
{
	if (std::getenv("RPMA_CXX_TEST_LOG") == nullptr)
		return;
	std::printf("# log %d %s:%d %s(): ", static_cast<int>(level), file_name, line_no,
		    function_name);
	va_list ap;
	va_start(ap, message_format);
	/* the format ends with its own newline, as librpma 1.x's did */
	std::vprintf(message_format, ap);
	va_end(ap);
}

/* what must hold after every case */
void check_nothing_left()
{
	if (tracker::live() != 0) {
		for (int k = 0; k < tracker::K_COUNT; k++)
			if (tracker::live(static_cast<tracker::kind>(k)) != 0)
				std::printf("# %d %s object(s) never deleted\n",
					    tracker::live(static_cast<tracker::kind>(k)),
					    tracker::kind_name(static_cast<tracker::kind>(k)));
		check_failed(__FILE__, __LINE__, "every librpma object was deleted");
	}
	if (tracker::violations() != 0)
		check_failed(__FILE__, __LINE__, "no object was deleted twice");
	if (fake_verbs_live_objects() != 0) {
		std::printf("# %d rdma-core object(s) left in the fake\n",
			    fake_verbs_live_objects());
		check_failed(__FILE__, __LINE__, "fake_verbs_live_objects() == 0");
	}
	if (fake_verbs_misuse() != 0) {
		std::printf("# misuse of rdma-core: %s\n", fake_verbs_last_misuse());
		check_failed(__FILE__, __LINE__, "fake_verbs_misuse() == 0");
	}
}

} /* namespace */

void check_failed(const char *file, int line, const char *what)
{
	case_failures++;
	std::printf("# %s:%d: check failed: %s\n", file, line, what);
}

int failures()
{
	return case_failures;
}

int run(const test_case *cases, std::size_t count)
{
	/* TAP lines must not interleave with buffered output of a forked child */
	std::setvbuf(stdout, nullptr, _IONBF, 0);
	std::printf("1..%zu\n", count);
	int failed = 0;
	for (std::size_t i = 0; i < count; i++) {
		fake_verbs_reset();
		tracker::reset();
		case_failures = 0;
		if (rpma_log_set_function(quiet_log) != 0)
			check_failed(__FILE__, __LINE__, "rpma_log_set_function");

		cases[i].run();
		check_nothing_left();

		std::printf("%s %zu - %s\n", case_failures == 0 ? "ok" : "not ok", i + 1,
			    cases[i].name);
		failed += case_failures != 0;
	}
	fake_verbs_reset();
	return failed == 0 ? 0 : 1;
}

} /* namespace harness */
