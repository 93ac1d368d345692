/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flood.c -- a peer without the key that floods an rpma-mirror server with
 *            connection requests (the attack suite, tests/attack)
 *
 * usage: flood [-s SRC]... [--hello N] [--garbage M] [--seconds S]
 *              [--rkey HEX --raddr HEX] ADDR PORT
 *
 * librdmacm and libibverbs only, no librpma: what any peer on the network
 * can send. N requests that carry a well-formed HELLO and M that carry
 * garbage are in flight at once, all on one event channel; each one, once
 * answered (or given up after REQUEST_S), is replaced by another of its
 * kind until S seconds have passed, or until SIGINT or SIGTERM; then those
 * in flight get DRAIN_S more to end. The sources given with -s take turns,
 * so that the server sees requests from each of them; without -s the
 * kernel picks one.
 *
 * The garbage: random bytes of a random length (0 to 56, none at all for
 * 0); of what is 10 bytes or longer, a quarter starts with the mirror's
 * magic, another quarter is a PROVE of this version with a made-up
 * challenge and MAC. None of it may be answered with anything.
 *
 * A peer without the key must never be let in. If a connection is ever
 * established all the same, it is used as an attacker would: an RDMA WRITE
 * of 8 bytes of 0xA5, then an RDMA READ of 8 bytes, at --raddr with --rkey
 * (the descriptor of a session seen before) and with rkeys guessed near
 * it, each of which is reported.
 *
 * It prints, per kind, the requests made and what became of them, what
 * the writes and reads did, and the rate of requests. Exit status: 0 when
 * no request was let in; 1 when one was, or a write or read succeeded; 2
 * on trouble (usage, the device, the event channel).
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "mirror_wire.h"

#define SOURCES_MAX 16
#define RESOLVE_MS  2000
#define REQUEST_S   10.0 /* a request without an answer by then is given up */
#define DRAIN_S	    5.0	 /* after --seconds, what is in flight may take this long to end */
#define ACCESS_S    2.0	 /* a write or read must complete by then */
#define EXIT_LET_IN 1
#define EXIT_TROUB  2

enum kind { HELLO, GARBAGE, KINDS };
static const char *const kind_name[KINDS] = { "hello", "garbage" };

struct tally {
	unsigned requests, rejected, answered, accepted, other, unfinished;
};

/* one request in flight: a connection manager id of its own */
struct slot {
	enum kind kind;
	struct rdma_cm_id *id; /* NULL: free */
	double deadline;
	uint8_t pdata[REQUEST_PDATA_MAX];
	uint8_t len;
};

static struct rdma_event_channel *channel;
static struct sockaddr_storage sources[SOURCES_MAX];
static int nsources, next_source;
static struct addrinfo *dst;

/* one device: its protection domain, the completion queue and the buffer all the queue pairs use */
static struct ibv_context *verbs;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t buf[8];

static struct tally tally[KINDS];
/* why requests ended neither rejected nor accepted: per event, and per call that failed */
#define EVENT_TYPES 32 /* more than librdmacm's event types */
static unsigned other_events[EVENT_TYPES];
static unsigned no_answer, calls_failed;
static char call_failure[160];

static double last_end; /* when a request last ended, for the rate */
/* the queue pairs open, and how many the device lets this process have at once */
static int qps, qp_cap = INT_MAX;
static unsigned withdrawn; /* requests that found no queue pair: never made */
static bool leaked;
static uint64_t raddr;
static uint32_t rkey;
static unsigned writes_landed, reads_answered;

