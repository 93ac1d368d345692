// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_log.c -- logging thresholds, the user's log function, the default one
 *
 * Messages are provoked through the public API: an invalid argument is
 * logged at ERROR (e.g. rpma_peer_cfg_new(NULL)), a new peer at INFO.
 */

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

#include "unit_common.h"

/*
 * The system logger, as the library sees it: these definitions take the
 * place of the C library's in this program, so that what the default log
 * function sends to syslog can be checked (and nothing reaches the host's
 * log).
 */
static unsigned openlog_calls;
static char openlog_ident[64];
static int openlog_option = -1;
static int openlog_facility = -1;
static unsigned syslog_calls;
static int syslog_priority = -1;
static char syslog_message[1024];

void openlog(const char *ident, int option, int facility)
{
	openlog_calls++;
	snprintf(openlog_ident, sizeof(openlog_ident), "%s", ident ? ident : "(null)");
	openlog_option = option;
	openlog_facility = facility;
}

void vsyslog(int priority, const char *format, va_list ap)
{
	syslog_calls++;
	syslog_priority = priority;
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
void __syslog_chk(int priority, int flag, const char *format, ...);
void __syslog_chk(int priority, int flag, const char *format, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, format);
	vsyslog(priority, format, ap);
	va_end(ap);
}

static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	int ret = regexec(&re, text, 0, NULL, 0);
	regfree(&re);
	if (ret != 0)
		print_message("# \"%s\" does not match /%s/\n", text, pattern);
	return ret == 0;
}

/* logs one ERROR message */
static void log_an_error(void)
{
	assert_int_equal(rpma_peer_cfg_new(NULL), RPMA_E_INVAL);
}

/* logs (at least) one INFO message and no ERROR */
static void log_an_info(void)
{
	struct rpma_peer *peer = NULL;
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &peer), 0);
	assert_int_equal(rpma_peer_delete(&peer), 0);
}

static enum rpma_log_level get_threshold(enum rpma_log_threshold t)
{
	enum rpma_log_level level = (enum rpma_log_level)12345;
	assert_int_equal(rpma_log_get_threshold(t, &level), 0);
	return level;
}

/*
 * stderr capture for the default function
 */
static int saved_stderr = -1;
static char stderr_path[64];

static void stderr_capture_begin(void)
{
	fflush(stderr);
	snprintf(stderr_path, sizeof(stderr_path), "/tmp/rpma-ut-log-XXXXXX");
	int fd = mkstemp(stderr_path);
	assert_true(fd >= 0);
	saved_stderr = dup(STDERR_FILENO);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* returns what was written to stderr since stderr_capture_begin */
static char *stderr_capture_end(void)
{
	static char buf[8192];
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	int fd = open(stderr_path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(stderr_path);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/*
 * The first tests run before anything changed the logging configuration.
 */

static void log_default_thresholds(void **state)
{
	(void)state;
	assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD), RPMA_LOG_LEVEL_WARNING);
#ifdef NDEBUG
	/* release builds: nothing on stderr unless asked for */
	assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD_AUX), RPMA_LOG_DISABLED);
#else
	/* a debug build may copy warnings to stderr, as librpma's did */
	enum rpma_log_level aux = get_threshold(RPMA_LOG_THRESHOLD_AUX);
	assert_true(aux == RPMA_LOG_DISABLED || aux == RPMA_LOG_LEVEL_WARNING);
#endif
}

/* the initial function is the default one: stderr when the aux threshold allows */
static void log_initial_function_is_default(void **state)
{
	(void)state;
	fake_verbs_reset();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR), 0);
	stderr_capture_begin();
	log_an_error();
	char *out = stderr_capture_end();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	assert_non_null(strstr(out, "invalid argument"));
}

static void log_level_values(void **state)
{
	(void)state;
	assert_int_equal(RPMA_LOG_DISABLED, -1);
	assert_int_equal(RPMA_LOG_LEVEL_FATAL, 0);
	assert_int_equal(RPMA_LOG_LEVEL_ERROR, 1);
	assert_int_equal(RPMA_LOG_LEVEL_WARNING, 2);
	assert_int_equal(RPMA_LOG_LEVEL_NOTICE, 3);
	assert_int_equal(RPMA_LOG_LEVEL_INFO, 4);
	assert_int_equal(RPMA_LOG_LEVEL_DEBUG, 5);
	assert_int_equal(RPMA_LOG_THRESHOLD, 0);
	assert_int_equal(RPMA_LOG_THRESHOLD_AUX, 1);
	assert_int_equal(RPMA_LOG_THRESHOLD_MAX, 2);
	assert_null(RPMA_LOG_USE_DEFAULT_FUNCTION);
}

