/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_wire.hpp -- the GPSPM messages: what they say, encoded and decoded
 *
 * The bytes are in doc/wire-format.md and their offsets in wire.hpp. Both
 * peers' libraries read these, and so does the peer's application when
 * it serves GPSPM (peer.cpp): nothing here knows of a connection.
 */

#ifndef RPMA_GPSPM_WIRE_HPP
#define RPMA_GPSPM_WIRE_HPP

#include <cstdint>

#include <infiniband/verbs.h>

#include "wire.hpp"

namespace rpma
{

/* what a target answers */
enum gpspm_status : uint8_t {
	GPSPM_OK = 0,
	GPSPM_MALFORMED = 1,	/* not a request this library understands */
	GPSPM_NO_REGION = 2,	/* no region with that rkey offers GPSPM */
	GPSPM_OUT_OF_RANGE = 3, /* the range is not inside the region */
	GPSPM_NOT_WRITABLE = 4, /* an atomic write to a region not open to remote writes */
	GPSPM_MISALIGNED = 5,	/* an atomic write to an address not 8-byte aligned */
	/*
	 * An atomic write after a flush this connection's target refused: it
	 * would commit what never became durable
	 */
	GPSPM_FENCED = 6,
	/*
	 * What a target answers to every request it does not serve, whatever
	 * the reason (the codes above are for its log): an answer that told
	 * them apart would let a peer find the rkeys and ranges of the
	 * target's regions by trying. Read as NO_REGION by older initiators.
	 */
	GPSPM_REFUSED = GPSPM_NO_REGION,
};

constexpr uint16_t GPSPM_MAGIC = 0x5047; /* "GP" */
constexpr uint8_t GPSPM_VERSION = 1;
constexpr uint8_t GPSPM_REQUEST = 1;
constexpr uint8_t GPSPM_ANSWER = 2;
/*
 * An 8-byte write the target's CPU makes after serving every request
 * before it: an rpma_atomic_write posted behind GPSPM flushes whose
 * answers have not come (doc/persistence.md, "Ordering")
 */
constexpr uint8_t GPSPM_ATOMIC_WRITE = 3;
constexpr uint32_t GPSPM_HEADER_SIZE = wire::gpspm_msg::HEADER_SIZE;
constexpr uint32_t GPSPM_REQUEST_SIZE = wire::gpspm_msg::REQUEST_SIZE;
constexpr uint32_t GPSPM_ANSWER_SIZE = wire::gpspm_msg::ANSWER_SIZE;
/* the versioned peer configuration carries the depth in a byte */
constexpr uint32_t GPSPM_DEPTH_MAX = 255;

/* What the bytes of a receive are, as gpspm_decode() reads them. */
enum gpspm_kind : uint8_t {
	GPSPM_KIND_REQUEST,	  /* a request: every field is valid but status */
	GPSPM_KIND_ATOMIC_WRITE,  /* an atomic write: type, slot, seq, rkey, raddr, value */
	GPSPM_KIND_ANSWER,	  /* an answer: type, slot, seq and status are valid */
	GPSPM_KIND_FOREIGN,	  /* too short for a header, or another magic or version */
	GPSPM_KIND_SHORT_REQUEST, /* a request cut short: type, slot and seq are valid */
	GPSPM_KIND_SHORT_ANSWER,  /* an answer cut short: type, slot and seq are valid */
	GPSPM_KIND_UNKNOWN_TYPE,  /* a header of another type: type, slot and seq are valid */
};

/* A GPSPM message, decoded. */
struct gpspm_message {
	uint8_t type;
	uint32_t slot;	  /* the initiator's flush */
	uint32_t seq;	  /* the request's sequence number */
	uint32_t rkey;	  /* request: the region */
	uint64_t raddr;	  /* request: the first byte, the target's address */
	uint64_t len;	  /* request: the bytes to persist */
	uint8_t value[8]; /* atomic write: the bytes to store, as the initiator gave them */
	uint8_t status;	  /* answer: a gpspm_status, or a later version's */
};

/*
 * Decodes the len bytes at msg, the contents of a receive, into *m. The
 * bytes come from the network: nothing beyond len is read, and nothing
 * but len is trusted. No state, no log: the caller decides what a kind
 * that is not a request or an answer costs.
 */
gpspm_kind gpspm_decode(const uint8_t *msg, uint32_t len, gpspm_message *m);

/*
 * The first four bytes of a message of type, as one little-endian word:
 * the magic, the version and the type, compared at once.
 */
constexpr uint32_t gpspm_head_of(uint8_t type)
{
	static_assert(wire::gpspm_msg::MAGIC == 0 && wire::gpspm_msg::VERSION == 2 &&
			  wire::gpspm_msg::TYPE == 3,
		      "the first four bytes: the magic, the version, the type");
	return GPSPM_MAGIC | uint32_t{ GPSPM_VERSION } << 16 | uint32_t{ type } << 24;
}

/*
 * Whether the len bytes at msg are an answer that gpspm_decode() takes
 * whole (GPSPM_KIND_ANSWER): then *slot, *seq and *status are its.
 * Inline: every flush of an initiator reads one answer.
 */
inline bool gpspm_decode_answer(const uint8_t *msg, uint32_t len, uint32_t *slot, uint32_t *seq,
				uint8_t *status)
{
	namespace at = wire::gpspm_msg;
	if (len < GPSPM_ANSWER_SIZE || wire::get_le32(msg) != gpspm_head_of(GPSPM_ANSWER))
		return false;
	*slot = wire::get_le32(msg + at::SLOT);
	*seq = wire::get_le32(msg + at::SEQ);
	*status = msg[at::STATUS];
	return true;
}

/*
 * Whether the len bytes at msg are a flush request that gpspm_decode()
 * takes whole (GPSPM_KIND_REQUEST): then m's type, slot, seq, rkey, raddr
 * and len are its, and its other fields are left as they were. Inline:
 * every flush a target serves is one.
 */
inline bool gpspm_decode_request(const uint8_t *msg, uint32_t len, gpspm_message *m)
{
	namespace at = wire::gpspm_msg;
	if (len < GPSPM_REQUEST_SIZE || wire::get_le32(msg) != gpspm_head_of(GPSPM_REQUEST))
		return false;
	m->type = GPSPM_REQUEST;
	m->slot = wire::get_le32(msg + at::SLOT);
	m->seq = wire::get_le32(msg + at::SEQ);
	m->rkey = wire::get_le32(msg + at::RKEY);
	m->raddr = wire::get_le64(msg + at::RADDR);
	m->len = wire::get_le64(msg + at::LEN);
	return true;
}

/* Encodes the header of a message of type into the GPSPM_HEADER_SIZE bytes at msg. */
inline void gpspm_encode_header(uint8_t *msg, uint8_t type, uint32_t slot, uint32_t seq)
{
	namespace at = wire::gpspm_msg;
	wire::put_le16(msg + at::MAGIC, GPSPM_MAGIC);
	msg[at::VERSION] = GPSPM_VERSION;
	msg[at::TYPE] = type;
	wire::put_le32(msg + at::SLOT, slot);
	wire::put_le32(msg + at::SEQ, seq);
}

/*
 * Encodes a request of type (GPSPM_REQUEST or GPSPM_ATOMIC_WRITE) into the
 * GPSPM_REQUEST_SIZE bytes at msg: the header, the region and the address.
 * The last 8 bytes are the caller's: gpspm_encode_len() for a flush, the
 * value for an atomic write (wire::gpspm_msg::VALUE). Inline, as every
 * GPSPM flush encodes one.
 */
inline void gpspm_encode_request(uint8_t *msg, uint8_t type, uint32_t slot, uint32_t seq,
				 uint32_t rkey, uint64_t raddr)
{
	gpspm_encode_header(msg, type, slot, seq);
	wire::put_le32(msg + wire::gpspm_msg::RKEY, rkey);
	wire::put_le64(msg + wire::gpspm_msg::RADDR, raddr);
}

inline void gpspm_encode_len(uint8_t *msg, uint64_t len)
{
	wire::put_le64(msg + wire::gpspm_msg::LEN, len);
}

/* Encodes an answer into the GPSPM_ANSWER_SIZE bytes at msg. */
void gpspm_encode_answer(uint8_t *msg, uint32_t slot, uint32_t seq, uint8_t status);

/* The status of the completion of a request the target answered with status. */
ibv_wc_status gpspm_answer_wc_status(uint8_t status);

/*
 * Whether [raddr, raddr + len) lies inside the size bytes at base, without
 * overflow: what a request must ask for to be served.
 */
inline bool gpspm_range_inside(uint64_t base, uint64_t size, uint64_t raddr, uint64_t len)
{
	return raddr >= base && raddr - base <= size && len <= size - (raddr - base);
}

} /* namespace rpma */

#endif /* RPMA_GPSPM_WIRE_HPP */
