/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * writer.c -- 19-replicated-log: append records to a log and to its replicas
 *
 * usage: writer --key FILE [options] <addr>:<port>...
 *
 * The writer keeps the log (common.h) in its own memory -- persistent
 * memory mapped with libpmem2 with --log PATH, DRAM otherwise -- and
 * copies every record to each replica given. A record is acknowledged
 * once it is durable in the writer's log and in every replica still in
 * the game.
 *
 * Replicating is pipelined. Records are appended locally while earlier
 * ones are on their way, up to --window records not yet acknowledged.
 * Whatever a replica has not received yet goes to it as one batch, in
 * two stages:
 *   1. rpma_write()        the records, one contiguous range of the log;
 *      rpma_flush()        of that range: durable (or visible) there;
 *   2. once that flush has completed:
 *      rpma_atomic_write() of the replica's tail: the commit;
 *      rpma_flush()        of the tail.
 * A replica's tail thus never covers a record that is not durable. The
 * second stage waits for the first flush's completion because of GPSPM:
 * there the flush is a message that the replica's CPU answers, which the
 * fence the library puts on an atomic write does not wait for (it orders
 * the write behind earlier RDMA reads only, which is what a flush is
 * with the other methods). Each batch costs four work requests and two
 * completions, however many records it holds, and the batches of all
 * replicas are in flight at once: the writer waits for none of them until
 * its window is full. The busier the log, the bigger the batches.
 *
 * A flush reaches persistence on a replica by whatever method the two
 * agree on (rpma_conn_get_flush_method()): GPSPM when the replica offers
 * it for its pmem, an RDMA read after the writes when it declares direct
 * write to pmem. A replica that offers neither (DRAM) can make records
 * visible only; the writer refuses it unless told --ack visible.
 *
 * A replica that starts behind the writer's log (a new one, or one that
 * was down) is first sent what it lacks, the same way. A replica that
 * fails -- its connection closes, an operation fails, or nothing
 * completes for --timeout seconds -- is reported with the last record it
 * made durable (one that does not answer a step of connecting within
 * --timeout seconds is reported too, and not used); the writer goes on with the others (or stops,
 * with
 * --stop-on-failure, or when fewer than --min-replicas are left).
 *
 * A replica hands out its log's descriptors only to a writer that holds
 * the pre-shared key of --key FILE, and proves its own key first (the
 * handshake of common.h): a replica that holds another key is reported
 * and not used, and nothing it says is taken.
 *
 * Exit status: 0 every record acknowledged by every replica; 3 every
 * record acknowledged, by fewer replicas than started; 1 the writer
 * stopped before the end; 2 bad usage, or a key file that cannot be used.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define MAX_REPLICAS	8
#define BATCH_MAX_BYTES (1u << 20) /* a catch-up goes in pieces of this size */
#define DRAM_LOG_SIZE	(64u << 20)
#define EXIT_DEGRADED	3

struct replica {
	int number;    /* from 1, as given on the command line */
	char host[80]; /* as given: an address or a name */
	char port[16];
	char name[100]; /* "host:port", for the messages */
	struct rpma_conn *conn;
	struct rpma_mr_remote *mr;
	struct rpma_cq *cq;
	enum rpma_flush_type flush_type;
	enum rpma_flush_method flush_method;
	bool alive;
	uint64_t posted;  /* bytes of records sent in batches */
	uint64_t durable; /* bytes of records known durable there */
	int batches_in_flight;
	uint64_t batches, records_sent;
	double last_progress; /* when it last completed something, or was given work */
	/* what epoll hands back */
	struct watched {
		struct replica *replica;
		bool is_cq;
	} cq_watch, event_watch;
};

