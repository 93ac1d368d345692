// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_gpspm_decode.cpp -- the decoder of GPSPM messages and the range check
 * of requests, fed every kind of message a peer can send: well-formed ones,
 * and short, foreign, of another version or type, and asking for ranges
 * that overflow or leave the region
 *
 * The messages are built here byte by byte, as doc/wire-format.md lays
 * them out: [0..1] magic 0x5047 little-endian, [2] version 1, [3] type (1
 * request, 2 answer, 3 atomic write), [4..7] slot, [8..11] seq; a request
 * adds [12..15] rkey, [16..23] address, [24..31] length (32 bytes); an
 * atomic write the same with [24..31] the 8 bytes to store; an answer adds
 * [12] status (16 bytes).
 */

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <csetjmp>
#include <initializer_list>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#include <librpma.h>

#include "gpspm_wire.hpp"

using rpma::gpspm_decode;
using rpma::gpspm_kind;
using rpma::gpspm_message;
using rpma::gpspm_range_inside;

namespace
{

constexpr uint32_t SLOT = 0x04030201;
constexpr uint32_t SEQ = 0x0d0c0b0a;
constexpr uint32_t RKEY = 0x14131211;
constexpr uint64_t RADDR = 0x2827262524232221ULL;
constexpr uint64_t LEN = 0x3837363534333231ULL;

void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void header(uint8_t *m, uint8_t type)
{
	m[0] = 0x47; /* "GP" read as a little-endian 0x5047 */
	m[1] = 0x50;
	m[2] = 1;
	m[3] = type;
	put_le(m + 4, SLOT, 4);
	put_le(m + 8, SEQ, 4);
}

/* a request of 64 bytes: 32 of it, then what a later version might add */
void request(uint8_t m[64])
{
	memset(m, 0xa5, 64);
	header(m, 1);
	put_le(m + 12, RKEY, 4);
	put_le(m + 16, RADDR, 8);
	put_le(m + 24, LEN, 8);
}

void answer(uint8_t m[64], uint8_t status)
{
	memset(m, 0xa5, 64);
	header(m, 2);
	m[12] = status;
	m[13] = m[14] = m[15] = 0;
}

/*
 * What read(at) returns, with the first len bytes of msg copied to at, the
 * very end of a readable page: a read beyond them faults.
 */
template <typename Read> auto at_page_end(const uint8_t *msg, uint32_t len, Read read)
{
	const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
	void *map =
	    mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	auto *base = static_cast<uint8_t *>(map);
	assert_int_equal(mprotect(base + page, page, PROT_NONE), 0);
	uint8_t *at = base + page - len;
	if (len)
		memcpy(at, msg, len);
	const auto result = read(static_cast<const uint8_t *>(at));
	munmap(map, 2 * page);
	return result;
}

/*
 * Decodes the first len bytes of msg from the very end of a readable page
 * (at_page_end); the message starts stale, so that a field left over shows.
 */
gpspm_kind decode(const uint8_t *msg, uint32_t len, gpspm_message *m)
{
	memset(m, 0xff, sizeof(*m));
	return at_page_end(msg, len, [&](const uint8_t *at) { return gpspm_decode(at, len, m); });
}

/*
 * What the two decoders of the data path, gpspm_decode_answer() and
 * gpspm_decode_request(), make of the first len bytes of msg, each fed
 * from the very end of a readable page as decode() feeds gpspm_decode().
 */
struct fast_decoded {
	bool answer, request;
	uint32_t answer_slot, answer_seq;
	uint8_t answer_status;
	gpspm_message request_m;
};

fast_decoded decode_fast(const uint8_t *msg, uint32_t len)
{
	return at_page_end(msg, len, [len](const uint8_t *at) {
		fast_decoded d;
		memset(&d, 0xff, sizeof(d));
		d.answer = rpma::gpspm_decode_answer(at, len, &d.answer_slot, &d.answer_seq,
						     &d.answer_status);
		d.request = rpma::gpspm_decode_request(at, len, &d.request_m);
		return d;
	});
}

/* nothing but the kind: every field zero */
void expect_empty(const gpspm_message &m)
{
	assert_int_equal(m.type, 0);
	assert_int_equal(m.slot, 0);
	assert_int_equal(m.seq, 0);
	assert_int_equal(m.rkey, 0);
	assert_int_equal(m.raddr, 0);
	assert_int_equal(m.len, 0);
	assert_int_equal(m.status, 0);
}

/* the header's fields, and none of the body's */
void expect_header_only(const gpspm_message &m, uint8_t type)
{
	assert_int_equal(m.type, type);
	assert_int_equal(m.slot, SLOT);
	assert_int_equal(m.seq, SEQ);
	assert_int_equal(m.rkey, 0);
	assert_int_equal(m.raddr, 0);
	assert_int_equal(m.len, 0);
	assert_int_equal(m.status, 0);
}

unsigned log_calls;

void count_log(enum rpma_log_level, const char *, const int, const char *, const char *, ...)
{
	log_calls++;
}

int setup(void **)
{
	log_calls = 0;
	/* everything down to DEBUG reaches the function: the decoder must send none */
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG), 0);
	assert_int_equal(rpma_log_set_function(count_log), 0);
	return 0;
}

