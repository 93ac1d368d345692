/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_mirror_wire.c -- rpma-mirror's readers of private data
 * (tools/rpma-mirror/mirror_wire.h) on any bytes
 *
 * The bytes are what came with a connection request (the server reads
 * them with mirror_request_decode()) or with its reject or acceptance
 * (the client reads them with mirror_challenge_decode() or
 * mirror_region_decode()); each reader gets all of them. Whatever the
 * bytes and their count, a reader reads nothing past them, and says
 * exactly what the layout says (mirror_wire.h): the reason of a refusal
 * in the order the checks are made, and, for bytes it takes, the fields
 * as they are, the descriptors of an answer inside what it said, and
 * nothing written past the bytes. What a side makes, the other takes back
 * as it was made. A MAC check accepts the MAC the other side computes
 * and refuses it after any change of a byte it covers (or of the nonce
 * or challenge it is bound to); RoCE's padding past an answer's
 * descriptors is not covered. (The MACs on one input in four that a
 * reader takes, one change each: see mac_check().)
 */

#include <endian.h>

#include "fuzz.h"
#include "fuzz_psk_key.h"
#include "mirror_wire.h"

static struct psk key;
static const uint8_t nonce0[PSK_NONCE] = "client-nonce-01";
static const uint8_t challenge0[PSK_NONCE] = "challenge-0123\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_psk_key(&key);
	return 0;
}

static bool is_mirror(const uint8_t *b, size_t size)
{
	return size >= 10 && memcmp(b, "RPMAMIRR", 8) == 0;
}

/*
 * Whether to check a MAC on these bytes, and which change to make: an
 * HMAC-SHA-256 costs more than all the reading, so the MACs are checked
 * on one input that a reader takes in four, chosen by another byte than
 * the one that chooses where to change
 */
static int mac_check(const uint8_t *b, size_t size)
{
	const uint8_t c = size >= 2 ? b[size - 2] : 0;

	return c % 4 == 0 ? 1 + c / 4 % 3 : 0;
}

static void request(const uint8_t *b, size_t size)
{
	struct request_pdata rq;

	memset(&rq, 0xa5, sizeof(rq));
	const char *why = mirror_request_decode(b, size, &rq);
	const char *want = NULL;

	if (!is_mirror(b, size))
		want = "not an rpma-mirror client";
	else if (b[8] != 5)
		want = "an rpma-mirror client of another version";
	else if (size < 56)
		want = "a request cut short";
	else if (b[9] != 1 && b[9] != 2)
		want = "a step of the handshake that a client does not take";
	else if (fuzz_le32(b + 12) < 4096 || fuzz_le32(b + 12) > (64u << 20))
		want = "a chunk size out of range";
	REQUIRE((why == NULL) == (want == NULL));
	if (why) {
		REQUIRE(strcmp(why, want) == 0);
		/* refused before it was read: nothing of it taken */
		if (size < 56 || b[8] != 5 || !is_mirror(b, size))
			REQUIRE(fuzz_all_zero(&rq, sizeof(rq)));
		return;
	}
	REQUIRE(memcmp(&rq, b, sizeof(rq)) == 0);
	REQUIRE(rq.step == STEP_HELLO || rq.step == STEP_PROVE);

	/* a PROVE as the client makes it passes the server's check, and no change of it does */
	const uint8_t c = fuzz_choice(b, size);
	const int check = mac_check(b, size);

	if (!check)
		return;
	psk_client_mac(&key, MIRROR_LABEL, rq.nonce, &ends0, &rq, REQUEST_HEAD_SIZE, rq.mac);
	REQUIRE(mirror_prove_valid(&key, &rq, &ends0));
	if (check == 1) {
		REQUIRE(!mirror_prove_valid(&key, &rq, &ends1));
		REQUIRE(!mirror_prove_valid(&key, &rq, &ends2));
		return;
	}
	((uint8_t *)&rq)[c % sizeof(rq)] ^= (uint8_t)(1u << c % 8);
	REQUIRE(!mirror_prove_valid(&key, &rq, &ends0));
}

static void request_made(const uint8_t *b, size_t size)
{
	/* what a client may make of the input's bytes */
	const uint8_t c = fuzz_choice(b, size);
	const enum mirror_step step = (enum mirror_step)(c % 5);
	const uint32_t chunk = size >= 4 ? fuzz_le32(b) >> (c % 16) : 4096;
	const uint64_t length = size >= 12 ? fuzz_le64(b + 4) : size;
	struct request_pdata rq, back;

	mirror_request_init(&rq, step, c & 0x80, chunk, length);
	const char *why = mirror_request_decode(&rq, sizeof(rq), &back);

	REQUIRE((why == NULL) == ((step == STEP_HELLO || step == STEP_PROVE) &&
				  chunk >= CHUNK_MIN && chunk <= CHUNK_MAX));
	if (why)
		return;
	REQUIRE(back.step == step && le32toh(back.chunk) == chunk &&
		le64toh(back.length) == length);
	REQUIRE(back.flags == ((c & 0x80) ? REQUEST_VERIFY_ONLY : 0));
}

static enum mirror_answer answer_model(const uint8_t *b, size_t size, size_t need, uint8_t step)
{
	if (!is_mirror(b, size))
		return MIRROR_ANSWER_FOREIGN;
	if (b[8] != 5)
		return MIRROR_ANSWER_OTHER_VERSION;
	if (b[9] != step || size < need)
		return MIRROR_ANSWER_OUT_OF_TURN;
	return MIRROR_ANSWER_OK;
}

