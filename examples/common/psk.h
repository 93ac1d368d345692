/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * psk.h -- a pre-shared key, a challenge and response over the connection
 *          private data, and an address allow list: what a server that
 *          hands out RDMA write access to its memory checks before it
 *          says where that memory is
 *
 * Shared by rpma-mirror (tools/) and 19-replicated-log. The handshake takes
 * two connections, since a connection carries private data only once each
 * way (the request, then the answer):
 *
 *   1. HELLO: the client asks with a fresh nonce Nc. The server answers, in
 *      the reject of the request (no queue pair is connected), with a
 *      challenge Ns and a proof that it holds the key:
 *      HMAC(K, label "/server" || Nc || Ns). It remembers nothing: Ns is
 *      the time it was made, a count, and a MAC under a secret of the
 *      server's own over both and the client's address, so that no number
 *      of HELLOs can push a client's challenge out of anything.
 *   2. PROVE: the client connects again with Ns and the first PSK_MAC_SHORT
 *      bytes of HMAC(K, label "/client" || Ns || the client's and the
 *      server's addresses as the client sees them || the number of the
 *      client's queue pair || what it asks). The server checks that Ns is
 *      its own, for this address, at most PSK_CHALLENGE_TTL_S seconds old
 *      and not used before, checks the MAC over the addresses as it sees
 *      them and the queue pair number the request names, marks Ns used (it
 *      serves once), and only then answers with its region's descriptors,
 *      themselves under HMAC(K, label "/answer" || Ns || the PROVE's MAC ||
 *      the answer).
 *
 * A client without the key learns nothing of the region; a recorded PROVE
 * is worth nothing (its challenge has been used), and neither is one
 * relayed from another address (the MAC covers both ends) or, where the
 * connection manager names the queue pair (InfiniBand, RoCE; not iWARP),
 * on a queue pair other than the client's. The client's
 * nonce reaches the answer through the server's proof: the answer is
 * bound to Ns, which that proof bound to Nc. HMAC-SHA-256,
 * the random numbers and the constant-time comparison come from libsodium,
 * which Debian keeps as a maintained package (libsodium23), whose
 * interface is small and hard to misuse, and which also gives BLAKE2b for
 * the digests of the data.
 *
 * Everything here is static: each program that includes it gets its own
 * copy, and needs -lsodium.
 */

#ifndef RPMA_EXAMPLES_PSK_H
#define RPMA_EXAMPLES_PSK_H 1

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

/*
 * Bytes of key at least: every HELLO hands out an HMAC under the key, so a
 * peer can try guesses offline; 32 bytes from a random source (psk_make)
 * put that out of reach, a short passphrase does not.
 */
#define PSK_MIN		    32
#define PSK_MAX		    1024			 /* bytes of key at most */
#define PSK_NONCE	    16				 /* bytes of a nonce or a challenge */
#define PSK_PROOF	    crypto_auth_hmacsha256_BYTES /* 32 */
#define PSK_MAC_SHORT	    16				 /* a MAC cut to fit a connection request */
#define PSK_CHALLENGES	    64 /* proven handshakes a server remembers at a time */
#define PSK_CHALLENGE_TTL_S 10 /* seconds a challenge can be answered in */

struct psk {
	unsigned char key[PSK_MAX];
	size_t len;
};

/*
 * Reads the key from path: 32 to 1024 bytes, one trailing newline (or
 * CRLF) not counted, so that psk_make(), `openssl rand -hex 32 >FILE`
 * and `head -c 32 /dev/urandom >FILE` all make a key. The file must be a
 * regular file (not a symbolic link) of the user or of root that neither
 * its group nor others can read or write, as ssh wants of a private key;
 * it is opened without blocking and checked on the descriptor opened, so
 * that a FIFO or a device given as the key cannot hang the program, nor
 * the file be swapped between the check and the read.
 * 0, or -1 with the reason in why.
 */
static inline int psk_load(const char *path, struct psk *k, char *why, size_t why_size)
{
	unsigned char buf[PSK_MAX + 3];
	struct stat st;
	ssize_t n;
	int fd;

	memset(k, 0, sizeof(*k));
	if (sodium_init() < 0) {
		snprintf(why, why_size, "libsodium cannot start");
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ELOOP) {
		snprintf(why, why_size,
			 "the key file %s is a symbolic link: give the file it points to", path);
		return -1;
	}
	if (fd < 0) {
		snprintf(why, why_size, "cannot open the key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "the key file %s is not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(why, why_size,
			 "the key file %s belongs to another user (uid %u): it must be yours or "
			 "root's",
			 path, (unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(why, why_size,
			 "the key file %s is open to its group or others (mode %03o): "
			 "chmod 600 %s",
			 path, (unsigned)(st.st_mode & 0777), path);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		snprintf(why, why_size, "cannot read the key file %s: %s", path, strerror(errno));
		return -1;
	}
	if (n > 0 && buf[n - 1] == '\n') {
		n--;
		if (n > 0 && buf[n - 1] == '\r')
			n--;
	}
	if (n < PSK_MIN || n > PSK_MAX) {
		snprintf(why, why_size, "the key in %s has %s%zd bytes; a key has %d to %d", path,
			 n > PSK_MAX ? "more than " : "", n > PSK_MAX ? (ssize_t)PSK_MAX : n,
			 PSK_MIN, PSK_MAX);
		sodium_memzero(buf, sizeof(buf));
		return -1;
	}
	memcpy(k->key, buf, (size_t)n);
	k->len = (size_t)n;
	sodium_memzero(buf, sizeof(buf));
	return 0;
}

/*
 * Makes a new key file at path: 32 bytes of libsodium's random source,
 * written as 64 hexadecimal digits and a newline (text, so that no byte
 * of the key is a newline that psk_load() would take away), mode 0600.
 * An existing file is never overwritten. 0, or -1 with the reason in why.
 */
static inline int psk_make(const char *path, char *why, size_t why_size)
{
	unsigned char raw[PSK_MIN];
	char hex[2 * PSK_MIN + 2];
	int fd;

	if (sodium_init() < 0) {
		snprintf(why, why_size, "libsodium cannot start");
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(why, why_size, "cannot make the key file %s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (a key file is never overwritten)" : "");
		return -1;
	}
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(hex, sizeof(hex) - 1, raw, sizeof(raw));
	sodium_memzero(raw, sizeof(raw));
	hex[2 * PSK_MIN] = '\n';
	/* the mode of the file made, whatever the umask took away or left */
	int bad = fchmod(fd, 0600) ||
		  write(fd, hex, 2 * PSK_MIN + 1) != (ssize_t)(2 * PSK_MIN + 1) || fsync(fd);
	const int err = errno;
	sodium_memzero(hex, sizeof(hex));
	if (close(fd) && !bad)
		bad = 1;
	if (bad) {
		snprintf(why, why_size, "cannot write the key file %s: %s", path, strerror(err));
		unlink(path);
		return -1;
	}
	return 0;
}

static inline void psk_wipe(struct psk *k)
{
	sodium_memzero(k, sizeof(*k));
}

static inline void psk_nonce(uint8_t nonce[PSK_NONCE])
{
	randombytes_buf(nonce, PSK_NONCE);
}

/* HMAC-SHA-256 of label, then each of up to three parts (NULL: none) */
static inline void psk_hmac(const struct psk *k, const char *label, const void *a, size_t alen,
			    const void *b, size_t blen, const void *c, size_t clen,
			    uint8_t out[PSK_PROOF])
{
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, k->key, k->len);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)label, strlen(label) + 1);
	if (a)
		crypto_auth_hmacsha256_update(&st, a, alen);
	if (b)
		crypto_auth_hmacsha256_update(&st, b, blen);
	if (c)
		crypto_auth_hmacsha256_update(&st, c, clen);
	crypto_auth_hmacsha256_final(&st, out);
	sodium_memzero(&st, sizeof(st));
}

/* constant time: a MAC compared byte by byte leaks how much of it is right */
static inline bool psk_equal(const void *a, const void *b, size_t len)
{
	return sodium_memcmp(a, b, len) == 0;
}

/* the server's answer to a HELLO: it holds the key */
static inline void psk_server_proof(const struct psk *k, const char *label,
				    const uint8_t client_nonce[PSK_NONCE],
				    const uint8_t challenge[PSK_NONCE], uint8_t proof[PSK_PROOF])
{
	char l[64];

	snprintf(l, sizeof(l), "%s/server", label);
	psk_hmac(k, l, client_nonce, PSK_NONCE, challenge, PSK_NONCE, NULL, 0, proof);
}

/*
 * The two ends of a connection, each as 16 bytes (an IPv4 address as
 * ::ffff:a.b.c.d), the client's first, and the client's queue pair: what
 * the client's MAC binds. Ports are left out: the connection manager picks
 * them, and the two sides do not always see the same.
 *
 * The queue pair number is the one the client's connection request names,
 * to which the server's queue pair is joined when it consents: a relay
 * that sends a client's PROVE from the client's address, but on a queue
 * pair of its own, presents a MAC over another number. InfiniBand's and
 * RoCE's connection managers carry it; iWARP's does not, and both sides
 * bind 0 there (the addresses alone).
 */
struct psk_ends {
	uint8_t client[16];
	uint8_t server[16];
	uint8_t client_qp[4]; /* little-endian; 0 on iWARP */
};

/* a's address as 16 bytes; false for a family without one */
static inline bool psk_ip16(const struct sockaddr_storage *a, uint8_t out[16])
{
	if (a->ss_family == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
		return true;
	}
	if (a->ss_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
		return true;
	}
	return false;
}

static inline void psk_le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> 8 * i);
}

