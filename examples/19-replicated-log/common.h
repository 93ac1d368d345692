/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- the replicated log: its layout, and what the writer and
 *             the replicas say to each other (log_wire.h)
 */

#ifndef EXAMPLE_REPLICATED_LOG_COMMON_H
#define EXAMPLE_REPLICATED_LOG_COMMON_H 1

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>
#include <librpma.h>

#include "log_wire.h"
#include "psk.h"

/*
 * The log, the same in the writer's memory and in every replica's:
 *
 *   [0, LOG_HEADER_SIZE)   struct log_header
 *   [LOG_HEADER_SIZE, ...) records back to back, each 8-aligned
 *
 * A record is a struct record_header and `len` bytes of payload, padded
 * to a multiple of 8. `tail` says how many bytes of records are
 * committed; nothing past it counts, whatever it holds. A record is
 * appended by writing it past `tail`, making it durable, and only then
 * replacing `tail` with one 8-byte atomic write, made durable in turn:
 * `tail` never covers a record that is not all there.
 *
 * All integers are little-endian.
 */
#define LOG_SIGNATURE	"RPMARLOG" /* 8 bytes, no NUL */
#define LOG_HEADER_SIZE 4096

struct log_header {
	char signature[8]; /* LOG_SIGNATURE */
	uint64_t tail;	   /* committed bytes of records */
	uint64_t log_id;   /* the log's identity; 0: a replica that no writer has claimed */
	uint64_t capacity; /* bytes for records after the header */
};

#define LOG_TAIL_OFFSET 8  /* offsetof(struct log_header, tail), 8-aligned */
#define LOG_ID_OFFSET	16 /* offsetof(struct log_header, log_id) */

struct record_header {
	uint64_t seq; /* 0, 1, 2, ... without gaps */
	uint32_t len; /* bytes of payload */
	uint32_t crc; /* CRC-32C of seq, len and the payload */
};

#define RECORD_MAX_PAYLOAD (64 * 1024)

static inline size_t record_size(uint32_t len)
{
	return sizeof(struct record_header) + (((size_t)len + 7) & ~(size_t)7);
}

/* CRC-32C (Castagnoli), reflected, bit-serial table built on first use */
static inline uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	const uint8_t *p = buf;

	if (table[1] == 0) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			table[i] = c;
		}
	}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static inline uint32_t record_crc(uint64_t seq, uint32_t len, const void *payload)
{
	uint64_t seq_le = htole64(seq);
	uint32_t len_le = htole32(len);
	uint32_t crc = crc32c(0, &seq_le, sizeof(seq_le));

	crc = crc32c(crc, &len_le, sizeof(len_le));
	return crc32c(crc, payload, len);
}

/* what a walk through a log found */
struct log_check {
	uint64_t records;    /* good records */
	uint64_t bytes;	     /* bytes they take */
	uint64_t next_seq;   /* the seq the next record gets */
	uint32_t digest;     /* CRC-32C of every good record's crc, in order */
	const char *problem; /* NULL when every record up to the tail is good */
	const uint8_t *last_payload;
	uint32_t last_len;
};

/*
 * Walks the committed records of a log, checking each one's seq and
 * checksum. The log may come from anywhere: every length is checked.
 */
static inline void log_check(const uint8_t *log, size_t mapped, struct log_check *out)
{
	const struct log_header *hdr = (const void *)log;
	uint64_t tail = le64toh(hdr->tail);
	uint64_t off = 0;

	memset(out, 0, sizeof(*out));
	if (tail > mapped - LOG_HEADER_SIZE || tail > le64toh(hdr->capacity)) {
		out->problem = "the tail lies past the end of the log";
		return;
	}
	const uint8_t *data = log + LOG_HEADER_SIZE;

	while (off < tail) {
		struct record_header rh;

		if (tail - off < sizeof(rh)) {
			out->problem = "a record header is cut by the tail";
			return;
		}
		memcpy(&rh, data + off, sizeof(rh));
		uint64_t seq = le64toh(rh.seq);
		uint32_t len = le32toh(rh.len);

		if (seq != out->next_seq) {
			out->problem = "a record is out of sequence";
			return;
		}
		if (len > RECORD_MAX_PAYLOAD || record_size(len) > tail - off) {
			out->problem = "a record's length runs past the tail";
			return;
		}
		const uint8_t *payload = data + off + sizeof(rh);

		if (record_crc(seq, len, payload) != le32toh(rh.crc)) {
			out->problem = "a record's checksum does not match";
			return;
		}
		uint32_t crc_le = rh.crc;

		out->digest = crc32c(out->digest, &crc_le, sizeof(crc_le));
		out->records++;
		out->next_seq++;
		out->last_payload = payload;
		out->last_len = len;
		off += record_size(len);
	}
	out->bytes = off;
}

