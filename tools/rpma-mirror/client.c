/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- rpma-mirror's client: SOURCE mirrored into TARGET, checked
 *
 * The client maps SOURCE read-only and mirrors it into the first bytes of
 * TARGET in chunks: each chunk is copied into a registered buffer,
 * written, and flushed to persistence; up to --window chunks are in
 * flight. Before copying, it reads back what the target holds (RDMA
 * reads, no CPU on the target) and sends only the chunks that differ: an
 * interrupted copy, run again, resumes. After copying, it reads back
 * every chunk it sent and compares it with SOURCE byte for byte; it
 * reports success only when every chunk of the target matches.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libpmem2.h>

#include "mirror.h"

enum phase { COMPARING, COPYING, CHECKING };
static const char *const phase_name[] = { "comparing", "copying", "checking" };

struct slot {
	int index;
	uint64_t chunk; /* the chunk it holds or is being read into */
	bool busy;
};

/* what the target holds, per chunk */
enum { UNKNOWN, SAME, DIFFERS, SENT, VERIFIED };

struct client {
	const struct client_options *o;
	uint32_t chunk;
	int window;
	/* the source */
	const uint8_t *src;
	uint64_t length;
	uint64_t nchunks;
	/* what the target holds */
	uint8_t *state;
	uint64_t first_difference; /* UINT64_MAX: none seen */
	/* RDMA */
	struct rpma_peer *peer;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_mr_local *buf_mr;
	struct rpma_mr_remote *dst;
	/* a chunk's write and its flush, from buf_mr to dst: one doorbell */
	struct rpma_write_template *tmpl;
	uint8_t *buf; /* window slots of chunk bytes */
	struct slot slots[WINDOW_MAX];
	int in_flight;
	bool established; /* the connection was: it must be closed */
	bool cm_names_qp; /* the request names our queue pair (not on iWARP): the proof binds it */
	enum rpma_flush_method method;
	bool method_known;
	/* progress */
	enum phase phase;
	uint64_t phase_done, phase_total; /* bytes */
	double start, phase_start, last_draw;
	int last_step;
	bool tty;
	/* the summary */
	uint64_t same, sent, differing;
	char digest[DIGEST_HEX];
};

static uint64_t chunk_len(const struct client *c, uint64_t i)
{
	uint64_t at = i * c->chunk;

	return c->length - at < c->chunk ? c->length - at : c->chunk;
}

static void progress(struct client *c, bool final)
{
	double t = now_s();
	int pct = c->phase_total ? (int)(c->phase_done * 100 / c->phase_total) : 100;
	char h1[32], h2[32], h3[32];

	if (quiet || c->phase_total == 0)
		return;
	if (c->tty) {
		if (!final && t - c->last_draw < 0.1)
			return;
		c->last_draw = t;
		double rate = t > c->phase_start ? c->phase_done / (t - c->phase_start) : 0;
		char bar[31], eta[32] = "";
		int fill = pct * 30 / 100;

		memset(bar, '=', (size_t)fill);
		memset(bar + fill, ' ', (size_t)(30 - fill));
		bar[30] = '\0';
		if (!final && rate > 0) {
			unsigned s = (unsigned)((c->phase_total - c->phase_done) / rate + 0.5);

			snprintf(eta, sizeof(eta), "ETA %u:%02u", s / 60, s % 60);
		}
		fprintf(stderr, "\r%-9s [%s] %3d%%  %s of %s  %s/s  %-10s", phase_name[c->phase],
			bar, pct, human(c->phase_done, h1, sizeof(h1)),
			human(c->phase_total, h2, sizeof(h2)),
			human((uint64_t)rate, h3, sizeof(h3)), eta);
		if (final)
			fputc('\n', stderr);
		fflush(stderr);
	} else if (c->o->verbose && (pct / 10 > c->last_step || final)) {
		c->last_step = pct / 10;
		say("%s: %d%% (%s of %s)", phase_name[c->phase], c->last_step * 10,
		    human(c->phase_done, h1, sizeof(h1)), human(c->phase_total, h2, sizeof(h2)));
	}
}

static void phase_begin(struct client *c, enum phase p, uint64_t total)
{
	c->phase = p;
	c->phase_done = 0;
	c->phase_total = total;
	c->phase_start = now_s();
	c->last_draw = 0;
	c->last_step = 0;
	progress(c, false);
}

