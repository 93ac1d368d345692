// SPDX-License-Identifier: BSD-3-Clause
/*
 * log_recovery.c -- examples/19-replicated-log's common.h, compiled as C
 * (it is C only), for the crash model: its record format and log_check(),
 * the replica's recovery rule (replica.c, replay())
 */

#include "log_recovery.h"

#include "../../examples/19-replicated-log/common.h"

_Static_assert(CRASH_LOG_HEADER_SIZE == LOG_HEADER_SIZE, "common.h changed");
_Static_assert(CRASH_LOG_TAIL_OFFSET == LOG_TAIL_OFFSET, "common.h changed");
_Static_assert(CRASH_LOG_RECORD_HEADER == sizeof(struct record_header), "common.h changed");
_Static_assert(CRASH_BATCHES_IN_FLIGHT == BATCHES_IN_FLIGHT, "common.h changed");
_Static_assert(CRASH_FLUSHES_IN_FLIGHT == FLUSHES_IN_FLIGHT, "common.h changed");

void crash_log_format(uint8_t *log, size_t size, uint64_t log_id)
{
	/* log_format() without the persist calls: the image is durable as it is */
	struct log_header *hdr = (void *)log;

	memset(log, 0, size);
	hdr->log_id = htole64(log_id);
	hdr->capacity = htole64(size - LOG_HEADER_SIZE);
	memcpy(hdr->signature, LOG_SIGNATURE, sizeof(hdr->signature));
}

uint32_t crash_record_crc(uint64_t seq, uint32_t len, const void *payload)
{
	return record_crc(seq, len, payload);
}

size_t crash_record_size(uint32_t len)
{
	return record_size(len);
}

void crash_log_recover(const uint8_t *log, size_t size, uint64_t *records, uint64_t *bytes,
		       const char **problem)
{
	struct log_check chk;

	log_check(log, size, &chk);
	*records = chk.records;
	*bytes = chk.bytes;
	*problem = chk.problem;
}
