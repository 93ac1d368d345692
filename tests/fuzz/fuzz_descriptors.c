/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_descriptors.c -- the decoders of bytes that come from the network
 *
 * Region and peer-config descriptors arrive in private data or messages
 * from a peer that may be broken or hostile. Whatever the bytes, decoding
 * must return 0 or RPMA_E_INVAL, never read past the buffer, and a decoded
 * region must report exactly what its bytes say.
 *
 * Built as a libFuzzer target where clang provides one (-Dfuzzer=true), and
 * otherwise as a test that feeds it a fixed number of pseudo-random and
 * edge-case inputs.
 */

#include <librpma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so that a sanitizer sees any read past the end */
	uint8_t *bytes = calloc(size ? size : 1, 1);
	REQUIRE(bytes != NULL);
	if (size)
		memcpy(bytes, data, size);

	struct rpma_mr_remote *mr = NULL;
	int ret = rpma_mr_remote_from_descriptor(bytes, size, &mr);
	if (size < 21 || bytes[20] == 0) {
		REQUIRE(ret == RPMA_E_INVAL);
		REQUIRE(mr == NULL);
	} else {
		REQUIRE(ret == 0 && mr != NULL);
		size_t mr_size = 0;
		REQUIRE(rpma_mr_remote_get_size(mr, &mr_size) == 0);
		REQUIRE(mr_size == (size_t)le64(bytes + 8));
		int flush_type = -1;
		REQUIRE(rpma_mr_remote_get_flush_type(mr, &flush_type) == 0);
		REQUIRE(flush_type == (bytes[20] & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
						    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)));
		REQUIRE(rpma_mr_remote_delete(&mr) == 0 && mr == NULL);
	}

	struct rpma_peer_cfg *pcfg = NULL;
	ret = rpma_peer_cfg_from_descriptor(bytes, size, &pcfg);
	if (size == 0) {
		REQUIRE(ret == RPMA_E_INVAL && pcfg == NULL);
	} else {
		REQUIRE(ret == 0 && pcfg != NULL);
		bool direct = false;
		REQUIRE(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct) == 0);
		REQUIRE(direct == (bytes[0] != 0));
		REQUIRE(rpma_peer_cfg_delete(&pcfg) == 0);
	}

	free(bytes);
	return 0;
}

#ifndef RPMA_LIBFUZZER
/* xorshift64*: the same inputs on every run */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

int main(int argc, char *argv[])
{
	long iterations = argc > 1 ? atol(argv[1]) : 200000;
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	uint8_t buf[300];

	/* quiet: invalid descriptors are logged at ERROR by design */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);

	/* every length around the boundaries, all zeros and all ones */
	for (size_t len = 0; len <= 64; len++) {
		memset(buf, 0, sizeof(buf));
		LLVMFuzzerTestOneInput(buf, len);
		memset(buf, 0xff, sizeof(buf));
		LLVMFuzzerTestOneInput(buf, len);
	}
	for (long i = 0; i < iterations; i++) {
		size_t len = next_random(&state) % sizeof(buf);
		for (size_t j = 0; j < len; j++)
			buf[j] = (uint8_t)next_random(&state);
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("%ld inputs decoded\n", iterations + 130);
	return 0;
}
#endif