static struct slot *free_slot(struct client *c)
{
	for (int i = 0; i < c->window; i++)
		if (!c->slots[i].busy)
			return &c->slots[i];
	return NULL;
}

/* compares a chunk read back with the source's; notes where it first differs */
static bool same_as_source(struct client *c, uint64_t i, const uint8_t *got)
{
	const uint8_t *want = c->src + i * c->chunk;
	uint64_t len = chunk_len(c, i);

	if (memcmp(got, want, len) == 0)
		return true;
	for (uint64_t k = 0; k < len; k++) {
		if (got[k] != want[k]) {
			if (i * c->chunk + k < c->first_difference)
				c->first_difference = i * c->chunk + k;
			break;
		}
	}
	return false;
}

/*
 * Takes one completion and deals with it: a read's (compares the chunk
 * with the source's) or a flush's (the chunk is persistent). 0, or -1
 * with the reason said.
 */
static int take_completion(struct client *c)
{
	struct rpma_completion cmpl;
	int ret = rpma_cq_wait_completion(c->cq, &cmpl, WAIT_MS);

	if (ret == RPMA_E_NO_COMPLETION) {
		complain("the target answered nothing for %d s", WAIT_MS / 1000);
		return -1;
	}
	if (ret) {
		failed("rpma_cq_wait_completion", ret);
		return -1;
	}
	struct slot *sl = (struct slot *)cmpl.op_context;

	if (cmpl.op_status != IBV_WC_SUCCESS || !sl) {
		complain("an operation on the target failed: %s",
			 ibv_wc_status_str(cmpl.op_status));
		return -1;
	}
	uint64_t i = sl->chunk;

	sl->busy = false;
	c->in_flight--;
	c->phase_done += chunk_len(c, i);
	if (cmpl.op == RPMA_OP_READ) {
		bool same = same_as_source(c, i, c->buf + (size_t)sl->index * c->chunk);

		if (c->phase == CHECKING)
			c->state[i] = same ? VERIFIED : DIFFERS;
		else
			c->state[i] = same ? SAME : DIFFERS;
	} else if (cmpl.op == RPMA_OP_FLUSH) {
		c->state[i] = SENT;
	} else {
		complain("a completion of an unexpected operation");
		return -1;
	}
	progress(c, false);
	return 0;
}

/* takes completions until every operation has completed */
static int drain(struct client *c)
{
	while (c->in_flight > 0)
		if (take_completion(c))
			return -1;
	return 0;
}

/* reads the chunks whose state is `which` back from the target */
static int read_back(struct client *c, enum phase p, int which)
{
	uint64_t total = 0;

	for (uint64_t i = 0; i < c->nchunks; i++)
		if (c->state[i] == which)
			total += chunk_len(c, i);
	phase_begin(c, p, total);
	for (uint64_t i = 0; i < c->nchunks && !stop_signal; i++) {
		if (c->state[i] != which)
			continue;
		struct slot *sl;

		while (!(sl = free_slot(c)))
			if (take_completion(c))
				return -1;
		size_t off = (size_t)sl->index * c->chunk;
		int ret = rpma_read(c->conn, c->buf_mr, off, c->dst, i * c->chunk, chunk_len(c, i),
				    RPMA_F_COMPLETION_ALWAYS, sl);

		if (ret) {
			failed("rpma_read", ret);
			return -1;
		}
		sl->busy = true;
		sl->chunk = i;
		c->in_flight++;
	}
	if (drain(c))
		return -1;
	progress(c, true);
	return 0;
}