/*
 * The key file, for both programs: a problem with it is a problem of the
 * command line (exit status 2), told before anything else happens
 */
static inline int load_key(const char *who, const char *path, struct psk *key)
{
	char why[512];

	if (!path) {
		fprintf(stderr,
			"%s: --key FILE is required: the pre-shared key that writer and "
			"replicas hold (see README.md to make one)\n",
			who);
		return -1;
	}
	if (psk_load(path, key, why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", who, why);
		return -1;
	}
	return 0;
}

/*
 * The writer keeps up to BATCHES_IN_FLIGHT batches in flight to each
 * replica, each with two flushes. A replica that offers GPSPM takes as
 * many requests at a time: its receive queue, which the library keeps
 * posted, is that deep.
 */
#define BATCHES_IN_FLIGHT 4
#define FLUSHES_IN_FLIGHT (2 * BATCHES_IN_FLIGHT)

/*
 * Where a log lives: pmem mapped with libpmem2, or DRAM. persist is NULL
 * for DRAM. direct_write says whether data the NIC placed there is
 * persistent: only on the word of whoever runs the program (eADR, or ADR
 * with DDIO off), and never for DRAM or a page cache.
 */
struct log_memory {
	uint8_t *addr;
	size_t size;
	pmem2_persist_fn persist;
	bool direct_write;
	struct pmem2_map *map;
	void *dram;
};

#define NEW_FILE_SIZE (64u << 20)

/* maps path (a regular file of NEW_FILE_SIZE when it does not exist); 0 or -1 */
static inline int log_memory_map(const char *who, const char *path, bool declared,
				 struct log_memory *mem)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct stat st;
	int ret = -1;
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	memset(mem, 0, sizeof(*mem));
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open %s: %s\n", who, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
	    ftruncate(fd, NEW_FILE_SIZE) != 0) {
		fprintf(stderr, "%s: cannot size %s: %s\n", who, path, strerror(errno));
		goto out;
	}
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&mem->map, cfg, src)) {
		fprintf(stderr, "%s: cannot map %s: %s\n", who, path, pmem2_errormsg());
		goto out;
	}
	mem->addr = pmem2_map_get_address(mem->map);
	mem->size = pmem2_map_get_size(mem->map);
	mem->persist = pmem2_get_persist_fn(mem->map);
	enum pmem2_granularity gran = pmem2_map_get_store_granularity(mem->map);

	mem->direct_write = declared && gran != PMEM2_GRANULARITY_PAGE;
	if (!declared && gran == PMEM2_GRANULARITY_BYTE)
		printf("%s: the CPU caches are persistent here (eADR): "
		       "--direct-write-to-pmem would hold\n",
		       who);
	if (mem->size < 2 * LOG_HEADER_SIZE) {
		fprintf(stderr, "%s: %s is too small for a log\n", who, path);
		pmem2_map_delete(&mem->map);
		goto out;
	}
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd);
	return ret;
}

static inline int log_memory_dram(size_t size, struct log_memory *mem)
{
	memset(mem, 0, sizeof(*mem));
	mem->dram = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), size);
	if (!mem->dram)
		return -1;
	memset(mem->dram, 0, size);
	mem->addr = mem->dram;
	mem->size = size;
	return 0;
}

static inline void log_memory_persist(const struct log_memory *mem, const void *addr, size_t len)
{
	if (mem->persist)
		mem->persist(addr, len);
}

static inline void log_memory_release(struct log_memory *mem)
{
	if (mem->map)
		pmem2_map_delete(&mem->map);
	free(mem->dram);
	mem->dram = NULL;
}

/* a new, empty log over the whole memory; the signature goes last */
static inline void log_format(struct log_memory *mem, uint64_t log_id)
{
	struct log_header *hdr = (void *)mem->addr;

	memset(hdr, 0, LOG_HEADER_SIZE);
	hdr->log_id = htole64(log_id);
	hdr->capacity = htole64(mem->size - LOG_HEADER_SIZE);
	log_memory_persist(mem, hdr, LOG_HEADER_SIZE);
	memcpy(hdr->signature, LOG_SIGNATURE, sizeof(hdr->signature));
	log_memory_persist(mem, hdr, sizeof(*hdr));
}

static inline bool log_exists(const struct log_memory *mem)
{
	const struct log_header *hdr = (const void *)mem->addr;

	return memcmp(hdr->signature, LOG_SIGNATURE, sizeof(hdr->signature)) == 0 &&
	       le64toh(hdr->capacity) <= mem->size - LOG_HEADER_SIZE;
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

#endif /* EXAMPLE_REPLICATED_LOG_COMMON_H */
