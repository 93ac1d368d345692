/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * unit_common.h -- what the unit tests of the non-connection objects share
 *
 * Every test starts from a fresh fake rdma-core and a quiet, capturing log
 * function (every message is still formatted, so a bad format argument
 * shows), and ends by checking that rdma-core was not misused.
 */

#ifndef UNIT_COMMON_H
#define UNIT_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include <librpma.h>

#include "fake_verbs.h"

/* What an out-pointer holds before a call that must not write it. */
#define UT_POISON      ((void *)(uintptr_t)0x7e577e57UL)
#define UT_POISON_U32  0xdeadbeefU
#define UT_POISON_SIZE ((size_t)0x5a5a5a5a5a5aULL)

#define UT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* the messages the library logged since the last ut_log_clear() */
static unsigned ut_log_count __attribute__((unused));
static enum rpma_log_level ut_log_last_level __attribute__((unused));
static char ut_log_last_message[1024] __attribute__((unused));
static char ut_log_last_function[128] __attribute__((unused));
/* bit (1 << level) for every level seen */
static unsigned ut_log_levels_seen __attribute__((unused));

static inline void ut_log_clear(void)
{
	ut_log_count = 0;
	ut_log_last_level = RPMA_LOG_DISABLED;
	ut_log_last_message[0] = '\0';
	ut_log_last_function[0] = '\0';
	ut_log_levels_seen = 0;
}

static void ut_log_capture(enum rpma_log_level level, const char *file_name, const int line_no,
			   const char *function_name, const char *message_format, ...)
    __attribute__((format(printf, 5, 6)));

static void ut_log_capture(enum rpma_log_level level, const char *file_name, const int line_no,
			   const char *function_name, const char *message_format, ...)
{
	(void)file_name;
	(void)line_no;
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(ut_log_last_message, sizeof(ut_log_last_message), message_format, ap);
	va_end(ap);
	snprintf(ut_log_last_function, sizeof(ut_log_last_function), "%s",
		 function_name ? function_name : "");
	ut_log_last_level = level;
	if (level >= 0 && level < 31)
		ut_log_levels_seen |= 1u << level;
	ut_log_count++;
}

/* cmocka setup: a fresh fake, every message formatted and captured */
static inline int ut_setup(void **state)
{
	(void)state;
	fake_verbs_reset();
	ut_log_clear();
	rpma_log_set_function(ut_log_capture);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	return 0;
}

/* cmocka teardown: rdma-core must not have been misused */
static inline int ut_teardown(void **state)
{
	(void)state;
	unsigned misuse = fake_verbs_misuse();
	if (misuse)
		fail_msg("rdma-core misused %u time(s), last: %s", misuse,
			 fake_verbs_last_misuse());
	fake_verbs_reset();
	return 0;
}

#define UT_TEST(f) cmocka_unit_test_setup_teardown(f, ut_setup, ut_teardown)

#endif /* UNIT_COMMON_H */