struct writer {
	struct psk key;
	struct log_memory mem;
	struct log_header *hdr;
	struct rpma_peer *peer;
	bool cm_names_qp; /* a request names our queue pair (not on iWARP): the proof binds it */
	struct rpma_mr_local *mr; /* the whole local log, the source of every write */
	struct replica replicas[MAX_REPLICAS];
	int nreplicas;
	int epfd;
	/* options */
	uint64_t records;
	uint32_t size;
	int window;
	double rate;
	bool stop_on_failure;
	int min_replicas;
	bool ack_visible;
	double timeout;
	bool verbose;
	/* progress */
	uint64_t tail; /* local committed bytes */
	uint64_t next_seq;
	uint64_t first_new; /* the offset where this run's records start */
	uint64_t *ends;	    /* ends[i]: the end of this run's record i */
	uint64_t appended, acked;
	bool stopping;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "1 replica", "2 replicas" */
static const char *replicas(int n)
{
	return n == 1 ? "replica" : "replicas";
}

static int alive_replicas(const struct writer *w)
{
	int n = 0;

	for (int i = 0; i < w->nreplicas; i++)
		n += w->replicas[i].alive;
	return n;
}

/* how many of this run's records a replica holds durably */
static uint64_t records_below(const struct writer *w, uint64_t offset)
{
	uint64_t lo = 0, hi = w->appended;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (w->ends[mid] <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void replica_failed(struct writer *w, struct replica *r, const char *why)
{
	if (!r->alive)
		return;
	r->alive = false;
	/* with work in flight: how long it had been silent, what its connection's timeout bounds */
	char silent[64] = "";

	if (r->batches_in_flight > 0)
		snprintf(silent, sizeof(silent), ", %.2f s after it last made progress",
			 now_s() - r->last_progress);
	printf("writer: replica %d (%s) FAILED: %s%s; it holds %" PRIu64
	       " records of this run durably; %d %s left\n",
	       r->number, r->name, why, silent, records_below(w, r->durable), alive_replicas(w),
	       replicas(alive_replicas(w)));
	fflush(stdout);
	/* its descriptors leave the epoll set; what was in flight is dropped */
	int fd;

	if (rpma_cq_get_fd(r->cq, &fd) == 0)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (rpma_conn_get_event_fd(r->conn, &fd) == 0)
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
	rpma_conn_disconnect(r->conn);
	if (w->stop_on_failure || alive_replicas(w) < w->min_replicas)
		w->stopping = true;
}

/* the end of the last whole record in [from, from + max) of the local log */
static uint64_t batch_end(const struct writer *w, uint64_t from, uint64_t to)
{
	const uint8_t *data = w->mem.addr + LOG_HEADER_SIZE;
	uint64_t end = from;

	while (end < to) {
		struct record_header rh;

		memcpy(&rh, data + end, sizeof(rh));
		uint64_t next = end + record_size(le32toh(rh.len));

		if (next - from > BATCH_MAX_BYTES && end > from)
			break;
		end = next;
	}
	return end;
}

/*
 * The op_context of a batch's completions: where the batch ends, and the
 * stage that completed.
 */
#define STAGE_RECORDS 0u /* the records' flush */
#define STAGE_TAIL    1u /* the tail's flush */

static void *batch_context(uint64_t end, unsigned stage)
{
	return (void *)(uintptr_t)(end << 1 | stage);
}

/* sends a replica what it lacks of the committed log, as one batch: stage 1 */
static void send_batch(struct writer *w, struct replica *r)
{
	if (!r->alive || r->batches_in_flight >= BATCHES_IN_FLIGHT || r->posted >= w->tail)
		return;
	uint64_t from = r->posted;
	uint64_t to = batch_end(w, from, w->tail);
	size_t at = LOG_HEADER_SIZE + from;
	size_t len = to - from;
	int ret;

	if ((ret = rpma_write(r->conn, r->mr, at, w->mr, at, len, RPMA_F_COMPLETION_ON_ERROR,
			      NULL)) ||
	    (ret = rpma_flush(r->conn, r->mr, at, len, r->flush_type, RPMA_F_COMPLETION_ALWAYS,
			      batch_context(to, STAGE_RECORDS)))) {
		report("writer", "posting a batch", ret);
		replica_failed(w, r, "posting failed");
		return;
	}
	if (r->batches_in_flight == 0)
		r->last_progress = now_s();
	r->batches_in_flight++;
	r->batches++;
	r->posted = to;
}

/* the records up to `to` are durable (or visible) there: commit them, stage 2 */
static void commit_batch(struct writer *w, struct replica *r, uint64_t to)
{
	uint64_t tail_le = htole64(to);
	char tail_src[8];
	int ret;

	memcpy(tail_src, &tail_le, sizeof(tail_src));
	if ((ret = rpma_atomic_write(r->conn, r->mr, LOG_TAIL_OFFSET, tail_src,
				     RPMA_F_COMPLETION_ON_ERROR, NULL)) ||
	    (ret = rpma_flush(r->conn, r->mr, LOG_TAIL_OFFSET, 8, r->flush_type,
			      RPMA_F_COMPLETION_ALWAYS, batch_context(to, STAGE_TAIL)))) {
		report("writer", "committing a batch", ret);
		replica_failed(w, r, "posting failed");
	}
}

static void take_completions(struct writer *w, struct replica *r)
{
	struct rpma_completion cmpls[FLUSHES_IN_FLIGHT];
	int n;

	/* acknowledge the event and re-arm; a wake-up may bring nothing */
	int ret = rpma_cq_wait(r->cq);

	if (ret && ret != RPMA_E_NO_COMPLETION) {
		report("writer", "rpma_cq_wait", ret);
		replica_failed(w, r, "its completion queue failed");
		return;
	}
	while (r->alive && (n = rpma_cq_get_completions(r->cq, cmpls, FLUSHES_IN_FLIGHT)) > 0) {
		for (int i = 0; i < n && r->alive; i++) {
			if (cmpls[i].op_status != IBV_WC_SUCCESS) {
				char why[96];

				snprintf(why, sizeof(why), "an operation failed: %s",
					 ibv_wc_status_str(cmpls[i].op_status));
				replica_failed(w, r, why);
				return;
			}
			uintptr_t ctx = (uintptr_t)cmpls[i].op_context;

			r->last_progress = now_s();
			if ((ctx & 1) == STAGE_RECORDS) {
				commit_batch(w, r, ctx >> 1);
				continue;
			}
			r->durable = ctx >> 1;
			r->batches_in_flight--;
		}
	}
}

static void take_event(struct writer *w, struct replica *r)
{
	enum rpma_conn_event event;
	int ret = rpma_conn_next_event(r->conn, &event);

	if (ret == RPMA_E_NO_EVENT)
		return;
	if (ret) {
		replica_failed(w, r, rpma_err_2str(ret));
		return;
	}
	char why[64];

	snprintf(why, sizeof(why), "its connection ended (%s)", rpma_utils_conn_event_2str(event));
	replica_failed(w, r, why);
}

/* waits up to timeout_ms for completions and events, and takes them */
static void pump(struct writer *w, int timeout_ms)
{
	struct epoll_event events[2 * MAX_REPLICAS];
	int n = epoll_wait(w->epfd, events, 2 * MAX_REPLICAS, timeout_ms);

	for (int i = 0; i < n; i++) {
		struct watched *wt = events[i].data.ptr;

		if (!wt->replica->alive)
			continue;
		if (wt->is_cq)
			take_completions(w, wt->replica);
		else
			take_event(w, wt->replica);
	}
	/* a replica that has work and answers nothing has failed too */
	double t = now_s();

	for (int i = 0; i < w->nreplicas; i++) {
		struct replica *r = &w->replicas[i];

		/*
		 * Polled even without an event: a flush waits for the replica's
		 * answer, and the library probes a replica gone silent only in a
		 * poll (or a wait) that finds nothing.
		 */
		if (r->alive && r->batches_in_flight > 0 && t - r->last_progress > 0.1)
			take_completions(w, r);
		if (r->alive && r->batches_in_flight > 0 && t - r->last_progress > w->timeout) {
			char why[64];

			snprintf(why, sizeof(why), "nothing completed for %.0f s", w->timeout);
			replica_failed(w, r, why);
		}
	}
}

/* the payload of this run's record i: readable, and different for each */
static void make_payload(const struct writer *w, uint64_t i, uint8_t *buf)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	int n =
	    snprintf((char *)buf, w->size,
		     "record %" PRIu64 " of log %016" PRIx64 ", appended at %02d:%02d:%02d.%03ld",
		     w->next_seq, le64toh(w->hdr->log_id), tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000);

	if (n < 0)
		n = 0;
	for (uint32_t k = (uint32_t)n < w->size ? (uint32_t)n : w->size; k < w->size; k++)
		buf[k] = (uint8_t)('a' + (i + k) % 26);
}

/* appends one record to the local log and commits it there */
static void append_local(struct writer *w)
{
	uint8_t *rec = w->mem.addr + LOG_HEADER_SIZE + w->tail;
	struct record_header rh;
	uint8_t *payload = rec + sizeof(rh);
	size_t size = record_size(w->size);

	make_payload(w, w->appended, payload);
	memset(payload + w->size, 0, size - sizeof(rh) - w->size);
	rh.seq = htole64(w->next_seq);
	rh.len = htole32(w->size);
	rh.crc = htole32(record_crc(w->next_seq, w->size, payload));
	memcpy(rec, &rh, sizeof(rh));
	log_memory_persist(&w->mem, rec, size);
	/* the local commit: an aligned 8-byte store, then persisted */
	w->tail += size;
	__atomic_store_n(&w->hdr->tail, htole64(w->tail), __ATOMIC_RELEASE);
	log_memory_persist(&w->mem, &w->hdr->tail, sizeof(w->hdr->tail));
	w->ends[w->appended++] = w->tail;
	w->next_seq++;
}

/* records acknowledged: durable locally and in every replica still alive */
static void update_acks(struct writer *w)
{
	uint64_t upto = w->tail;

	for (int i = 0; i < w->nreplicas; i++)
		if (w->replicas[i].alive && w->replicas[i].durable < upto)
			upto = w->replicas[i].durable;
	uint64_t acked = records_below(w, upto);

	if (acked <= w->acked)
		return;
	uint64_t step = w->records >= 10 ? w->records / 10 : 1;

	for (uint64_t i = w->acked; i < acked; i++) {
		if (w->verbose)
			printf("writer: record %" PRIu64 " acknowledged by %d %s\n",
			       w->next_seq - w->appended + i, alive_replicas(w),
			       replicas(alive_replicas(w)));
		else if ((i + 1) % step == 0 || i + 1 == w->records)
			printf("writer: %" PRIu64 " of %" PRIu64 " records acknowledged by %d %s\n",
			       i + 1, w->records, alive_replicas(w), replicas(alive_replicas(w)));
	}
	fflush(stdout);
	w->acked = acked;
}

static int parse_endpoint(const char *arg, struct replica *r)
{
	const char *colon = strrchr(arg, ':');

	if (!colon || colon == arg || !colon[1] || (size_t)(colon - arg) >= sizeof(r->host) ||
	    strlen(colon + 1) >= sizeof(r->port))
		return -1;
	memcpy(r->host, arg, (size_t)(colon - arg));
	r->host[colon - arg] = '\0';
	strcpy(r->port, colon + 1);
	snprintf(r->name, sizeof(r->name), "%s:%s", r->host, r->port);
	return 0;
}

/*
 * The next event of a connection of replica r, waited for at most
 * --timeout seconds: a replica that never answers a connection request
 * (stopped, or its machine cut off) would otherwise keep the writer
 * waiting for as long as the connection manager retries, minutes.
 * RPMA_E_NO_EVENT when it did not come in time.
 */
static int next_event(const struct writer *w, struct rpma_conn *conn, enum rpma_conn_event *event)
{
	struct pollfd pfd = { .events = POLLIN };
	int ret = rpma_conn_get_event_fd(conn, &pfd.fd);

	if (ret)
		return ret;
	do
		ret = poll(&pfd, 1, (int)(w->timeout * 1000));
	while (ret < 0 && errno == EINTR);
	if (ret == 0)
		return RPMA_E_NO_EVENT;
	return rpma_conn_next_event(conn, event);
}

/* why a connection to replica r did not come up, when it was not turned down */
static void cannot_connect(const struct writer *w, const struct replica *r, int ret,
			   enum rpma_conn_event event)
{
	if (ret == RPMA_E_NO_EVENT)
		printf("writer: replica %d (%s) did not answer within %g s (--timeout)\n",
		       r->number, r->name, w->timeout);
	else
		printf("writer: replica %d (%s): cannot connect: %s\n", r->number, r->name,
		       ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
}

/* a connection of the handshake that is over: closed, and gone */
static void hang_up(const struct writer *w, struct rpma_conn **conn)
{
	enum rpma_conn_event event;

	if (rpma_conn_disconnect(*conn) == 0)
		(void)next_event(w, *conn, &event); /* CLOSED: the replica saw it */
	(void)rpma_conn_delete(conn);
}

/*
 * The PROVE's MAC, over its challenge, the two ends of the request as this
 * writer sees them (its own address, the replica's), the request's queue
 * pair (where the connection manager names it: not on iWARP) and what it
 * asks: a relay that sends it on from an address or a queue pair of its
 * own presents a MAC the replica does not take. 0, or -1 (said).
 */
static int sign_prove(struct writer *w, struct replica *r, const struct rpma_conn_req *req,
		      struct writer_pdata *request)
{
	struct sockaddr_storage mine, theirs;
	struct psk_ends ends;
	uint32_t qp = 0;

	if (w->cm_names_qp && rpma_conn_req_get_qp_num(req, &qp)) {
		printf("writer: the request to replica %d (%s) has no queue pair number\n",
		       r->number, r->name);
		return -1;
	}
	if (rpma_conn_req_get_local_addr(req, &mine) || rpma_conn_req_get_peer_addr(req, &theirs) ||
	    !psk_ends_make(&ends, &mine, &theirs, qp)) {
		printf("writer: the connection to replica %d (%s) has no IP address at one end: "
		       "the proof cannot be bound to it\n",
		       r->number, r->name);
		return -1;
	}
	psk_client_mac(&w->key, PSK_LABEL, request->nonce, &ends, request, WRITER_PDATA_ASKED,
		       request->mac);
	return 0;
}

/*
 * Connects to replica r with the PROVE request, signed here, (cfg: NULL
 * for the defaults) and waits until it is set up; 0, or -1 when the
 * replica turned it down or cannot be reached (said, with `refusal` for a
 * rejection)
 */
static int call(struct writer *w, struct replica *r, const struct rpma_conn_cfg *cfg,
		struct writer_pdata *request, struct rpma_conn **conn, const char *refusal)
{
	struct rpma_conn_req *req = NULL;
	struct rpma_conn_private_data pdata = { (void *)request, sizeof(*request) };
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret;

	ret = rpma_conn_req_new(w->peer, r->host, r->port, cfg, &req);
	if (!ret && sign_prove(w, r, req, request)) {
		(void)rpma_conn_req_delete(&req);
		return -1;
	}
	if (!ret)
		ret = rpma_conn_req_connect(&req, &pdata, conn);
	if (!ret)
		ret = next_event(w, *conn, &event);
	if (!ret && event == RPMA_CONN_ESTABLISHED)
		return 0;
	if (event == RPMA_CONN_REJECTED ||
	    (ret == RPMA_E_PROVIDER && rpma_err_get_provider_error() == ECONNREFUSED))
		printf("writer: replica %d (%s) turned us down (%s)\n", r->number, r->name,
		       refusal);
	else
		cannot_connect(w, r, ret, event);
	if (*conn)
		(void)rpma_conn_delete(conn);
	return -1;
}

/*
 * The handshake's first step, HELLO: a challenge from the replica, which
 * proves that it holds the key, carried by the reject of the request (a
 * replica connects nobody before the proof). 0 and the challenge, or -1
 * (said).
 */
static int hello(struct writer *w, struct replica *r, const uint8_t nonce[PSK_NONCE],
		 uint8_t challenge[PSK_NONCE])
{
	struct writer_pdata request = { .magic = htole32(WRITER_MAGIC),
					.version = PROTOCOL_VERSION,
					.step = STEP_HELLO };
	struct rpma_conn *conn = NULL;
	struct rpma_conn_private_data answer;
	struct replica_hello rh;

	memcpy(request.nonce, nonce, PSK_NONCE);
	hello_mac(&w->key, nonce, request.mac);

	struct rpma_conn_private_data pdata = { &request, sizeof(request) };
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	struct rpma_conn_req *req = NULL;
	bool answered = false;
	int ret = rpma_conn_req_new(w->peer, r->host, r->port, NULL, &req);

	if (!ret)
		ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (!ret)
		ret = next_event(w, conn, &event);
	if (!ret && event == RPMA_CONN_REJECTED && !rpma_conn_get_private_data(conn, &answer))
		answered = log_hello_answer_decode(answer.ptr, answer.len, &rh);
	if (!ret && event == RPMA_CONN_ESTABLISHED) {
		bool replica = !rpma_conn_get_private_data(conn, &answer) &&
			       log_is_replica(answer.ptr, answer.len);

		hang_up(w, &conn);
		if (replica)
			printf("writer: replica %d (%s) let our HELLO in: a replica of a protocol "
			       "before version %d, which this writer does not trust\n",
			       r->number, r->name, PROTOCOL_VERSION);
		else
			printf("writer: replica %d (%s) is not a log replica (it let our HELLO in "
			       "with no challenge)\n",
			       r->number, r->name);
		return -1;
	}
	if (conn)
		(void)rpma_conn_delete(&conn);
	if (!answered &&
	    (event == RPMA_CONN_REJECTED ||
	     (ret == RPMA_E_PROVIDER && rpma_err_get_provider_error() == ECONNREFUSED))) {
		printf("writer: replica %d (%s) turned us down (nothing listens there, or a "
		       "replica that does not allow our address: its output says which)\n",
		       r->number, r->name);
		return -1;
	}
	if (!answered) {
		cannot_connect(w, r, ret, event);
		return -1;
	}
	if (rh.version != PROTOCOL_VERSION) {
		printf("writer: replica %d (%s) speaks protocol version %u, this writer %d: run "
		       "the same version of writer and replica\n",
		       r->number, r->name, rh.version, PROTOCOL_VERSION);
		return -1;
	}
	if (!log_hello_proven(&w->key, &rh, nonce)) {
		printf("writer: replica %d (%s) holds another key: it cannot prove that it holds "
		       "ours, so nothing is sent to it (give writer and replicas the same key "
		       "file)\n",
		       r->number, r->name);
		return -1;
	}
	memcpy(challenge, rh.challenge, PSK_NONCE);
	return 0;
}

/*
 * Connects to a replica and decides what it needs: nothing, the records it
 * lacks, or -- a new replica -- the log's identity first. -1: not usable.
 */
static int join_replica(struct writer *w, struct replica *r, uint64_t needed)
{
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct writer_pdata request = { .magic = htole32(WRITER_MAGIC),
					.version = PROTOCOL_VERSION,
					.step = STEP_PROVE };
	uint8_t nonce[PSK_NONCE];
	int ret;

	/* 1. HELLO: does it hold the key? */
	psk_nonce(nonce);
	if (hello(w, r, nonce, request.nonce))
		return -1;

	/* 2. PROVE: we hold it too, and this is what we ask (signed in call()) */
	/*
	 * Four work requests a batch, two of them complete. GPSPM, should the
	 * replica offer it, takes the receive queue for the replica's answers:
	 * one for each flush in flight.
	 */
	ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(cfg, 4 * BATCHES_IN_FLIGHT + 4);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, FLUSHES_IN_FLIGHT + 4);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, FLUSHES_IN_FLIGHT);
	if (ret) {
		report("writer", "making the connection configuration", ret);
		rpma_conn_cfg_delete(&cfg);
		return -1;
	}
	ret = call(w, r, cfg, &request, &r->conn,
		   "after it proved our key: our answer came too late for its challenge, or "
		   "its output says why");
	rpma_conn_cfg_delete(&cfg);
	if (ret)
		return -1;

	/* what it holds, and its word that the answer is its own */
	struct rpma_conn_private_data answer;
	struct replica_pdata rp;
	size_t len = 0;
	enum log_answer got = LOG_ANSWER_NONE;

	ret = rpma_conn_get_private_data(r->conn, &answer);
	if (!ret)
		got = log_replica_answer_decode(answer.ptr, answer.len, &rp, &len);
	if (got == LOG_ANSWER_NONE) {
		printf("writer: replica %d (%s) is not a log replica (no answer)\n", r->number,
		       r->name);
		return -1;
	}
	if (got != LOG_ANSWER_OK) {
		printf("writer: replica %d (%s) is not a log replica of this version\n", r->number,
		       r->name);
		return -1;
	}
	if (!log_replica_answer_proven(&w->key, request.nonce, request.mac, answer.ptr, len, &rp)) {
		printf("writer: replica %d (%s) sent descriptors that the key does not vouch for: "
		       "not used\n",
		       r->number, r->name);
		return -1;
	}
	const uint8_t *desc = (const uint8_t *)answer.ptr + sizeof(rp);
	size_t region_size = 0;

	/* the replica's peer configuration settles how a flush persists there */
	if ((ret = rpma_mr_remote_from_descriptor(desc, rp.mr_desc_size, &r->mr)) ||
	    (ret =
		 rpma_peer_cfg_from_descriptor(desc + rp.mr_desc_size, rp.pcfg_desc_size, &pcfg)) ||
	    (ret = rpma_conn_apply_remote_peer_cfg(r->conn, pcfg)) ||
	    (ret = rpma_mr_remote_get_size(r->mr, &region_size)) ||
	    (ret = rpma_conn_get_cq(r->conn, &r->cq))) {
		report("writer", "taking the replica's descriptors", ret);
		rpma_peer_cfg_delete(&pcfg);
		return -1;
	}
	rpma_peer_cfg_delete(&pcfg);

	if (rpma_conn_get_flush_method(r->conn, r->mr, RPMA_FLUSH_TYPE_PERSISTENT,
				       &r->flush_method) == 0) {
		r->flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
	} else if (w->ack_visible) {
		r->flush_type = RPMA_FLUSH_TYPE_VISIBILITY;
	} else {
		printf("writer: replica %d (%s) can make records visible, not durable: it "
		       "offers neither GPSPM nor direct write to pmem (see its output); "
		       "--ack visible accepts that\n",
		       r->number, r->name);
		return -1;
	}

	uint64_t log_id = le64toh(rp.log_id), tail = le64toh(rp.tail);
	uint64_t capacity = le64toh(rp.capacity);
	uint64_t our_id = le64toh(w->hdr->log_id);

	if (capacity > region_size - LOG_HEADER_SIZE || region_size < LOG_HEADER_SIZE) {
		printf("writer: replica %d (%s) describes a log bigger than its region\n",
		       r->number, r->name);
		return -1;
	}
	if (capacity < needed) {
		printf("writer: replica %d (%s) has room for %" PRIu64 " bytes of records, the "
		       "log needs %" PRIu64 "\n",
		       r->number, r->name, capacity, needed);
		return -1;
	}
	if (log_id != 0 && log_id != our_id) {
		printf("writer: replica %d (%s) holds another log (id %016" PRIx64
		       "); start it with --format to give its memory to this one\n",
		       r->number, r->name, log_id);
		return -1;
	}
	if (tail > w->tail || (log_id == 0 && tail != 0)) {
		printf("writer: replica %d (%s) holds %" PRIu64 " bytes of records, more than "
		       "this writer's log (%" PRIu64 "): not the same history\n",
		       r->number, r->name, tail, w->tail);
		return -1;
	}
	if (log_id == 0) {
		/* a new replica: it takes the log's identity, durably, before any record */
		static int claim_ctx;
		struct rpma_completion cmpl;

		ret = rpma_write(r->conn, r->mr, LOG_ID_OFFSET, w->mr, LOG_ID_OFFSET, 8,
				 RPMA_F_COMPLETION_ON_ERROR, NULL);
		if (!ret)
			ret = rpma_flush(r->conn, r->mr, LOG_ID_OFFSET, 8, r->flush_type,
					 RPMA_F_COMPLETION_ALWAYS, &claim_ctx);
		if (!ret)
			ret = rpma_cq_wait_completion(r->cq, &cmpl, (int)(w->timeout * 1000));
		if (ret || cmpl.op_status != IBV_WC_SUCCESS || cmpl.op_context != &claim_ctx) {
			printf("writer: replica %d (%s): could not give it the log's identity\n",
			       r->number, r->name);
			return -1;
		}
		printf("writer: replica %d (%s) is new: it now holds log %016" PRIx64 "\n",
		       r->number, r->name, our_id);
	}
	r->posted = r->durable = tail;
	if (tail < w->tail)
		printf("writer: replica %d (%s) lacks %" PRIu64
		       " bytes of the log: they go first\n",
		       r->number, r->name, w->tail - tail);
	else
		printf("writer: replica %d (%s) is up to date\n", r->number, r->name);
	printf("writer: replica %d (%s): records reach %s\n", r->number, r->name,
	       r->flush_type != RPMA_FLUSH_TYPE_PERSISTENT ? "visibility only there"
	       : r->flush_method == RPMA_FLUSH_METHOD_GPSPM
		   ? "persistence there by GPSPM (its CPU persists them)"
	       : r->flush_method == RPMA_FLUSH_METHOD_READ_AFTER_WRITE
		   ? "persistence there by a read after the writes (direct write to pmem)"
		   : "persistence there by the RDMA FLUSH verb");

	/* completions and connection events, watched without blocking */
	int cq_fd, ev_fd;

	if ((ret = rpma_cq_get_fd(r->cq, &cq_fd)) ||
	    (ret = rpma_conn_get_event_fd(r->conn, &ev_fd))) {
		report("writer", "getting the descriptors", ret);
		return -1;
	}
	r->cq_watch = (struct watched){ r, true };
	r->event_watch = (struct watched){ r, false };
	struct epoll_event ev_cq = { .events = EPOLLIN, .data.ptr = &r->cq_watch };
	struct epoll_event ev_conn = { .events = EPOLLIN, .data.ptr = &r->event_watch };

	if (fcntl(cq_fd, F_SETFL, fcntl(cq_fd, F_GETFL) | O_NONBLOCK) ||
	    fcntl(ev_fd, F_SETFL, fcntl(ev_fd, F_GETFL) | O_NONBLOCK) ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, cq_fd, &ev_cq) ||
	    epoll_ctl(w->epfd, EPOLL_CTL_ADD, ev_fd, &ev_conn)) {
		perror("writer: watching a replica");
		return -1;
	}
	r->alive = true;
	return 0;
}

