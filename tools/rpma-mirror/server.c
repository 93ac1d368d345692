/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- rpma-mirror --serve: TARGET offered to clients that hold the key
 *
 * The server maps TARGET with libpmem2 and registers it for remote writes,
 * reads and persistent flushes: by GPSPM (its CPU persists what a client
 * flushes, with libpmem2's persist function, served by a thread of the
 * library) or, declared with --direct-write-to-pmem, by reads after the
 * writes. It takes connection requests one at a time, and no client,
 * however it behaves, ends it: a refusal is logged and the next request
 * is served. Only a signal (or --once) ends it.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libpmem2.h>

#include "mirror.h"

/* after so many failures in a row, a pause before each next try: the endpoint may be broken */
#define EP_FAILURES_SLOW 10

struct server {
	const struct server_options *o;
	struct pmem2_map *map;
	uint8_t *area;
	size_t size;
	bool direct_write;
	struct rpma_peer *peer;
	struct rpma_mr_local *mr;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn_cfg *cfg;
	struct rpma_ep *ep;
	struct psk_challenges challenges; /* the secret they are made with; the used ones */
	struct psk_penalties penalties;	  /* the sources refused too often */
	uint8_t region[ANSWER_PDATA_MAX]; /* the REGION answer, but for its MAC */
	uint8_t region_len;
};

static int server_map(struct server *s)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	int ret = -1;
	/* the target must be there: a mirror never makes one up */
	int fd = open(s->o->target, O_RDWR);

	if (fd < 0) {
		complain("cannot open the target %s: %s", s->o->target, strerror(errno));
		return -1;
	}
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&s->map, cfg, src)) {
		complain("cannot map the target %s: %s", s->o->target, pmem2_errormsg());
		goto out;
	}
	s->area = pmem2_map_get_address(s->map);
	s->size = pmem2_map_get_size(s->map);
	enum pmem2_granularity gran = pmem2_map_get_store_granularity(s->map);

	s->direct_write = s->o->declared && gran != PMEM2_GRANULARITY_PAGE;
	if (s->o->declared && !s->direct_write)
		say("%s is not persistent memory: --direct-write-to-pmem ignored", s->o->target);
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd);
	return ret;
}

/* the REGION answer, built once: the same for every client but its MAC */
static int make_region_answer(struct server *s)
{
	struct region_pdata *a = (struct region_pdata *)s->region;
	size_t mr_desc_size, pcfg_desc_size;
	int ret;

	if ((ret = rpma_mr_get_versioned_descriptor_size(s->mr, &mr_desc_size)) ||
	    (ret = rpma_peer_cfg_get_versioned_descriptor_size(s->pcfg, &pcfg_desc_size))) {
		failed("getting the descriptor sizes", ret);
		return -1;
	}
	if (sizeof(*a) + mr_desc_size + pcfg_desc_size > sizeof(s->region)) {
		complain("the descriptors do not fit in the private data");
		return -1;
	}
	memset(s->region, 0, sizeof(s->region));
	mirror_region_init(a, (uint8_t)mr_desc_size, (uint8_t)pcfg_desc_size, s->size);
	if ((ret = rpma_mr_get_versioned_descriptor(s->mr, a->descriptors)) ||
	    (ret = rpma_peer_cfg_get_versioned_descriptor(s->pcfg, s->cfg,
							  a->descriptors + mr_desc_size))) {
		failed("getting the descriptors", ret);
		return -1;
	}
	s->region_len = (uint8_t)(sizeof(*a) + mr_desc_size + pcfg_desc_size);
	return 0;
}

/*
 * Waits for the connection's end: -2 when the deadline (-1: none) passed
 * first, 0 when the client went, 1 on a signal, -1 on an error. `how`
 * tells how the client went.
 */
