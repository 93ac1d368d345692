/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.c -- 19-replicated-log: one replica of the writer's log
 *
 * usage: replica --key FILE [--allow ADDR[/PREFIX]]... [--penalty-exempt ADDR[/PREFIX]]...
 *                [--direct-write-to-pmem] [--format] [--sessions N]
 *                <addr> <port> [<pmem-path>]
 *
 * A replica keeps a copy of the log (common.h) in persistent memory
 * mapped with libpmem2 -- a device DAX such as /dev/dax1.0, or a file --
 * or in DRAM without a path. At start it reads its log back and checks
 * every record's sequence number and checksum; a damaged log is reported
 * and not served (--format starts over). Then it lets writers in, one at
 * a time, and stays out of their way: a writer appends with one-sided
 * writes, flushes and atomic writes, which take no CPU here. After each
 * writer it checks the log again and reports what it holds. It serves
 * writers until SIGINT or SIGTERM, or N of them with --sessions N.
 *
 * A writer cut off by a partition, or whose machine went down, sends no
 * event, and a replica has nothing in flight that would time out: its
 * connection stays open. So while a writer is connected, the replica
 * still answers HELLOs, and a writer that proves the key takes over: the
 * old connection is taken as gone and dropped, the log checked, and the
 * new writer served (it catches the log up).
 *
 * A writer gets the descriptors of the log -- RDMA write access to all of
 * it -- only once it has proven that it holds the pre-shared key of
 * --key FILE (the handshake of common.h), and only from an address that
 * --allow covers, when --allow is given. Whatever a peer does wrong is
 * logged ("replica: refused ADDR: why") and the replica goes on serving:
 * a request that is not a writer's, a wrong key, an address not allowed,
 * a peer that connects and says nothing (freed after
 * HANDSHAKE_DEADLINE_S seconds), a writer killed in the middle. A source
 * answered 10 times in 10 s with no connection (psk.h, per-source
 * penalties) is refused unread for a while, logged once ("replica:
 * penalty for ADDR"), unless --penalty-exempt covers it.
 *
 * On pmem the replica offers GPSPM (see 15-gpspm): a writer's persistent
 * flush asks this CPU to persist the range, which a thread of the library
 * does with libpmem2's persist function, whatever the platform. With
 * --direct-write-to-pmem, from the person who knows that the platform
 * allows it (eADR, or DDIO off), it also declares direct write to pmem,
 * and the writers' flushes do without this CPU (see 04-write-flush). In
 * DRAM writers can only reach visibility.
 *
 * Exit status: 0 stopped by SIGINT or SIGTERM, or after --sessions N
 * writers; 1 trouble that stops it (the log cannot be mapped or is
 * damaged, no RDMA device, cannot listen); 2 bad usage, or a key file
 * that cannot be used.
 */

#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define DRAM_LOG_SIZE (16u << 20)
#define MAX_ALLOW     32

/*
 * How long a peer may take to set its connection up, and to close the
 * connection of its HELLO once it has the answer: a writer needs a
 * fraction of it; a peer that says nothing is disconnected when it is
 * over, for the replica serves one peer at a time.
 */
#define HANDSHAKE_DEADLINE_S 5

static int signal_pipe[2] = { -1, -1 };

/* what the replica holds and checks for every peer */
static struct psk key;
static struct psk_challenges challenges;
static struct psk_allow allow[MAX_ALLOW];
static int nallow;
static struct psk_allow exempt[MAX_ALLOW]; /* --penalty-exempt */
static int nexempt;
static struct psk_penalties penalties;

static void on_signal(int sig)
{
	char c = (char)sig;

	if (write(signal_pipe[1], &c, 1) < 0) {
		/* the pipe is full: a signal is pending already */
	}
}

enum wait_result { WAIT_ERROR = -1, WAIT_SIGNAL, WAIT_READY, WAIT_OTHER, WAIT_TIMEOUT };

/*
 * waits until fd is readable (WAIT_READY), other is (WAIT_OTHER; -1: not
 * watched), a signal comes or deadline_ms passes (0: never)
 */
static enum wait_result wait_readable(int fd, int other, uint64_t deadline_ms)
{
	struct pollfd pfd[3] = {
		{ fd, POLLIN, 0 },
		{ signal_pipe[0], POLLIN, 0 },
		{ other, POLLIN, 0 },
	};

	for (;;) {
		int timeout = -1;

		if (deadline_ms) {
			uint64_t now = psk_now_ms();

			if (now >= deadline_ms)
				return WAIT_TIMEOUT;
			timeout = (int)(deadline_ms - now);
		}
		int n = poll(pfd, other >= 0 ? 3 : 2, timeout);

		if (n > 0)
			break;
		if (n < 0 && errno != EINTR)
			return WAIT_ERROR;
	}
	if (pfd[1].revents & POLLIN)
		return WAIT_SIGNAL;
	if (pfd[0].revents)
		return WAIT_READY;
	return WAIT_OTHER;
}

/* "replica: refused ADDR: why", on standard output with the rest of the log */
static void refused(const char *peer, const char *fmt, ...)
{
	va_list ap;

	printf("replica: refused %s: ", peer);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void print_check(const struct log_memory *mem, const struct log_check *chk)
{
	const struct log_header *hdr = (const void *)mem->addr;

	printf("replica: the log (id %016llx) holds %llu records, %llu bytes; every checksum "
	       "good; digest %08x\n",
	       (unsigned long long)le64toh(hdr->log_id), (unsigned long long)chk->records,
	       (unsigned long long)chk->bytes, chk->digest);
	if (chk->records > 0)
		printf("replica: the last record: seq %llu, \"%.*s\"\n",
		       (unsigned long long)(chk->next_seq - 1),
		       (int)(chk->last_len < 60 ? chk->last_len : 60), chk->last_payload);
	fflush(stdout);
}

/* reads the log back; false when it is damaged */
static bool replay(const struct log_memory *mem)
{
	struct log_check chk;

	log_check(mem->addr, mem->size, &chk);
	if (chk.problem) {
		printf("replica: the log is damaged after %llu good records (%llu bytes): %s\n",
		       (unsigned long long)chk.records, (unsigned long long)chk.bytes, chk.problem);
		return false;
	}
	print_check(mem, &chk);
	return true;
}

/*
 * The answer to a writer that has proven the key: the log's state and the
 * descriptors, in their versioned forms, which say whether the region
 * offers GPSPM, under a MAC bound to this handshake
 */
static int make_pdata(const struct log_memory *mem, struct rpma_mr_local *mr,
		      const struct rpma_peer_cfg *pcfg, const struct rpma_conn_cfg *cfg,
		      const uint8_t challenge[PSK_NONCE], const uint8_t prove_mac[PSK_MAC_SHORT],
		      uint8_t *buf, uint8_t *len)
{
	const struct log_header *hdr = (const void *)mem->addr;
	struct replica_pdata *pd = (void *)buf;
	size_t mr_desc_size, pcfg_desc_size;
	int ret;

	if ((ret = rpma_mr_get_versioned_descriptor_size(mr, &mr_desc_size)) ||
	    (ret = rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &pcfg_desc_size)))
		return ret;
	if (sizeof(*pd) + mr_desc_size + pcfg_desc_size > PDATA_MAX)
		return RPMA_E_NOSUPP;
	memset(pd, 0, sizeof(*pd));
	pd->magic = htole32(REPLICA_MAGIC);
	pd->version = PROTOCOL_VERSION;
	pd->step = STEP_PROVE;
	pd->mr_desc_size = (uint8_t)mr_desc_size;
	pd->pcfg_desc_size = (uint8_t)pcfg_desc_size;
	pd->log_id = hdr->log_id;
	pd->tail = hdr->tail;
	pd->capacity = hdr->capacity;
	if ((ret = rpma_mr_get_versioned_descriptor(mr, pd->descriptors)) ||
	    (ret =
		 rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, pd->descriptors + mr_desc_size)))
		return ret;
	*len = (uint8_t)(sizeof(*pd) + mr_desc_size + pcfg_desc_size);
	log_replica_answer_mac(&key, challenge, prove_mac, buf, *len, pd->mac);
	return 0;
}

