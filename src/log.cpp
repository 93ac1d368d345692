/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.cpp -- thresholds, the user's log function and the default one
 */

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <syslog.h>

#include "err.hpp"
#include "log.hpp"

namespace rpma::log
{

std::atomic<int> thresholds[RPMA_LOG_THRESHOLD_MAX] = {
	{ RPMA_LOG_LEVEL_WARNING }, /* to the log function (syslog by default) */
	{ RPMA_LOG_DISABLED },	    /* additionally to stderr */
};

namespace
{

int syslog_priority(rpma_log_level level)
{
	switch (level) {
	case RPMA_LOG_LEVEL_FATAL:
		return LOG_CRIT;
	case RPMA_LOG_LEVEL_ERROR:
		return LOG_ERR;
	case RPMA_LOG_LEVEL_WARNING:
		return LOG_WARNING;
	case RPMA_LOG_LEVEL_NOTICE:
		return LOG_NOTICE;
	case RPMA_LOG_LEVEL_INFO:
		return LOG_INFO;
	default:
		return LOG_DEBUG;
	}
}

const char *level_name(rpma_log_level level)
{
	static const char *const names[] = { "*FATAL*",	 "*ERROR*", "*WARNING*",
					     "*NOTICE*", "*INFO*",  "*DEBUG*" };
	if (level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG)
		return "*?*";
	return names[level];
}

void default_function(rpma_log_level level, const char *file_name, const int line_no,
		      const char *function_name, const char *message_format, ...)
    __attribute__((format(printf, 5, 6)));

void default_function(rpma_log_level level, const char *file_name, const int line_no,
		      const char *function_name, const char *message_format, ...)
{
	char message[1024];
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);

	const char *base = file_name ? strrchr(file_name, '/') : nullptr;
	base = base ? base + 1 : (file_name ? file_name : "");

	syslog(syslog_priority(level), "librpma: %s %s:%d %s: %s", level_name(level), base, line_no,
	       function_name ? function_name : "", message);
	if (level <= thresholds[RPMA_LOG_THRESHOLD_AUX].load(std::memory_order_relaxed))
		fprintf(stderr, "librpma: %s %s:%d %s: %s\n", level_name(level), base, line_no,
			function_name ? function_name : "", message);
}

std::atomic<rpma_log_function *> log_function{ default_function };

} /* namespace */

void emit(rpma_log_level level, const char *file, int line, const char *func, const char *format,
	  ...)
{
	/* Logging must never change the errno a caller is about to report. */
	int saved_errno = errno;
	rpma_log_function *fn = log_function.load(std::memory_order_acquire);

	/* A log function takes a format, not a va_list: format the message here. */
	char message[1024];
	va_list ap;
	va_start(ap, format);
	vsnprintf(message, sizeof(message), format, ap);
	va_end(ap);
	fn(level, file, line, func, "%s", message);
	errno = saved_errno;
}

} /* namespace rpma::log */

using namespace rpma::log;

extern "C" {

int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
{
	RPMA_CHECK_ARG(threshold == RPMA_LOG_THRESHOLD || threshold == RPMA_LOG_THRESHOLD_AUX);
	RPMA_CHECK_ARG(level >= RPMA_LOG_DISABLED && level <= RPMA_LOG_LEVEL_DEBUG);
	thresholds[threshold].store(level, std::memory_order_relaxed);
	return 0;
}

int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level)
{
	RPMA_CHECK_ARG(threshold == RPMA_LOG_THRESHOLD || threshold == RPMA_LOG_THRESHOLD_AUX);
	RPMA_CHECK_ARG(level != nullptr);
	*level = static_cast<rpma_log_level>(thresholds[threshold].load(std::memory_order_relaxed));
	return 0;
}

int rpma_log_set_function(rpma_log_function *log_function_ptr)
{
	log_function.store(log_function_ptr ? log_function_ptr : default_function,
			   std::memory_order_release);
	return 0;
}

} /* extern "C" */