static int wait_end(struct rpma_conn *conn, int timeout_ms, const char **how)
{
	enum rpma_conn_event event;
	double deadline = now_s() + timeout_ms / 1000.0;
	int fd, ret = rpma_conn_get_event_fd(conn, &fd);

	while (!ret) {
		int left = timeout_ms < 0 ? -1 : (int)((deadline - now_s()) * 1000);
		int r = wait_readable(fd, timeout_ms < 0 ? -1 : (left > 0 ? left : 0));

		if (r == 0)
			return 1;
		if (r < 0)
			return r;
		ret = rpma_conn_next_event(conn, &event);
		if (ret)
			break;
		if (event == RPMA_CONN_ESTABLISHED)
			continue;
		*how =
		    event == RPMA_CONN_CLOSED ? "disconnected" : rpma_utils_conn_event_2str(event);
		return 0;
	}
	failed("waiting for the client", ret);
	return -1;
}

/* the source of a request, as the penalties count it */
struct source {
	uint8_t ip[16]; /* psk_ip16() */
	bool counted;	/* psk_penalty_counts(): an IP address, not exempt */
};

/* one more answer to src other than a connection: a penalty, said when it starts */
static void count_against(struct server *s, const struct source *src, const char *peer)
{
	uint32_t ms = src->counted ? psk_penalty_count(&s->penalties, src->ip, psk_now_ms()) : 0;
	char why[128];

	if (ms)
		say("penalty for %s: %s", peer, psk_penalty_why(ms, why, sizeof(why)));
}

static void refuse(struct server *s, struct rpma_conn_req **req, const struct source *src,
		   const char *peer, const char *why)
{
	say("refused %s: %s", peer, why);
	rpma_conn_req_delete(req);
	count_against(s, src, peer);
}

/*
 * HELLO: a challenge, and the proof that this server holds the key, in the
 * reject of the request: the peer never holds a connected queue pair of
 * this server's before it proved the key
 */
static void answer_hello(struct server *s, struct rpma_conn_req **req,
			 const struct request_pdata *rq, const struct psk_ends *ends,
			 const struct source *src, const char *peer)
{
	struct challenge_pdata a;

	memset(&a, 0, sizeof(a));
	memcpy(a.magic, MIRROR_MAGIC, sizeof(a.magic));
	a.version = MIRROR_VERSION;
	a.step = STEP_CHALLENGE;
	psk_challenge_issue(&s->challenges, ends->client, a.challenge);
	psk_server_proof(s->o->key, MIRROR_LABEL, rq->nonce, a.challenge, a.proof);

	struct rpma_conn_private_data pd = { &a, sizeof(a) };
	int ret = rpma_conn_req_reject(req, &pd);

	/* a HELLO is counted until its proof: one that never proves is a keyless peer's */
	count_against(s, src, peer);
	if (ret) {
		/* the client may have given up already: it is its loss, not ours */
		failed("answering a client's hello", ret);
		return;
	}
	if (s->o->verbose)
		say("%s took a challenge", peer);
}

/* what became of a connection request */
enum take { TAKE_REFUSED, TAKE_SERVED, TAKE_SIGNAL };

/* a client that has proven the key, from its request to its going */
static enum take serve_client(struct server *s, struct rpma_conn_req **req,
			      const struct request_pdata *rq, const char *peer)
{
	uint8_t buf[ANSWER_PDATA_MAX];
	struct region_pdata *a = (struct region_pdata *)buf;
	struct rpma_conn *conn = NULL;
	uint64_t length = le64toh(rq->length);
	uint32_t chunk = le32toh(rq->chunk);
	const char *how = NULL;
	char h[32], hc[32];

	memcpy(buf, s->region, s->region_len);
	/* bound to the PROVE it answers: its challenge and its MAC */
	mirror_region_mac(s->o->key, rq->nonce, rq->mac, buf, s->region_len, a->mac);

	struct rpma_conn_private_data pd = { buf, s->region_len };
	/* GPSPM on this connection reaches TARGET's region and nothing else of this peer's */
	int ret = rpma_conn_req_gpspm_offer(*req, s->mr);

	if (ret) {
		failed("offering the region", ret);
		rpma_conn_req_delete(req);
		return TAKE_REFUSED;
	}
	ret = rpma_conn_req_connect(req, &pd, &conn);

	if (ret) {
		failed("accepting a client", ret);
		return TAKE_REFUSED;
	}
	if (length > s->size)
		say("%s asks for %s, more than %s holds: it will go", peer,
		    human(length, h, sizeof(h)), s->o->target);
	else
		say("%s %s %s in chunks of %s", peer,
		    rq->flags & REQUEST_VERIFY_ONLY ? "compares" : "mirrors",
		    human(length, h, sizeof(h)), human(chunk, hc, sizeof(hc)));

	int r = wait_end(conn, -1, &how);

	if (r == 0 && length <= s->size) {
		char hex[DIGEST_HEX];

		/* the digest of what the client left, as it computes it from the source */
		area_digest(s->area, length, chunk, hex);
		say("the client %s; the first %s of %s: digest %s", how,
		    human(length, h, sizeof(h)), s->o->target, hex);
	} else if (r == 0) {
		say("the client %s", how);
	}
	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
	return r == 1 ? TAKE_SIGNAL : TAKE_SERVED;
}

