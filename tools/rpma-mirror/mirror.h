/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mirror.h -- what rpma-mirror's client and server share: the words they
 *             say in the connections' private data (mirror_wire.h), the
 *             digests, the command line's results, and the reporting
 *             helpers
 *
 * See rpma-mirror(1).
 */

#ifndef RPMA_MIRROR_H
#define RPMA_MIRROR_H 1

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <librpma.h>
#include <sodium.h>

#include "mirror_wire.h"
#include "psk.h"

#ifndef RPMA_MIRROR_VERSION
#define RPMA_MIRROR_VERSION "(version unknown)"
#endif

/* exit statuses, as cmp(1) has them; a signal N gives 128 + N */
#define EXIT_SAME     0
#define EXIT_DIFFERS  1
#define EXIT_TROUBLE  2
#define EXIT_SIGNALED 128

/* GPSPM requests the server takes at a time: a client's window at most */
#define SERVER_DEPTH 16
#define WINDOW_MAX   SERVER_DEPTH
#define WAIT_MS	     10000 /* the longest a client waits for the target to answer */

/* a chunk's digest, and the digest of a whole copy */
#define DIGEST_SIZE 32 /* BLAKE2b-256 */
#define DIGEST_HEX  (2 * DIGEST_SIZE + 1)

void chunk_digest(const uint8_t *data, uint64_t len, uint8_t out[DIGEST_SIZE]);
/* BLAKE2b-256 of the chunks' digests, in order: what both sides print */
void area_digest(const uint8_t *area, uint64_t length, uint32_t chunk, char hex[DIGEST_HEX]);
void digests_digest(const uint8_t (*digests)[DIGEST_SIZE], uint64_t n, char hex[DIGEST_HEX]);

/* reporting */
extern const char *prog;
extern bool quiet;
extern volatile sig_atomic_t stop_signal;

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void failed(const char *call, int ret);
const char *human(uint64_t bytes, char *buf, size_t size);
double now_s(void);
/* waits until fd is readable (1), a signal came (0), timeout_ms passed (-2); -1 on error */
int wait_readable(int fd, int timeout_ms);

/* ----- the two sides -------------------------------------------------- */

#define ALLOW_MAX 32

struct server_options {
	const char *addr, *port, *target;
	const struct psk *key;
	bool declared; /* --direct-write-to-pmem */
	bool once;
	bool verbose;
	struct psk_allow allow[ALLOW_MAX];
	int nallow;
	struct psk_allow exempt[ALLOW_MAX]; /* --penalty-exempt */
	int nexempt;
};

struct client_options {
	const char *addr, *port, *endpoint, *source;
	const struct psk *key;
	bool verify_only, fresh, verbose, json;
	uint32_t chunk;
	int window;
	double limit; /* bytes a second; 0: no limit */
};

int run_server(const struct server_options *o);
int run_client(const struct client_options *o);

#endif /* RPMA_MIRROR_H */