/* sends the chunks that differ: written, then flushed to persistence */
static int copy(struct client *c)
{
	uint64_t total = 0, sent = 0;

	for (uint64_t i = 0; i < c->nchunks; i++)
		if (c->state[i] == DIFFERS)
			total += chunk_len(c, i);
	phase_begin(c, COPYING, total);
	for (uint64_t i = 0; i < c->nchunks && !stop_signal; i++) {
		if (c->state[i] != DIFFERS)
			continue;
		struct slot *sl;
		int ret;

		while (!(sl = free_slot(c)))
			if (take_completion(c))
				return -1;
		/* --limit: no faster than so many bytes a second */
		if (c->o->limit > 0) {
			double due = c->phase_start + sent / c->o->limit;

			while (now_s() < due && !stop_signal)
				usleep(10000);
			if (stop_signal)
				break;
		}
		size_t off = (size_t)sl->index * c->chunk;
		uint64_t at = i * c->chunk;
		uint64_t len = chunk_len(c, i);

		memcpy(c->buf + off, c->src + at, len);
		const struct rpma_write_range range = { at, off, len };
		/*
		 * The write and its flush, posted together; the target takes so
		 * many flushes at a time, and a post it has no room for posts
		 * nothing.
		 */
		while ((ret = rpma_write_template_post(c->tmpl, &range, 1, RPMA_F_COMPLETION_ALWAYS,
						       sl)) == RPMA_E_AGAIN) {
			if (c->in_flight == 0) {
				complain("the target takes no flush at all");
				return -1;
			}
			if (take_completion(c))
				return -1;
		}
		if (ret) {
			failed("rpma_write_template_post", ret);
			return -1;
		}
		sl->busy = true;
		sl->chunk = i;
		c->in_flight++;
		sent += len;
	}
	if (drain(c))
		return -1;
	progress(c, true);
	return 0;
}

