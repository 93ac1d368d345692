/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * log_wire.h -- what the writer and the replicas of the replicated log say
 *               to each other in the connections' private data, and how
 *               each reads and checks the other's
 *
 * What a side reads here came from a peer that has proven nothing yet, as
 * many bytes as the peer chose (RoCE pads them): every function that
 * reads received bytes is given their count, and reads none past it. They
 * are apart from writer.c and replica.c, which call them, so that a fuzz
 * target calls the very same code on any bytes
 * (tests/fuzz/fuzz_log_wire.c).
 */

#ifndef EXAMPLE_REPLICATED_LOG_WIRE_H
#define EXAMPLE_REPLICATED_LOG_WIRE_H 1

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "psk.h"

/*
 * Private data: the handshake. A replica hands out RDMA write access to
 * its whole log, so it says where the log is only to a writer that has
 * proven that it holds the pre-shared key (psk.h, whose header tells the
 * scheme). It takes two connections, since a connection carries private
 * data once each way:
 *
 *   1. HELLO  the writer asks with a fresh nonce; the replica answers,
 *             in the reject of the request, with a challenge and the proof
 *             that it holds the key (struct replica_hello); it keeps
 *             nothing of it;
 *   2. PROVE  the writer asks again with the challenge and its MAC over
 *             it and over both ends' addresses as the writer sees them;
 *             the replica checks that the challenge is its own, recent and
 *             unused, checks the MAC over the addresses as it sees them,
 *             marks the challenge used, and only then answers with the
 *             log's state and the descriptors (struct replica_pdata),
 *             under a MAC of its own bound to the PROVE.
 *
 * A HELLO carries a MAC over the nonce too. It proves nothing (it can be
 * replayed) and the replica answers alike whatever it says: it only lets
 * the replica's log name a writer that holds another key, which would
 * otherwise just go away after the HELLO.
 *
 * rdma_cm carries at most 56 bytes of private data with a connection
 * request and 196 with its acceptance (InfiniBand and RoCE).
 */
#define WRITER_MAGIC  0x57474f4cu /* "LOGW" */
#define REPLICA_MAGIC 0x52474f4cu /* "LOGR" */
/*
 * 6: the PROVE bound to the writer's queue pair too;
 * 5: challenges kept by no one (psk.h), the PROVE bound to both ends;
 * 4: the HELLO answered in a reject (no connection before the proof);
 * 3: the pre-shared key handshake; 2: versioned descriptors
 */
#define PROTOCOL_VERSION 6
#define PSK_LABEL	 "rpma-replicated-log/6"

#define STEP_HELLO 1
#define STEP_PROVE 2

#define PDATA_REQUEST_MAX 56
#define PDATA_MAX	  196

struct writer_pdata {
	uint32_t magic; /* WRITER_MAGIC */
	uint8_t version;
	uint8_t step; /* STEP_HELLO or STEP_PROVE */
	uint8_t pad[2];
	uint8_t nonce[PSK_NONCE];   /* HELLO: the writer's nonce; PROVE: the challenge */
	uint8_t mac[PSK_MAC_SHORT]; /* HELLO: hello_mac(); PROVE: psk_client_mac() */
};

/* what a PROVE's MAC covers besides the challenge and the nonce: the fields before them */
#define WRITER_PDATA_ASKED offsetof(struct writer_pdata, nonce)

/* the answer to a HELLO */
struct replica_hello {
	uint32_t magic; /* REPLICA_MAGIC */
	uint8_t version;
	uint8_t step; /* STEP_HELLO */
	uint8_t pad[2];
	uint8_t challenge[PSK_NONCE];
	uint8_t proof[PSK_PROOF]; /* psk_server_proof() */
};

/* the answer to a PROVE */
struct replica_pdata {
	uint32_t magic; /* REPLICA_MAGIC */
	uint8_t version;
	uint8_t step; /* STEP_PROVE */
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	uint64_t log_id;
	uint64_t tail;
	uint64_t capacity;
	uint8_t mac[PSK_MAC_SHORT]; /* psk_answer_mac() */
	uint8_t descriptors[];	    /* the region's, then the peer configuration's */
};

_Static_assert(sizeof(struct writer_pdata) == 40, "the request's layout is the protocol");
_Static_assert(sizeof(struct writer_pdata) <= PDATA_REQUEST_MAX,
	       "a connection request carries at most 56 bytes (RoCE)");
_Static_assert(sizeof(struct replica_hello) <= PDATA_MAX,
	       "an acceptance carries at most 196 bytes (RoCE)");
_Static_assert(sizeof(struct replica_pdata) == 48, "the answer's layout is the protocol");
_Static_assert(sizeof(struct replica_pdata) < PDATA_MAX,
	       "an acceptance carries at most 196 bytes (RoCE), descriptors included");

/* the HELLO's MAC: for the replica's log only, see above */
static inline void hello_mac(const struct psk *key, const uint8_t nonce[PSK_NONCE],
			     uint8_t mac[PSK_MAC_SHORT])
{
	uint8_t full[PSK_PROOF];

	psk_hmac(key, PSK_LABEL "/hello", nonce, PSK_NONCE, NULL, 0, NULL, 0, full);
	memcpy(mac, full, PSK_MAC_SHORT);
}

/* ----- the writer's request, as the replica reads it ------------------ */

/*
 * What the peer asks for, or why it is refused: NULL and *wp filled when
 * the len bytes at p (NULL: none) are a writer's HELLO or PROVE of this
 * protocol; why holds the reason when it needs words of its own
 */
