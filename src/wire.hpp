/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wire.hpp -- bytes that travel between peers: byte order, checksums, offsets
 *
 * Everything a peer sends is little-endian and packed, whatever the host
 * (see doc/wire-format.md). The buffers come from the network and need not
 * be aligned: every field is copied in or out, never read in place.
 */

#ifndef RPMA_WIRE_HPP
#define RPMA_WIRE_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <endian.h>

namespace rpma::wire
{

/*
 * Each a load or a store of the host, byte-swapped only on a big-endian
 * one: memcpy() is how C++ reads unaligned bytes as an integer without
 * undefined behaviour, and compilers make it one instruction.
 */
inline void put_le16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

inline void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

inline void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

inline uint16_t get_le16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

inline uint32_t get_le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

inline uint64_t get_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
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

/*
 * Where each field of each message lies: every offset is named here once,
 * and doc/wire-format.md draws the same tables.
 */

/* A memory region's descriptor: librpma 1.x's 21 bytes, then the trailer. */
namespace mr_desc
{
constexpr size_t ADDR = 0;     /* u64: the region's address in its process */
constexpr size_t LENGTH = 8;   /* u64 */
constexpr size_t RKEY = 16;    /* u32 */
constexpr size_t USAGE = 20;   /* u8: RPMA_MR_USAGE_* bits */
constexpr size_t SIZE = 21;    /* what librpma 1.x sends */
constexpr size_t MAGIC = 21;   /* u8: TRAILER_MAGIC */
constexpr size_t VERSION = 22; /* u8: TRAILER_VERSION */
constexpr size_t METHODS = 23; /* u8: rpma::flush_method_bits */
constexpr size_t CRC = 24;     /* u8: crc8 of the bytes before */
constexpr size_t VERSIONED_SIZE = 25;
} /* namespace mr_desc */

/* A peer configuration's descriptor: librpma 1.x's one byte, then the trailer. */
namespace peer_cfg_desc
{
constexpr size_t DIRECT_WRITE = 0; /* u8: 1 or 0 */
constexpr size_t SIZE = 1;	   /* what librpma 1.x sends */
constexpr size_t MAGIC = 1;
constexpr size_t VERSION = 2;
constexpr size_t FLAGS = 3;	  /* u8: FLAG_GPSPM */
constexpr size_t GPSPM_DEPTH = 4; /* u8: requests a connection takes at a time */
constexpr size_t CRC = 5;
constexpr size_t VERSIONED_SIZE = 6;
constexpr uint8_t FLAG_GPSPM = 1 << 0; /* the connections serve GPSPM flushes */
} /* namespace peer_cfg_desc */

/* A GPSPM message: a header, then a request's or an answer's fields. */
namespace gpspm_msg
{
constexpr size_t MAGIC = 0;   /* u16 */
constexpr size_t VERSION = 2; /* u8 */
constexpr size_t TYPE = 3;    /* u8 */
constexpr size_t SLOT = 4;    /* u32: the initiator's flush, echoed */
constexpr size_t SEQ = 8;     /* u32: the request's sequence number, echoed */
constexpr size_t HEADER_SIZE = 12;
/* a request (flush or atomic write) */
constexpr size_t RKEY = 12;  /* u32 */
constexpr size_t RADDR = 16; /* u64 */
constexpr size_t LEN = 24;   /* u64: a flush's length */
constexpr size_t VALUE = 24; /* 8 bytes: an atomic write's, as given */
constexpr size_t REQUEST_SIZE = 32;
/* an answer */
constexpr size_t STATUS = 12; /* u8; bytes 13..15 are 0 */
constexpr size_t ANSWER_SIZE = 16;
} /* namespace gpspm_msg */

} /* namespace rpma::wire */

namespace rpma
{

/*
 * The flush methods a target offers for a region, and whether its device
 * executes RDMA ATOMIC WRITE into it: the byte mr_desc::METHODS. A
 * librpma 1.x descriptor offers read-after-write for the flush types its
 * usage names, and no native atomic write.
 */
enum flush_method_bits : uint8_t {
	METHOD_READ_AFTER_WRITE = 1 << 0, /* the region grants remote reads */
	METHOD_GPSPM = 1 << 1,		  /* the target's CPU persists on request */
	METHOD_NATIVE_VISIBILITY = 1 << 2,
	METHOD_NATIVE_PERSISTENT = 1 << 3,
	METHOD_NATIVE_ATOMIC_WRITE = 1 << 4, /* the target's device takes ATOMIC WRITE */
};
constexpr uint8_t METHODS_KNOWN = METHOD_READ_AFTER_WRITE | METHOD_GPSPM |
				  METHOD_NATIVE_VISIBILITY | METHOD_NATIVE_PERSISTENT |
				  METHOD_NATIVE_ATOMIC_WRITE;

} /* namespace rpma */

#endif /* RPMA_WIRE_HPP */
