/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fixed_inputs.c -- a fuzz target as a test, where there is no libFuzzer
 *
 * Feeds LLVMFuzzerTestOneInput() the same inputs on every run: each file of
 * the seed corpus, every length up to 64 bytes of zeros and of ones, then
 * ITERATIONS inputs made by a fixed pseudo-random sequence, half of them
 * seeds with a few bytes changed, cut or extended. A target that finds
 * something wrong aborts.
 *
 * usage: fuzz-TARGET CORPUS_DIR [ITERATIONS]
 */

#include <dirent.h>
#include <string.h>

#include "fuzz.h"

#define FIXED_MAX_INPUT 300
#define FIXED_MAX_SEEDS 256

struct seed {
	uint8_t bytes[FIXED_MAX_INPUT];
	size_t len;
};

static struct seed seeds[FIXED_MAX_SEEDS];
static unsigned nseeds;

/* xorshift64*: the same inputs on every run */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 2685821657736338717ULL;
}

static void load_corpus(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "cannot open the corpus %s\n", dir);
		exit(1);
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL && nseeds < FIXED_MAX_SEEDS) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (f == NULL)
			continue;
		struct seed *s = &seeds[nseeds];
		s->len = fread(s->bytes, 1, sizeof(s->bytes), f);
		fclose(f);
		nseeds++;
	}
	closedir(d);
	if (nseeds == 0) {
		fprintf(stderr, "the corpus %s is empty\n", dir);
		exit(1);
	}
}

int main(int argc, char *argv[])
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS]\n", argv[0]);
		return 2;
	}
	long iterations = argc > 2 ? atol(argv[2]) : 200000;
	LLVMFuzzerInitialize(&argc, &argv);
	load_corpus(argv[1]);

	long inputs = 0;
	for (unsigned i = 0; i < nseeds; i++, inputs++)
		LLVMFuzzerTestOneInput(seeds[i].bytes, seeds[i].len);

	uint8_t buf[FIXED_MAX_INPUT];
	for (size_t len = 0; len <= 64; len++) {
		memset(buf, 0, sizeof(buf));
		LLVMFuzzerTestOneInput(buf, len);
		memset(buf, 0xff, sizeof(buf));
		LLVMFuzzerTestOneInput(buf, len);
		inputs += 2;
	}

	uint64_t state = 0x9e3779b97f4a7c15ULL;
	for (long i = 0; i < iterations; i++, inputs++) {
		size_t len;
		if (i % 2 == 0) {
			const struct seed *s = &seeds[next_random(&state) % nseeds];
			len = s->len;
			memcpy(buf, s->bytes, len);
			/* a few bytes changed, then maybe cut or extended */
			unsigned changes = 1 + next_random(&state) % 4;
			for (unsigned c = 0; c < changes && len > 0; c++)
				buf[next_random(&state) % len] = (uint8_t)next_random(&state);
			switch (next_random(&state) % 4) {
			case 0:
				len = len ? next_random(&state) % len : 0;
				break;
			case 1: {
				size_t more = next_random(&state) % 16;
				for (size_t j = 0; j < more && len < sizeof(buf); j++)
					buf[len++] = (uint8_t)next_random(&state);
				break;
			}
			default:
				break;
			}
		} else {
			len = next_random(&state) % sizeof(buf);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)next_random(&state);
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("%ld inputs, %u of them the corpus's, no failure\n", inputs, nseeds);
	return 0;
}
