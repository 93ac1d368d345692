/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mirror_wire.h -- the words rpma-mirror's client and server say in the
 *                  connections' private data, how each side makes them,
 *                  and how it reads and checks the other side's
 *
 * See rpma-mirror(1). The handshake (examples/common/psk.h) takes two
 * connections: HELLO, answered with a CHALLENGE; then PROVE, answered with
 * the REGION's descriptors. Nothing that tells where TARGET is leaves the
 * server before the client has proven that it holds the key.
 *
 * What a side reads here came from a peer that has proven nothing yet, and
 * came as many bytes as the peer chose (RoCE pads them, iWARP does not):
 * every function that reads received bytes is given their count, and reads
 * none past it. They are apart from the programs, which call them, so that
 * a fuzz target calls the very same code on any bytes
 * (tests/fuzz/fuzz_mirror_wire.c).
 */

#ifndef RPMA_MIRROR_WIRE_H
#define RPMA_MIRROR_WIRE_H 1

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "psk.h"

#define MIRROR_MAGIC "RPMAMIRR"
/*
 * 2: the handshake with a pre-shared key; 3: the challenge travels in the
 * reject of the HELLO, so that no peer holds a connected queue pair before
 * it proved the key; 4: the server keeps no challenge (psk.h), and the
 * PROVE's MAC covers both ends' addresses; 5: and the client's queue pair
 */
#define MIRROR_VERSION 5
#define MIRROR_LABEL   "rpma-mirror/5"

enum mirror_step {
	STEP_HELLO = 1,	    /* client: my nonce */
	STEP_PROVE = 2,	    /* client: your challenge, and my MAC */
	STEP_CHALLENGE = 3, /* server: a challenge, and my proof */
	STEP_REGION = 4,    /* server: the target's descriptors, under a MAC */
};

#define REQUEST_VERIFY_ONLY 0x1 /* request_pdata.flags */

/* the chunk sizes a client may ask for */
#define CHUNK_MIN 4096
#define CHUNK_MAX (64u << 20)

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

/* ----- the client's request, as the server reads it -------------------- */

static inline void mirror_request_init(struct request_pdata *rq, enum mirror_step step,
				       bool verify_only, uint32_t chunk, uint64_t length)
{
	memset(rq, 0, sizeof(*rq));
	memcpy(rq->magic, MIRROR_MAGIC, sizeof(rq->magic));
	rq->version = MIRROR_VERSION;
	rq->step = (uint8_t)step;
	rq->flags = verify_only ? REQUEST_VERIFY_ONLY : 0;
	rq->chunk = htole32(chunk);
	rq->length = htole64(length);
}

/*
 * Whether the len bytes at pdata (NULL: none) are a request of this
 * version; NULL and *rq filled when they are, else the reason, and *rq
 * holds nothing to act on. Only the first 56 bytes count: RoCE pads a
 * request to them, iWARP carries what the client sent.
 */
static inline const char *mirror_request_decode(const void *pdata, size_t len,
						struct request_pdata *rq)
{
	const uint8_t *p = (const uint8_t *)pdata;

	memset(rq, 0, sizeof(*rq));
	if (!p || len < 10 || memcmp(p, MIRROR_MAGIC, sizeof(rq->magic)) != 0)
		return "not an rpma-mirror client";
	if (p[8] != MIRROR_VERSION)
		return "an rpma-mirror client of another version";
	if (len < sizeof(*rq))
		return "a request cut short";
	memcpy(rq, p, sizeof(*rq));
	if (rq->step != STEP_HELLO && rq->step != STEP_PROVE)
		return "a step of the handshake that a client does not take";
	if (le32toh(rq->chunk) < CHUNK_MIN || le32toh(rq->chunk) > CHUNK_MAX)
		return "a chunk size out of range";
	return NULL;
}

/*
 * Whether a PROVE holds the key's MAC over what it asks, for the
 * challenge it answers (rq->nonce) and the connection's two ends as the
 * server sees them
 */
static inline bool mirror_prove_valid(const struct psk *k, const struct request_pdata *rq,
				      const struct psk_ends *ends)
{
	uint8_t mac[PSK_MAC_SHORT];

	psk_client_mac(k, MIRROR_LABEL, rq->nonce, ends, rq, REQUEST_HEAD_SIZE, mac);
	return psk_equal(mac, rq->mac, sizeof(mac));
}

/* ----- the server's answers, as the client reads them ------------------ */

/* what an answer is, to a client that expects a given step */
enum mirror_answer {
	MIRROR_ANSWER_OK,
	MIRROR_ANSWER_FOREIGN,	     /* not an rpma-mirror server's */
	MIRROR_ANSWER_OTHER_VERSION, /* a server of another version */
	MIRROR_ANSWER_OUT_OF_TURN,   /* another step, or cut short */
	MIRROR_ANSWER_TOO_LONG,	     /* more than an answer holds */
	MIRROR_ANSWER_CUT_SHORT,     /* descriptors longer than the answer */
};