/*
 * What the peer asks for, or why it is refused: NULL and *wp filled when
 * its request is a writer's HELLO or PROVE of this protocol
 */
static const char *read_request(struct rpma_conn_req *req, struct writer_pdata *wp, char *why,
				size_t why_size)
{
	struct rpma_conn_private_data pdata;

	if (rpma_conn_req_get_private_data(req, &pdata))
		return log_request_decode(NULL, 0, wp, why, why_size);
	return log_request_decode(pdata.ptr, pdata.len, wp, why, why_size);
}

enum outcome {
	OUT_SIGNAL,  /* a signal came: the replica stops */
	OUT_DONE,    /* the connection was set up, and is over */
	OUT_REFUSED, /* the peer did something wrong (logged); a HELLO's, or never set up */
};

/* a writer that has proven the key, before it is answered */
struct writer_request {
	struct rpma_conn_req *req;
	uint8_t challenge[PSK_NONCE];	  /* the one its PROVE answered */
	uint8_t prove_mac[PSK_MAC_SHORT]; /* its PROVE's MAC, which the answer is bound to */
	char peer[INET6_ADDRSTRLEN + 32];
};

/* what a writer's connection watches besides itself: the listening endpoint */
static struct rpma_ep *listener;
static int listener_fd = -1;
static struct rpma_conn_cfg *writer_cfg; /* NULL: the defaults, no GPSPM */

