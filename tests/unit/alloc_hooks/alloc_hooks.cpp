// SPDX-License-Identifier: BSD-3-Clause
/*
 * alloc_hooks.cpp -- the hooks the library's allocation calls are renamed to
 * (see alloc_hooks.h and alloc_hooks.syms)
 *
 * Each hook asks allocation_allowed() first: disarmed, or armed to count,
 * it lets the call through to the real function; armed to fail, the nth
 * attempt gets what the real function returns when memory is exhausted. The
 * blocks handed out are remembered until the library frees them, so that a
 * block a failing call forgot shows as a live one. Calls from several
 * threads are serialized by one mutex.
 */

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>
#include <unordered_set>

#include "alloc_hooks.h"

namespace
{

struct hooks_state {
	std::mutex lock;
	bool armed = false;
	unsigned fail_at = 0; /* 0: count only */
	unsigned attempts = 0;
	bool failed = false;
	unsigned long total = 0;
	std::unordered_set<uintptr_t> live; /* as numbers: a freed block is only a key */
};

hooks_state &st()
{
	/* never destroyed: the library may free blocks while the program exits */
	static auto *s = new hooks_state;
	return *s;
}

/* One more attempt: may it succeed? */
bool allocation_allowed()
{
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	s.total++;
	if (!s.armed)
		return true;
	s.attempts++;
	if (s.fail_at != 0 && s.attempts == s.fail_at) {
		s.failed = true;
		return false;
	}
	return true;
}

void *remember(void *p)
{
	if (p != nullptr) {
		hooks_state &s = st();
		std::lock_guard<std::mutex> g(s.lock);
		s.live.insert(reinterpret_cast<uintptr_t>(p));
	}
	return p;
}

void forget(uintptr_t p)
{
	if (p == 0)
		return;
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	s.live.erase(p);
}

void forget(void *p)
{
	forget(reinterpret_cast<uintptr_t>(p));
}

} /* namespace */

extern "C" {

void ut_alloc_count(void)
{
	ut_alloc_fail_nth(0);
}

void ut_alloc_fail_nth(unsigned nth)
{
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	s.armed = true;
	s.fail_at = nth;
	s.attempts = 0;
	s.failed = false;
}

unsigned ut_alloc_disarm(void)
{
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	s.armed = false;
	s.fail_at = 0;
	return s.attempts;
}

bool ut_alloc_failed(void)
{
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	return s.failed;
}

unsigned long ut_alloc_live(void)
{
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	return s.live.size();
}

unsigned long ut_alloc_attempts(void)
{
	hooks_state &s = st();
	std::lock_guard<std::mutex> g(s.lock);
	return s.total;
}

/* C */

void *ut_lib_malloc(size_t size)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	return remember(malloc(size));
}

void *ut_lib_calloc(size_t n, size_t size)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	return remember(calloc(n, size));
}

void *ut_lib_realloc(void *p, size_t size)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr; /* p stays as it was */
	}
	/* volatile: the old block is only a key once reallocated */
	volatile uintptr_t old = reinterpret_cast<uintptr_t>(p);
	void *q = realloc(p, size);
	if (q != nullptr || size == 0)
		forget(old);
	return remember(q);
}

void *ut_lib_reallocarray(void *p, size_t n, size_t size)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	volatile uintptr_t old = reinterpret_cast<uintptr_t>(p);
	void *q = reallocarray(p, n, size);
	if (q != nullptr)
		forget(old);
	return remember(q);
}

void ut_lib_free(void *p)
{
	forget(p);
	free(p);
}

int ut_lib_posix_memalign(void **p, size_t alignment, size_t size)
{
	if (!allocation_allowed())
		return ENOMEM;
	int ret = posix_memalign(p, alignment, size);
	if (ret == 0)
		remember(*p);
	return ret;
}

void *ut_lib_aligned_alloc(size_t alignment, size_t size)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	return remember(aligned_alloc(alignment, size));
}

void *ut_lib_memalign(size_t alignment, size_t size)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	return remember(memalign(alignment, size));
}

char *ut_lib_strdup(const char *s)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	return static_cast<char *>(remember(strdup(s)));
}

char *ut_lib_strndup(const char *s, size_t n)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return nullptr;
	}
	return static_cast<char *>(remember(strndup(s, n)));
}

int ut_lib_vasprintf(char **out, const char *fmt, va_list ap)
{
	if (!allocation_allowed()) {
		errno = ENOMEM;
		return -1;
	}
	int ret = vasprintf(out, fmt, ap);
	if (ret >= 0)
		remember(*out);
	return ret;
}

int ut_lib_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = ut_lib_vasprintf(out, fmt, ap);
	va_end(ap);
	return ret;
}

} /* extern "C" */
