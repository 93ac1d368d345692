/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.cpp -- thresholds, the user's log function and the default one
 */

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

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

/* librpma 1.x's level tags, padded to one width */
const char *level_name(rpma_log_level level)
{
	static const char *const names[] = { "*FATAL* ", "*ERROR* ", "*WARN*  ",
					     "*NOTE*  ", "*INFO*  ", "*DEBUG* " };
	if (level < RPMA_LOG_LEVEL_FATAL || level > RPMA_LOG_LEVEL_DEBUG)
		return "*?*     ";
	return names[level];
}

/* "Nov 21 10:02:03.123456 ", the time stamp of librpma 1.x's stderr lines */
void time_stamp(char *buf, size_t size)
{
	timespec ts;
	tm local;
	char date[24];
	if (clock_gettime(CLOCK_REALTIME, &ts) || localtime_r(&ts.tv_sec, &local) == nullptr ||
	    strftime(date, sizeof(date), "%b %d %H:%M:%S", &local) == 0) {
		snprintf(buf, size, "[time error] ");
		return;
	}
	snprintf(buf, size, "%s.%06ld ", date, ts.tv_nsec / 1000);
}

void default_function(rpma_log_level level, const char *file_name, const int line_no,
		      const char *function_name, const char *message_format, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * librpma 1.x's lines: "*LEVEL* file: line: function: message" to syslog;
 * the same after a time stamp and the thread id to stderr. The message
 * carries its own "\n".
 */
void default_function(rpma_log_level level, const char *file_name, const int line_no,
		      const char *function_name, const char *message_format, ...)
{
	if (level == RPMA_LOG_DISABLED)
		return;

	char message[1024];
	va_list ap;
	va_start(ap, message_format);
	vsnprintf(message, sizeof(message), message_format, ap);
	va_end(ap);

	char file_info[256] = "";
	if (file_name) {
		const char *base = strrchr(file_name, '/');
		base = base ? base + 1 : file_name;
		snprintf(file_info, sizeof(file_info), "%s: %3d: %s: ", base, line_no,
			 function_name ? function_name : "");
	}

	syslog(syslog_priority(level), "%s%s%s", level_name(level), file_info, message);
	if (level <= thresholds[RPMA_LOG_THRESHOLD_AUX].load(std::memory_order_relaxed)) {
		char stamp[48];
		time_stamp(stamp, sizeof(stamp));
		fprintf(stderr, "%s[%ld] %s%s%s", stamp, static_cast<long>(syscall(SYS_gettid)),
			level_name(level), file_info, message);
	}
}

/*
 * librpma 1.x's syslog identity and facility, set when the library is
 * loaded: the rsyslog rules written for it keep matching.
 */
__attribute__((constructor)) void open_syslog()
{
	openlog("rpma", LOG_PID, LOG_LOCAL7);
}

} /* namespace */

std::atomic<rpma_log_function *> function{ default_function };

int invalid_argument(const char *file, int line, const char *func, const char *what)
{
	if (enabled(RPMA_LOG_LEVEL_ERROR))
		emit(RPMA_LOG_LEVEL_ERROR, file, line, func, "invalid argument: %s\n", what);
	return RPMA_E_INVAL;
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
	function.store(log_function_ptr ? log_function_ptr : default_function,
		       std::memory_order_release);
	return 0;
}

} /* extern "C" */