/* a connection that is over, whatever state it is in */
static void drop(struct rpma_conn **conn)
{
	(void)rpma_conn_disconnect(*conn);
	(void)rpma_conn_delete(conn);
}

static enum outcome hello(struct rpma_conn_req **req, const struct writer_pdata *wp,
			  const struct psk_ends *ends, const char *peer);

/*
 * The two ends of a request as this replica sees them: the writer's
 * address, its own the request came in at, and the writer's queue pair the
 * request names (none on iWARP: 0). False when either end has no IP
 * address, which no handshake can be bound to.
 */
static bool request_ends(const struct rpma_conn_req *req, const struct sockaddr_storage *writer,
			 struct psk_ends *ends)
{
	struct sockaddr_storage mine;
	uint32_t qp = 0;
	int ret = rpma_conn_req_get_peer_qp_num(req, &qp);

	if (ret && ret != RPMA_E_NOSUPP)
		return false;
	return !rpma_conn_req_get_local_addr(req, &mine) && psk_ends_make(ends, writer, &mine, qp);
}

enum taken {
	TAKEN_NOTHING, /* refused (logged), or a HELLO answered */
	TAKEN_SIGNAL,  /* a signal came: the replica stops */
	TAKEN_WRITER,  /* *wr: a writer that proved the key, to be answered */
};

static enum taken examine(struct rpma_conn_req *req, const struct sockaddr_storage *addr,
			  struct writer_request *wr);

/*
 * The next connection request of the listener: the address rules first,
 * then a writer's HELLO (answered here) or PROVE (checked here)
 */
static enum taken take_request(struct writer_request *wr)
{
	struct rpma_conn_req *req = NULL;
	int ret = rpma_ep_next_conn_req(listener, writer_cfg, &req);

	if (ret) {
		/*
		 * The request is gone (rejected, if it came at all). A pause,
		 * so that a failure that repeats is not a busy loop.
		 */
		report("replica", "rpma_ep_next_conn_req", ret);
		poll(NULL, 0, 100);
		return TAKEN_NOTHING;
	}

	/* who: the penalties and the address rules come before anything is read */
	struct sockaddr_storage ss;
	bool have_addr = rpma_conn_req_get_peer_addr(req, &ss) == 0;
	uint8_t ip[16];
	uint32_t dropped = 0;

	if (have_addr)
		psk_addr_str(&ss, wr->peer, sizeof(wr->peer));
	else
		snprintf(wr->peer, sizeof(wr->peer), "(a peer of unknown address)");
	const bool counted = have_addr && psk_penalty_counts(exempt, nexempt, &ss, ip);

	if (counted && psk_penalized(&penalties, ip, psk_now_ms(), &dropped)) {
		/* nothing read, nothing logged: the penalty's first line said it */
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}
	if (dropped)
		printf("replica: penalty for %s over: %u requests were refused unread\n", wr->peer,
		       dropped);

	enum taken taken = examine(req, have_addr ? &ss : NULL, wr);