static void usage(const char *name)
{
	fprintf(
	    stderr,
	    "usage: %s --key FILE [options] <addr>:<port>...\n"
	    "  --key FILE          the pre-shared key: the same file as the replicas'\n"
	    "  --log PATH          the writer's own log: pmem (a device DAX or a file);\n"
	    "                      DRAM without it\n"
	    "  --new               start a new log there, forgetting what it held\n"
	    "  --records N         records to append (100)\n"
	    "  --size BYTES        payload bytes of each record (200)\n"
	    "  --window N          records appended but not acknowledged, at most (64)\n"
	    "  --rate N            records a second at most (0: as fast as it goes)\n"
	    "  --stop-on-failure   stop when a replica fails (default: go on without it)\n"
	    "  --min-replicas N    stop when fewer replicas are left (1)\n"
	    "  --ack visible       accept replicas that can make records visible only\n"
	    "  --timeout SECONDS   a replica that completes nothing, or does not answer a step of\n"
	    "                      connecting, for so long has failed (10)\n"
	    "  --verbose           print every acknowledgment\n",
	    name);
}

int main(int argc, char *argv[])
{
	static struct writer w;
	const char *log_path = NULL, *key_path = NULL;
	bool new_log = false;
	static const struct option options[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "new", no_argument, NULL, 'N' },
		{ "records", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "window", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "stop-on-failure", no_argument, NULL, 'S' },
		{ "min-replicas", required_argument, NULL, 'm' },
		{ "ack", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	w.records = 100;
	w.size = 200;
	w.window = 64;
	w.min_replicas = 1;
	w.timeout = 10;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'k':
			key_path = optarg;
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'N':
			new_log = true;
			break;
		case 'n':
			w.records = strtoull(optarg, NULL, 10);
			break;
		case 's':
			w.size = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'w':
			w.window = atoi(optarg);
			break;
		case 'r':
			w.rate = atof(optarg);
			break;
		case 'S':
			w.stop_on_failure = true;
			break;
		case 'm':
			w.min_replicas = atoi(optarg);
			break;
		case 'a':
			if (strcmp(optarg, "visible") != 0 && strcmp(optarg, "durable") != 0) {
				usage(argv[0]);
				return 2;
			}
			w.ack_visible = strcmp(optarg, "visible") == 0;
			break;
		case 't':
			w.timeout = atof(optarg);
			break;
		case 'v':
			w.verbose = true;
			break;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	int nreplicas = argc - optind;

	if (nreplicas < 1 || nreplicas > MAX_REPLICAS || w.records < 1 || w.size < 1 ||
	    w.size > RECORD_MAX_PAYLOAD || w.window < 1 || w.min_replicas < 1 ||
	    w.min_replicas > nreplicas || w.timeout <= 0 || w.rate < 0) {
		usage(argv[0]);
		return 2;
	}
	for (int i = 0; i < nreplicas; i++) {
		w.replicas[i].number = i + 1;
		if (parse_endpoint(argv[optind + i], &w.replicas[i])) {
			fprintf(stderr, "writer: %s is not <addr>:<port>\n", argv[optind + i]);
			return 2;
		}
	}
	if (load_key("writer", key_path, &w.key))
		return 2;

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;

	/* 1. the writer's own log: read back and checked, or new */
	if (log_path) {
		if (log_memory_map("writer", log_path, false, &w.mem))
			return 1;
	} else if (log_memory_dram(DRAM_LOG_SIZE, &w.mem)) {
		fprintf(stderr, "writer: out of memory\n");
		return 1;
	} else {
		printf("writer: no --log given: the writer's log is in DRAM and ends with it\n");
	}
	w.hdr = (struct log_header *)w.mem.addr;
	if (new_log || !log_exists(&w.mem)) {
		struct timespec ts;

		/* an identity unlikely to be any other log's; never 0 */
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t id = ((uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull) ^
			      ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();

		log_format(&w.mem, id ? id : 1);
		printf("writer: a new log, id %016" PRIx64 "\n", le64toh(w.hdr->log_id));
	}
	struct log_check chk;

	log_check(w.mem.addr, w.mem.size, &chk);
	if (chk.problem) {
		printf("writer: the writer's own log is damaged after %" PRIu64 " records: %s\n",
		       chk.records, chk.problem);
		goto out_mem;
	}
	w.tail = chk.bytes;
	w.next_seq = chk.next_seq;
	w.first_new = w.tail;
	printf("writer: log %016" PRIx64 " holds %" PRIu64 " records (%" PRIu64
	       " bytes), every checksum good\n",
	       le64toh(w.hdr->log_id), chk.records, chk.bytes);
	uint64_t needed = w.tail + w.records * record_size(w.size);

	if (needed > le64toh(w.hdr->capacity)) {
		printf("writer: %" PRIu64 " more records of %u bytes do not fit in the log\n",
		       w.records, w.size);
		goto out_mem;
	}
	w.ends = calloc(w.records, sizeof(*w.ends));
	if (!w.ends) {
		fprintf(stderr, "writer: out of memory\n");
		goto out_mem;
	}

	/* 2. the replicas */
	ret =
	    rpma_utils_get_ibv_context(w.replicas[0].host, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		report("writer", "rpma_utils_get_ibv_context", ret);
		goto out_mem;
	}
	w.cm_names_qp = ibv_ctx->device->transport_type != IBV_TRANSPORT_IWARP;
	ret = rpma_peer_new(ibv_ctx, &w.peer);
	if (ret) {
		report("writer", "rpma_peer_new", ret);
		goto out_mem;
	}
	/* the whole log is the source of every write */
	ret = rpma_mr_reg(w.peer, w.mem.addr, w.mem.size, RPMA_MR_USAGE_WRITE_SRC, &w.mr);
	if (ret) {
		report("writer", "rpma_mr_reg", ret);
		goto out_peer;
	}
	w.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w.epfd < 0) {
		perror("writer: epoll_create1");
		goto out_mr;
	}
	w.nreplicas = nreplicas;
	for (int i = 0; i < nreplicas; i++) {
		struct replica *r = &w.replicas[i];

		if (join_replica(&w, r, needed) && r->conn) {
			/* not usable: the replica should not wait for us to go */
			if (r->mr)
				rpma_mr_remote_delete(&r->mr);
			hang_up(&w, &r->conn);
		}
	}
	if (alive_replicas(&w) < w.min_replicas) {
		printf("writer: %d of %d replicas usable, %d needed: not starting\n",
		       alive_replicas(&w), nreplicas, w.min_replicas);
		goto out_replicas;
	}
	int started_with = alive_replicas(&w);

	/* 3. catch the replicas up, append, replicate, acknowledge */
	printf("writer: appending %" PRIu64 " records of %u bytes, replicated to %d %s, "
	       "up to %d unacknowledged\n",
	       w.records, w.size, started_with, replicas(started_with), w.window);
	fflush(stdout);
	double t0 = now_s();
	uint64_t catch_up = 0;

	for (int i = 0; i < nreplicas; i++)
		if (w.replicas[i].alive)
			catch_up += w.tail - w.replicas[i].posted;

	for (;;) {
		bool replicas_done = true;
		int wait_ms = 100;

		update_acks(&w);
		if (!w.stopping && w.appended < w.records &&
		    w.appended - w.acked < (uint64_t)w.window) {
			double due = w.rate > 0 ? t0 + w.appended / w.rate : 0;
			double t = now_s();

			if (t >= due) {
				append_local(&w);
				wait_ms = 0;
			} else {
				wait_ms = (int)((due - t) * 1000) + 1;
			}
		}
		for (int i = 0; i < nreplicas; i++) {
			struct replica *r = &w.replicas[i];

			send_batch(&w, r);
			if (r->alive && r->durable < w.tail)
				replicas_done = false;
		}
		if (alive_replicas(&w) == 0)
			break;
		if (replicas_done && (w.appended == w.records || w.stopping))
			break;
		pump(&w, wait_ms);
	}
	update_acks(&w);
	double elapsed = now_s() - t0;
	int left = alive_replicas(&w);
	uint64_t batches = 0;

	for (int i = 0; i < nreplicas; i++)
		batches += w.replicas[i].batches;

	/* 4. the outcome */
	log_check(w.mem.addr, w.mem.size, &chk);
	printf("writer: the log holds %" PRIu64 " records, %" PRIu64 " bytes; digest %08x\n",
	       chk.records, chk.bytes, chk.digest);
	if (w.acked == w.records && left == started_with) {
		printf("writer: all %" PRIu64 " records acknowledged by %s%d %s in %.2f s "
		       "(%.0f records/s), %" PRIu64 " batches%s\n",
		       w.records, left > 1 ? "all " : "", left, replicas(left), elapsed,
		       w.records / elapsed, batches, catch_up ? ", the catch-up included" : "");
		status = 0;
	} else if (w.acked == w.records && left >= w.min_replicas) {
		printf("writer: all %" PRIu64 " records acknowledged, by %d of the %d replicas "
		       "that started, in %.2f s\n",
		       w.records, left, started_with, elapsed);
		status = EXIT_DEGRADED;
	} else {
		printf("writer: STOPPED: %" PRIu64 " of %" PRIu64 " records appended, %" PRIu64
		       " acknowledged; %d %s left\n",
		       w.appended, w.records, w.acked, left, replicas(left));
	}

out_replicas:
	for (int i = 0; i < nreplicas; i++) {
		struct replica *r = &w.replicas[i];

		if (!r->conn)
			continue;
		if (r->alive) {
			enum rpma_conn_event event;

			/* a clean goodbye: wait until the replica has seen it */
			if (rpma_conn_disconnect(r->conn) == 0)
				(void)next_event(&w, r->conn, &event);
		}
		if (r->mr)
			rpma_mr_remote_delete(&r->mr);
		rpma_conn_delete(&r->conn);
	}
	close(w.epfd);
out_mr:
	rpma_mr_dereg(&w.mr);
out_peer:
	rpma_peer_delete(&w.peer);
out_mem:
	free(w.ends);
	log_memory_release(&w.mem);
	psk_wipe(&w.key);
	return status;
}