int teardown(void **)
{
	assert_int_equal(rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING), 0);
	/* a pure function: whatever it was fed, it said nothing */
	assert_int_equal(log_calls, 0);
	return 0;
}

void request_well_formed(void **)
{
	uint8_t msg[64];
	request(msg);
	gpspm_message m;
	/* exactly 32 bytes, and any longer message up to a receive buffer */
	for (uint32_t len = 32; len <= 64; len++) {
		assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_REQUEST);
		assert_int_equal(m.type, 1);
		assert_int_equal(m.slot, SLOT);
		assert_int_equal(m.seq, SEQ);
		assert_int_equal(m.rkey, RKEY);
		assert_int_equal(m.raddr, RADDR);
		assert_int_equal(m.len, LEN);
		assert_int_equal(m.status, 0);
	}
}

void answer_well_formed(void **)
{
	uint8_t msg[64];
	gpspm_message m;
	/* every status, known or not, comes through for the caller to judge */
	for (int status = 0; status <= 255; status++) {
		answer(msg, static_cast<uint8_t>(status));
		for (uint32_t len : { 16u, 17u, 32u, 64u }) {
			assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_ANSWER);
			assert_int_equal(m.type, 2);
			assert_int_equal(m.slot, SLOT);
			assert_int_equal(m.seq, SEQ);
			assert_int_equal(m.status, status);
			assert_int_equal(m.rkey, 0);
			assert_int_equal(m.raddr, 0);
			assert_int_equal(m.len, 0);
		}
	}
}

/* an atomic write: the value is the 8 bytes as they came, in no byte order */
void atomic_write_well_formed(void **)
{
	uint8_t msg[64];
	request(msg);
	msg[3] = 3;
	gpspm_message m;
	for (uint32_t len = 32; len <= 64; len++) {
		assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_ATOMIC_WRITE);
		assert_int_equal(m.type, 3);
		assert_int_equal(m.slot, SLOT);
		assert_int_equal(m.seq, SEQ);
		assert_int_equal(m.rkey, RKEY);
		assert_int_equal(m.raddr, RADDR);
		assert_memory_equal(m.value, msg + 24, 8);
		assert_int_equal(m.len, 0);
	}
	/* cut short: the header is there, the write can be refused */
	for (uint32_t len = 12; len < 32; len++) {
		assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_SHORT_REQUEST);
		expect_header_only(m, 3);
	}
}

/* shorter than a header: nothing is read as a field */
void short_header(void **)
{
	uint8_t req[64], ans[64];
	request(req);
	answer(ans, 0);
	gpspm_message m;
	for (uint32_t len = 0; len < 12; len++) {
		assert_int_equal(decode(req, len, &m), rpma::GPSPM_KIND_FOREIGN);
		expect_empty(m);
		assert_int_equal(decode(ans, len, &m), rpma::GPSPM_KIND_FOREIGN);
		expect_empty(m);
	}
}

void short_request(void **)
{
	uint8_t msg[64];
	request(msg);
	gpspm_message m;
	/* the header is there: the caller can answer the flush it names */
	for (uint32_t len = 12; len < 32; len++) {
		assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_SHORT_REQUEST);
		expect_header_only(m, 1);
	}
}

void short_answer(void **)
{
	uint8_t msg[64];
	answer(msg, 3);
	gpspm_message m;
	for (uint32_t len = 12; len < 16; len++) {
		assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_SHORT_ANSWER);
		expect_header_only(m, 2);
	}
}

void wrong_magic(void **)
{
	static const uint8_t magics[][2] = {
		{ 0x50, 0x47 }, /* big-endian: "PG" */
		{ 0x46, 0x50 }, { 0x47, 0x51 }, { 0x00, 0x00 }, { 0xff, 0xff }, { 0x47, 0x00 },
	};
	gpspm_message m;
	for (const auto &magic : magics) {
		uint8_t msg[64];
		request(msg);
		msg[0] = magic[0];
		msg[1] = magic[1];
		assert_int_equal(decode(msg, 32, &m), rpma::GPSPM_KIND_FOREIGN);
		expect_empty(m);
		answer(msg, 0);
		msg[0] = magic[0];
		msg[1] = magic[1];
		assert_int_equal(decode(msg, 16, &m), rpma::GPSPM_KIND_FOREIGN);
		expect_empty(m);
	}
}

