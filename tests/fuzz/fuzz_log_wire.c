/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_log_wire.c -- the replicated log's readers of private data
 * (examples/19-replicated-log/log_wire.h) on any bytes
 *
 * The bytes are what came with a connection request (a replica reads
 * them with log_request_decode()) or with its reject or acceptance (the
 * writer reads them with log_is_replica(), log_hello_answer_decode() or
 * log_replica_answer_decode()); each reader gets all of them. Whatever
 * the bytes and their count, a reader reads nothing past them and says
 * exactly what the layout says (log_wire.h): the reason of a refusal in
 * the order the checks are made, the fields as they are, and an answer's
 * descriptors inside what it said and what a connection carries. A MAC
 * check accepts what the other side computes and refuses it after any
 * change of a byte it covers (or of the nonce or challenge it is bound
 * to); RoCE's padding past an answer's descriptors is not covered. (The
 * MACs on one input in four that a reader takes, one change each: see
 * mac_check().)
 */

#include <endian.h>

#include "fuzz.h"
#include "fuzz_psk_key.h"
#include "log_wire.h"

static struct psk key;
static const uint8_t nonce0[PSK_NONCE] = "writer-nonce-01";
static const uint8_t challenge0[PSK_NONCE] = "challenge-0123\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_psk_key(&key);
	return 0;
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
	struct writer_pdata wp;
	char why[160];

	memset(&wp, 0xa5, sizeof(wp));
	memset(why, 0, sizeof(why));
	const char *problem = log_request_decode(b, size, &wp, why, sizeof(why));

	if (size < 40) {
		REQUIRE(problem && strstr(problem, "too short") != NULL);
		REQUIRE(fuzz_all_zero(&wp, sizeof(wp)));
		return;
	}
	REQUIRE(memcmp(&wp, b, sizeof(wp)) == 0);
	if (fuzz_le32(b) != 0x57474f4cu) {
		REQUIRE(problem && strstr(problem, "writer's magic") != NULL);
		return;
	}
	if (b[4] != 6) {
		char version[16];

		/* the version it speaks, in the words it was given */
		snprintf(version, sizeof(version), "version %u;", b[4]);
		REQUIRE(problem == why && strlen(why) < sizeof(why));
		REQUIRE(strstr(why, version) != NULL);
		return;
	}
	if (b[5] != STEP_HELLO && b[5] != STEP_PROVE) {
		REQUIRE(problem && strstr(problem, "neither a HELLO nor a PROVE") != NULL);
		return;
	}
	REQUIRE(problem == NULL);

	const uint8_t c = fuzz_choice(b, size);
	const int check = mac_check(b, size);

	if (!check)
		return;
	if (wp.step == STEP_HELLO) {
		/* a HELLO's MAC, as the writer makes it: this key's, and no change of it */
		hello_mac(&key, wp.nonce, wp.mac);
		REQUIRE(log_hello_same_key(&key, &wp));
		if (check == 1)
			wp.mac[c % PSK_MAC_SHORT] ^= 0x02;
		else
			wp.nonce[c % PSK_NONCE] ^= 0x02;
		REQUIRE(!log_hello_same_key(&key, &wp));
		return;
	}
	/* a PROVE's, as the writer makes it: valid, and no change of it */
	psk_client_mac(&key, PSK_LABEL, wp.nonce, &ends0, &wp, WRITER_PDATA_ASKED, wp.mac);
	REQUIRE(log_prove_valid(&key, &wp, &ends0));
	if (check == 1) {
		REQUIRE(!log_prove_valid(&key, &wp, &ends1));
		REQUIRE(!log_prove_valid(&key, &wp, &ends2));
		return;
	}
	((uint8_t *)&wp)[c % sizeof(wp)] ^= (uint8_t)(1u << c % 8);
	REQUIRE(!log_prove_valid(&key, &wp, &ends0));
}