/* SIGINT or SIGTERM: no more requests start */
static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	stopped = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void trouble(const char *what)
{
	printf("flood: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(EXIT_TROUB);
}

static void garbage(struct slot *s)
{
	uint32_t r = randombytes_uniform(4);

	s->len = (uint8_t)randombytes_uniform(REQUEST_PDATA_MAX + 1);
	randombytes_buf(s->pdata, sizeof(s->pdata));
	if (r < 2 || s->len < 10)
		return;
	memcpy(s->pdata, MIRROR_MAGIC, 8);
	if (r == 3) {
		/* a PROVE of this version, as a client asks, with a challenge and a MAC made up */
		struct request_pdata rq;

		mirror_request_init(&rq, STEP_PROVE, false, 1u << 20, 1u << 20);
		memcpy(s->pdata, &rq, REQUEST_HEAD_SIZE);
		s->len = sizeof(rq);
	} else if (s->pdata[8] == MIRROR_VERSION && s->pdata[9] == STEP_HELLO) {
		/* a HELLO by chance would be answered: garbage is what must not be */
		s->pdata[9] = 0;
	}
}

static void start(struct slot *s)
{
	struct sockaddr *src = NULL;

	if (rdma_create_id(channel, &s->id, s, RDMA_PS_TCP))
		trouble("rdma_create_id");
	if (nsources) {
		src = (struct sockaddr *)&sources[next_source];
		next_source = (next_source + 1) % nsources;
	}
	if (rdma_resolve_addr(s->id, src, dst->ai_addr, RESOLVE_MS))
		trouble("rdma_resolve_addr");
	if (s->kind == HELLO) {
		struct request_pdata rq;

		mirror_request_init(&rq, STEP_HELLO, false, 1u << 20, 1u << 20);
		psk_nonce(rq.nonce);
		memcpy(s->pdata, &rq, sizeof(rq));
		s->len = sizeof(rq);
	} else {
		garbage(s);
	}
	s->deadline = now_s() + REQUEST_S;
	tally[s->kind].requests++;
}

/* the request of s has ended: its queue pair and its id go, the slot is free */
static void end(struct slot *s)
{
	if (s->id->qp) {
		rdma_destroy_qp(s->id);
		qps--;
	}
	rdma_destroy_id(s->id);
	s->id = NULL;
	last_end = now_s();
}

static void failed_call(struct slot *s, const char *call)
{
	if (!calls_failed++)
		snprintf(call_failure, sizeof(call_failure), "%s: %s", call, strerror(errno));
	tally[s->kind].other++;
	end(s);
}

/* the one device's resources, made for the first id that has a route */
static void device(struct ibv_context *ctx)
{
	if (verbs) {
		if (ctx != verbs) {
			errno = EXDEV;
			trouble("the requests go out through two devices");
		}
		return;
	}
	verbs = ctx;
	if (!(pd = ibv_alloc_pd(ctx)))
		trouble("ibv_alloc_pd");
	if (!(cq = ibv_create_cq(ctx, 64, NULL, NULL, 0)))
		trouble("ibv_create_cq");
	/* iWARP writes a read's response into the buffer as a remote write */
	if (!(mr = ibv_reg_mr(pd, buf, sizeof(buf),
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)))
		trouble("ibv_reg_mr");
}

static void connect_slot(struct slot *s)
{
	struct ibv_qp_init_attr qa;
	struct rdma_conn_param cp;

	device(s->id->verbs);
	/* iWARP connects only an id that has a queue pair */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.qp_type = IBV_QPT_RC;
	if (rdma_create_qp(s->id, pd, &qa)) {
		if (!qps) {
			failed_call(s, "rdma_create_qp");
			return;
		}
		/*
		 * Queue pairs of this process ran out (siw: when the queues of
		 * about 70 are mapped at once): this request never goes out,
		 * and from now on no more go at once than there are queue
		 * pairs to connect (those already resolving find none either)
		 */
		if (qps < qp_cap) {
			qp_cap = qps;
			printf("flood: no queue pair beyond %d at once: at most %d requests in "
			       "flight\n",
			       qps, qps);
			fflush(stdout);
		}
		tally[s->kind].requests--;
		withdrawn++;
		end(s);
		return;
	}
	qps++;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = s->len ? s->pdata : NULL;
	cp.private_data_len = s->len;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(s->id, &cp))
		failed_call(s, "rdma_connect");
}