void other_version(void **)
{
	gpspm_message m;
	for (int version : { 0, 2, 3, 0x81, 0xff }) {
		uint8_t msg[64];
		request(msg);
		msg[2] = static_cast<uint8_t>(version);
		assert_int_equal(decode(msg, 32, &m), rpma::GPSPM_KIND_FOREIGN);
		expect_empty(m);
		answer(msg, 0);
		msg[2] = static_cast<uint8_t>(version);
		assert_int_equal(decode(msg, 16, &m), rpma::GPSPM_KIND_FOREIGN);
		expect_empty(m);
	}
}

/* another type: the header is read, so that the flush can be refused */
void unknown_type(void **)
{
	gpspm_message m;
	for (int type : { 0, 4, 0x7f, 0x80, 0xff }) {
		uint8_t msg[64];
		request(msg);
		msg[3] = static_cast<uint8_t>(type);
		for (uint32_t len : { 12u, 16u, 32u, 64u }) {
			assert_int_equal(decode(msg, len, &m), rpma::GPSPM_KIND_UNKNOWN_TYPE);
			expect_header_only(m, static_cast<uint8_t>(type));
		}
	}
}

/* every length, every type byte: the kind follows the rules of the wire format */
void every_length_and_type(void **)
{
	gpspm_message m;
	for (int type = 0; type <= 255; type++) {
		uint8_t msg[64];
		request(msg);
		msg[3] = static_cast<uint8_t>(type);
		for (uint32_t len = 0; len <= 64; len++) {
			gpspm_kind want;
			if (len < 12)
				want = rpma::GPSPM_KIND_FOREIGN;
			else if (type == 1)
				want = len < 32 ? rpma::GPSPM_KIND_SHORT_REQUEST
						: rpma::GPSPM_KIND_REQUEST;
			else if (type == 2)
				want = len < 16 ? rpma::GPSPM_KIND_SHORT_ANSWER
						: rpma::GPSPM_KIND_ANSWER;
			else if (type == 3)
				want = len < 32 ? rpma::GPSPM_KIND_SHORT_REQUEST
						: rpma::GPSPM_KIND_ATOMIC_WRITE;
			else
				want = rpma::GPSPM_KIND_UNKNOWN_TYPE;
			if (decode(msg, len, &m) != want)
				fail_msg("type %d, %u bytes: kind %d, expected %d", type, len,
					 static_cast<int>(gpspm_decode(msg, len, &m)),
					 static_cast<int>(want));
		}
	}
}

/*
 * The data path's two decoders take a message exactly when gpspm_decode()
 * says it is a whole answer or a whole request, and read the same fields:
 * every length up to a receive buffer, every type byte, and headers of
 * another magic or version.
 */
void fast_decoders_agree(void **)
{
	static const uint8_t heads[][3] = {
		{ 0x47, 0x50, 1 },					    /* this version */
		{ 0x47, 0x50, 0 }, { 0x47, 0x50, 2 }, { 0x47, 0x50, 0xff }, /* other versions */
		{ 0x50, 0x47, 1 }, { 0x46, 0x50, 1 }, { 0x47, 0x51, 1 },    /* other magics */
	};
	unsigned answers = 0, requests = 0;
	for (const auto &head : heads) {
		for (int type = 0; type <= 255; type++) {
			uint8_t msg[64];
			request(msg);
			msg[0] = head[0];
			msg[1] = head[1];
			msg[2] = head[2];
			msg[3] = static_cast<uint8_t>(type);
			for (uint32_t len = 0; len <= 64; len++) {
				gpspm_message m;
				const gpspm_kind kind = decode(msg, len, &m);
				const fast_decoded d = decode_fast(msg, len);
				if (d.answer != (kind == rpma::GPSPM_KIND_ANSWER) ||
				    d.request != (kind == rpma::GPSPM_KIND_REQUEST))
					fail_msg("head %02x %02x %02x, type %d, %u bytes: kind %d, "
						 "answer %d, request %d",
						 head[0], head[1], head[2], type, len,
						 static_cast<int>(kind), d.answer, d.request);
				if (d.answer) {
					answers++;
					assert_int_equal(d.answer_slot, m.slot);
					assert_int_equal(d.answer_seq, m.seq);
					assert_int_equal(d.answer_status, m.status);
				}
				if (d.request) {
					requests++;
					assert_int_equal(d.request_m.type, m.type);
					assert_int_equal(d.request_m.slot, m.slot);
					assert_int_equal(d.request_m.seq, m.seq);
					assert_int_equal(d.request_m.rkey, m.rkey);
					assert_int_equal(d.request_m.raddr, m.raddr);
					assert_int_equal(d.request_m.len, m.len);
				}
			}
		}
	}
	/* this version's answers of 16 to 64 bytes, its requests of 32 to 64 */
	assert_int_equal(answers, 49);
	assert_int_equal(requests, 33);
}