static inline const char *log_request_decode(const void *p, size_t len, struct writer_pdata *wp,
					     char *why, size_t why_size)
{
	memset(wp, 0, sizeof(*wp));
	if (!p || len < sizeof(*wp))
		return "it is not a log writer (its request is too short to be a writer's)";
	memcpy(wp, p, sizeof(*wp));
	if (le32toh(wp->magic) != WRITER_MAGIC)
		return "it is not a log writer (its request does not start with a writer's magic)";
	if (wp->version != PROTOCOL_VERSION) {
		snprintf(
		    why, why_size,
		    "it is a log writer of protocol version %u; this replica speaks version %d "
		    "(run the same version of writer and replica)",
		    wp->version, PROTOCOL_VERSION);
		return why;
	}
	if (wp->step != STEP_HELLO && wp->step != STEP_PROVE)
		return "its request is neither a HELLO nor a PROVE";
	return NULL;
}

/* whether a HELLO's MAC is this key's: it only tells the log, see above */
static inline bool log_hello_same_key(const struct psk *key, const struct writer_pdata *wp)
{
	uint8_t mac[PSK_MAC_SHORT];

	hello_mac(key, wp->nonce, mac);
	return psk_equal(mac, wp->mac, PSK_MAC_SHORT);
}

/*
 * Whether a PROVE holds the key's MAC over what it asks, for the challenge
 * it answers (wp->nonce) and the connection's two ends as the replica sees
 * them
 */
static inline bool log_prove_valid(const struct psk *key, const struct writer_pdata *wp,
				   const struct psk_ends *ends)
{
	uint8_t mac[PSK_MAC_SHORT];

	psk_client_mac(key, PSK_LABEL, wp->nonce, ends, wp, WRITER_PDATA_ASKED, mac);
	return psk_equal(mac, wp->mac, PSK_MAC_SHORT);
}

/* ----- the replica's answers, as the writer reads them ----------------- */

/* whether the len bytes at p (NULL: none) start as a replica of any version answers */
static inline bool log_is_replica(const void *p, size_t len)
{
	uint32_t magic;

	if (!p || len < sizeof(magic))
		return false;
	memcpy(&magic, p, sizeof(magic));
	return le32toh(magic) == REPLICA_MAGIC;
}

/*
 * Whether the len bytes at p (NULL: none) answer a HELLO, as a replica of
 * any version does; *rh filled when they do (its version is the writer's
 * to check)
 */
static inline bool log_hello_answer_decode(const void *p, size_t len, struct replica_hello *rh)
{
	memset(rh, 0, sizeof(*rh));
	if (!p || len < sizeof(*rh))
		return false;
	memcpy(rh, p, sizeof(*rh));
	return le32toh(rh->magic) == REPLICA_MAGIC && rh->step == STEP_HELLO;
}

/* whether the replica that gave the challenge holds the key */
static inline bool log_hello_proven(const struct psk *key, const struct replica_hello *rh,
				    const uint8_t nonce[PSK_NONCE])
{
	uint8_t proof[PSK_PROOF];

	psk_server_proof(key, PSK_LABEL, nonce, rh->challenge, proof);
	return psk_equal(proof, rh->proof, PSK_PROOF);
}

/* what the answer to a PROVE is */
enum log_answer {
	LOG_ANSWER_OK,
	LOG_ANSWER_NONE,    /* none, or too short to be one */
	LOG_ANSWER_FOREIGN, /* not a replica's of this protocol, or cut short */
};

/*
 * The answer to a PROVE, the len bytes at p (NULL: none): when it is
 * LOG_ANSWER_OK, *rp holds its head and *said how many of the bytes the
 * replica said, its descriptors' end (the rest is RoCE's padding); the
 * descriptors are the bytes at p + sizeof(*rp) up to it
 */
static inline enum log_answer log_replica_answer_decode(const void *p, size_t len,
							struct replica_pdata *rp, size_t *said)
{
	memset(rp, 0, sizeof(*rp));
	*said = 0;
	if (!p || len < sizeof(*rp))
		return LOG_ANSWER_NONE;
	memcpy(rp, p, sizeof(*rp));
	size_t n = sizeof(*rp) + rp->mr_desc_size + rp->pcfg_desc_size;

	if (le32toh(rp->magic) != REPLICA_MAGIC || rp->version != PROTOCOL_VERSION ||
	    rp->step != STEP_PROVE || n > PDATA_MAX || len < n)
		return LOG_ANSWER_FOREIGN;
	*said = n;
	return LOG_ANSWER_OK;
}

/*
 * The MAC of the answer to a PROVE (its challenge and its MAC), the len
 * bytes at answer, as the replica computes it
 */
static inline bool log_replica_answer_mac(const struct psk *key, const uint8_t challenge[PSK_NONCE],
					  const uint8_t prove_mac[PSK_MAC_SHORT],
					  const void *answer, size_t len,
					  uint8_t mac[PSK_MAC_SHORT])
{
	return psk_answer_mac(key, PSK_LABEL, challenge, prove_mac, answer, len,
			      offsetof(struct replica_pdata, mac), mac);
}

/*
 * Whether a decoded answer to a PROVE is the replica's, for the PROVE this
 * writer sent: its MAC is the key's
 */
static inline bool log_replica_answer_proven(const struct psk *key,
					     const uint8_t challenge[PSK_NONCE],
					     const uint8_t prove_mac[PSK_MAC_SHORT],
					     const void *answer, size_t said,
					     const struct replica_pdata *rp)
{
	uint8_t mac[PSK_MAC_SHORT];

	return log_replica_answer_mac(key, challenge, prove_mac, answer, said, mac) &&
	       psk_equal(mac, rp->mac, PSK_MAC_SHORT);
}

#endif /* EXAMPLE_REPLICATED_LOG_WIRE_H */
