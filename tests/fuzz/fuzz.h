/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz.h -- what the fuzz targets share
 *
 * A target is one file, C or C++ (to reach a decoder inside the library),
 * with LLVMFuzzerTestOneInput() (and, when it needs a set-up,
 * LLVMFuzzerInitialize()). Built with -Dfuzzer=true by clang, it is
 * a libFuzzer program (run-fuzzer.py runs it for a while); otherwise it is
 * linked with fixed_inputs.c, a test that feeds it the committed corpus and
 * a fixed sequence of pseudo-random inputs, on machines without clang.
 * Whatever a target finds wrong, it aborts: both drivers report a crash.
 */

#ifndef RPMA_FUZZ_H
#define RPMA_FUZZ_H

#include <stddef.h>
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

#ifdef __cplusplus
extern "C" {
#endif
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#ifdef __cplusplus
}
#endif

static inline uint64_t fuzz_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline uint32_t fuzz_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* n <= 256; by memcmp(), which the fuzzer's coverage does not trace byte by byte */
static inline int fuzz_all_zero(const void *p, size_t n)
{
	static const uint8_t zeros[256] = { 0 };
	return memcmp(p, zeros, n) == 0;
}

/* a byte of the input to choose with (its last), the same for every reader */
static inline uint8_t fuzz_choice(const uint8_t *b, size_t size)
{
	return size ? b[size - 1] : 0;
}

/* an exact-size copy of the input, so that a sanitizer sees any read past its end */
static inline uint8_t *fuzz_copy(const uint8_t *data, size_t size)
{
	uint8_t *bytes = (uint8_t *)calloc(size ? size : 1, 1);
	REQUIRE(bytes != NULL);
	if (size)
		memcpy(bytes, data, size);
	return bytes;
}

#endif /* RPMA_FUZZ_H */
