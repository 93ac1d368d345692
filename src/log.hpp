/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log.hpp -- the library's internal logging macros
 *
 * A message is formatted only when its level passes the threshold, so
 * disabled logging costs one relaxed load on the hot path.
 */

#ifndef RPMA_LOG_HPP
#define RPMA_LOG_HPP

#include <atomic>
#include <cerrno>

#include <librpma.h>

namespace rpma::log
{

extern std::atomic<int> thresholds[RPMA_LOG_THRESHOLD_MAX];
extern std::atomic<rpma_log_function *> function;

/*
 * As in librpma 1.x, only messages at or above the primary threshold reach
 * the log function; the auxiliary threshold selects which of those the
 * default function also copies to stderr.
 */
inline bool enabled(rpma_log_level level)
{
	return level <= thresholds[RPMA_LOG_THRESHOLD].load(std::memory_order_relaxed);
}

/*
 * Hands the log function a format and its arguments, as librpma 1.x did: a
 * 1.x log function may pass them on to vfprintf() or vsyslog(). Logging
 * must never change the errno a caller is about to report.
 */
template <typename... Args>
void emit(rpma_log_level level, const char *file, int line, const char *func, const char *format,
	  Args... args)
{
	const int saved_errno = errno;
	function.load(std::memory_order_acquire)(level, file, line, func, format, args...);
	errno = saved_errno;
}

/*
 * Logs "invalid argument: <what>" and returns RPMA_E_INVAL: out of line and
 * cold, so that the checks of the data path cost a compare and a branch.
 */
[[gnu::cold, gnu::noinline]] int invalid_argument(const char *file, int line, const char *func,
						  const char *what);

/* Never called: lets the compiler check a message's arguments against its format. */
void check_format(const char *format, ...) __attribute__((format(printf, 1, 2)));

} /* namespace rpma::log */

/* RPMA_LOG(level, "literal format", args...): the format gets librpma's "\n" */
#define RPMA_LOG(level, format, ...)                                                               \
	do {                                                                                       \
		if (rpma::log::enabled(level)) {                                                   \
			if (false)                                                                 \
				rpma::log::check_format(format, ##__VA_ARGS__);                    \
			rpma::log::emit(level, __FILE__, __LINE__, __func__, format "\n",          \
					##__VA_ARGS__);                                            \
		}                                                                                  \
	} while (0)

#define RPMA_LOG_FATAL(...)   RPMA_LOG(RPMA_LOG_LEVEL_FATAL, __VA_ARGS__)
#define RPMA_LOG_ERROR(...)   RPMA_LOG(RPMA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define RPMA_LOG_WARNING(...) RPMA_LOG(RPMA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define RPMA_LOG_NOTICE(...)  RPMA_LOG(RPMA_LOG_LEVEL_NOTICE, __VA_ARGS__)
#define RPMA_LOG_INFO(...)    RPMA_LOG(RPMA_LOG_LEVEL_INFO, __VA_ARGS__)
#define RPMA_LOG_DEBUG(...)   RPMA_LOG(RPMA_LOG_LEVEL_DEBUG, __VA_ARGS__)

/*
 * Argument checks, first thing in every entry point: log what was wrong,
 * return RPMA_E_INVAL (librpma.h).
 */
#define RPMA_CHECK_ARG(cond)                                                                       \
	do {                                                                                       \
		if (__builtin_expect(!(cond), 0)) {                                                \
			return rpma::log::invalid_argument(__FILE__, __LINE__, __func__, #cond);   \
		}                                                                                  \
	} while (0)

#endif /* RPMA_LOG_HPP */