/* whether a request is one of this version's; the reason when it is not */
static const char *read_request(struct rpma_conn_req *req, struct request_pdata *rq)
{
	struct rpma_conn_private_data pd;

	/* iWARP carries the bytes the client sent, RoCE pads them to 56 */
	if (rpma_conn_req_get_private_data(req, &pd))
		return mirror_request_decode(NULL, 0, rq);
	return mirror_request_decode(pd.ptr, pd.len, rq);
}

/*
 * The two ends of a request as this server sees them: the client's
 * address, its own the request came in at, and the client's queue pair
 * the request names (none on iWARP: 0). False when either end has no IP
 * address, which no handshake can be bound to.
 */
static bool request_ends(const struct rpma_conn_req *req, const struct sockaddr_storage *client,
			 struct psk_ends *ends)
{
	struct sockaddr_storage mine;
	uint32_t qp = 0;
	int ret = rpma_conn_req_get_peer_qp_num(req, &qp);

	if (ret && ret != RPMA_E_NOSUPP)
		return false;
	return !rpma_conn_req_get_local_addr(req, &mine) && psk_ends_make(ends, client, &mine, qp);
}

/* one connection request, whatever it holds */
static enum take take_request(struct server *s, struct rpma_conn_req **req)
{
	struct sockaddr_storage ss;
	struct request_pdata rq;
	struct psk_ends ends;
	struct source src;
	char peer[INET6_ADDRSTRLEN + 32];
	const char *why;
	uint32_t dropped = 0;

	/* an address that cannot be read is no address --allow lets in */
	memset(&ss, 0, sizeof(ss));
	if (rpma_conn_req_get_peer_addr(*req, &ss))
		snprintf(peer, sizeof(peer), "a peer of unknown address");
	else
		psk_addr_str(&ss, peer, sizeof(peer));
	src.counted = psk_penalty_counts(s->o->exempt, s->o->nexempt, &ss, src.ip);
	if (src.counted && psk_penalized(&s->penalties, src.ip, psk_now_ms(), &dropped)) {
		/* nothing read, nothing logged: the penalty's first line said it */
		rpma_conn_req_delete(req);
		return TAKE_REFUSED;
	}
	if (dropped)
		say("penalty for %s over: %u requests were refused unread", peer, dropped);
	if (!psk_allowed(s->o->allow, s->o->nallow, &ss)) {
		refuse(s, req, &src, peer, "not an address --allow lets in");
		return TAKE_REFUSED;
	}
	why = read_request(*req, &rq);
	if (why) {
		refuse(s, req, &src, peer, why);
		return TAKE_REFUSED;
	}
	if (!request_ends(*req, &ss, &ends)) {
		refuse(s, req, &src, peer,
		       "the connection has no IP address at one end to bind a proof to");
		return TAKE_REFUSED;
	}
	if (rq.step == STEP_HELLO) {
		answer_hello(s, req, &rq, &ends, &src, peer);
		return TAKE_REFUSED;
	}
	why = psk_challenge_check(&s->challenges, ends.client, rq.nonce);
	if (why) {
		refuse(s, req, &src, peer, why);
		return TAKE_REFUSED;
	}
	if (!mirror_prove_valid(s->o->key, &rq, &ends)) {
		refuse(s, req, &src, peer,
		       "it does not hold the key (or relays a proof made for other addresses "
		       "or another queue pair)");
		return TAKE_REFUSED;
	}
	if (src.counted)
		psk_penalty_forgive(&s->penalties, src.ip);
	if (!psk_challenge_use(&s->challenges, rq.nonce)) {
		refuse(s, req, &src, peer, "too many proven clients at once: it may ask again");
		return TAKE_REFUSED;
	}
	return serve_client(s, req, &rq, peer);
}

