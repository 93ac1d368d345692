/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test-peer.c -- a misbehaving rpma-mirror client, for the checks only (not
 *                installed): it knocks on a server the ways an attacker or a
 *                broken client would, and says whether the server answered
 *                as it must
 *
 * usage: test-peer -k KEYFILE ADDR:PORT KIND [COUNT]
 *
 * KIND (each expects the server to refuse, and to learn nothing of TARGET):
 *   bad-magic     a request that is no rpma-mirror client's
 *   old-version   a client of version 1, which had no key
 *   no-challenge  a PROVE with a challenge the server never gave
 *   wrong-mac     a HELLO, then a PROVE with a MAC that is not the key's
 *   replay        a good HELLO and PROVE (let in), then the same PROVE again
 *   relay         a good HELLO, then a PROVE whose MAC holds the key but was
 *                 made for another client address (192.0.2.99): what a peer
 *                 in the middle presents when it relays a client's PROVE
 *                 from an address of its own
 *   relay-qp      a good HELLO, then a PROVE whose MAC holds the key and
 *                 both addresses but was made for the queue pair of
 *                 another request: what a peer that sends from the
 *                 client's address presents when it relays the client's
 *                 PROVE on a queue pair of its own (InfiniBand and RoCE;
 *                 iWARP's connection manager names no queue pair, and the
 *                 kind says it cannot be tried there)
 *   hello         a good HELLO: the server must answer it with a challenge
 *                 carried by the reject, with no connection ever made
 *   leak          a good HELLO and PROVE (let in); prints the region's
 *                 descriptor from the answer (rkey, address, length), what
 *                 a peer that watched one valid session holds, and hangs up
 *   prove         COUNT times (1 unless given) a good HELLO and PROVE,
 *                 timed from the first request to the connection with the
 *                 region's answer: prints how long the server took to let
 *                 it in, each time (the attack suite measures it while a
 *                 flood of requests goes on; one process for all, as a
 *                 process costs more than a handshake in the test VM)
 *   mix           COUNT knocks, bad-magic, old-version, no-challenge and
 *                 wrong-mac in turn
 * Exit status: 0 when every knock was answered as it must be (leak and
 * prove: when it was let in), 1 when not, 2 on trouble, 3 when the kind
 * cannot be tried on this transport.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mirror.h"

static struct rpma_peer *peer;
static struct psk key;
static const char *addr, *port;

/* whether the connection manager names the client's queue pair (not on iWARP) */
static bool cm_names_qp;

/*
 * How a PROVE is signed once its request is made: not at all, as a client
 * does, for another client address, for another queue pair, or as a
 * client does with one bit of the MAC changed after
 */
enum sign { SIGN_NONE, SIGN_ENDS, SIGN_ELSEWHERE, SIGN_OTHER_QP, SIGN_FLIPPED };

/* the queue pair number a client binds for req: 0 where the connection manager names none */
static uint32_t qp_bound(const struct rpma_conn_req *req)
{
	uint32_t qp = 0;

	if (cm_names_qp && rpma_conn_req_get_qp_num(req, &qp)) {
		printf("test-peer: cannot read the request's queue pair number\n");
		exit(EXIT_TROUBLE);
	}
	return qp;
}

/*
 * The queue pair number of another request to the server, made and deleted
 * here: the client's whose PROVE a relay sends on a queue pair of its own
 */
static uint32_t other_qp(void)
{
	struct rpma_conn_req *victim = NULL;

	if (rpma_conn_req_new(peer, addr, port, NULL, &victim)) {
		printf("test-peer: cannot connect\n");
		exit(EXIT_TROUBLE);
	}
	const uint32_t qp = qp_bound(victim);

	rpma_conn_req_delete(&victim);
	return qp;
}

/*
 * The PROVE rq signed with the key over the request's ends, its own
 * address or its queue pair replaced or not
 */
