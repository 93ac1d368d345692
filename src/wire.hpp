/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.hpp -- bytes that travel between peers: byte order and checksums
 *
 * Everything a peer sends is little-endian and packed, whatever the host
 * (see doc/wire-format.md). Decoders read bytes one by one: the buffers come
 * from the network and need not be aligned.
 */

#ifndef RPMA_WIRE_HPP
#define RPMA_WIRE_HPP

#include <cstddef>
#include <cstdint>

namespace rpma::wire
{

inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = static_cast<uint8_t>(v);
	p[1] = static_cast<uint8_t>(v >> 8);
}

inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = static_cast<uint8_t>(v >> (8 * i));
}

inline void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = static_cast<uint8_t>(v >> (8 * i));
}

inline uint16_t get_le16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

inline uint32_t get_le32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/*
 * CRC-8 (polynomial x^8 + x^2 + x + 1, initial value 0) of len bytes. It
 * guards the descriptor trailers: bytes that merely happen to follow a
 * librpma 1.x descriptor in an application's buffer must not read as a
 * trailer.
 */
inline uint8_t crc8(const uint8_t *p, size_t len)
{
	uint8_t crc = 0;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++)
			crc = static_cast<uint8_t>(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);
	}
	return crc;
}

/*
 * The trailer rpma-ng appends to a descriptor when the application asks for
 * the versioned form: [magic][version][payload...][crc8 of all before].
 */
constexpr uint8_t TRAILER_MAGIC = 0xD7;
constexpr uint8_t TRAILER_VERSION = 1;

} /* namespace rpma::wire */

#endif /* RPMA_WIRE_HPP */
