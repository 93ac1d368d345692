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

#include <librpma.h>

namespace rpma::log
{

extern std::atomic<int> thresholds[RPMA_LOG_THRESHOLD_MAX];

/*
 * As in librpma 1.x, only messages at or above the primary threshold reach
 * the log function; the auxiliary threshold selects which of those the
 * default function also copies to stderr.
 */
inline bool enabled(rpma_log_level level)
{
	return level <= thresholds[RPMA_LOG_THRESHOLD].load(std::memory_order_relaxed);
}

void emit(rpma_log_level level, const char *file, int line, const char *func, const char *format,
	  ...) __attribute__((format(printf, 5, 6)));

} /* namespace rpma::log */

#define RPMA_LOG(level, ...)                                                                       \
	do {                                                                                       \
		if (rpma::log::enabled(level))                                                     \
			rpma::log::emit(level, __FILE__, __LINE__, __func__, __VA_ARGS__);         \
	} while (0)

#define RPMA_LOG_FATAL(...)   RPMA_LOG(RPMA_LOG_LEVEL_FATAL, __VA_ARGS__)
#define RPMA_LOG_ERROR(...)   RPMA_LOG(RPMA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define RPMA_LOG_WARNING(...) RPMA_LOG(RPMA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define RPMA_LOG_NOTICE(...)  RPMA_LOG(RPMA_LOG_LEVEL_NOTICE, __VA_ARGS__)
#define RPMA_LOG_INFO(...)    RPMA_LOG(RPMA_LOG_LEVEL_INFO, __VA_ARGS__)
#define RPMA_LOG_DEBUG(...)   RPMA_LOG(RPMA_LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* RPMA_LOG_HPP */
