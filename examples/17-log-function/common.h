/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- 17-log-function: the log function both programs install
 */

#ifndef EXAMPLE_LOG_FUNCTION_COMMON_H
#define EXAMPLE_LOG_FUNCTION_COMMON_H 1

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <librpma.h>

#define REGION_SIZE 4096

struct server_pdata {
	uint8_t mr_desc_size;
	uint8_t mr_desc[];
};

#define PDATA_MAX 196

static const char *program_name = "?";

static const char *level_name(enum rpma_log_level level)
{
	switch (level) {
	case RPMA_LOG_LEVEL_FATAL:
		return "fatal";
	case RPMA_LOG_LEVEL_ERROR:
		return "error";
	case RPMA_LOG_LEVEL_WARNING:
		return "warning";
	case RPMA_LOG_LEVEL_NOTICE:
		return "notice";
	case RPMA_LOG_LEVEL_INFO:
		return "info";
	case RPMA_LOG_LEVEL_DEBUG:
		return "debug";
	default:
		return "?";
	}
}

/*
 * The library's messages, with the time and where they come from, on
 * stdout among the program's own lines instead of in syslog. The format
 * ends with a newline, which is not wanted here. The library calls this
 * from whichever thread logs: it must be thread-safe (printf is).
 */
__attribute__((format(printf, 5, 6))) static void
log_to_stdout(enum rpma_log_level level, const char *file_name, const int line_no,
	      const char *function_name, const char *message_format, ...)
{
	char message[512];
	va_list ap;
	struct timespec ts;
	const char *base = strrchr(file_name, '/');

	va_start(ap, message_format);
	vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);
	message[strcspn(message, "\n")] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("%s: [librpma %s %ld.%03ld %s:%d %s()] %s\n", program_name, level_name(level),
	       (long)ts.tv_sec % 100000, ts.tv_nsec / 1000000, base ? base + 1 : file_name, line_no,
	       function_name, message);
}

/*
 * Installs log_to_stdout() for every message from INFO up. Only messages
 * that pass RPMA_LOG_THRESHOLD reach a log function at all;
 * RPMA_LOG_THRESHOLD_AUX matters only to the default function (which
 * copies what passes it to stderr).
 */
static inline int install_log_function(const char *name)
{
	enum rpma_log_level level;
	int ret;

	program_name = name;
	ret = rpma_log_set_function(log_to_stdout);
	if (!ret)
		ret = rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO);
	if (!ret)
		ret = rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level);
	if (!ret)
		printf("%s: the library's messages from level %s up come here\n", name,
		       level_name(level));
	return ret;
}

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_LOG_FUNCTION_COMMON_H */
