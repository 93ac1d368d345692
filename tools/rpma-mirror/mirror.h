/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mirror.h -- what rpma-mirror's client and server share: the words they
 *             say in the connections' private data, the digests, the
 *             command line's results, and the reporting helpers
 *
 * See rpma-mirror(1). The handshake (examples/common/psk.h) takes two
 * connections: HELLO, answered with a CHALLENGE; then PROVE, answered with
 * the REGION's descriptors. Nothing that tells where TARGET is leaves the
 * server before the client has proven that it holds the key.
 */

#ifndef RPMA_MIRROR_H
#define RPMA_MIRROR_H 1

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <librpma.h>
#include <sodium.h>

#include "psk.h"

#ifndef RPMA_MIRROR_VERSION
#define RPMA_MIRROR_VERSION "(version unknown)"
#endif

/* exit statuses, as cmp(1) has them; a signal N gives 128 + N */
#define EXIT_SAME     0
#define EXIT_DIFFERS  1
#define EXIT_TROUBLE  2
#define EXIT_SIGNALED 128

#define MIRROR_MAGIC "RPMAMIRR"
/*
 * 2: the handshake with a pre-shared key; 3: the challenge travels in the
 * reject of the HELLO, so that no peer holds a connected queue pair before
 * it proved the key
 */
#define MIRROR_VERSION 3
#define MIRROR_LABEL   "rpma-mirror/3"

enum mirror_step {
	STEP_HELLO = 1,	    /* client: my nonce */
	STEP_PROVE = 2,	    /* client: your challenge, and my MAC */
	STEP_CHALLENGE = 3, /* server: a challenge, and my proof */
	STEP_REGION = 4,    /* server: the target's descriptors, under a MAC */
};

#define REQUEST_VERIFY_ONLY 0x1 /* request_pdata.flags */

/* the client's connection request: 56 bytes, what RoCE carries at most */
struct request_pdata {
	char magic[8]; /* MIRROR_MAGIC */
	uint8_t version;
	uint8_t step;  /* STEP_HELLO or STEP_PROVE */
	uint8_t flags; /* REQUEST_* */
	uint8_t pad;
	uint32_t chunk;	 /* little-endian */
	uint64_t length; /* bytes to mirror, little-endian */
	/* the MAC covers the bytes above: what the client asks for */
	uint8_t nonce[PSK_NONCE];   /* HELLO: the client's; PROVE: the server's challenge */
	uint8_t mac[PSK_MAC_SHORT]; /* PROVE: psk_client_mac() */
};

#define REQUEST_HEAD_SIZE offsetof(struct request_pdata, nonce)
#define REQUEST_PDATA_MAX 56 /* a connection request's private data on RoCE */

/* the server's answer to a HELLO */
struct challenge_pdata {
	char magic[8];
	uint8_t version;
	uint8_t step; /* STEP_CHALLENGE */
	uint8_t pad[6];
	uint8_t challenge[PSK_NONCE];
	uint8_t proof[PSK_PROOF]; /* psk_server_proof() */
};

/* the server's answer to a PROVE */
struct region_pdata {
	char magic[8];
	uint8_t version;
	uint8_t step; /* STEP_REGION */
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint32_t pad;
	uint64_t target_size;	    /* little-endian */
	uint8_t mac[PSK_MAC_SHORT]; /* psk_answer_mac() */
	uint8_t descriptors[];	    /* the versioned ones: region, peer configuration */
};

#define ANSWER_PDATA_MAX 196 /* an answer's private data on RoCE */

_Static_assert(sizeof(struct request_pdata) == REQUEST_PDATA_MAX, "a request fits RoCE's 56 bytes");
_Static_assert(sizeof(struct challenge_pdata) <= ANSWER_PDATA_MAX, "a challenge fits an answer");

/* GPSPM requests the server takes at a time: a client's window at most */
#define SERVER_DEPTH 16
#define WINDOW_MAX   SERVER_DEPTH
#define CHUNK_MIN    4096
#define CHUNK_MAX    (64u << 20)
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
