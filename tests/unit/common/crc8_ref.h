/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * crc8_ref.h -- the checksum of the descriptor trailers, computed the way a
 * textbook divides polynomials, so that a test does not share a mistake
 * with the library's implementation
 *
 * CRC-8 with the polynomial x^8 + x^2 + x + 1 (0x07), initial value 0, no
 * reflection, no final xor (known as CRC-8/SMBUS: "123456789" gives 0xF4).
 * The message, followed by eight zero bits, is divided by 0x107 bit by bit;
 * the remainder is the checksum.
 */

#ifndef CRC8_REF_H
#define CRC8_REF_H

#include <stddef.h>
#include <stdint.h>

static inline uint8_t crc8_ref(const uint8_t *p, size_t len)
{
	unsigned remainder = 0; /* at most 9 bits between the steps */
	for (size_t i = 0; i < len + 1; i++) {
		const unsigned byte = i < len ? p[i] : 0; /* then the 8 zero bits */
		for (int bit = 7; bit >= 0; bit--) {
			remainder = (remainder << 1) | ((byte >> bit) & 1u);
			if (remainder & 0x100u)
				remainder ^= 0x107u;
		}
	}
	return (uint8_t)remainder;
}

/* The reference itself, against the published check value. */
static inline int crc8_ref_is_sound(void)
{
	static const uint8_t check[] = "123456789";
	return crc8_ref(check, 9) == 0xF4;
}

#endif /* CRC8_REF_H */