static const char *method_name(enum rpma_flush_method m)
{
	switch (m) {
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM (the target's CPU persists each chunk)";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "a read after the writes (the target declares direct write to pmem)";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "the RDMA FLUSH verb";
	default:
		return "nothing";
	}
}

static const char *method_id(enum rpma_flush_method m)
{
	switch (m) {
	case RPMA_FLUSH_METHOD_GPSPM:
		return "gpspm";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "read-after-write";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "native";
	default:
		return NULL;
	}
}

/* ----- the handshake ---------------------------------------------------- */

static void request_init(const struct client *c, struct request_pdata *rq, enum mirror_step step)
{
	mirror_request_init(rq, step, c->o->verify_only, c->chunk, c->length);
}

/*
 * The next event of conn, waited for at most WAIT_MS: a server that never
 * answers a connection request (a stopped process, a machine cut off)
 * would otherwise keep the client waiting for as long as the connection
 * manager retries, minutes. RPMA_E_NO_EVENT when none came in time or a
 * signal asked us to stop (stop_signal tells which).
 */
static int next_event(struct rpma_conn *conn, enum rpma_conn_event *event)
{
	int fd;
	int ret = rpma_conn_get_event_fd(conn, &fd);

	if (ret)
		return ret;
	ret = wait_readable(fd, WAIT_MS);
	if (ret == -1)
		return RPMA_E_UNKNOWN;
	if (ret != 1)
		return RPMA_E_NO_EVENT;
	return rpma_conn_next_event(conn, event);
}

static void close_conn(struct rpma_conn **conn)
{
	enum rpma_conn_event event;

	if (rpma_conn_disconnect(*conn) == 0)
		(void)next_event(*conn, &event);
	rpma_conn_delete(conn);
}

/*
 * A PROVE's MAC, over the challenge in rq->nonce, the two ends of the
 * request as this side sees them (its own address, the server's), the
 * request's queue pair (where the connection manager names it: not on
 * iWARP), and what rq asks: a relay that sends it on from an address or a
 * queue pair of its own presents a MAC the server does not take. 0, or -1
 * with the reason said.
 */
static int sign_prove(const struct client *c, const struct rpma_conn_req *req,
		      struct request_pdata *rq)
{
	struct sockaddr_storage mine, theirs;
	struct psk_ends ends;
	uint32_t qp = 0;
	int ret = rpma_conn_req_get_local_addr(req, &mine);

	if (!ret)
		ret = rpma_conn_req_get_peer_addr(req, &theirs);
	if (!ret && c->cm_names_qp)
		ret = rpma_conn_req_get_qp_num(req, &qp);
	if (ret) {
		failed("reading the connection's addresses and queue pair", ret);
		return -1;
	}
	if (!psk_ends_make(&ends, &mine, &theirs, qp)) {
		complain("the connection to %s has no IP address at one end (families %d and "
			 "%d): the proof cannot be bound to it",
			 c->o->endpoint, (int)mine.ss_family, (int)theirs.ss_family);
		return -1;
	}
	psk_client_mac(c->o->key, MIRROR_LABEL, rq->nonce, &ends, rq, REQUEST_HEAD_SIZE, rq->mac);
	return 0;
}

/*
 * Connects with rq as the request's private data (a PROVE signed first,
 * sign_prove()); 0 with *conn established and its answer in *answer (for
 * a HELLO: *conn rejected, never connected, and the challenge of its
 * reject in *answer), or -1 with the reason said (but for a refusal the
 * caller expects, and explains)
 */
static int connect_once(struct client *c, struct request_pdata *rq, struct rpma_conn **conn,
			struct rpma_conn_private_data *answer, bool refusal_expected)
{
	struct rpma_conn_private_data pd = { (void *)rq, sizeof(*rq) };
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	struct rpma_conn_req *req = NULL;
	const char *at = c->o->endpoint;
	int ret = rpma_conn_req_new(c->peer, c->o->addr, c->o->port, c->cfg, &req);

	if (!ret && rq->step == STEP_PROVE && sign_prove(c, req, rq)) {
		rpma_conn_req_delete(&req);
		return -1;
	}
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pd, conn);
	if (ret == RPMA_E_PROVIDER && rpma_err_get_provider_error() == ECONNREFUSED) {
		complain("nobody serves at %s (connection refused)", at);
		return -1;
	}
	if (ret) {
		failed("connecting", ret);
		return -1;
	}
	ret = next_event(*conn, &event);
	if (ret == RPMA_E_NO_EVENT) {
		if (stop_signal)
			complain("interrupted by signal %d while connecting to %s",
				 (int)stop_signal, at);
		else
			complain("%s did not answer within %d s", at, WAIT_MS / 1000);
		rpma_conn_delete(conn);
		return -1;
	}
	if (!ret && event == RPMA_CONN_REJECTED && rq->step == STEP_HELLO) {
		/* the challenge comes in the reject: this side holds no connection either */
		ret = rpma_conn_get_private_data(*conn, answer);
		if (ret || !mirror_answer_is_mirror(answer->ptr, answer->len)) {
			complain("%s turned us down: nobody serves there, or it does not take "
				 "our address (its log says which)",
				 at);
			rpma_conn_delete(conn);
			return -1;
		}
		return 0;
	}
	if (!ret && event == RPMA_CONN_ESTABLISHED && rq->step == STEP_HELLO) {
		/* a server that connects before the proof: not one of this version */
		bool mirror = !rpma_conn_get_private_data(*conn, answer) &&
			      mirror_answer_is_mirror(answer->ptr, answer->len);

		if (mirror)
			complain("%s let our hello in: a server of rpma-mirror before version %d, "
				 "which we do not trust",
				 at, MIRROR_VERSION);
		else
			complain("%s is not an rpma-mirror server (it let our hello in with %u "
				 "bytes of something else)",
				 at, answer->ptr ? (unsigned)answer->len : 0);
		close_conn(conn);
		return -1;
	}
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		if (event != RPMA_CONN_REJECTED)
			complain("cannot connect to %s: %s", at,
				 ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		else if (!refusal_expected)
			complain("%s turned us down: nobody serves there, or it does not take "
				 "our key, our address, or a handshake this slow (its log says "
				 "which)",
				 at);
		rpma_conn_delete(conn);
		return -1;
	}
	ret = rpma_conn_get_private_data(*conn, answer);
	if (ret || !answer->ptr)
		answer->len = 0;
	return 0;
}

/* whether an answer was as expected (mirror_wire.h); the reason said when not */
static bool answer_ok(const struct client *c, const struct rpma_conn_private_data *a,
		      enum mirror_answer r)
{
	switch (r) {
	case MIRROR_ANSWER_OK:
		return true;
	case MIRROR_ANSWER_FOREIGN:
		complain("%s is not an rpma-mirror server (it answered with %u bytes of "
			 "something else)",
			 c->o->endpoint, (unsigned)a->len);
		break;
	case MIRROR_ANSWER_OTHER_VERSION:
		complain("%s speaks another version of rpma-mirror (%u, this is %u)",
			 c->o->endpoint, ((const uint8_t *)a->ptr)[8], MIRROR_VERSION);
		break;
	case MIRROR_ANSWER_OUT_OF_TURN:
		complain("%s answered out of turn in the handshake", c->o->endpoint);
		break;
	case MIRROR_ANSWER_TOO_LONG:
		complain("%s answered with more than an answer holds", c->o->endpoint);
		break;
	case MIRROR_ANSWER_CUT_SHORT:
		complain("%s answered with descriptors cut short", c->o->endpoint);
		break;
	}
	return false;
}

