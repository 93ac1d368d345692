/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_psk.c -- examples/common/psk.h, the pre-shared key handshake of
 * rpma-mirror and the replicated log, on any bytes
 *
 * The first byte chooses what the rest is:
 *
 *   0  an --allow argument: psk_allow_parse() accepts exactly an IPv4 or
 *      IPv6 address of at most 46 characters, then nothing or a slash and
 *      decimal digits no greater than the address's bits; what it accepts
 *      has the family's prefix bounds, and reads back the same from the
 *      text inet_ntop() makes of it
 *   1  a rule (family, address, prefix) and a peer (family, address):
 *      psk_allowed() lets the peer in exactly when the rule's first
 *      prefix bits are the peer's (IPv4 peers seen as ::ffff:a.b.c.d
 *      too), and no rule at all lets anyone in; psk_addr_str() writes
 *      what inet_pton() reads back as the peer's address
 *   2  an answer, its length and where its MAC lies: psk_answer_mac()
 *      refuses exactly the fields that do not lie in an answer of at most
 *      255 bytes, and then writes nothing; else its MAC does not depend
 *      on the field's bytes, and does on every other byte
 *   3  a client's nonce (also its address), a challenge and a request:
 *      the server's proof and the client's MAC change with any byte they
 *      cover (one change an input), neither is the other, and psk_equal()
 *      tells a MAC from one with any byte changed
 *   4  a client's address and a challenge a peer makes up:
 *      psk_challenge_check() takes a challenge given to that address, and
 *      no made-up one, none with any byte changed, none for another
 *      address, none made too long ago, and none used by
 *      psk_challenge_use(); that one takes a checked challenge while a
 *      used one's place has expired, and refuses it once every place holds
 *      one that has not
 */

#include <arpa/inet.h>
#include <stdbool.h>

#include "fuzz.h"
#include "fuzz_psk_key.h"
#include "psk.h"

static struct psk key;
static struct psk_challenges challenges;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_psk_key(&key);
	return 0;
}

/* the bytes past the first, zeros when the input ends before them */
static uint8_t at(const uint8_t *data, size_t size, size_t i)
{
	return i < size ? data[i] : 0;
}

static void fuzz_allow_parse(const uint8_t *data, size_t size)
{
	/* a string of the input's bytes: what getopt hands over, up to its first NUL */
	char *arg = (char *)malloc(size + 1);
	struct psk_allow a;

	REQUIRE(arg != NULL);
	memcpy(arg, data, size);
	arg[size] = '\0';
	memset(&a, 0xa5, sizeof(a));
	int ret = psk_allow_parse(arg, &a);

	/* the model: an address, then nothing or "/" and decimal digits up to its bits */
	const char *slash = strchr(arg, '/');
	size_t hlen = slash ? (size_t)(slash - arg) : strlen(arg);
	char host[INET6_ADDRSTRLEN + 1];
	uint8_t addr[16] = { 0 };
	int family = 0, max = 0;
	bool ok = hlen > 0 && hlen <= INET6_ADDRSTRLEN;

	if (ok) {
		memcpy(host, arg, hlen);
		host[hlen] = '\0';
		if (inet_pton(AF_INET, host, addr) == 1) {
			family = AF_INET;
			max = 32;
		} else if (inet_pton(AF_INET6, host, addr) == 1) {
			family = AF_INET6;
			max = 128;
		} else {
			ok = false;
		}
	}
	long prefix = max;
	if (ok && slash) {
		const char *d = slash + 1;

		ok = *d != '\0';
		prefix = 0;
		for (; ok && *d; d++) {
			ok = *d >= '0' && *d <= '9';
			if (prefix <= max)
				prefix = prefix * 10 + (*d - '0');
		}
		ok = ok && prefix <= max;
	}

	if (!ok) {
		REQUIRE(ret == -1);
		free(arg);
		return;
	}
	REQUIRE(ret == 0);
	REQUIRE(a.family == family && a.prefix == prefix);
	REQUIRE(a.prefix >= 0 && a.prefix <= max);
	REQUIRE(memcmp(a.addr, addr, sizeof(addr)) == 0);

	/* what it took, written out again, is taken the same */
	char text[INET6_ADDRSTRLEN + 8];
	struct psk_allow again;

	REQUIRE(inet_ntop(a.family, a.addr, text, sizeof(text)) != NULL);
	snprintf(text + strlen(text), sizeof(text) - strlen(text), "/%d", a.prefix);
	REQUIRE(psk_allow_parse(text, &again) == 0);
	REQUIRE(memcmp(&again, &a, sizeof(a)) == 0);
	free(arg);
}