/*
 * Both ends, from the client's address and the server's as this side sees
 * them (a client: rpma_conn_req_get_local_addr() and _get_peer_addr() of
 * its request; a server: the other way round), and the client's queue pair
 * (a client: rpma_conn_req_get_qp_num(), or 0 when its device is iWARP; a
 * server: rpma_conn_req_get_peer_qp_num(), or 0 when that says
 * RPMA_E_NOSUPP); false when one end has no address to bind.
 */
static inline bool psk_ends_make(struct psk_ends *e, const struct sockaddr_storage *client,
				 const struct sockaddr_storage *server, uint32_t client_qp)
{
	memset(e, 0, sizeof(*e));
	psk_le32_put(e->client_qp, client_qp);
	return psk_ip16(client, e->client) && psk_ip16(server, e->server);
}

/*
 * The client's answer to a challenge, bound to both ends of the connection
 * and to what it asks (`request`)
 */
static inline void psk_client_mac(const struct psk *k, const char *label,
				  const uint8_t challenge[PSK_NONCE], const struct psk_ends *ends,
				  const void *request, size_t request_len,
				  uint8_t mac[PSK_MAC_SHORT])
{
	uint8_t full[PSK_PROOF];
	char l[64];

	snprintf(l, sizeof(l), "%s/client", label);
	psk_hmac(k, l, challenge, PSK_NONCE, ends, sizeof(*ends), request, request_len, full);
	memcpy(mac, full, PSK_MAC_SHORT);
}

