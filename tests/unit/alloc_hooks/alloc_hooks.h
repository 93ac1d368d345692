/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * alloc_hooks.h -- the library's own allocations, counted and failed on demand
 *
 * The unit tests link a copy of the library's objects in which every
 * reference to an allocation function (malloc, calloc, realloc,
 * posix_memalign, strdup, their frees, ...: the list is alloc_hooks.syms;
 * the library makes its C++ objects with malloc and posix_memalign too,
 * src/runtime.hpp) was renamed by objcopy to a hook of alloc_hooks.cpp.
 * The hooks pass every call on to the real function (so that ASan,
 * LeakSanitizer and TSan still see every block) and keep count; nothing
 * else in the test binaries is affected: the fake rdma-core, cmocka and
 * libc allocate as usual.
 *
 * Armed, the hooks count the allocations the library attempts, and can make
 * one of them fail (NULL, or -1 for asprintf). Arm them only around the call
 * under test.
 */

#ifndef ALLOC_HOOKS_H
#define ALLOC_HOOKS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* From now on, count the library's allocation attempts; none fails. */
void ut_alloc_count(void);

/* From now on, count them and fail the nth (1 = the very next one). */
void ut_alloc_fail_nth(unsigned nth);

/* Stop counting; returns the attempts made since arming. */
unsigned ut_alloc_disarm(void);

/* Whether the failure asked for by ut_alloc_fail_nth() was injected. */
bool ut_alloc_failed(void);

/* Blocks the library allocated and has not freed yet. */
unsigned long ut_alloc_live(void);

/* Allocation attempts of the library since the program started, armed or not. */
unsigned long ut_alloc_attempts(void);

#ifdef __cplusplus
}
#endif

#endif /* ALLOC_HOOKS_H */