/*
 * One RDMA WRITE or READ of buf at raddr with key on qp, waited for: its
 * completion's status in *st and 0, or -1 when it could not be posted or
 * did not complete in time
 */
static int access_once(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t key,
		       enum ibv_wc_status *st)
{
	static uint64_t wr_id;
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), mr->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = ++wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = key;
	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	/* the completion queue is every queue pair's: only this one's completion counts */
	for (double deadline = now_s() + ACCESS_S; now_s() < deadline;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 1 && wc.qp_num == qp->qp_num && wc.wr_id == wr_id) {
			*st = wc.status;
			return 0;
		}
		if (n == 0)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return -1;
}

/*
 * What a peer let in without the key tries: to write and to read the
 * region at the descriptor it saw, and at rkeys near it (a soft RoCE
 * rkey is a table index shifted by 8 and a random byte). Over RoCE a
 * write completes once the target acknowledged it, so it landed; over
 * iWARP it completes once it was sent, and the target that refuses it
 * ends the connection: only the read after it, answered, tells that it
 * landed.
 */
static void attack(struct slot *s)
{
	const uint32_t keys[] = { rkey, rkey ^ 1, rkey + 0x100, rkey - 0x100, rkey ^ 0x80 };
	const bool iwarp = verbs->device->transport_type == IBV_TRANSPORT_IWARP;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		for (int w = 1; w >= 0; w--) {
			enum ibv_wc_status st;

			memset(buf, w ? 0xA5 : 0, sizeof(buf));
			if (access_once(s->id->qp, w ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
					keys[i], &st)) {
				printf("flood: %s at 0x%016llx with rkey 0x%08x: no completion: "
				       "the queue pair is done with\n",
				       w ? "WRITE" : "READ", (unsigned long long)raddr, keys[i]);
				return;
			}
			printf("flood: %s at 0x%016llx with rkey 0x%08x%s: %s%s\n",
			       w ? "WRITE" : "READ", (unsigned long long)raddr, keys[i],
			       i == 0 && leaked ? " (leaked)" : "", ibv_wc_status_str(st),
			       w && iwarp && st == IBV_WC_SUCCESS ? " (sent; the read tells)" : "");
			if (st != IBV_WC_SUCCESS) {
				/* the queue pair is in error: whatever follows is flushed */
				return;
			}
			if (w && !iwarp)
				writes_landed++;
			if (!w) {
				reads_answered++;
				/* the target took the write before it answered the read */
				writes_landed += iwarp;
			}
		}
	}
}

/* an answer's private data: whether it is the mirror's (a challenge, a region) */
static bool mirror_answer(const struct rdma_cm_event *ev)
{
	return mirror_answer_is_mirror(ev->param.conn.private_data,
				       ev->param.conn.private_data_len);
}

static void take(struct rdma_cm_event *ev)
{
	struct slot *s = ev->id->context;
	enum rdma_cm_event_type type = ev->event;
	bool answer = false;

	if (type == RDMA_CM_EVENT_REJECTED || type == RDMA_CM_EVENT_ESTABLISHED)
		answer = mirror_answer(ev);
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		const uint8_t *p = ev->param.conn.private_data;

		printf("flood: LET IN (a %s request), the answer:", kind_name[s->kind]);
		for (int i = 0; p && i < ev->param.conn.private_data_len; i++)
			printf("%02x", p[i]);
		printf("\n");
	}
	/* acknowledged before its id can go: destroying waits for that */
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(s->id, RESOLVE_MS))
			failed_call(s, "rdma_resolve_route");
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		connect_slot(s);
		return;
	case RDMA_CM_EVENT_REJECTED:
		tally[s->kind].rejected++;
		tally[s->kind].answered += answer;
		end(s);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		tally[s->kind].accepted++;
		attack(s);
		rdma_disconnect(s->id);
		end(s);
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		other_events[type < EVENT_TYPES ? type : 0]++;
		tally[s->kind].other++;
		end(s);
		return;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		errno = ENODEV;
		trouble("the device went");
		return;
	default:
		/* a disconnection or a time wait's end of an id about to go */
		return;
	}
}

