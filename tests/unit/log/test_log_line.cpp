// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_log_line.cpp -- the exact line the default log function sends to
 * syslog, as librpma 1.x wrote it: "<tag> <file>: <line>: <function>: <msg>"
 * with the level tags padded to one width, the file's base name, and the
 * line number padded to three places ("%3d"), whatever line it is
 *
 * The library's own messages come from lines of its sources that move with
 * every edit; the default function is called here directly, with the line
 * numbers the test chooses.
 */

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <csetjmp>

extern "C" {
#include <cmocka.h>
}

#include <librpma.h>

#include "log.hpp"

/*
 * The system logger, as the library sees it: these definitions take the
 * place of the C library's in this program (nothing reaches the host's
 * log). <syslog.h> is not included, so that nothing redirects them.
 */
namespace
{
unsigned syslog_calls;
char syslog_message[1024];
} /* namespace */

extern "C" {

void openlog(const char *ident, int option, int facility);
void vsyslog(int priority, const char *format, va_list ap);
void syslog(int priority, const char *format, ...);
void __syslog_chk(int priority, int flag, const char *format, ...);

void openlog(const char *ident, int option, int facility)
{
	(void)ident;
	(void)option;
	(void)facility;
}

void vsyslog(int priority, const char *format, va_list ap)
{
	(void)priority;
	syslog_calls++;
	vsnprintf(syslog_message, sizeof(syslog_message), format, ap);
}

void syslog(int priority, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	vsyslog(priority, format, ap);
	va_end(ap);
}

/* what a fortified build calls instead of syslog() */
void __syslog_chk(int priority, int flag, const char *format, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, format);
	vsyslog(priority, format, ap);
	va_end(ap);
}

} /* extern "C" */

namespace
{

/* the default function, as rpma_log_set_function(NULL) makes it the current one */
rpma_log_function *default_function()
{
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	return rpma::log::function.load();
}

int setup(void **)
{
	/* syslog only: nothing copied to stderr */
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	syslog_calls = 0;
	syslog_message[0] = '\0';
	return 0;
}

/* what one call of the default function sends to syslog */
const char *line_of(rpma_log_level level, const char *file, int line, const char *func,
		    const char *msg)
{
	rpma_log_function *fn = default_function();
	const unsigned before = syslog_calls;
	fn(level, file, line, func, "%s\n", msg);
	assert_int_equal(syslog_calls, before + 1);
	return syslog_message;
}

/* "%3d": short line numbers are padded, long ones are not cut */
void line_number_padded(void **)
{
	static const struct {
		int line;
		const char *expected;
	} cases[] = {
		{ 7, "*ERROR* conn.cpp:   7: rpma_conn_next_event: the message\n" },
		{ 42, "*ERROR* conn.cpp:  42: rpma_conn_next_event: the message\n" },
		{ 100, "*ERROR* conn.cpp: 100: rpma_conn_next_event: the message\n" },
		{ 1234, "*ERROR* conn.cpp: 1234: rpma_conn_next_event: the message\n" },
	};
	for (const auto &c : cases)
		assert_string_equal(line_of(RPMA_LOG_LEVEL_ERROR, "src/conn.cpp", c.line,
					    "rpma_conn_next_event", "the message"),
				    c.expected);
}

/* the tags of librpma 1.x, every one 8 characters wide */
void level_tags_one_width(void **)
{
	static const struct {
		rpma_log_level level;
		const char *expected;
	} cases[] = {
		{ RPMA_LOG_LEVEL_FATAL, "*FATAL* mr.cpp:   9: f: m\n" },
		{ RPMA_LOG_LEVEL_ERROR, "*ERROR* mr.cpp:   9: f: m\n" },
		{ RPMA_LOG_LEVEL_WARNING, "*WARN*  mr.cpp:   9: f: m\n" },
		{ RPMA_LOG_LEVEL_NOTICE, "*NOTE*  mr.cpp:   9: f: m\n" },
		{ RPMA_LOG_LEVEL_INFO, "*INFO*  mr.cpp:   9: f: m\n" },
		{ RPMA_LOG_LEVEL_DEBUG, "*DEBUG* mr.cpp:   9: f: m\n" },
	};
	for (const auto &c : cases)
		assert_string_equal(line_of(c.level, "/build/src/mr.cpp", 9, "f", "m"), c.expected);
}

/* no file: no file, line and function, only the tag and the message */
void no_file_no_place(void **)
{
	assert_string_equal(line_of(RPMA_LOG_LEVEL_WARNING, nullptr, 5, "f", "bare"),
			    "*WARN*  bare\n");
	/* a file without a directory is its own base name; no function, an empty one */
	assert_string_equal(line_of(RPMA_LOG_LEVEL_INFO, "peer.cpp", 12, nullptr, "x"),
			    "*INFO*  peer.cpp:  12: : x\n");
}

} /* namespace */

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(line_number_padded, setup),
		cmocka_unit_test_setup(level_tags_one_width, setup),
		cmocka_unit_test_setup(no_file_no_place, setup),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("log_line", tests, nullptr, nullptr);
}
