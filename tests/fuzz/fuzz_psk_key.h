/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_psk_key.h -- the key of the fuzz targets of the pre-shared key
 * handshake (psk, mirror_wire, log_wire), and the connection ends their
 * PROVEs are bound to: fixed, so that a crash found under one run
 * reproduces under the next
 */

#ifndef RPMA_FUZZ_PSK_KEY_H
#define RPMA_FUZZ_PSK_KEY_H

#include "fuzz.h"
#include "psk.h"

/* sodium started, and a key of the shortest length psk_load() takes */
static inline void fuzz_psk_key(struct psk *key)
{
	REQUIRE(sodium_init() >= 0);
	for (size_t i = 0; i < PSK_MIN; i++)
		key->key[i] = (unsigned char)(i * 37 + 11);
	key->len = PSK_MIN;
}

/*
 * A connection's two ends and the client's queue pair as a PROVE binds
 * them, and two relays': from another client address, and from the
 * client's address on a queue pair of the relay's own
 */
static const struct psk_ends ends0 = {
	.client = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 12 },
	.server = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 11 },
	.client_qp = { 0x11, 0, 0, 0 },
};
static const struct psk_ends ends1 = {
	.client = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 99 },
	.server = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 11 },
	.client_qp = { 0x11, 0, 0, 0 },
};
static const struct psk_ends ends2 = {
	.client = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 12 },
	.server = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 11 },
	.client_qp = { 0x12, 0, 0, 0 },
};

#endif /* RPMA_FUZZ_PSK_KEY_H */