static int usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s SRC]... [--hello N] [--garbage M] [--seconds S] "
		"[--rkey HEX --raddr HEX] ADDR PORT\n",
		prog);
	return EXIT_TROUB;
}

static bool number(const char *s, int base, unsigned long long max, unsigned long long *v)
{
	char *e;

	errno = 0;
	*v = strtoull(s, &e, base);
	return !errno && *s && !*e && *v <= max;
}

static void report(double took)
{
	unsigned ended = 0;

	for (int k = 0; k < KINDS; k++) {
		struct tally *t = &tally[k];

		printf("%s: %u requests, %u rejected (%u with an answer), %u accepted, %u other, "
		       "%u unfinished\n",
		       kind_name[k], t->requests, t->rejected, t->answered, t->accepted, t->other,
		       t->unfinished);
		ended += t->requests - t->unfinished;
	}
	if (calls_failed || no_answer) {
		printf("other: %u given up without an answer after %.0f s", no_answer, REQUEST_S);
		if (calls_failed)
			printf(", %u calls failed (the first: %s)", calls_failed, call_failure);
		printf("\n");
	}
	for (int e = 0; e < EVENT_TYPES; e++) {
		if (other_events[e])
			printf("other: %u %s\n", other_events[e],
			       rdma_event_str((enum rdma_cm_event_type)e));
	}
	if (withdrawn)
		printf("withdrawn: %u requests that found no queue pair (not counted above)\n",
		       withdrawn);
	printf("writes landed: %u, reads answered: %u\n", writes_landed, reads_answered);
	printf("rate: %.0f requests/s (%u ended in %.1f s)\n", took > 0 ? ended / took : 0.0, ended,
	       took);
}

