/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * harness.hpp -- a TAP harness for the rpma.hpp tests over the fake rdma-core
 *
 * Each case starts on a reset fake with nothing tracked. When it returns
 * (all its objects destroyed), the harness also checks that nothing is
 * left: no librpma object (tracker), no rdma-core object (fake), no double
 * delete and no misuse of rdma-core. One "ok"/"not ok" line per case.
 *
 * The tracker sees every librpma constructor and destructor call made by
 * the test program: the test is linked with -Wl,--wrap=<function> for each
 * of them (tracker.cpp, meson.build). A destructor called on an object that
 * is not alive (deleted already, or never created) is not passed on to the
 * library: it is counted as a violation, so a double free fails the case
 * instead of corrupting the heap.
 */

#ifndef RPMA_CXX_HARNESS_HPP
#define RPMA_CXX_HARNESS_HPP

#include <cstddef>

namespace tracker
{

enum kind {
	K_PEER,
	K_PEER_CFG,
	K_MR_LOCAL,
	K_MR_REMOTE,
	K_CONN_CFG,
	K_CONN_REQ,
	K_CONN,
	K_EP,
	K_SRQ,
	K_SRQ_CFG,
	K_COUNT
};

const char *kind_name(kind k);

void reset();
/* objects created and not deleted yet: all of them, or of one kind */
int live();
int live(kind k);
/* whether p is a live object */
bool is_live(const void *p);
/* calls of kind's destructor on a live object, since the reset */
unsigned deletes(kind k);
/* calls of kind's destructor with a NULL object (never needed by an owner) */
unsigned null_deletes(kind k);
/* the object of the last destructor call on a live object */
const void *last_deleted();
/* destructor calls on objects that were not alive: double deletes */
unsigned violations();
const char *last_violation();

} /* namespace tracker */

namespace harness
{

void check_failed(const char *file, int line, const char *what);
/* the number of failed checks in the current case so far */
int failures();

struct test_case {
	const char *name;
	void (*run)();
};

/* runs the cases, prints TAP; the exit status of the program */
int run(const test_case *cases, std::size_t count);

} /* namespace harness */

/* the case stops at the first failed CHECK; EXPECT goes on */
#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			harness::check_failed(__FILE__, __LINE__, #cond);                          \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define EXPECT(cond)                                                                               \
	do {                                                                                       \
		if (!(cond))                                                                       \
			harness::check_failed(__FILE__, __LINE__, #cond);                          \
	} while (0)

/* a case named after its function (in parentheses: clang-format takes the braces for a block) */
#define TEST_CASE(fn) (harness::test_case{ #fn, fn })

#endif /* RPMA_CXX_HARNESS_HPP */