/*
 * Requests whose range overflows or leaves the region decode as requests
 * (the decoder does not know the regions), and the range check refuses
 * them.
 */
void range_overflow_and_past_the_region(void **)
{
	const uint64_t base = 0x7f0000400000ULL;
	const uint64_t size = 8192;
	static const struct {
		uint64_t raddr, len;
	} refused[] = {
		{ base - 1, 8 },	      /* starts before */
		{ base - 1, 1 },	      /* ends at the first byte, starts before */
		{ base + size - 8, 9 },	      /* ends after */
		{ base + size, 1 },	      /* starts at the end */
		{ base + size + 1, 0 },	      /* empty, but beyond */
		{ base, size + 1 },	      /* one byte too long */
		{ base + 8, UINT64_MAX },     /* raddr + len overflows */
		{ base + 8, UINT64_MAX - 7 }, /* ends exactly at 2^64 */
		{ UINT64_MAX - 3, 16 },	      /* the address wraps */
		{ UINT64_MAX, 1 },	      /* the last address */
		{ 0, 8 },		      /* the first */
		{ base - size, 2 * size },    /* covers the region and more */
	};
	gpspm_message m;
	for (const auto &r : refused) {
		uint8_t msg[64];
		request(msg);
		put_le(msg + 16, r.raddr, 8);
		put_le(msg + 24, r.len, 8);
		assert_int_equal(decode(msg, 32, &m), rpma::GPSPM_KIND_REQUEST);
		assert_int_equal(m.raddr, r.raddr);
		assert_int_equal(m.len, r.len);
		if (gpspm_range_inside(base, size, m.raddr, m.len))
			fail_msg("%#llx + %llu accepted in a region of %llu bytes at %#llx",
				 static_cast<unsigned long long>(r.raddr),
				 static_cast<unsigned long long>(r.len),
				 static_cast<unsigned long long>(size),
				 static_cast<unsigned long long>(base));
	}
}

void range_inside(void **)
{
	const uint64_t base = 0x7f0000400000ULL;
	const uint64_t size = 8192;
	assert_true(gpspm_range_inside(base, size, base, size));
	assert_true(gpspm_range_inside(base, size, base, 1));
	assert_true(gpspm_range_inside(base, size, base + size - 1, 1));
	assert_true(gpspm_range_inside(base, size, base + 100, 300));
	/* empty ranges inside, or at the very end */
	assert_true(gpspm_range_inside(base, size, base, 0));
	assert_true(gpspm_range_inside(base, size, base + size, 0));
	/* a region at the top of the address space, and one of 0 bytes */
	assert_true(gpspm_range_inside(UINT64_MAX - 15, 16, UINT64_MAX - 15, 16));
	assert_false(gpspm_range_inside(UINT64_MAX - 15, 16, UINT64_MAX - 15, 17));
	assert_true(gpspm_range_inside(base, 0, base, 0));
	assert_false(gpspm_range_inside(base, 0, base, 1));
	assert_false(gpspm_range_inside(base, 0, base + 1, 0));
}

} /* namespace */

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(request_well_formed, setup, teardown),
		cmocka_unit_test_setup_teardown(answer_well_formed, setup, teardown),
		cmocka_unit_test_setup_teardown(atomic_write_well_formed, setup, teardown),
		cmocka_unit_test_setup_teardown(short_header, setup, teardown),
		cmocka_unit_test_setup_teardown(short_request, setup, teardown),
		cmocka_unit_test_setup_teardown(short_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(wrong_magic, setup, teardown),
		cmocka_unit_test_setup_teardown(other_version, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_type, setup, teardown),
		cmocka_unit_test_setup_teardown(every_length_and_type, setup, teardown),
		cmocka_unit_test_setup_teardown(fast_decoders_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(range_overflow_and_past_the_region, setup,
						teardown),
		cmocka_unit_test_setup_teardown(range_inside, setup, teardown),
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("gpspm_decode", tests, nullptr, nullptr);
}