static int setup(struct server *s)
{
	struct ibv_context *ibv_ctx;
	int ret = rpma_utils_get_ibv_context(s->o->addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);

	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &s->peer);
	if (ret) {
		failed("opening the RDMA device", ret);
		return -1;
	}
	/* written and read from afar, flushed to persistence */
	ret = rpma_mr_reg(s->peer, s->area, s->size,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
			  &s->mr);
	if (ret) {
		failed("rpma_mr_reg", ret);
		return -1;
	}
	ret = rpma_mr_set_persist_fn(s->mr, pmem2_get_persist_fn(s->map));
	if (!ret)
		ret = rpma_peer_cfg_new(&s->pcfg);
	if (!ret)
		ret = rpma_peer_cfg_set_direct_write_to_pmem(s->pcfg, s->direct_write);
	if (!ret)
		ret = rpma_conn_cfg_new(&s->cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(s->cfg, RPMA_GPSPM_THREAD);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(s->cfg, SERVER_DEPTH);
	if (ret) {
		failed("configuring the target", ret);
		return -1;
	}
	if (make_region_answer(s))
		return -1;
	ret = rpma_ep_listen(s->peer, s->o->addr, s->o->port, &s->ep);
	if (ret) {
		failed("rpma_ep_listen", ret);
		return -1;
	}
	return 0;
}

int run_server(const struct server_options *o)
{
	static struct server s; /* big: the used challenges, the answer */
	int status = EXIT_TROUBLE;
	int ep_failures = 0;
	int ret, ep_fd;
	char h[32];

	memset(&s, 0, sizeof(s));
	s.o = o;
	psk_challenges_init(&s.challenges);
	if (server_map(&s))
		return EXIT_TROUBLE;
	if (setup(&s))
		goto out;
	ret = rpma_ep_get_fd(s.ep, &ep_fd);
	if (ret) {
		failed("rpma_ep_get_fd", ret);
		goto out;
	}
	bool v6 = strchr(o->addr, ':') != NULL;

	say("serving %s (%s) on %s%s%s:%s to clients with the key%s; the clients' flushes "
	    "persist %s",
	    o->target, human(s.size, h, sizeof(h)), v6 ? "[" : "", o->addr, v6 ? "]" : "", o->port,
	    o->nallow ? " from the --allow addresses" : "",
	    s.direct_write ? "by reads after the writes (direct write to pmem)"
			   : "by GPSPM (this CPU persists them with libpmem2)");
	for (;;) {
		struct rpma_conn_req *req = NULL;
		int r = wait_readable(ep_fd, -1);

		if (r < 0)
			goto out;
		if (r == 0)
			break;
		ret = rpma_ep_next_conn_req(s.ep, s.cfg, &req);
		if (ret) {
			/*
			 * A peer that gave up between its request and now, or
			 * one that is no rpma client: what peers do never ends
			 * the server. Failures in a row are slowed down, so
			 * that an endpoint that keeps failing does not spin.
			 */
			failed("taking a connection request", ret);
			if (++ep_failures >= EP_FAILURES_SLOW)
				wait_readable(-1, 100);
			continue;
		}
		ep_failures = 0;
		r = take_request(&s, &req);
		if (r == TAKE_SIGNAL || (r == TAKE_SERVED && o->once))
			break;
	}
	if (stop_signal)
		say("stopped by signal %d", (int)stop_signal);
	status = EXIT_SAME;
out:
	rpma_ep_shutdown(&s.ep);
	rpma_conn_cfg_delete(&s.cfg);
	rpma_peer_cfg_delete(&s.pcfg);
	rpma_mr_dereg(&s.mr);
	rpma_peer_delete(&s.peer);
	pmem2_map_delete(&s.map);
	psk_challenges_wipe(&s.challenges);
	return status;
}