int main(int argc, char *argv[])
{
	static const struct option options[] = {
		{ "hello", required_argument, NULL, 'H' },
		{ "garbage", required_argument, NULL, 'G' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "rkey", required_argument, NULL, 'K' },
		{ "raddr", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long n_kind[KINDS] = { 8, 8 }, seconds = 5, v;
	bool have_rkey = false, have_raddr = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "s:", options, NULL)) != -1) {
		switch (opt) {
		case 's': {
			struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai;

			if (nsources == SOURCES_MAX || getaddrinfo(optarg, NULL, &hints, &ai)) {
				fprintf(stderr,
					"flood: -s takes up to %d numeric addresses, not %s\n",
					SOURCES_MAX, optarg);
				return EXIT_TROUB;
			}
			memcpy(&sources[nsources++], ai->ai_addr, ai->ai_addrlen);
			freeaddrinfo(ai);
			break;
		}
		case 'H':
		case 'G':
			if (!number(optarg, 10, 4096, &n_kind[opt == 'H' ? HELLO : GARBAGE]))
				return usage(argv[0]);
			break;
		case 'S':
			if (!number(optarg, 10, 3600, &seconds))
				return usage(argv[0]);
			break;
		case 'K':
			if (!number(optarg, 16, UINT32_MAX, &v))
				return usage(argv[0]);
			rkey = (uint32_t)v;
			have_rkey = true;
			break;
		case 'A':
			if (!number(optarg, 16, UINT64_MAX, &v))
				return usage(argv[0]);
			raddr = v;
			have_raddr = true;
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (argc - optind != 2 || have_rkey != have_raddr || n_kind[HELLO] + n_kind[GARBAGE] == 0)
		return usage(argv[0]);
	leaked = have_rkey;

	struct addrinfo hints = { .ai_flags = AI_NUMERICSERV, .ai_socktype = SOCK_STREAM };
	int r = getaddrinfo(argv[optind], argv[optind + 1], &hints, &dst);

	if (r) {
		fprintf(stderr, "flood: %s port %s: %s\n", argv[optind], argv[optind + 1],
			gai_strerror(r));
		return EXIT_TROUB;
	}
	if (sodium_init() < 0) {
		fprintf(stderr, "flood: libsodium cannot start\n");
		return EXIT_TROUB;
	}
	if (!(channel = rdma_create_event_channel()))
		trouble("rdma_create_event_channel");
	/* every event is taken as it comes, none waited for: the loop waits in poll */
	if (fcntl(channel->fd, F_SETFL, fcntl(channel->fd, F_GETFL) | O_NONBLOCK))
		trouble("fcntl");

	const int nslots = (int)(n_kind[HELLO] + n_kind[GARBAGE]);
	struct slot *slots = calloc((size_t)nslots, sizeof(*slots));

	if (!slots)
		trouble("calloc");
	for (int i = 0; i < nslots; i++)
		slots[i].kind = i < (int)n_kind[HELLO] ? HELLO : GARBAGE;
	printf("flood: %llu HELLO and %llu garbage requests in flight for %llu s, to %s port %s "
	       "from %d sources\n",
	       n_kind[HELLO], n_kind[GARBAGE], seconds, argv[optind], argv[optind + 1], nsources);
	fflush(stdout);

	/* without SA_RESTART: the signal ends the wait in poll */
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	const double t0 = now_s();
	double stop_at = t0 + (double)seconds, give_up = stop_at + DRAIN_S;

	last_end = t0;

	for (;;) {
		double t = now_s();
		int in_flight = 0;

		if (stopped && t < stop_at) {
			stop_at = t;
			give_up = t + DRAIN_S;
		}
		double next = t < stop_at ? stop_at : give_up;

		int kind_in_flight[KINDS] = { 0, 0 }, share[KINDS];

		for (int i = 0; i < nslots; i++)
			kind_in_flight[slots[i].kind] += slots[i].id != NULL;
		/* with fewer queue pairs than slots, each kind its share of them */
		for (int k = 0; k < KINDS; k++) {
			share[k] = (int)n_kind[k];
			if (qp_cap < nslots && n_kind[k]) {
				share[k] = (int)(qp_cap * n_kind[k] / nslots);
				if (share[k] < 1)
					share[k] = 1;
			}
		}
		for (int i = 0; i < nslots; i++) {
			const enum kind k = slots[i].kind;

			if (!slots[i].id && t < stop_at && kind_in_flight[k] < share[k]) {
				start(&slots[i]);
				kind_in_flight[k]++;
			}
			if (slots[i].id) {
				in_flight++;
				if (slots[i].deadline < next)
					next = slots[i].deadline;
			}
		}
		if (t >= give_up || (t >= stop_at && !in_flight))
			break;

		struct pollfd p = { channel->fd, POLLIN, 0 };

		if (poll(&p, 1, (int)((next - t) * 1000) + 1) < 0 && errno != EINTR)
			trouble("poll");
		struct rdma_cm_event *ev;

		while (rdma_get_cm_event(channel, &ev) == 0)
			take(ev);
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			trouble("rdma_get_cm_event");
		t = now_s();
		for (int i = 0; i < nslots; i++) {
			if (slots[i].id && slots[i].deadline <= t) {
				no_answer++;
				tally[slots[i].kind].other++;
				end(&slots[i]);
			}
		}
	}
	const double took = last_end - t0;

	for (int i = 0; i < nslots; i++) {
		if (slots[i].id) {
			tally[slots[i].kind].unfinished++;
			end(&slots[i]);
		}
	}
	report(took);
	fflush(stdout);

	bool let_in = writes_landed || reads_answered;

	for (int k = 0; k < KINDS; k++)
		let_in |= tally[k].accepted > 0;
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(channel);
	freeaddrinfo(dst);
	free(slots);
	return let_in ? EXIT_LET_IN : 0;
}