/*
 * HELLO, then PROVE (see mirror.h): 0 with c->conn established to a server
 * that holds the key and c->dst its target, or -1 with the reason said
 */
static int handshake(struct client *c)
{
	struct rpma_conn_private_data answer;
	struct request_pdata rq;
	struct challenge_pdata ch;
	uint8_t client_nonce[PSK_NONCE];
	struct rpma_conn *hello = NULL;

	request_init(c, &rq, STEP_HELLO);
	psk_nonce(client_nonce);
	memcpy(rq.nonce, client_nonce, PSK_NONCE);
	if (connect_once(c, &rq, &hello, &answer, false))
		return -1;
	if (!answer_ok(c, &answer, mirror_challenge_decode(answer.ptr, answer.len, &ch))) {
		rpma_conn_delete(&hello);
		return -1;
	}
	rpma_conn_delete(&hello);

	/*
	 * A server that cannot prove the key gets nothing more: not even a
	 * PROVE, whose MAC it could relay to the real server or use to try
	 * keys offline.
	 */
	if (!mirror_challenge_proven(c->o->key, &ch, client_nonce)) {
		complain("the server at %s holds another key: nothing sent", c->o->endpoint);
		return -1;
	}
	request_init(c, &rq, STEP_PROVE);
	memcpy(rq.nonce, ch.challenge, PSK_NONCE);
	if (connect_once(c, &rq, &c->conn, &answer, false))
		return -1;
	c->established = true;

	uint8_t buf[ANSWER_PDATA_MAX];
	struct region_pdata *a = (struct region_pdata *)buf;
	size_t said;

	/* RoCE pads the answer: what the server said ends with its descriptors */
	if (!answer_ok(c, &answer, mirror_region_decode(answer.ptr, answer.len, buf, &said)))
		return -1;
	if (!mirror_region_proven(c->o->key, ch.challenge, rq.mac, buf, said)) {
		complain("the answer from %s is not the server's: nothing sent", c->o->endpoint);
		return -1;
	}

	uint64_t target_size = le64toh(a->target_size);
	struct rpma_peer_cfg *pcfg = NULL;
	size_t region_size;
	char h1[32], h2[32];
	int ret;

	if (target_size < c->length) {
		complain("the target at %s (%s) is smaller than %s (%s): nothing copied",
			 c->o->endpoint, human(target_size, h1, sizeof(h1)), c->o->source,
			 human(c->length, h2, sizeof(h2)));
		return -1;
	}
	if ((ret = rpma_mr_remote_from_descriptor(a->descriptors, a->mr_desc_size, &c->dst)) ||
	    (ret = rpma_peer_cfg_from_descriptor(a->descriptors + a->mr_desc_size,
						 a->pcfg_desc_size, &pcfg)) ||
	    (ret = rpma_conn_apply_remote_peer_cfg(c->conn, pcfg)) ||
	    (ret = rpma_mr_remote_get_size(c->dst, &region_size)) ||
	    (ret = rpma_conn_get_cq(c->conn, &c->cq))) {
		failed("taking the target's descriptors", ret);
		rpma_peer_cfg_delete(&pcfg);
		return -1;
	}
	rpma_peer_cfg_delete(&pcfg);
	if (region_size < c->length) {
		complain("the target's region is smaller than it says: nothing copied");
		return -1;
	}
	if (rpma_conn_get_flush_method(c->conn, c->dst, RPMA_FLUSH_TYPE_PERSISTENT, &c->method)) {
		complain("the target at %s cannot make the copy persistent: nothing copied",
			 c->o->endpoint);
		return -1;
	}
	c->method_known = true;
	ret = rpma_write_template_new(c->conn, c->dst, c->buf_mr, RPMA_FLUSH_TYPE_PERSISTENT,
				      &c->tmpl);
	if (ret) {
		failed("rpma_write_template_new", ret);
		return -1;
	}
	return 0;
}