/*
 * thresholds
 */

static void log_set_get_primary_every_level(void **state)
{
	(void)state;
	for (int l = RPMA_LOG_DISABLED; l <= RPMA_LOG_LEVEL_DEBUG; l++) {
		assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level)l),
				 0);
		assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD), l);
		/* the other threshold is not affected */
		assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD_AUX), RPMA_LOG_DISABLED);
	}
}

static void log_set_get_aux_every_level(void **state)
{
	(void)state;
	for (int l = RPMA_LOG_DISABLED; l <= RPMA_LOG_LEVEL_DEBUG; l++) {
		assert_int_equal(
		    rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, (enum rpma_log_level)l), 0);
		assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD_AUX), l);
		assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD), RPMA_LOG_LEVEL_DEBUG);
	}
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
}

static void log_set_bad_threshold(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL), 0);
	const int bad[] = { RPMA_LOG_THRESHOLD_MAX, -1, 3, 1000, -1000 };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++)
		assert_int_equal(
		    rpma_log_set_threshold((enum rpma_log_threshold)bad[i], RPMA_LOG_LEVEL_DEBUG),
		    RPMA_E_INVAL);
	assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD), RPMA_LOG_LEVEL_NOTICE);
	assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD_AUX), RPMA_LOG_LEVEL_FATAL);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
}

static void log_set_bad_level(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO), 0);
	const int bad[] = { -2, RPMA_LOG_LEVEL_DEBUG + 1, 100, -100, 0x7fffffff };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++) {
		assert_int_equal(
		    rpma_log_set_threshold(RPMA_LOG_THRESHOLD, (enum rpma_log_level)bad[i]),
		    RPMA_E_INVAL);
		assert_int_equal(
		    rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, (enum rpma_log_level)bad[i]),
		    RPMA_E_INVAL);
	}
	assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD), RPMA_LOG_LEVEL_INFO);
	assert_int_equal(get_threshold(RPMA_LOG_THRESHOLD_AUX), RPMA_LOG_DISABLED);
}

static void log_get_bad_threshold(void **state)
{
	(void)state;
	const int bad[] = { RPMA_LOG_THRESHOLD_MAX, -1, 77 };
	for (size_t i = 0; i < UT_ARRAY_SIZE(bad); i++) {
		enum rpma_log_level level = (enum rpma_log_level)4242;
		assert_int_equal(rpma_log_get_threshold((enum rpma_log_threshold)bad[i], &level),
				 RPMA_E_INVAL);
		assert_int_equal(level, 4242);
	}
}

static void log_get_null_level(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, NULL), RPMA_E_INVAL);
}

/*
 * the user's function
 */

static void log_user_function_gets_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	log_an_error();
	assert_int_equal(ut_log_count, 1);
	assert_int_equal(ut_log_last_level, RPMA_LOG_LEVEL_ERROR);
	assert_non_null(strstr(ut_log_last_message, "invalid argument"));
	/* it names the public function that failed */
	assert_string_equal(ut_log_last_function, "rpma_peer_cfg_new");
}

static int where_line;
static char where_file[256];

static void where_function(enum rpma_log_level level, const char *file_name, const int line_no,
			   const char *function_name, const char *message_format, ...)
{
	(void)level;
	(void)function_name;
	(void)message_format;
	snprintf(where_file, sizeof(where_file), "%s", file_name ? file_name : "(null)");
	where_line = line_no;
}

static void log_user_function_gets_file_and_line(void **state)
{
	(void)state;
	where_line = -1;
	where_file[0] = '\0';
	assert_int_equal(rpma_log_set_function(where_function), 0);
	log_an_error();
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_true(where_line > 0);
	assert_non_null(strstr(where_file, "peer_cfg"));
}

static void log_info_below_warning_not_delivered(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	log_an_info();
	assert_int_equal(ut_log_count, 0);
}