#define PSK_ANSWER_MAX 255 /* the most private data a connection carries */

/*
 * The server's answer to a proven client, its descriptors, not forged and
 * bound to the PROVE it answers (its challenge and its MAC): the
 * MAC of the answer's answer_len bytes with its own MAC field, the
 * PSK_MAC_SHORT bytes at mac_at, taken as zeros. Both sides call it on
 * the answer as it is (the server's before its MAC is in, the client's as
 * it came); false, and no MAC, when the field does not lie in the answer.
 */
static inline bool psk_answer_mac(const struct psk *k, const char *label,
				  const uint8_t challenge[PSK_NONCE],
				  const uint8_t prove_mac[PSK_MAC_SHORT], const void *answer,
				  size_t answer_len, size_t mac_at, uint8_t mac[PSK_MAC_SHORT])
{
	uint8_t copy[PSK_ANSWER_MAX], full[PSK_PROOF];
	char l[64];

	if (answer_len > sizeof(copy) || answer_len < PSK_MAC_SHORT ||
	    mac_at > answer_len - PSK_MAC_SHORT)
		return false;
	memcpy(copy, answer, answer_len);
	memset(copy + mac_at, 0, PSK_MAC_SHORT);
	snprintf(l, sizeof(l), "%s/answer", label);
	psk_hmac(k, l, challenge, PSK_NONCE, prove_mac, PSK_MAC_SHORT, copy, answer_len, full);
	memcpy(mac, full, PSK_MAC_SHORT);
	return true;
}

/* ----- the challenges a server hands out -------------------------------- */

/*
 * A challenge is made, not stored: its first 4 bytes are the second it was
 * made in (counted from psk_challenges_init(), little-endian), the next 4 a
 * count, the last 8 a MAC under the server's own secret over those and
 * the client's address. Checking one needs nothing but the secret, so no
 * number of HELLOs, from however many addresses, can push a client's
 * challenge out before its time. What is stored is each challenge a
 * proven client used, until it expires: only a peer that holds the key
 * adds one, and a used one is never accepted again.
 */
#define PSK_CHALLENGE_TAG 8

struct psk_challenges {
	uint8_t secret[32];
	uint64_t start_ms;
	uint32_t count;
	struct {
		uint8_t challenge[PSK_NONCE];
		uint64_t expires_ms; /* 0: free */
	} used[PSK_CHALLENGES];
};