static void sign(const struct rpma_conn_req *req, struct request_pdata *rq, enum sign how)
{
	struct sockaddr_storage mine, theirs;
	struct psk_ends ends;
	const uint32_t qp = how == SIGN_OTHER_QP ? other_qp() : qp_bound(req);

	if (rpma_conn_req_get_local_addr(req, &mine) || rpma_conn_req_get_peer_addr(req, &theirs) ||
	    !psk_ends_make(&ends, &mine, &theirs, qp)) {
		printf("test-peer: cannot read the request's addresses\n");
		exit(EXIT_TROUBLE);
	}
	if (how == SIGN_ELSEWHERE) {
		static const uint8_t other[16] = { 0, 0, 0,    0,    0,	  0, 0, 0,
						   0, 0, 0xff, 0xff, 192, 0, 2, 99 };

		memcpy(ends.client, other, sizeof(other));
	}
	psk_client_mac(&key, MIRROR_LABEL, rq->nonce, &ends, rq, REQUEST_HEAD_SIZE, rq->mac);
	if (how == SIGN_FLIPPED)
		rq->mac[0] ^= 1;
}

/*
 * Connects with pd as the request (a PROVE signed as told first); returns
 * the first event: ESTABLISHED (with the connection in *conn and the
 * answer in *answer), REJECTED (with what the reject carried in *answer,
 * and no connection) or another
 */
static enum rpma_conn_event knock(void *pd, size_t len, enum sign how, struct rpma_conn **conn,
				  uint8_t answer[ANSWER_PDATA_MAX], size_t *answer_len)
{
	struct rpma_conn_private_data p = { pd, (uint8_t)len };
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data a;

	*conn = NULL;
	if (rpma_conn_req_new(peer, addr, port, NULL, &req)) {
		printf("test-peer: cannot connect\n");
		exit(EXIT_TROUBLE);
	}
	if (how != SIGN_NONE)
		sign(req, (struct request_pdata *)pd, how);
	if (rpma_conn_req_connect(&req, &p, conn) || rpma_conn_next_event(*conn, &event)) {
		printf("test-peer: cannot connect\n");
		exit(EXIT_TROUBLE);
	}
	*answer_len = 0;
	if ((event == RPMA_CONN_ESTABLISHED || event == RPMA_CONN_REJECTED) &&
	    rpma_conn_get_private_data(*conn, &a) == 0 && a.ptr) {
		*answer_len = a.len < ANSWER_PDATA_MAX ? a.len : ANSWER_PDATA_MAX;
		memcpy(answer, a.ptr, *answer_len);
	}
	if (event != RPMA_CONN_ESTABLISHED)
		rpma_conn_delete(conn);
	return event;
}

static void hang_up(struct rpma_conn **conn)
{
	enum rpma_conn_event event;

	if (rpma_conn_disconnect(*conn) == 0)
		rpma_conn_next_event(*conn, &event);
	rpma_conn_delete(conn);
}

static void request(struct request_pdata *rq, enum mirror_step step)
{
	memset(rq, 0, sizeof(*rq));
	memcpy(rq->magic, MIRROR_MAGIC, sizeof(rq->magic));
	rq->version = MIRROR_VERSION;
	rq->step = (uint8_t)step;
	rq->chunk = htole32(1u << 20);
	rq->length = htole64(1u << 20);
}

/* a good HELLO: the challenge in ch; false when the server did not give one */
static bool hello(uint8_t nonce[PSK_NONCE], struct challenge_pdata *ch)
{
	uint8_t answer[ANSWER_PDATA_MAX];
	struct request_pdata rq;
	struct rpma_conn *conn;
	size_t len;

	request(&rq, STEP_HELLO);
	psk_nonce(nonce);
	memcpy(rq.nonce, nonce, PSK_NONCE);
	if (knock(&rq, sizeof(rq), SIGN_NONE, &conn, answer, &len) != RPMA_CONN_REJECTED)
		return false;
	if (len < sizeof(*ch))
		return false;
	memcpy(ch, answer, sizeof(*ch));
	return ch->step == STEP_CHALLENGE;
}

/*
 * A good HELLO, then a PROVE with the key, as a client makes them: true
 * when the server let it in with a REGION answer, the connection in *conn
 * and the answer in answer[*alen]
 */