static void log_info_delivered_at_info(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO), 0);
	log_an_info();
	assert_true(ut_log_count >= 1);
	assert_true(ut_log_levels_seen & (1u << RPMA_LOG_LEVEL_INFO));
	/* nothing above the threshold */
	assert_int_equal(ut_log_levels_seen & ~((1u << (RPMA_LOG_LEVEL_INFO + 1)) - 1), 0);
}

static void log_error_not_delivered_at_fatal(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_FATAL), 0);
	log_an_error();
	assert_int_equal(ut_log_count, 0);
}

static void log_error_delivered_at_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR), 0);
	log_an_error();
	assert_int_equal(ut_log_count, 1);
	assert_int_equal(ut_log_last_level, RPMA_LOG_LEVEL_ERROR);
}

static void log_disabled_delivers_nothing(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED), 0);
	log_an_error();
	log_an_info();
	assert_int_equal(ut_log_count, 0);
}

/*
 * librpma 1.x: "The logging messages on the levels above the
 * RPMA_LOG_THRESHOLD level won't trigger the logging function"; the aux
 * threshold is for the logging function to consult, it does not make the
 * library call a user's function.
 */
static void log_aux_does_not_call_user_function(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_DEBUG), 0);
	log_an_error();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	assert_int_equal(ut_log_count, 0);
}

static void errno_clobberer(enum rpma_log_level level, const char *file_name, const int line_no,
			    const char *function_name, const char *message_format, ...)
{
	(void)level;
	(void)file_name;
	(void)line_no;
	(void)function_name;
	(void)message_format;
	errno = EMLINK;
}

/* a log function cannot change the errno around a library call */
static void log_function_keeps_errno(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(errno_clobberer), 0);
	errno = ENOTBLK;
	log_an_error();
	int after = errno;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(after, ENOTBLK);
}

/* switching functions: the old one hears nothing more */
static void log_switch_function(void **state)
{
	(void)state;
	where_line = -1;
	assert_int_equal(rpma_log_set_function(where_function), 0);
	log_an_error();
	assert_int_equal(ut_log_count, 0);
	assert_true(where_line > 0);
	assert_int_equal(rpma_log_set_function(ut_log_capture), 0);
	where_line = -1;
	log_an_error();
	assert_int_equal(ut_log_count, 1);
	assert_int_equal(where_line, -1);
}

/*
 * the default function
 */

static void log_default_function_restored(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR), 0);
	stderr_capture_begin();
	log_an_error();
	char *out = stderr_capture_end();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	/* the capturing function is out of the loop */
	assert_int_equal(ut_log_count, 0);
	assert_non_null(strstr(out, "invalid argument"));
}

static void log_default_function_stderr_needs_aux(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	stderr_capture_begin();
	log_an_error();
	char *out = stderr_capture_end();
	assert_string_equal(out, "");
}

/* aux at ERROR: an INFO message stays off stderr, an ERROR one reaches it */
static void log_default_function_aux_filters(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR), 0);
	stderr_capture_begin();
	log_an_info();
	char *out = stderr_capture_end();
	assert_string_equal(out, "");
	stderr_capture_begin();
	log_an_error();
	out = stderr_capture_end();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	assert_non_null(strstr(out, "invalid argument"));
	/* one line per message */
	assert_non_null(strchr(out, '\n'));
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));
}

/*
 * librpma 1.x's messages, as its log functions received them: the format
 * string of the message with "\n" appended, and its arguments.
 */
static char raw_format[256];
static char raw_formatted[1024];
static unsigned raw_calls;

static void raw_function(enum rpma_log_level level, const char *file_name, const int line_no,
			 const char *function_name, const char *message_format, ...)
{
	(void)level;
	(void)file_name;
	(void)line_no;
	(void)function_name;
	raw_calls++;
	snprintf(raw_format, sizeof(raw_format), "%s", message_format);
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(raw_formatted, sizeof(raw_formatted), message_format, ap);
	va_end(ap);
}

static void log_user_function_gets_the_format(void **state)
{
	(void)state;
	raw_calls = 0;
	assert_int_equal(rpma_log_set_function(raw_function), 0);
	log_an_error();
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(raw_calls, 1);
	/* the format itself, not "%s" with a message made beforehand */
	assert_string_equal(raw_format, "invalid argument: %s\n");
	assert_string_equal(raw_formatted, "invalid argument: pcfg_ptr != nullptr\n");
}