static inline uint64_t psk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* a new secret: the challenges of an earlier start (or another server) are none of these */
static inline void psk_challenges_init(struct psk_challenges *c)
{
	sodium_memzero(c, sizeof(*c));
	randombytes_buf(c->secret, sizeof(c->secret));
	c->start_ms = psk_now_ms();
}

static inline void psk_challenges_wipe(struct psk_challenges *c)
{
	sodium_memzero(c, sizeof(*c));
}

static inline uint32_t psk_le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* the tag of a challenge's first 8 bytes for a client's address */
static inline void psk_challenge_tag(const struct psk_challenges *c, const uint8_t head[8],
				     const uint8_t client[16], uint8_t tag[PSK_CHALLENGE_TAG])
{
	uint8_t full[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, c->secret, sizeof(c->secret));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"psk challenge", 14);
	crypto_auth_hmacsha256_update(&st, head, 8);
	crypto_auth_hmacsha256_update(&st, client, 16);
	crypto_auth_hmacsha256_final(&st, full);
	memcpy(tag, full, PSK_CHALLENGE_TAG);
	sodium_memzero(&st, sizeof(st));
}

/* a new challenge for the client at address `client` (psk_ip16()) */
static inline void psk_challenge_issue(struct psk_challenges *c, const uint8_t client[16],
				       uint8_t challenge[PSK_NONCE])
{
	psk_le32_put(challenge, (uint32_t)((psk_now_ms() - c->start_ms) / 1000));
	psk_le32_put(challenge + 4, c->count++);
	psk_challenge_tag(c, challenge, client, challenge + 8);
}

/*
 * Whether challenge is one this server gave to `client`, at most
 * PSK_CHALLENGE_TTL_S seconds ago, and not used yet: NULL, or why not.
 * It stays unused until psk_challenge_use(): a forged answer, which anyone
 * who reads the traffic can send, must not use up the real client's.
 */
static inline const char *psk_challenge_check(const struct psk_challenges *c,
					      const uint8_t client[16],
					      const uint8_t challenge[PSK_NONCE])
{
	uint8_t tag[PSK_CHALLENGE_TAG];
	const uint64_t now = psk_now_ms();
	const uint64_t age_s = (now - c->start_ms) / 1000;
	const uint32_t made_s = psk_le32_get(challenge);

	psk_challenge_tag(c, challenge, client, tag);
	if (!psk_equal(tag, challenge + 8, PSK_CHALLENGE_TAG))
		return "a challenge not given here (or given to another address)";
	/* made within the last PSK_CHALLENGE_TTL_S seconds, never later than now */
	if (made_s > age_s || age_s - made_s > PSK_CHALLENGE_TTL_S)
		return "a challenge given too long ago";
	for (int i = 0; i < PSK_CHALLENGES; i++)
		if (c->used[i].expires_ms > now &&
		    psk_equal(c->used[i].challenge, challenge, PSK_NONCE))
			return "a challenge answered before";
	return NULL;
}

/*
 * A checked challenge, answered by a proven client: used, never accepted
 * again while it could be. False when PSK_CHALLENGES proven clients used
 * theirs within the last PSK_CHALLENGE_TTL_S seconds: the PROVE is then
 * refused, and its client, which holds the key, may ask again.
 */
static inline bool psk_challenge_use(struct psk_challenges *c, const uint8_t challenge[PSK_NONCE])
{
	const uint64_t now = psk_now_ms();

	for (int i = 0; i < PSK_CHALLENGES; i++) {
		if (c->used[i].expires_ms > now)
			continue;
		memcpy(c->used[i].challenge, challenge, PSK_NONCE);
		/* a second more than a challenge lives: the check counts whole seconds */
		c->used[i].expires_ms = now + (PSK_CHALLENGE_TTL_S + 1) * 1000;
		return true;
	}
	return false;
}

/* ----- --allow ADDR[/PREFIX] ------------------------------------------- */

struct psk_allow {
	int family; /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	int prefix; /* bits that must match */
};

