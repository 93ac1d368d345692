/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_recovery.h -- examples/19-replicated-log's record format and its
 * replica's recovery rule (log_check() of its common.h, called as is)
 */

#ifndef CRASH_LOG_RECOVERY_H
#define CRASH_LOG_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* from common.h */
#define CRASH_LOG_HEADER_SIZE	4096
#define CRASH_LOG_TAIL_OFFSET	8
#define CRASH_LOG_RECORD_HEADER 16
#define CRASH_BATCHES_IN_FLIGHT 4
#define CRASH_FLUSHES_IN_FLIGHT 8

/* a new, empty log of `size` bytes as log_format() leaves it */
void crash_log_format(uint8_t *log, size_t size, uint64_t log_id);

/* record_crc() of common.h */
uint32_t crash_record_crc(uint64_t seq, uint32_t len, const void *payload);

/* record_size() of common.h */
size_t crash_record_size(uint32_t len);

/*
 * What a restarted replica accepts from the log (replica.c, replay():
 * log_check() of common.h): the good records, the bytes they take, and
 * the problem that stopped the walk (NULL when every record up to the
 * tail is good).
 */
void crash_log_recover(const uint8_t *log, size_t size, uint64_t *records, uint64_t *bytes,
		       const char **problem);

#ifdef __cplusplus
}
#endif

#endif /* CRASH_LOG_RECOVERY_H */