static void hello_answer(const uint8_t *b, size_t size)
{
	struct replica_hello rh;

	REQUIRE(log_is_replica(b, size) == (size >= 4 && fuzz_le32(b) == 0x52474f4cu));
	memset(&rh, 0xa5, sizeof(rh));
	bool answered = log_hello_answer_decode(b, size, &rh);

	if (size < sizeof(rh)) {
		REQUIRE(!answered && fuzz_all_zero(&rh, sizeof(rh)));
		return;
	}
	REQUIRE(sizeof(rh) == 56 && memcmp(&rh, b, sizeof(rh)) == 0);
	REQUIRE(answered == (fuzz_le32(b) == 0x52474f4cu && b[5] == STEP_HELLO));
	if (!answered)
		return;

	/* the proof a replica that holds the key makes, and no change of it */
	const uint8_t c = fuzz_choice(b, size);
	const int check = mac_check(b, size);

	if (!check)
		return;
	psk_server_proof(&key, PSK_LABEL, nonce0, rh.challenge, rh.proof);
	REQUIRE(log_hello_proven(&key, &rh, nonce0));
	if (check == 1) {
		REQUIRE(!log_hello_proven(&key, &rh, challenge0));
		return;
	}
	if (c & 1)
		rh.challenge[c / 2 % PSK_NONCE] ^= 0x08;
	else
		rh.proof[c / 2 % PSK_PROOF] ^= 0x08;
	REQUIRE(!log_hello_proven(&key, &rh, nonce0));
}

static void prove_answer(const uint8_t *b, size_t size)
{
	struct replica_pdata rp;
	size_t said = 12345;

	memset(&rp, 0xa5, sizeof(rp));
	enum log_answer r = log_replica_answer_decode(b, size, &rp, &said);

	if (size < 48) {
		REQUIRE(r == LOG_ANSWER_NONE && said == 0 && fuzz_all_zero(&rp, sizeof(rp)));
		return;
	}
	REQUIRE(sizeof(rp) == 48 && memcmp(&rp, b, sizeof(rp)) == 0);
	const size_t n = 48u + b[6] + b[7];
	const bool ok =
	    fuzz_le32(b) == 0x52474f4cu && b[4] == 6 && b[5] == STEP_PROVE && n <= 196 && n <= size;

	REQUIRE(r == (ok ? LOG_ANSWER_OK : LOG_ANSWER_FOREIGN));
	if (!ok) {
		REQUIRE(said == 0);
		return;
	}
	REQUIRE(said == n && said <= size && said <= PDATA_MAX);

	/* the MAC the replica computes is accepted; any change of what it said is not */
	const uint8_t c = fuzz_choice(b, size);
	const int check = mac_check(b, size);

	if (!check)
		return;
	uint8_t *answer = fuzz_copy(b, size);

	REQUIRE(log_replica_answer_mac(&key, challenge0, nonce0, answer, said,
				       answer + offsetof(struct replica_pdata, mac)));
	REQUIRE(log_replica_answer_decode(answer, size, &rp, &said) == LOG_ANSWER_OK);
	REQUIRE(log_replica_answer_proven(&key, challenge0, nonce0, answer, said, &rp));
	if (check == 1) {
		REQUIRE(!log_replica_answer_proven(&key, nonce0, challenge0, answer, said, &rp));
	} else if (check == 2 && size > said) {
		/* RoCE's padding */
		answer[said + c % (size - said)] ^= 0x44;
		REQUIRE(log_replica_answer_proven(&key, challenge0, nonce0, answer, said, &rp));
	} else {
		answer[c % said] ^= 0x01;
		if (log_replica_answer_decode(answer, size, &rp, &said) == LOG_ANSWER_OK)
			REQUIRE(!log_replica_answer_proven(&key, challenge0, nonce0, answer, said,
							   &rp));
	}
	free(answer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *bytes = fuzz_copy(data, size);

	request(bytes, size);
	hello_answer(bytes, size);
	prove_answer(bytes, size);
	free(bytes);
	return 0;
}