/* "192.0.2.0/24", "2001:db8::/32", "192.0.2.7"; 0, or -1 when it is none */
static inline int psk_allow_parse(const char *arg, struct psk_allow *a)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(arg, '/');
	size_t hlen = slash ? (size_t)(slash - arg) : strlen(arg);
	int max;

	memset(a, 0, sizeof(*a));
	if (hlen == 0 || hlen >= sizeof(host))
		return -1;
	memcpy(host, arg, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, a->addr) == 1) {
		a->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, host, a->addr) == 1) {
		a->family = AF_INET6;
		max = 128;
	} else {
		return -1;
	}
	a->prefix = max;
	if (slash) {
		char *end;
		long p;

		if (!slash[1] || slash[1] < '0' || slash[1] > '9')
			return -1;
		errno = 0;
		p = strtol(slash + 1, &end, 10);
		if (errno || *end || p < 0 || p > max)
			return -1;
		a->prefix = (int)p;
	}
	return 0;
}

static inline bool psk_prefix_match(const uint8_t *x, const uint8_t *y, int bits)
{
	int bytes = bits / 8, rest = bits % 8;

	if (memcmp(x, y, (size_t)bytes) != 0)
		return false;
	if (rest == 0)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));

	return (x[bytes] & mask) == (y[bytes] & mask);
}

/*
 * Whether a peer may come in: always when there are no rules, else when a
 * rule covers its address. An IPv4 peer seen as ::ffff:a.b.c.d is matched
 * as a.b.c.d.
 */
static inline bool psk_allowed(const struct psk_allow *rules, int nrules,
			       const struct sockaddr_storage *peer)
{
	const uint8_t *v4 = NULL, *v6 = NULL;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (nrules == 0)
		return true;
	if (peer->ss_family == AF_INET) {
		v4 = (const uint8_t *)&((const struct sockaddr_in *)peer)->sin_addr;
	} else if (peer->ss_family == AF_INET6) {
		v6 = (const uint8_t *)&((const struct sockaddr_in6 *)peer)->sin6_addr;
		if (memcmp(v6, mapped, sizeof(mapped)) == 0)
			v4 = v6 + 12;
	}
	for (int i = 0; i < nrules; i++) {
		if (rules[i].family == AF_INET && v4 &&
		    psk_prefix_match(rules[i].addr, v4, rules[i].prefix))
			return true;
		if (rules[i].family == AF_INET6 && v6 &&
		    psk_prefix_match(rules[i].addr, v6, rules[i].prefix))
			return true;
	}
	return false;
}

/* ----- per-source penalties -------------------------------------------- */

/*
 * What keeps one source from taking a server's time, as sshd's
 * PerSourcePenalties do: a source (an IPv4 address; an IPv6 /64, which
 * one machine may hold whole) that gets PSK_PENALTY_REFUSALS answers
 * other than a connection within PSK_PENALTY_WINDOW_MS (a HELLO counts:
 * only a proof, which needs the key, forgives them) is refused unread,
 * with no log line for each, for PSK_PENALTY_FIRST_MS, and twice as long
 * at each repeat, up to PSK_PENALTY_MAX_MS. A client that holds the key
 * says HELLO once a session and proves it: it never comes near.
 * PSK_PENALTY_SOURCES are remembered at once; when more come, the one
 * seen least recently is forgotten, one under a penalty last.
 */
#define PSK_PENALTY_SOURCES   256
#define PSK_PENALTY_REFUSALS  10
#define PSK_PENALTY_WINDOW_MS 10000
#define PSK_PENALTY_FIRST_MS  10000
#define PSK_PENALTY_MAX_MS    300000

struct psk_source {
	uint8_t net[16];    /* psk_ip16(), an IPv6 address cut to its /64 */
	uint64_t seen_ms;   /* its last request: the least recent is forgotten first */
	uint64_t window_ms; /* when its count of refusals began */
	uint64_t until_ms;  /* refused unread until then; 0: not */
	uint32_t next_ms;   /* its next penalty's length */
	uint32_t refusals;  /* within the window */
	uint32_t dropped;   /* requests refused unread during its penalty */
	bool used;
};

struct psk_penalties {
	struct psk_source src[PSK_PENALTY_SOURCES];
};

/* ip (psk_ip16()) as its source: IPv4 whole, IPv6 to its /64 */
static inline void psk_source_net(const uint8_t ip[16], uint8_t net[16])
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memcpy(net, ip, 16);
	if (memcmp(ip, mapped, sizeof(mapped)) != 0)
		memset(net + 8, 0, 8);
}