/* whether the len bytes at p (NULL: none) start as a server of any version answers */
static inline bool mirror_answer_is_mirror(const void *p, size_t len)
{
	return p && len >= 10 && memcmp(p, MIRROR_MAGIC, 8) == 0;
}

/* an answer of this version at the step, at least size bytes long */
static inline enum mirror_answer mirror_answer_check(const void *p, size_t len, size_t size,
						     enum mirror_step step)
{
	if (!mirror_answer_is_mirror(p, len))
		return MIRROR_ANSWER_FOREIGN;
	if (((const uint8_t *)p)[8] != MIRROR_VERSION)
		return MIRROR_ANSWER_OTHER_VERSION;
	if (((const uint8_t *)p)[9] != step || len < size)
		return MIRROR_ANSWER_OUT_OF_TURN;
	return MIRROR_ANSWER_OK;
}

/* the answer to a HELLO: *ch filled when it is MIRROR_ANSWER_OK */
static inline enum mirror_answer mirror_challenge_decode(const void *p, size_t len,
							 struct challenge_pdata *ch)
{
	enum mirror_answer r = mirror_answer_check(p, len, sizeof(*ch), STEP_CHALLENGE);

	if (r == MIRROR_ANSWER_OK)
		memcpy(ch, p, sizeof(*ch));
	return r;
}

/* whether the server that gave the challenge holds the key */
static inline bool mirror_challenge_proven(const struct psk *k, const struct challenge_pdata *ch,
					   const uint8_t client_nonce[PSK_NONCE])
{
	uint8_t proof[PSK_PROOF];

	psk_server_proof(k, MIRROR_LABEL, client_nonce, ch->challenge, proof);
	return psk_equal(proof, ch->proof, PSK_PROOF);
}

/*
 * The REGION answer's head, for descriptors of the sizes given, written
 * after it by the server; its MAC is left as zeros
 */
static inline void mirror_region_init(struct region_pdata *a, uint8_t mr_desc_size,
				      uint8_t pcfg_desc_size, uint64_t target_size)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->magic, MIRROR_MAGIC, sizeof(a->magic));
	a->version = MIRROR_VERSION;
	a->step = STEP_REGION;
	a->mr_desc_size = mr_desc_size;
	a->pcfg_desc_size = pcfg_desc_size;
	a->target_size = htole64(target_size);
}

/*
 * The answer to a PROVE: when it is MIRROR_ANSWER_OK, buf holds its len
 * bytes (a struct region_pdata), and *said how many of them the server
 * said, its descriptors' end; the rest is RoCE's padding
 */
static inline enum mirror_answer mirror_region_decode(const void *p, size_t len,
						      uint8_t buf[ANSWER_PDATA_MAX], size_t *said)
{
	const struct region_pdata *a = (const struct region_pdata *)buf;
	enum mirror_answer r = mirror_answer_check(p, len, sizeof(*a), STEP_REGION);

	*said = 0;
	if (r != MIRROR_ANSWER_OK)
		return r;
	if (len > ANSWER_PDATA_MAX)
		return MIRROR_ANSWER_TOO_LONG;
	memcpy(buf, p, len);
	if (sizeof(*a) + a->mr_desc_size + a->pcfg_desc_size > len)
		return MIRROR_ANSWER_CUT_SHORT;
	*said = sizeof(*a) + a->mr_desc_size + a->pcfg_desc_size;
	return MIRROR_ANSWER_OK;
}

/*
 * The MAC of a REGION answer's said bytes, as the server computes it for
 * the PROVE it answers (its challenge and its MAC)
 */
static inline void mirror_region_mac(const struct psk *k, const uint8_t challenge[PSK_NONCE],
				     const uint8_t prove_mac[PSK_MAC_SHORT], const uint8_t *buf,
				     size_t said, uint8_t mac[PSK_MAC_SHORT])
{
	psk_answer_mac(k, MIRROR_LABEL, challenge, prove_mac, buf, said,
		       offsetof(struct region_pdata, mac), mac);
}

/*
 * Whether a decoded REGION answer is the server's, for the PROVE this
 * client sent: its MAC is the key's
 */
static inline bool mirror_region_proven(const struct psk *k, const uint8_t challenge[PSK_NONCE],
					const uint8_t prove_mac[PSK_MAC_SHORT], const uint8_t *buf,
					size_t said)
{
	const struct region_pdata *a = (const struct region_pdata *)buf;
	uint8_t mac[PSK_MAC_SHORT];

	return psk_answer_mac(k, MIRROR_LABEL, challenge, prove_mac, buf, said,
			      offsetof(struct region_pdata, mac), mac) &&
	       psk_equal(mac, a->mac, sizeof(mac));
}

#endif /* RPMA_MIRROR_WIRE_H */