	if (counted && taken == TAKEN_WRITER) {
		psk_penalty_forgive(&penalties, ip);
	} else if (counted && taken == TAKEN_NOTHING) {
		/* a refusal, or a HELLO: counted until a proof forgives it */
		uint32_t ms = psk_penalty_count(&penalties, ip, psk_now_ms());
		char why[128];

		if (ms)
			printf("replica: penalty for %s: %s\n", wr->peer,
			       psk_penalty_why(ms, why, sizeof(why)));
	}
	fflush(stdout);
	return taken;
}

/*
 * A request from addr (NULL: its address cannot be read), which this takes
 * over: a writer's HELLO (answered here) or PROVE (checked here).
 * TAKEN_WRITER with wr->req set for a proven writer, TAKEN_NOTHING when it
 * was refused or answered.
 */
static enum taken examine(struct rpma_conn_req *req, const struct sockaddr_storage *addr,
			  struct writer_request *wr)
{
	if (nallow > 0 && (!addr || !psk_allowed(allow, nallow, addr))) {
		refused(wr->peer, "its address is outside every --allow rule");
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}

	/* what: a writer's HELLO or PROVE */
	struct writer_pdata wp;
	char why[160];
	const char *problem = read_request(req, &wp, why, sizeof(why));

	if (problem) {
		refused(wr->peer, "%s", problem);
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}
	struct psk_ends ends;

	if (!addr || !request_ends(req, addr, &ends)) {
		refused(wr->peer, "the connection has no IP address at one end to bind a proof to");
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}
	if (wp.step == STEP_HELLO)
		return hello(&req, &wp, &ends, wr->peer) == OUT_SIGNAL ? TAKEN_SIGNAL
								       : TAKEN_NOTHING;

	/* PROVE: the challenge must be one of ours, for this address, in time and unused */
	problem = psk_challenge_check(&challenges, ends.client, wp.nonce);
	if (problem) {
		refused(wr->peer, "its PROVE holds %s (a challenge lives %d s)", problem,
			PSK_CHALLENGE_TTL_S);
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}
	if (!log_prove_valid(&key, &wp, &ends)) {
		refused(wr->peer, "its proof does not match this replica's key and the "
				  "connection's addresses and queue pair");
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}
	if (!psk_challenge_use(&challenges, wp.nonce)) {
		refused(wr->peer, "too many writers proved the key at once: it may ask again");
		rpma_conn_req_delete(&req);
		return TAKEN_NOTHING;
	}
	memcpy(wr->challenge, wp.nonce, PSK_NONCE);
	memcpy(wr->prove_mac, wp.mac, PSK_MAC_SHORT);
	wr->req = req;
	return TAKEN_WRITER;
}

/*
 * Accepts the request with answer, then follows the connection: it must be
 * set up within HANDSHAKE_DEADLINE_S seconds; a HELLO's must be closed by
 * then too, a writer's lasts as long as the writer wants, or until
 * another writer proves the key (*next, *have_next). A writer cut off by
 * a partition, or whose machine went down, sends no event: the listener
 * is watched meanwhile, and a writer that proves the key is taken as the
 * one that is back (or that followed it); the old connection is dropped.
 */