/* ip's source, remembered from now on when make; NULL when it is not and !make */
static inline struct psk_source *psk_source_of(struct psk_penalties *p, const uint8_t ip[16],
					       bool make, uint64_t now)
{
	struct psk_source *victim = NULL;
	uint8_t net[16];

	psk_source_net(ip, net);
	for (int i = 0; i < PSK_PENALTY_SOURCES; i++) {
		struct psk_source *s = &p->src[i];

		if (s->used && memcmp(s->net, net, 16) == 0)
			return s;
		if (!make || (victim && !victim->used))
			continue;
		/* a free one first, then the least recently seen, one under a penalty last */
		if (!s->used) {
			victim = s;
			continue;
		}
		const bool victim_held = victim && victim->until_ms > now;
		const bool held = s->until_ms > now;

		if (!victim || (victim_held && !held) ||
		    (victim_held == held && s->seen_ms < victim->seen_ms))
			victim = s;
	}
	if (!victim)
		return NULL;
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->net, net, 16);
	victim->used = true;
	victim->window_ms = now;
	victim->next_ms = PSK_PENALTY_FIRST_MS;
	return victim;
}

/*
 * Whether a request from ip, at now (psk_now_ms()), is to be refused
 * unread: its source is under a penalty. When a penalty is over, *ended_dropped tells how many
 * requests it refused (once, for the log); 0 otherwise.
 */
static inline bool psk_penalized(struct psk_penalties *p, const uint8_t ip[16], uint64_t now,
				 uint32_t *ended_dropped)
{
	struct psk_source *s = psk_source_of(p, ip, false, now);

	*ended_dropped = 0;
	if (!s)
		return false;
	s->seen_ms = now;
	if (s->until_ms > now) {
		s->dropped++;
		return true;
	}
	if (s->until_ms) {
		*ended_dropped = s->dropped;
		s->until_ms = 0;
		s->dropped = 0;
		s->refusals = 0;
		s->window_ms = now;
	}
	return false;
}

/*
 * Counts an answer to ip, at now, other than a connection; the length in
 * ms of the penalty it starts (for the log), or 0
 */
static inline uint32_t psk_penalty_count(struct psk_penalties *p, const uint8_t ip[16],
					 uint64_t now)
{
	struct psk_source *s = psk_source_of(p, ip, true, now);

	if (!s)
		return 0;
	s->seen_ms = now;
	if (now - s->window_ms > PSK_PENALTY_WINDOW_MS) {
		s->window_ms = now;
		s->refusals = 0;
	}
	if (++s->refusals < PSK_PENALTY_REFUSALS)
		return 0;
	const uint32_t len = s->next_ms;

	s->until_ms = now + len;
	s->dropped = 0;
	s->next_ms = len * 2 > PSK_PENALTY_MAX_MS ? PSK_PENALTY_MAX_MS : len * 2;
	return len;
}

/*
 * Whether a request from ss counts toward its source's penalty: it has an
 * IP address (written to ip, as psk_ip16() gives it) that no rule of
 * exempt (--penalty-exempt) covers
 */
static inline bool psk_penalty_counts(const struct psk_allow *exempt, int nexempt,
				      const struct sockaddr_storage *ss, uint8_t ip[16])
{
	/* psk_allowed() lets everyone in when there are no rules: none exempts no one */
	return psk_ip16(ss, ip) && !(nexempt > 0 && psk_allowed(exempt, nexempt, ss));
}

/* why a source is penalized for ms (psk_penalty_count()), for the servers' logs */
static inline const char *psk_penalty_why(uint32_t ms, char *buf, size_t size)
{
	snprintf(buf, size,
		 "%d answers but a connection within %d s: its requests are refused unread "
		 "for %u s",
		 PSK_PENALTY_REFUSALS, PSK_PENALTY_WINDOW_MS / 1000, ms / 1000);
	return buf;
}

/* ip proved the key: what its source was counted is forgiven */
static inline void psk_penalty_forgive(struct psk_penalties *p, const uint8_t ip[16])
{
	struct psk_source *s = psk_source_of(p, ip, false, 0);

	if (s)
		memset(s, 0, sizeof(*s));
}

/* "192.0.2.7" or "2001:db8::7", for the log */
static inline const char *psk_addr_str(const struct sockaddr_storage *a, char *buf, size_t size)
{
	const void *p = NULL;

	if (a->ss_family == AF_INET)
		p = &((const struct sockaddr_in *)a)->sin_addr;
	else if (a->ss_family == AF_INET6)
		p = &((const struct sockaddr_in6 *)a)->sin6_addr;
	if (!p || !inet_ntop(a->ss_family, p, buf, (socklen_t)size))
		snprintf(buf, size, "(an address of family %d)", (int)a->ss_family);
	return buf;
}

#endif /* RPMA_EXAMPLES_PSK_H */