static bool bit(const uint8_t *p, int i)
{
	return (p[i / 8] >> (7 - i % 8)) & 1;
}

static bool prefix_equal(const uint8_t *x, const uint8_t *y, int bits)
{
	for (int i = 0; i < bits; i++)
		if (bit(x, i) != bit(y, i))
			return false;
	return true;
}

static void fuzz_allowed(const uint8_t *data, size_t size)
{
	/* [0] rule: bit 0 IPv6, the rest the prefix; [1] the peer's family; [2] how it is made */
	const bool rule_v6 = at(data, size, 0) & 1;
	const int max = rule_v6 ? 128 : 32;
	const int prefix = (at(data, size, 0) >> 1) % (max + 1);
	const uint8_t kind = at(data, size, 1) % 3, how = at(data, size, 2);
	uint8_t rule_addr[16] = { 0 }, peer_addr[16];

	for (int i = 0; i < (rule_v6 ? 16 : 4); i++)
		rule_addr[i] = at(data, size, 3 + (size_t)i);
	for (int i = 0; i < 16; i++)
		peer_addr[i] = at(data, size, 19 + (size_t)i);

	/* the rule, as --allow gives it */
	char text[INET6_ADDRSTRLEN + 8];
	struct psk_allow rule;

	REQUIRE(inet_ntop(rule_v6 ? AF_INET6 : AF_INET, rule_addr, text, sizeof(text)) != NULL);
	snprintf(text + strlen(text), sizeof(text) - strlen(text), "/%d", prefix);
	REQUIRE(psk_allow_parse(text, &rule) == 0);
	REQUIRE(rule.prefix == prefix && memcmp(rule.addr, rule_addr, sizeof(rule_addr)) == 0);

	/* the peer: often near the rule, so that both answers come */
	const uint8_t *v4 = NULL, *v6 = NULL;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (kind == 0) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		if (how & 1)
			memcpy(peer_addr, rule_addr, 4);
		if (how & 2)
			peer_addr[(how >> 2) % 4] ^= (uint8_t)(1u << (how >> 4) % 8);
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, peer_addr, 4);
		v4 = peer_addr;
	} else if (kind == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		if (how & 1)
			memcpy(peer_addr, rule_addr, 16);
		if (how & 8) {
			/* an IPv4 peer as an IPv6 socket sees it */
			memmove(peer_addr + 12, (how & 1) ? rule_addr : peer_addr, 4);
			memcpy(peer_addr, mapped, sizeof(mapped));
		}
		if (how & 2)
			peer_addr[(how >> 4) % 16] ^= (uint8_t)(1u << (how >> 2) % 8);
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, peer_addr, 16);
		v6 = peer_addr;
		if (memcmp(peer_addr, mapped, sizeof(mapped)) == 0)
			v4 = peer_addr + 12;
	} else {
		ss.ss_family = AF_UNIX;
	}

	bool want = rule_v6 ? v6 && prefix_equal(rule.addr, v6, prefix)
			    : v4 && prefix_equal(rule.addr, v4, prefix);

	REQUIRE(psk_allowed(&rule, 1, &ss) == want);
	REQUIRE(psk_allowed(NULL, 0, &ss));

	/* the address in the log */
	char buf[INET6_ADDRSTRLEN + 32];
	uint8_t back[16];

	REQUIRE(psk_addr_str(&ss, buf, sizeof(buf)) == buf);
	REQUIRE(strlen(buf) < sizeof(buf));
	if (kind == 0)
		REQUIRE(inet_pton(AF_INET, buf, back) == 1 && memcmp(back, peer_addr, 4) == 0);
	else if (kind == 1)
		REQUIRE(inet_pton(AF_INET6, buf, back) == 1 && memcmp(back, peer_addr, 16) == 0);
	else
		REQUIRE(strcmp(buf, "(an address of family 1)") == 0);
}

static const uint8_t challenge0[PSK_NONCE] = "challenge-0123\n";
static const uint8_t nonce0[PSK_NONCE] = "client-nonce-01";