/* a 1.x log function that prints the format as it is writes one line each */
static FILE *vfprintf_target;

static void vfprintf_function(enum rpma_log_level level, const char *file_name, const int line_no,
			      const char *function_name, const char *message_format, ...)
{
	(void)level;
	(void)file_name;
	(void)line_no;
	(void)function_name;
	va_list ap;
	va_start(ap, message_format);
	vfprintf(vfprintf_target, message_format, ap);
	va_end(ap);
}

static void log_user_function_lines(void **state)
{
	(void)state;
	char out[512] = "";
	vfprintf_target = fmemopen(out, sizeof(out), "w");
	assert_non_null(vfprintf_target);
	assert_int_equal(rpma_log_set_function(vfprintf_function), 0);
	log_an_error();
	assert_int_equal(rpma_peer_new(NULL, NULL), RPMA_E_INVAL);
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	fclose(vfprintf_target);
	assert_string_equal(out, "invalid argument: pcfg_ptr != nullptr\n"
				 "invalid argument: ibv_ctx != nullptr\n");
}

/* librpma 1.x's syslog identity and facility, set once when the library loads */
static void log_syslog_identity(void **state)
{
	(void)state;
	assert_int_equal(openlog_calls, 1);
	assert_string_equal(openlog_ident, "rpma");
	assert_int_equal(openlog_option, LOG_PID);
	assert_int_equal(openlog_facility, LOG_LOCAL7);
}

/* the default function: "*LEVEL* file: line: function: message" to syslog */
static void log_default_function_syslog_line(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	syslog_calls = 0;
	log_an_error();
	assert_int_equal(syslog_calls, 1);
	assert_int_equal(syslog_priority, LOG_ERR);
	assert_true(matches(syslog_message, "^\\*ERROR\\* peer_cfg\\.cpp: +[0-9]+: "
					    "rpma_peer_cfg_new: invalid argument: "
					    "pcfg_ptr != nullptr\n$"));
	/* still the one openlog() of the library's start */
	assert_int_equal(openlog_calls, 1);
}

/* and to stderr, with a time stamp and the thread id in front */
static void log_default_function_stderr_line(void **state)
{
	(void)state;
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR), 0);
	stderr_capture_begin();
	log_an_error();
	char *out = stderr_capture_end();
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED), 0);
	char pattern[512];
	snprintf(pattern, sizeof(pattern),
		 "^[A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} \\[%ld\\] "
		 "\\*ERROR\\* peer_cfg\\.cpp: +[0-9]+: rpma_peer_cfg_new: "
		 "invalid argument: pcfg_ptr != nullptr\n$",
		 (long)syscall(SYS_gettid));
	assert_true(matches(out, pattern));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* these two must come first: they see the initial configuration */
		cmocka_unit_test(log_default_thresholds),
		cmocka_unit_test(log_initial_function_is_default),
		UT_TEST(log_syslog_identity),
		UT_TEST(log_level_values),
		UT_TEST(log_set_get_primary_every_level),
		UT_TEST(log_set_get_aux_every_level),
		UT_TEST(log_set_bad_threshold),
		UT_TEST(log_set_bad_level),
		UT_TEST(log_get_bad_threshold),
		UT_TEST(log_get_null_level),
		UT_TEST(log_user_function_gets_error),
		UT_TEST(log_user_function_gets_file_and_line),
		UT_TEST(log_info_below_warning_not_delivered),
		UT_TEST(log_info_delivered_at_info),
		UT_TEST(log_error_not_delivered_at_fatal),
		UT_TEST(log_error_delivered_at_error),
		UT_TEST(log_disabled_delivers_nothing),
		UT_TEST(log_aux_does_not_call_user_function),
		UT_TEST(log_function_keeps_errno),
		UT_TEST(log_switch_function),
		UT_TEST(log_default_function_restored),
		UT_TEST(log_default_function_stderr_needs_aux),
		UT_TEST(log_default_function_aux_filters),
		UT_TEST(log_user_function_gets_the_format),
		UT_TEST(log_user_function_lines),
		UT_TEST(log_default_function_syslog_line),
		UT_TEST(log_default_function_stderr_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
