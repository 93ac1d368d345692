/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.c -- what rpma-mirror's sides (and the checks' test peer) share:
 *             reporting, time, waiting, and the digests
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "mirror.h"

const char *prog = "rpma-mirror";
bool quiet;
volatile sig_atomic_t stop_signal;

void say(const char *fmt, ...)
{
	va_list ap;

	if (quiet)
		return;
	printf("%s: ", prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void complain(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void failed(const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		complain("%s failed: %s (%s)", call, rpma_err_2str(ret), strerror(err));
	else
		complain("%s failed: %s", call, rpma_err_2str(ret));
}

/* "12.5 MiB" */
const char *human(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= (1u << 30))
		snprintf(buf, size, "%.1f GiB", bytes / (double)(1u << 30));
	else if (bytes >= (1u << 20))
		snprintf(buf, size, "%.1f MiB", bytes / (double)(1u << 20));
	else if (bytes >= 1024)
		snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
	return buf;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int wait_readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	double deadline = now_s() + timeout_ms / 1000.0;

	while (!stop_signal) {
		int n = poll(&pfd, 1, 200);

		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR) {
			complain("poll: %s", strerror(errno));
			return -1;
		}
		if (timeout_ms >= 0 && now_s() >= deadline)
			return -2;
	}
	return 0;
}

/* ----- digests: BLAKE2b-256 -------------------------------------------- */

void chunk_digest(const uint8_t *data, uint64_t len, uint8_t out[DIGEST_SIZE])
{
	crypto_generichash(out, DIGEST_SIZE, data, len, NULL, 0);
}

static void to_hex(const uint8_t d[DIGEST_SIZE], char hex[DIGEST_HEX])
{
	sodium_bin2hex(hex, DIGEST_HEX, d, DIGEST_SIZE);
}

void digests_digest(const uint8_t (*digests)[DIGEST_SIZE], uint64_t n, char hex[DIGEST_HEX])
{
	crypto_generichash_state st;
	uint8_t d[DIGEST_SIZE];

	crypto_generichash_init(&st, NULL, 0, DIGEST_SIZE);
	for (uint64_t i = 0; i < n; i++)
		crypto_generichash_update(&st, digests[i], DIGEST_SIZE);
	crypto_generichash_final(&st, d, DIGEST_SIZE);
	to_hex(d, hex);
}

void area_digest(const uint8_t *area, uint64_t length, uint32_t chunk, char hex[DIGEST_HEX])
{
	crypto_generichash_state st;
	uint8_t d[DIGEST_SIZE];

	crypto_generichash_init(&st, NULL, 0, DIGEST_SIZE);
	for (uint64_t at = 0; at < length; at += chunk) {
		uint64_t n = length - at < chunk ? length - at : chunk;

		chunk_digest(area + at, n, d);
		crypto_generichash_update(&st, d, DIGEST_SIZE);
	}
	crypto_generichash_final(&st, d, DIGEST_SIZE);
	to_hex(d, hex);
}