static void fuzz_answer_mac(const uint8_t *data, size_t size)
{
	/* [0..1] the answer's length, [2..3] where its MAC lies, [4..5] bytes to change */
	const size_t len = (at(data, size, 0) | (size_t)at(data, size, 1) << 8) % 300;
	const size_t mac_at = (at(data, size, 2) | (size_t)at(data, size, 3) << 8) % 300;
	const uint8_t inside = at(data, size, 4), outside = at(data, size, 5);
	uint8_t *answer = (uint8_t *)calloc(len ? len : 1, 1);
	uint8_t mac[PSK_MAC_SHORT], again[PSK_MAC_SHORT];

	REQUIRE(answer != NULL);
	for (size_t i = 0; i < len; i++)
		answer[i] = at(data, size, 6 + i);
	memset(mac, 0xa5, sizeof(mac));
	bool ret = psk_answer_mac(&key, "fuzz", challenge0, nonce0, answer, len, mac_at, mac);

	if (len > PSK_ANSWER_MAX || len < PSK_MAC_SHORT || mac_at > len - PSK_MAC_SHORT) {
		REQUIRE(!ret);
		for (size_t i = 0; i < sizeof(mac); i++)
			REQUIRE(mac[i] == 0xa5);
		free(answer);
		return;
	}
	REQUIRE(ret);
	/* the field is taken as zeros: what the server put there does not count */
	answer[mac_at + inside % PSK_MAC_SHORT] ^= (uint8_t)(1 + inside / PSK_MAC_SHORT);
	REQUIRE(psk_answer_mac(&key, "fuzz", challenge0, nonce0, answer, len, mac_at, again));
	REQUIRE(memcmp(mac, again, sizeof(mac)) == 0);
	/* every other byte counts */
	if (len > PSK_MAC_SHORT) {
		size_t i = outside % (len - PSK_MAC_SHORT);

		if (i >= mac_at)
			i += PSK_MAC_SHORT;
		answer[i] ^= (uint8_t)(1 + outside / 2 % 255);
		REQUIRE(
		    psk_answer_mac(&key, "fuzz", challenge0, nonce0, answer, len, mac_at, again));
		REQUIRE(!psk_equal(mac, again, sizeof(mac)));
	}
	free(answer);
}

static void fuzz_proofs(const uint8_t *data, size_t size)
{
	/* [0] what to change, [1..16] the client's nonce, [17..32] the challenge, the request */
	const uint8_t change = at(data, size, 0);
	uint8_t nonce[PSK_NONCE], challenge[PSK_NONCE];
	uint8_t proof[PSK_PROOF], other[PSK_PROOF], mac[PSK_MAC_SHORT], mac2[PSK_MAC_SHORT];
	const size_t request_len = size > 33 ? size - 33 : 0;
	uint8_t *request = fuzz_copy(size > 33 ? data + 33 : data, request_len);

	struct psk_ends ends;

	for (size_t i = 0; i < PSK_NONCE; i++) {
		nonce[i] = at(data, size, 1 + i);
		challenge[i] = at(data, size, 17 + i);
	}
	/* the nonce's bytes stand for the client's address too */
	memcpy(ends.client, nonce, sizeof(ends.client));
	memset(ends.server, 0x11, sizeof(ends.server));
	memcpy(ends.client_qp, challenge, sizeof(ends.client_qp));
	psk_server_proof(&key, "fuzz", nonce, challenge, proof);
	psk_client_mac(&key, "fuzz", challenge, &ends, request, request_len, mac);
	/* what either side accepts is what the other computed, and nothing else */
	memcpy(other, proof, sizeof(other));
	REQUIRE(psk_equal(proof, other, PSK_PROOF));
	other[change % PSK_PROOF] ^= (uint8_t)(1u << change % 8);
	REQUIRE(!psk_equal(proof, other, PSK_PROOF));

	/* the proof of a server is no client's MAC: the labels keep them apart */
	REQUIRE(!psk_equal(mac, proof, PSK_MAC_SHORT));

	/* one change each time: an HMAC-SHA-256 costs more than all the rest */
	const int what = change / 2 % 5;

	if (what < 2) {
		/*
		 * a nonce or a challenge of another handshake, or another
		 * client address: another proof, another MAC
		 */
		if (change & 1)
			nonce[change / 8 % PSK_NONCE] ^= 0x80;
		else
			challenge[change / 8 % PSK_NONCE] ^= 0x01;
		memcpy(ends.client, nonce, sizeof(ends.client));
		if (what == 0) {
			psk_server_proof(&key, "fuzz", nonce, challenge, other);
			REQUIRE(!psk_equal(proof, other, PSK_PROOF));
		} else {
			psk_client_mac(&key, "fuzz", challenge, &ends, request, request_len, mac2);
			REQUIRE(!psk_equal(mac, mac2, PSK_MAC_SHORT));
		}
	} else if (what == 4) {
		/* the same addresses, another queue pair: a relay's own, another MAC */
		ends.client_qp[change / 8 % sizeof(ends.client_qp)] ^= 0x04;
		psk_client_mac(&key, "fuzz", challenge, &ends, request, request_len, mac2);
		REQUIRE(!psk_equal(mac, mac2, PSK_MAC_SHORT));
	} else if (request_len > 0) {
		/* what the client asks is bound to its MAC: a byte changed, or one fewer */
		if (what == 2)
			request[change % request_len] ^= 0x20;
		psk_client_mac(&key, "fuzz", challenge, &ends, request,
			       request_len - (what == 3 ? 1 : 0), mac2);
		REQUIRE(!psk_equal(mac, mac2, PSK_MAC_SHORT));
	}
	free(request);
}