static enum outcome converse(struct rpma_conn_req **req, const void *answer, uint8_t len,
			     const char *peer, bool is_hello, struct writer_request *next,
			     bool *have_next)
{
	struct rpma_conn_private_data pdata = { (void *)answer, len };
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	uint64_t deadline = psk_now_ms() + HANDSHAKE_DEADLINE_S * 1000;
	bool established = false;
	int fd, ret;

	ret = rpma_conn_req_connect(req, &pdata, &conn);
	if (ret) {
		/* most often the peer gave up waiting for the answer */
		refused(peer, "its connection could not be accepted: %s", rpma_err_2str(ret));
		return OUT_REFUSED;
	}
	ret = rpma_conn_get_event_fd(conn, &fd);
	if (ret) {
		report("replica", "rpma_conn_get_event_fd", ret);
		drop(&conn);
		return OUT_REFUSED;
	}
	for (;;) {
		bool writer_session = !is_hello && established;
		enum wait_result w = wait_readable(fd, writer_session ? listener_fd : -1,
						   writer_session ? 0 : deadline);

		if (w == WAIT_SIGNAL) {
			drop(&conn);
			return OUT_SIGNAL;
		}
		if (w == WAIT_OTHER) {
			enum taken t = take_request(next);

			if (t == TAKEN_SIGNAL) {
				drop(&conn);
				return OUT_SIGNAL;
			}
			if (t == TAKEN_NOTHING)
				continue;
			printf("replica: a writer from %s proved the key while the connection of "
			       "the writer from %s was open: that writer is taken as gone "
			       "(cut off or down, it sent no event); disconnecting it\n",
			       next->peer, peer);
			fflush(stdout);
			*have_next = true;
			drop(&conn);
			return OUT_DONE;
		}
		if (w == WAIT_TIMEOUT) {
			if (established)
				refused(peer,
					"it kept the connection of its HELLO open for %d s; "
					"disconnected it",
					HANDSHAKE_DEADLINE_S);
			else
				refused(peer, "its connection was not set up within %d s",
					HANDSHAKE_DEADLINE_S);
			drop(&conn);
			return OUT_REFUSED;
		}
		if (w == WAIT_ERROR) {
			perror("replica: poll");
			drop(&conn);
			return established ? OUT_DONE : OUT_REFUSED;
		}
		ret = rpma_conn_next_event(conn, &event);
		if (ret == RPMA_E_NO_EVENT)
			continue;
		if (ret) {
			report("replica", "waiting for the peer's connection", ret);
			drop(&conn);
			return established ? OUT_DONE : OUT_REFUSED;
		}
		if (event == RPMA_CONN_ESTABLISHED) {
			established = true;
			if (!is_hello) {
				printf("replica: a writer connected from %s (it holds the key)\n",
				       peer);
				fflush(stdout);
			}
			continue;
		}
		break;
	}
	/* a HELLO's connection that closes is what should happen: nothing to say */
	if (!established)
		refused(peer, "its connection failed before it was set up: %s",
			rpma_utils_conn_event_2str(event));
	else if (!is_hello && event == RPMA_CONN_CLOSED)
		printf("replica: the writer disconnected\n");
	else if (!is_hello)
		printf("replica: the writer is gone: %s\n", rpma_utils_conn_event_2str(event));
	fflush(stdout);
	drop(&conn);
	return established ? OUT_DONE : OUT_REFUSED;
}

/*
 * HELLO: a challenge, and the proof that this replica holds the key. A
 * writer whose HELLO shows another key gets the same kind of answer, so
 * that it can tell its user, but random bytes for a challenge, which no
 * check takes: it can prove nothing with them.
 */
static enum outcome hello(struct rpma_conn_req **req, const struct writer_pdata *wp,
			  const struct psk_ends *ends, const char *peer)
{
	struct replica_hello answer;
	bool same_key = log_hello_same_key(&key, wp);

	memset(&answer, 0, sizeof(answer));
	answer.magic = htole32(REPLICA_MAGIC);
	answer.version = PROTOCOL_VERSION;
	answer.step = STEP_HELLO;
	if (same_key)
		psk_challenge_issue(&challenges, ends->client, answer.challenge);
	else
		psk_nonce(answer.challenge);
	psk_server_proof(&key, PSK_LABEL, wp->nonce, answer.challenge, answer.proof);
	if (!same_key)
		refused(peer, "it holds another key (its HELLO says so)");

	/*
	 * The answer travels in the reject of the request: a peer holds no
	 * connected queue pair of this replica's, in the protection domain of
	 * the log, before it proved the key.
	 */
	struct rpma_conn_private_data pdata = { &answer, sizeof(answer) };
	int ret = rpma_conn_req_reject(req, &pdata);

	if (ret)
		refused(peer, "its HELLO could not be answered: %s", rpma_err_2str(ret));
	return OUT_REFUSED;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: replica --key FILE [--allow ADDR[/PREFIX]]...\n"
		"               [--penalty-exempt ADDR[/PREFIX]]... [--direct-write-to-pmem]\n"
		"               [--format] [--sessions N] <addr> <port> [<pmem-path>]\n"
		"  --key FILE              the pre-shared key: the same file as the writers'\n"
		"  --allow ADDR[/PREFIX]   let writers in from there only (repeatable)\n"
		"  --penalty-exempt ADDR[/PREFIX]  never refuse these unread, however often\n"
		"                          they were refused (repeatable)\n"
		"  --direct-write-to-pmem  the platform makes what the NIC writes persistent\n"
		"                          (eADR, or DDIO off)\n"
		"  --format                start a new, empty log\n"
		"  --sessions N            stop after N writers (0: at SIGINT or SIGTERM)\n");
}

