// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_gpspm_message.cpp -- rpma::gpspm_decode on any bytes, and the range
 * check a request must pass
 *
 * A GPSPM message is what a peer puts in the receive buffers the library
 * keeps posted (doc/wire-format.md): [0..1] magic 0x5047 little-endian,
 * [2] version 1, [3] type, [4..7] slot, [8..11] seq; a request (type 1)
 * adds [12..15] rkey, [16..23] address, [24..31] length, an answer (type 2)
 * [12] status. Whatever the bytes and their count, the decoder reads
 * nothing past them, tells the kind the layout says, with exactly the
 * fields it says, and nothing else; a request's range is inside a region
 * exactly when it is in exact arithmetic.
 */

#include <cstring>

#include "fuzz.h"
#include "gpspm_wire.hpp"

using namespace rpma;

namespace
{

uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

} /* namespace */

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a receive buffer is at most 64 bytes; more is still only bytes */
	const uint32_t len = size > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(size);
	uint8_t *bytes = fuzz_copy(data, len);
	gpspm_message m;
	memset(&m, 0xa5, sizeof(m));
	const gpspm_kind kind = gpspm_decode(bytes, len, &m);

	if (len < 12 || le(bytes, 2) != 0x5047 || bytes[2] != 1) {
		REQUIRE(kind == GPSPM_KIND_FOREIGN);
		/* nothing taken from the bytes */
		REQUIRE(m.type == 0 && m.slot == 0 && m.seq == 0 && m.rkey == 0 && m.raddr == 0 &&
			m.len == 0 && m.status == 0);
	} else {
		REQUIRE(m.type == bytes[3]);
		REQUIRE(m.slot == le(bytes + 4, 4));
		REQUIRE(m.seq == le(bytes + 8, 4));
		if (bytes[3] == 1 && len >= 32) {
			REQUIRE(kind == GPSPM_KIND_REQUEST);
			REQUIRE(m.rkey == le(bytes + 12, 4));
			REQUIRE(m.raddr == le(bytes + 16, 8));
			REQUIRE(m.len == le(bytes + 24, 8));
			REQUIRE(m.status == 0);
		} else if (bytes[3] == 1) {
			REQUIRE(kind == GPSPM_KIND_SHORT_REQUEST);
		} else if (bytes[3] == 2 && len >= 16) {
			REQUIRE(kind == GPSPM_KIND_ANSWER);
			REQUIRE(m.status == bytes[12]);
			REQUIRE(m.rkey == 0 && m.raddr == 0 && m.len == 0);
		} else if (bytes[3] == 2) {
			REQUIRE(kind == GPSPM_KIND_SHORT_ANSWER);
		} else if (bytes[3] == 3 && len >= 32) {
			REQUIRE(kind == GPSPM_KIND_ATOMIC_WRITE);
			REQUIRE(m.rkey == le(bytes + 12, 4));
			REQUIRE(m.raddr == le(bytes + 16, 8));
			REQUIRE(memcmp(m.value, bytes + 24, 8) == 0);
			REQUIRE(m.len == 0 && m.status == 0);
		} else if (bytes[3] == 3) {
			REQUIRE(kind == GPSPM_KIND_SHORT_REQUEST);
		} else {
			REQUIRE(kind == GPSPM_KIND_UNKNOWN_TYPE);
		}
		if (kind != GPSPM_KIND_REQUEST && kind != GPSPM_KIND_ANSWER &&
		    kind != GPSPM_KIND_ATOMIC_WRITE)
			REQUIRE(m.rkey == 0 && m.raddr == 0 && m.len == 0 && m.status == 0);
	}

	/* the range check, against a region the input also chooses */
	if (kind == GPSPM_KIND_REQUEST && len >= 48) {
		const uint64_t base = le(bytes + 32, 8), rsize = le(bytes + 40, 8);
		const unsigned __int128 first = m.raddr, end = first + m.len;
		const bool inside = first >= base && end <= (unsigned __int128)base + rsize;
		REQUIRE(gpspm_range_inside(base, rsize, m.raddr, m.len) == inside);
	}
	free(bytes);
	return 0;
}