static int client_connect(struct client *c)
{
	struct ibv_context *ibv_ctx;
	int ret = rpma_utils_get_ibv_context(c->o->addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);

	if (ret) {
		failed("finding the RDMA device that reaches the target", ret);
		return -1;
	}
	c->cm_names_qp = ibv_ctx->device->transport_type != IBV_TRANSPORT_IWARP;
	ret = rpma_peer_new(ibv_ctx, &c->peer);
	if (ret) {
		failed("rpma_peer_new", ret);
		return -1;
	}
	ret = rpma_mr_reg(c->peer, c->buf, (size_t)c->window * c->chunk,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &c->buf_mr);
	if (ret) {
		failed("rpma_mr_reg", ret);
		return -1;
	}
	/* a write and a flush, or a read, per chunk in flight */
	ret = rpma_conn_cfg_new(&c->cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(c->cfg, RPMA_GPSPM_POLLED);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(c->cfg, (uint32_t)c->window);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(c->cfg, 2 * (uint32_t)c->window + 2);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(c->cfg, 2 * (uint32_t)c->window + 2);
	if (ret) {
		failed("configuring the connection", ret);
		return -1;
	}
	return handshake(c);
}

static void client_disconnect(struct client *c)
{
	/* before the connection and the regions it refers to */
	if (c->tmpl)
		rpma_write_template_delete(&c->tmpl);
	if (c->conn) {
		/* a connection that was never established has nothing to close */
		if (c->established)
			close_conn(&c->conn);
		else
			rpma_conn_delete(&c->conn);
	}
	if (c->dst)
		rpma_mr_remote_delete(&c->dst);
	if (c->cfg)
		rpma_conn_cfg_delete(&c->cfg);
	if (c->buf_mr)
		rpma_mr_dereg(&c->buf_mr);
	if (c->peer)
		rpma_peer_delete(&c->peer);
}

/* maps SOURCE read-only: a plain file, a file on a DAX file system, a device DAX */
static int map_source(struct client *c)
{
	struct pmem2_source *psrc = NULL;
	size_t size;
	int fd = open(c->o->source, O_RDONLY);

	if (fd < 0) {
		complain("cannot open %s: %s", c->o->source, strerror(errno));
		return -1;
	}
	/* libpmem2 knows the size of a device DAX as well as a file's */
	if (pmem2_source_from_fd(&psrc, fd) || pmem2_source_size(psrc, &size)) {
		complain("cannot tell the size of %s: %s", c->o->source, pmem2_errormsg());
		if (psrc)
			pmem2_source_delete(&psrc);
		close(fd);
		return -1;
	}
	pmem2_source_delete(&psrc);
	c->length = size;
	if (size > 0) {
		void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);

		if (p == MAP_FAILED) {
			complain("cannot map %s: %s", c->o->source, strerror(errno));
			close(fd);
			return -1;
		}
		c->src = p;
	}
	close(fd);
	return 0;
}

/* ----- the summary ------------------------------------------------------ */

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void json_summary(const struct client *c, const char *result, int status)
{
	printf("{\"result\": \"%s\", \"source\": ", result);
	json_string(c->o->source);
	printf(", \"target\": ");
	json_string(c->o->endpoint);
	printf(", \"bytes\": %" PRIu64 ", \"chunk\": %" PRIu32 ", \"chunks\": %" PRIu64
	       ", \"sent\": %" PRIu64 ", \"already_there\": %" PRIu64
	       ", \"differing_chunks\": %" PRIu64 ", \"first_difference\": ",
	       c->length, c->chunk, c->nchunks, c->sent, c->same, c->differing);
	if (c->first_difference == UINT64_MAX)
		printf("null");
	else
		printf("%" PRIu64, c->first_difference);
	printf(", \"digest\": ");
	if (c->digest[0])
		printf("\"%s\"", c->digest);
	else
		printf("null");
	printf(", \"flush_method\": ");
	if (c->method_known && method_id(c->method))
		printf("\"%s\"", method_id(c->method));
	else
		printf("null");
	printf(", \"seconds\": %.3f, \"exit_status\": %d}\n", now_s() - c->start, status);
	fflush(stdout);
}

/* the digest of the source, as the server computes it over the target */
static void source_digest(struct client *c)
{
	area_digest(c->src, c->length, c->chunk, c->digest);
}

static uint64_t count(const struct client *c, int state)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < c->nchunks; i++)
		n += c->state[i] == state;
	return n;
}

/* ----- the run ---------------------------------------------------------- */