int main(int argc, char *argv[])
{
	bool declared = false, format = false;
	int sessions = 0; /* 0: until a signal */
	const char *key_path = NULL;
	static const struct option options[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "allow", required_argument, NULL, 'A' },
		{ "penalty-exempt", required_argument, NULL, 'E' },
		{ "direct-write-to-pmem", no_argument, NULL, 'D' },
		{ "format", no_argument, NULL, 'F' },
		{ "sessions", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	char *end;

	while ((opt = getopt_long(argc, argv, "+", options, NULL)) != -1) {
		switch (opt) {
		case 'k':
			key_path = optarg;
			break;
		case 'A':
			if (nallow == MAX_ALLOW) {
				fprintf(stderr, "replica: at most %d --allow rules\n", MAX_ALLOW);
				return 2;
			}
			if (psk_allow_parse(optarg, &allow[nallow])) {
				fprintf(stderr,
					"replica: --allow %s: not an address with an optional "
					"prefix length (192.0.2.0/24, 2001:db8::/32, 192.0.2.7)\n",
					optarg);
				return 2;
			}
			nallow++;
			break;
		case 'E':
			if (nexempt == MAX_ALLOW) {
				fprintf(stderr, "replica: at most %d --penalty-exempt rules\n",
					MAX_ALLOW);
				return 2;
			}
			if (psk_allow_parse(optarg, &exempt[nexempt])) {
				fprintf(stderr,
					"replica: --penalty-exempt %s: not an address with an "
					"optional prefix length (192.0.2.0/24, 2001:db8::/32)\n",
					optarg);
				return 2;
			}
			nexempt++;
			break;
		case 'D':
			declared = true;
			break;
		case 'F':
			format = true;
			break;
		case 'n':
			errno = 0;
			sessions = (int)strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || sessions < 0) {
				fprintf(stderr, "replica: --sessions %s: not a number of writers\n",
					optarg);
				return 2;
			}
			break;
		default:
			print_usage();
			return 2;
		}
	}
	argc -= optind - 1;
	argv += optind - 1;
	if (argc != 3 && argc != 4) {
		print_usage();
		return 2;
	}
	if (load_key("replica", key_path, &key))
		return 2;
	/* after the key: psk_load() started libsodium, whose random source this takes */
	psk_challenges_init(&challenges);
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *path = argc == 4 ? argv[3] : NULL;

	int status = 1;
	int ret;
	struct log_memory mem;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_cfg *cfg = NULL; /* NULL: the defaults, no GPSPM */
	struct rpma_ep *ep = NULL;
	struct writer_request next; /* a writer that came while another was connected */
	bool have_next = false;

	/* 1. the log: read back and checked, or new */
	if (path) {
		if (log_memory_map("replica", path, declared, &mem))
			return 1;
		printf("replica: mapped %s (%zu MiB)\n", path, mem.size >> 20);
	} else {
		if (log_memory_dram(DRAM_LOG_SIZE, &mem)) {
			fprintf(stderr, "replica: out of memory\n");
			return 1;
		}
		printf("replica: no pmem path given: the log is in DRAM and ends with the "
		       "replica\n");
	}
	if (format || !log_exists(&mem)) {
		log_format(&mem, 0);
		printf("replica: %s: a new, empty log\n", format ? "formatted" : "no log found");
	}
	if (!replay(&mem)) {
		printf("replica: not serving a damaged log (--format starts a new one)\n");
		goto out_mem;
	}
	printf("replica: the writers' flushes reach %s here\n",
	       mem.direct_write ? "persistence (direct write to pmem)"
	       : mem.persist	? "persistence by GPSPM (this CPU persists what they flush)"
				: "visibility only (DRAM)");

	/* 2. the whole log, for remote writes and flushes */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("replica", "opening the device", ret);
		goto out_mem;
	}
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

	if (mem.direct_write || mem.persist)
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	ret = rpma_mr_reg(peer, mem.addr, mem.size, usage, &mr);
	if (ret) {
		report("replica", "rpma_mr_reg", ret);
		goto out_peer;
	}
	/*
	 * pmem: GPSPM is offered, served by a thread of the library, since
	 * this one sleeps until the writer goes. The writers use it unless
	 * direct write to pmem lets their flushes do without this CPU.
	 */
	ret = rpma_peer_cfg_new(&pcfg);
	if (!ret)
		ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, mem.direct_write);
	if (!ret && mem.persist) {
		ret = rpma_mr_set_persist_fn(mr, mem.persist);
		if (!ret)
			ret = rpma_conn_cfg_new(&cfg);
		if (!ret)
			ret = rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD);
		if (!ret)
			ret = rpma_conn_cfg_set_rq_size(cfg, FLUSHES_IN_FLIGHT);
	}
	if (ret) {
		report("replica", "making the configurations", ret);
		goto out_mr;
	}

	if (pipe(signal_pipe)) {
		perror("replica: pipe");
		goto out_mr;
	}
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("replica", "rpma_ep_listen", ret);
		goto out_mr;
	}
	int ep_fd;

	ret = rpma_ep_get_fd(ep, &ep_fd);
	if (ret) {
		report("replica", "rpma_ep_get_fd", ret);
		goto out_ep;
	}
	listener = ep;
	listener_fd = ep_fd;
	writer_cfg = cfg;
	if (nallow > 0)
		printf("replica: writers are let in from %d --allow %s only\n", nallow,
		       nallow == 1 ? "rule" : "rules");
	printf("replica: listening on %s:%s\n", addr, port);
	fflush(stdout);

	/*
	 * 3. peers, one after the other. Whatever a peer does, the replica
	 * goes on: only a signal, --sessions or a damaged log stops it.
	 */
	for (int served = 0; sessions == 0 || served < sessions;) {
		struct writer_request wr;

		if (have_next) {
			/* it proved the key while the previous writer's connection was open */
			wr = next;
			have_next = false;
		} else {
			enum wait_result w = wait_readable(ep_fd, -1, 0);

			if (w == WAIT_SIGNAL)
				break;
			if (w == WAIT_ERROR) {
				perror("replica: poll");
				goto out_ep;
			}
			enum taken t = take_request(&wr);

			if (t == TAKEN_SIGNAL)
				break;
			if (t == TAKEN_NOTHING)
				continue;
		}

		/* a writer that holds the key: the log is its, as it is now */
		uint8_t buf[PDATA_MAX];
		uint8_t len = 0;

		ret = make_pdata(&mem, mr, pcfg, cfg, wr.challenge, wr.prove_mac, buf, &len);
		/* this writer's GPSPM reaches the log and nothing else of this replica's */
		if (!ret && cfg)
			ret = rpma_conn_req_gpspm_offer(wr.req, mr);
		if (ret) {
			report("replica", "describing the log", ret);
			rpma_conn_req_delete(&wr.req);
			continue;
		}
		enum outcome out = converse(&wr.req, buf, len, wr.peer, false, &next, &have_next);

		if (out == OUT_REFUSED)
			continue; /* never set up: nothing was written */
		/* durable now, whatever the writer's flushes could promise */
		uint64_t tail = le64toh(((struct log_header *)mem.addr)->tail);

		if (tail <= mem.size - LOG_HEADER_SIZE)
			log_memory_persist(&mem, mem.addr, LOG_HEADER_SIZE + tail);
		if (!replay(&mem)) {
			printf("replica: not serving a damaged log any longer (--format starts a "
			       "new one)\n");
			goto out_ep;
		}
		if (out == OUT_DONE)
			served++;
		if (out == OUT_SIGNAL)
			break;
	}
	printf("replica: done\n");
	status = 0;

out_ep:
	if (have_next)
		rpma_conn_req_delete(&next.req);
	rpma_ep_shutdown(&ep);
out_mr:
	rpma_conn_cfg_delete(&cfg);
	rpma_peer_cfg_delete(&pcfg);
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("replica", "rpma_mr_dereg", ret);
out_peer:
	rpma_peer_delete(&peer);
out_mem:
	log_memory_release(&mem);
	psk_wipe(&key);
	psk_challenges_wipe(&challenges);
	return status;
}