static void fuzz_challenges(const uint8_t *data, size_t size)
{
	/*
	 * [0] what to change and, 0 in 8, every used place taken first;
	 * [1..16] the client's address; [17..32] a challenge the peer makes
	 * up; [33..96] how long each used place has left (0: expired)
	 */
	const uint8_t change = at(data, size, 0);
	uint8_t client[16], other[16], made_up[PSK_NONCE], challenge[PSK_NONCE], bent[PSK_NONCE];

	for (size_t i = 0; i < 16; i++) {
		client[i] = at(data, size, 1 + i);
		made_up[i] = at(data, size, 17 + i);
	}
	/*
	 * A new secret each time: a challenge given for an earlier input (which
	 * the fuzzer sees compared, and may offer back) is none of this one's
	 */
	psk_challenges_init(&challenges);
	psk_challenge_issue(&challenges, client, challenge);
	REQUIRE(psk_challenge_check(&challenges, client, challenge) == NULL);

	/* any challenge the peer makes up is none of ours */
	REQUIRE(psk_challenge_check(&challenges, client, made_up) != NULL ||
		memcmp(made_up, challenge, PSK_NONCE) == 0);
	/* nor is ours with a byte changed, or given to another address */
	memcpy(bent, challenge, PSK_NONCE);
	bent[change % PSK_NONCE] ^= (uint8_t)(1u << change / 16 % 8);
	REQUIRE(psk_challenge_check(&challenges, client, bent) != NULL);
	memcpy(other, client, sizeof(other));
	other[change / 8 % 16] ^= 0x10;
	REQUIRE(psk_challenge_check(&challenges, other, challenge) != NULL);

	/* too old: as if the server had started PSK_CHALLENGE_TTL_S + 2 s earlier */
	const uint64_t start = challenges.start_ms;

	challenges.start_ms = start - (PSK_CHALLENGE_TTL_S + 2) * 1000ull;
	REQUIRE(psk_challenge_check(&challenges, client, challenge) != NULL);
	challenges.start_ms = start;
	REQUIRE(psk_challenge_check(&challenges, client, challenge) == NULL);

	/*
	 * Every used place taken, each with as long to live as the input says
	 * (seconds, far from now), or expired: a use takes an expired place,
	 * and is refused when there is none
	 */
	bool room = true;

	if (change % 8 == 0) {
		const uint64_t now = psk_now_ms();

		room = false;
		for (int i = 0; i < PSK_CHALLENGES; i++) {
			const uint8_t ttl = at(data, size, 33 + (size_t)i);

			challenges.used[i].challenge[0] = (uint8_t)i;
			memcpy(challenges.used[i].challenge + 1, made_up + 1, PSK_NONCE - 1);
			challenges.used[i].expires_ms = ttl ? now + 2000 + ttl * 100ull : now - 1;
			room |= ttl == 0;
		}
	}
	REQUIRE(psk_challenge_use(&challenges, challenge) == room);
	if (!room)
		return;
	/* it serves once */
	REQUIRE(psk_challenge_check(&challenges, client, challenge) != NULL);
	psk_challenge_issue(&challenges, client, bent);
	REQUIRE(memcmp(bent, challenge, PSK_NONCE) != 0);
	REQUIRE(psk_challenge_check(&challenges, client, bent) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	/* each part takes its own copy: a read past the input is seen */
	uint8_t *bytes = fuzz_copy(data + 1, size - 1);

	switch (data[0] % 5) {
	case 0:
		fuzz_allow_parse(bytes, size - 1);
		break;
	case 1:
		fuzz_allowed(bytes, size - 1);
		break;
	case 2:
		fuzz_answer_mac(bytes, size - 1);
		break;
	case 3:
		fuzz_proofs(bytes, size - 1);
		break;
	default:
		fuzz_challenges(bytes, size - 1);
		break;
	}
	free(bytes);
	return 0;
}