static int mirror(struct client *c, const char **result)
{
	char h1[32], h2[32];

	*result = "error";
	if (client_connect(c))
		return EXIT_TROUBLE;
	say("%s (%s) %s %s in %" PRIu64 " chunks of %s; persistent by %s", c->o->source,
	    human(c->length, h1, sizeof(h1)), c->o->verify_only ? "compared with" : "to",
	    c->o->endpoint, c->nchunks, human(c->chunk, h2, sizeof(h2)), method_name(c->method));

	/* 1. what the target holds already */
	if (c->o->fresh && !c->o->verify_only)
		memset(c->state, DIFFERS, c->nchunks);
	else if (read_back(c, COMPARING, UNKNOWN))
		return EXIT_TROUBLE;
	c->same = count(c, SAME);
	c->differing = count(c, DIFFERS);
	if (stop_signal)
		return -1;
	if (c->o->verify_only) {
		if (c->differing == 0) {
			source_digest(c);
			say("the target holds the same %s as %s: digest %s on both sides",
			    human(c->length, h1, sizeof(h1)), c->o->source, c->digest);
			*result = "same";
			return EXIT_SAME;
		}
		say("the target differs from %s at byte %" PRIu64 " (chunk %" PRIu64 "); %" PRIu64
		    " of %" PRIu64 " chunks differ",
		    c->o->source, c->first_difference, c->first_difference / c->chunk, c->differing,
		    c->nchunks);
		*result = "differs";
		return EXIT_DIFFERS;
	}

	/* 2. what differs, written and made persistent */
	if (copy(c))
		return EXIT_TROUBLE;
	c->sent = count(c, SENT);
	if (stop_signal)
		return -1;

	/* 3. what was sent, read back and compared */
	c->first_difference = UINT64_MAX;
	if (read_back(c, CHECKING, SENT))
		return EXIT_TROUBLE;
	if (stop_signal)
		return -1;
	c->differing = c->nchunks - count(c, SAME) - count(c, VERIFIED);
	if (c->differing) {
		complain("FAILED: the target differs from %s at byte %" PRIu64 " after the copy",
			 c->o->source, c->first_difference);
		return EXIT_TROUBLE;
	}
	source_digest(c);
	say("mirrored %s: %" PRIu64 " %s sent, %" PRIu64 " already there; every chunk "
	    "checked: digest %s on both sides",
	    human(c->length, h1, sizeof(h1)), c->sent, c->sent == 1 ? "chunk" : "chunks", c->same,
	    c->digest);
	*result = "mirrored";
	return EXIT_SAME;
}

int run_client(const struct client_options *o)
{
	static struct client c;
	const char *result = "error";
	int status = EXIT_TROUBLE;

	memset(&c, 0, sizeof(c));
	c.o = o;
	c.chunk = o->chunk;
	c.window = o->window;
	c.first_difference = UINT64_MAX;
	c.start = now_s();
	c.tty = isatty(STDERR_FILENO);
	if (map_source(&c))
		goto out;
	if (c.length == 0) {
		say("%s is empty: nothing to mirror", o->source);
		result = "mirrored";
		status = EXIT_SAME;
		goto out;
	}
	c.nchunks = (c.length + c.chunk - 1) / c.chunk;
	if ((uint64_t)c.window > c.nchunks)
		c.window = (int)c.nchunks;
	c.state = calloc(c.nchunks, 1);
	c.buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE),
			      ((size_t)c.window * c.chunk + 4095) & ~(size_t)4095);
	if (!c.state || !c.buf) {
		complain("out of memory");
		goto out;
	}
	for (int i = 0; i < c.window; i++)
		c.slots[i].index = i;
	status = mirror(&c, &result);
	if (status < 0) {
		uint64_t sent = count(&c, SENT) + count(&c, VERIFIED);

		say("interrupted by signal %d: %" PRIu64 " chunks sent and persistent this "
		    "time; NOT mirrored -- run the same command again to resume",
		    (int)stop_signal, sent);
		c.sent = sent;
		result = "interrupted";
		status = EXIT_SIGNALED + (int)stop_signal;
	}
out:
	client_disconnect(&c);
	if (o->json)
		json_summary(&c, result, status);
	free(c.state);
	free(c.buf);
	if (c.src)
		munmap((void *)c.src, c.length);
	return status;
}