static void challenge(const uint8_t *b, size_t size)
{
	struct challenge_pdata ch;

	REQUIRE(mirror_answer_is_mirror(b, size) == is_mirror(b, size));
	memset(&ch, 0xa5, sizeof(ch));
	enum mirror_answer r = mirror_challenge_decode(b, size, &ch);

	REQUIRE(r == answer_model(b, size, 64, 3));
	if (r != MIRROR_ANSWER_OK) {
		uint8_t untouched[sizeof(ch)];

		memset(untouched, 0xa5, sizeof(untouched));
		REQUIRE(memcmp(&ch, untouched, sizeof(ch)) == 0);
		return;
	}
	REQUIRE(memcmp(&ch, b, sizeof(ch)) == 0);

	/* the proof a server that holds the key makes, and no change of it */
	const uint8_t c = fuzz_choice(b, size);
	const int check = mac_check(b, size);

	if (!check)
		return;
	psk_server_proof(&key, MIRROR_LABEL, nonce0, ch.challenge, ch.proof);
	REQUIRE(mirror_challenge_proven(&key, &ch, nonce0));
	if (check == 1) {
		REQUIRE(!mirror_challenge_proven(&key, &ch, challenge0));
		return;
	}
	if (c & 1)
		ch.challenge[c / 2 % PSK_NONCE] ^= 0x10;
	else
		ch.proof[c / 2 % PSK_PROOF] ^= 0x10;
	REQUIRE(!mirror_challenge_proven(&key, &ch, nonce0));
}

static void region(const uint8_t *b, size_t size)
{
	uint8_t buf[ANSWER_PDATA_MAX];
	const struct region_pdata *a = (const struct region_pdata *)buf;
	size_t said = 12345;

	memset(buf, 0xa5, sizeof(buf));
	enum mirror_answer r = mirror_region_decode(b, size, buf, &said);
	enum mirror_answer want = answer_model(b, size, 40, 4);

	if (want == MIRROR_ANSWER_OK && size > 196)
		want = MIRROR_ANSWER_TOO_LONG;
	else if (want == MIRROR_ANSWER_OK && 40u + b[10] + b[11] > size)
		want = MIRROR_ANSWER_CUT_SHORT;
	REQUIRE(r == want);
	/* nothing written past the bytes, nor past the buffer */
	static uint8_t untouched[ANSWER_PDATA_MAX];
	const size_t written = r == MIRROR_ANSWER_OK || r == MIRROR_ANSWER_CUT_SHORT ? size : 0;

	memset(untouched, 0xa5, sizeof(untouched));
	REQUIRE(memcmp(buf + written, untouched, sizeof(buf) - written) == 0);
	if (r != MIRROR_ANSWER_OK) {
		REQUIRE(said == 0);
		return;
	}
	REQUIRE(memcmp(buf, b, size) == 0);
	REQUIRE(said == 40u + a->mr_desc_size + a->pcfg_desc_size);
	REQUIRE(said >= sizeof(*a) && said <= size && size <= ANSWER_PDATA_MAX);
	REQUIRE(a->descriptors + a->mr_desc_size + a->pcfg_desc_size == buf + said);

	/* the MAC the server computes is accepted; any change of what it said is not */
	const uint8_t c = fuzz_choice(b, size);
	const int check = mac_check(b, size);

	if (!check)
		return;
	mirror_region_mac(&key, challenge0, nonce0, buf, said,
			  buf + offsetof(struct region_pdata, mac));
	REQUIRE(mirror_region_proven(&key, challenge0, nonce0, buf, said));
	if (check == 1) {
		REQUIRE(!mirror_region_proven(&key, nonce0, challenge0, buf, said));
	} else if (check == 2 && size > said) {
		/* RoCE's padding */
		buf[said + c % (size - said)] ^= 0x44;
		REQUIRE(mirror_region_proven(&key, challenge0, nonce0, buf, said));
	} else {
		buf[c % said] ^= 0x01;
		REQUIRE(!mirror_region_proven(&key, challenge0, nonce0, buf, said));
	}
}

static void region_made(const uint8_t *b, size_t size)
{
	/* what a server may make: descriptors of the input's bytes, of sizes that fit */
	uint8_t buf[ANSWER_PDATA_MAX], back[ANSWER_PDATA_MAX];
	struct region_pdata *a = (struct region_pdata *)buf;
	const uint8_t mr_size = (uint8_t)(size % 80),
		      pcfg_size = (uint8_t)(fuzz_choice(b, size) % 77);
	const uint64_t target = size >= 8 ? fuzz_le64(b) : size;
	size_t said = 0;

	memset(buf, 0, sizeof(buf));
	mirror_region_init(a, mr_size, pcfg_size, target);
	/* the input's bytes over and over */
	for (size_t i = 0, n; size && i < (size_t)mr_size + pcfg_size; i += n) {
		n = mr_size + pcfg_size - i < size ? mr_size + pcfg_size - i : size;
		memcpy(a->descriptors + i, b, n);
	}
	const size_t len = sizeof(*a) + mr_size + pcfg_size;

	REQUIRE(mirror_region_decode(buf, len, back, &said) == MIRROR_ANSWER_OK);
	REQUIRE(said == len && memcmp(back, buf, len) == 0);
	const struct region_pdata *got = (const struct region_pdata *)back;

	REQUIRE(le64toh(got->target_size) == target);
	REQUIRE(got->mr_desc_size == mr_size && got->pcfg_desc_size == pcfg_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *bytes = fuzz_copy(data, size);

	request(bytes, size);
	request_made(bytes, size);
	challenge(bytes, size);
	region(bytes, size);
	region_made(bytes, size);
	free(bytes);
	return 0;
}
