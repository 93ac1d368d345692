/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_psk_key.h -- the key of the fuzz targets of the pre-shared key
 * handshake (psk, mirror_wire, log_wire): fixed, so that a crash found
 * under one run reproduces under the next
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

#endif /* RPMA_FUZZ_PSK_KEY_H */