static bool let_in(struct rpma_conn **conn, uint8_t answer[ANSWER_PDATA_MAX], size_t *alen)
{
	struct challenge_pdata ch;
	struct request_pdata rq;
	uint8_t nonce[PSK_NONCE];

	*conn = NULL;
	if (!hello(nonce, &ch))
		return false;
	request(&rq, STEP_PROVE);
	memcpy(rq.nonce, ch.challenge, PSK_NONCE);
	if (knock(&rq, sizeof(rq), SIGN_ENDS, conn, answer, alen) == RPMA_CONN_ESTABLISHED &&
	    *alen >= sizeof(struct region_pdata) && answer[9] == STEP_REGION)
		return true;
	if (*conn)
		hang_up(conn);
	return false;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * leak: the region's descriptor, as the answer to a PROVE carries it
 * (doc/wire-format.md: address le64, length le64, rkey le32, usage);
 * prove: how long the server takes to let a client with the key in
 */
static bool let_in_kind(const char *kind)
{
	uint8_t answer[ANSWER_PDATA_MAX];
	struct rpma_conn *conn;
	size_t alen;
	const double t0 = now_ms();

	if (!let_in(&conn, answer, &alen)) {
		printf("%s: UNEXPECTED: not let in\n", kind);
		return false;
	}
	const double took = now_ms() - t0;
	const struct region_pdata *a = (const struct region_pdata *)answer;
	const uint8_t *d = answer + sizeof(*a);
	bool ok = true;

	if (strcmp(kind, "prove") == 0) {
		printf("prove: let in after %d ms\n", (int)(took + 0.5));
	} else if (a->mr_desc_size < 21 || sizeof(*a) + a->mr_desc_size > alen) {
		printf("leak: UNEXPECTED: a region descriptor of %u bytes in %zu of answer\n",
		       a->mr_desc_size, alen);
		ok = false;
	} else {
		uint64_t raddr, length;
		uint32_t rkey;

		memcpy(&raddr, d, 8);
		memcpy(&length, d + 8, 8);
		memcpy(&rkey, d + 16, 4);
		printf("leak: rkey 0x%08x raddr 0x%016llx length %llu\n", le32toh(rkey),
		       (unsigned long long)le64toh(raddr), (unsigned long long)le64toh(length));
	}
	hang_up(&conn);
	return ok;
}

/* the server refused pd, or let it in and told nothing: true when it refused */
static bool refused(const char *kind, void *pd, size_t len, enum sign how)
{
	uint8_t answer[ANSWER_PDATA_MAX];
	struct rpma_conn *conn;
	size_t alen;
	enum rpma_conn_event ev = knock(pd, len, how, &conn, answer, &alen);

	/* a refusal says nothing: no challenge, nor anything else of the server's */
	if (ev == RPMA_CONN_REJECTED && (alen < 8 || memcmp(answer, MIRROR_MAGIC, 8) != 0)) {
		printf("%s: refused\n", kind);
		return true;
	}
	printf("%s: UNEXPECTED: %s, with %zu bytes of answer\n", kind,
	       rpma_utils_conn_event_2str(ev), ev == RPMA_CONN_ESTABLISHED ? alen : 0);
	if (conn)
		hang_up(&conn);
	return false;
}

static bool one(const char *kind)
{
	struct request_pdata rq;
	struct challenge_pdata ch;
	uint8_t nonce[PSK_NONCE];

	if (strcmp(kind, "bad-magic") == 0) {
		request(&rq, STEP_HELLO);
		memcpy(rq.magic, "NOTMIRR!", sizeof(rq.magic));
		return refused(kind, &rq, sizeof(rq), SIGN_NONE);
	}
	if (strcmp(kind, "old-version") == 0) {
		request(&rq, STEP_HELLO);
		rq.version = 1;
		return refused(kind, &rq, 24, SIGN_NONE);
	}
	if (strcmp(kind, "no-challenge") == 0) {
		request(&rq, STEP_PROVE);
		psk_nonce(rq.nonce);
		psk_nonce(rq.mac);
		return refused(kind, &rq, sizeof(rq), SIGN_NONE);
	}
	if (strcmp(kind, "relay-qp") == 0 && !cm_names_qp) {
		printf("%s: cannot be tried: iWARP's connection manager names no queue pair, "
		       "so the proof binds the addresses alone\n",
		       kind);
		exit(3);
	}
	if (strcmp(kind, "wrong-mac") == 0 || strcmp(kind, "replay") == 0 ||
	    strcmp(kind, "relay") == 0 || strcmp(kind, "relay-qp") == 0) {
		if (!hello(nonce, &ch)) {
			printf("%s: UNEXPECTED: no challenge for a good hello\n", kind);
			return false;
		}
		request(&rq, STEP_PROVE);
		memcpy(rq.nonce, ch.challenge, PSK_NONCE);
		if (strcmp(kind, "relay") == 0)
			return refused(kind, &rq, sizeof(rq), SIGN_ELSEWHERE);
		if (strcmp(kind, "relay-qp") == 0)
			return refused(kind, &rq, sizeof(rq), SIGN_OTHER_QP);
		if (kind[0] == 'w')
			return refused(kind, &rq, sizeof(rq), SIGN_FLIPPED);
		uint8_t answer[ANSWER_PDATA_MAX];
		struct rpma_conn *conn;
		size_t alen;

		if (knock(&rq, sizeof(rq), SIGN_ENDS, &conn, answer, &alen) !=
			RPMA_CONN_ESTABLISHED ||
		    alen < sizeof(struct region_pdata) || answer[9] != STEP_REGION) {
			printf("%s: UNEXPECTED: the first PROVE was not let in\n", kind);
			if (conn)
				hang_up(&conn);
			return false;
		}
		hang_up(&conn);
		/* the very PROVE again, as it went */
		return refused(kind, &rq, sizeof(rq), SIGN_NONE);
	}
	if (strcmp(kind, "leak") == 0 || strcmp(kind, "prove") == 0)
		return let_in_kind(kind);
	if (strcmp(kind, "hello") == 0) {
		uint8_t answer[ANSWER_PDATA_MAX];
		struct rpma_conn *conn;
		size_t alen;

		request(&rq, STEP_HELLO);
		psk_nonce(rq.nonce);
		enum rpma_conn_event ev = knock(&rq, sizeof(rq), SIGN_NONE, &conn, answer, &alen);

		if (ev != RPMA_CONN_REJECTED || alen < sizeof(ch) || answer[9] != STEP_CHALLENGE) {
			printf("%s: UNEXPECTED: %s, with %zu bytes of answer\n", kind,
			       rpma_utils_conn_event_2str(ev), alen);
			if (ev == RPMA_CONN_ESTABLISHED)
				hang_up(&conn);
			return false;
		}
		printf("%s: a challenge in the reject, no connection\n", kind);
		return true;
	}
	printf("test-peer: %s is no kind of knock\n", kind);
	exit(EXIT_TROUBLE);
}

int main(int argc, char *argv[])
{
	static const char *const mix[] = { "bad-magic", "old-version", "no-challenge",
					   "wrong-mac" };
	struct ibv_context *ibv_ctx;
	char why[256];

	if (argc < 5 || argc > 6 || strcmp(argv[1], "-k") != 0) {
		fprintf(stderr, "usage: %s -k KEYFILE ADDR:PORT KIND [COUNT]\n", argv[0]);
		return EXIT_TROUBLE;
	}
	if (psk_load(argv[2], &key, why, sizeof(why))) {
		fprintf(stderr, "test-peer: %s\n", why);
		return EXIT_TROUBLE;
	}
	char *colon = strrchr(argv[3], ':');

	if (!colon)
		return EXIT_TROUBLE;
	*colon = '\0';
	addr = argv[3];
	port = colon + 1;
	if (rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx) ||
	    rpma_peer_new(ibv_ctx, &peer)) {
		fprintf(stderr, "test-peer: no RDMA device reaches %s\n", addr);
		return EXIT_TROUBLE;
	}
	cm_names_qp = ibv_ctx->device->transport_type != IBV_TRANSPORT_IWARP;
	prog = "test-peer";
	/* the library's own complaints about refusals are expected here */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);

	int bad = 0;

	if (strcmp(argv[4], "mix") == 0) {
		int n = argc == 6 ? atoi(argv[5]) : 4;

		for (int i = 0; i < n; i++)
			bad += !one(mix[i % 4]);
		printf("%d knocks, %d answered as they must be\n", n, n - bad);
	} else if (strcmp(argv[4], "prove") == 0) {
		int n = argc == 6 ? atoi(argv[5]) : 1;

		for (int i = 0; i < n; i++)
			bad += !one("prove");
	} else {
		bad = !one(argv[4]);
	}
	rpma_peer_delete(&peer);
	return bad ? 1 : 0;
}
