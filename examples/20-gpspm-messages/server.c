/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 20-gpspm-messages: a GPSPM connection and a messages
 *             connection from one client, up and down together
 *
 * usage: server [--thread] <addr> <port> [<pmem-path>]
 *
 * On a connection that carries GPSPM the receive queue is the library's:
 * the client's flush requests and this side's answers are sends into the
 * library's buffers, and a send lands in whichever receive comes first, so
 * the application cannot post receives of its own there (rpma_send() and
 * rpma_recv() return RPMA_E_INVAL). A client that wants GPSPM and its own
 * messages makes two connections:
 *   - the GPSPM one, for its writes and persistent flushes: this side
 *     configures it with rpma_conn_cfg_set_gpspm() and answers it with
 *     the versioned descriptors of its region and peer configuration, as
 *     in 15-gpspm, and with a session number;
 *   - a plain one, for messages, whose request names that session: this
 *     side posts a receive on it before accepting it.
 * The first byte of the private data of each request says which one it
 * is; a request of the wrong kind, or of a session this server did not
 * give, is turned away.
 *
 * For each "record N" that comes on the messages connection, the server
 * checks that record N is in its memory, byte for byte, and answers
 * "ack N". It can: the client sends the message only after the record's
 * persistent flush completed, and that completion means this side's CPU
 * has made the range persistent (GPSPM), after the write had landed.
 *
 * One poll() watches the events of both connections, the messages
 * connection's CQ and, by default (RPMA_GPSPM_POLLED), the GPSPM
 * connection's CQ, whose polling serves the client's flush requests; with
 * --thread (RPMA_GPSPM_THREAD) a thread of the library serves them and
 * that CQ is not the server's. When either connection goes down (closed,
 * lost, or an operation that failed on it), the server says which, brings
 * the other down too, and ends: with 0 when the client had said "done"
 * and closes both, with 1 otherwise.
 *
 * The memory is persistent memory mapped with libpmem2 (a device DAX
 * such as /dev/dax0.0, or a file, created when missing), or DRAM without
 * a path, where the persist function can do nothing but count.
 */

#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpmem2.h>

#include "common.h"

#define NEW_FILE_SIZE (1 << 20)

/* libpmem2's persist function for the mapping; NULL for DRAM */
static pmem2_persist_fn pmem_persist;
static atomic_ulong persist_calls, persist_bytes;

/*
 * What the library calls to serve a flush: from the thread that polls the
 * CQ, or from the library's own thread with --thread, hence the atomic
 * counters.
 */
static void counting_persist(const void *ptr, size_t len)
{
	if (pmem_persist)
		pmem_persist(ptr, len);
	atomic_fetch_add(&persist_calls, 1);
	atomic_fetch_add(&persist_bytes, len);
}

/* maps path with libpmem2, a missing path becoming a file; 0 or -1 */
static int map_pmem(const char *path, struct pmem2_map **map)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct stat st;
	int ret = -1;
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	if (fd < 0) {
		fprintf(stderr, "server: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < NEW_FILE_SIZE &&
	    ftruncate(fd, NEW_FILE_SIZE) != 0) {
		fprintf(stderr, "server: cannot size %s: %s\n", path, strerror(errno));
		goto out;
	}
	/* any mapping has page granularity; GPSPM works on all of them */
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(map, cfg, src)) {
		fprintf(stderr, "server: cannot map %s: %s\n", path, pmem2_errormsg());
		goto out;
	}
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd);
	return ret;
}

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case KIND_GPSPM:
		return "GPSPM";
	case KIND_MESSAGES:
		return "messages";
	}
	return "unknown";
}

/*
 * Whether the request is of the kind wanted (and, for the messages
 * connection, of the session given); if not, it is turned away.
 */
static bool request_is(struct rpma_conn_req **req, uint8_t kind, uint32_t session)
{
	struct rpma_conn_private_data pd;
	const struct client_pdata *cp;
	int ret = rpma_conn_req_get_private_data(*req, &pd);

	if (ret) {
		report("server", "rpma_conn_req_get_private_data", ret);
	} else if (!pd.ptr || pd.len < sizeof(*cp)) {
		printf("server: a connection request without the client's private data: "
		       "turned away\n");
	} else {
		cp = pd.ptr;
		if (cp->kind == kind && (kind != KIND_MESSAGES || cp->session == session))
			return true;
		if (cp->kind != kind)
			printf("server: a connection request of kind %s where %s was due: "
			       "turned away\n",
			       kind_name(cp->kind), kind_name(kind));
		else
			printf("server: a messages connection for session %u, not %u: "
			       "turned away\n",
			       cp->session, session);
	}
	fflush(stdout);
	rpma_conn_req_delete(req);
	return false;
}

/* the connection's first event, which must be RPMA_CONN_ESTABLISHED */
static int established(struct rpma_conn *conn, const char *name)
{
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_next_event(conn, &event);

	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: the %s connection was not established: %s\n", name,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		return -1;
	}
	return 0;
}

/*
 * Waits, up to WAIT_MS, for the messages connection's request of the
 * session given, watching the GPSPM connection meanwhile: a client that
 * goes away after its first connection must not leave the server waiting.
 * Other requests are turned away. 0, with the request, or -1.
 */
static int next_messages_req(struct rpma_ep *ep, struct link *gpspm, uint32_t session,
			     struct rpma_conn_req **req)
{
	const char *why;
	int ep_fd, ret;

	if ((ret = rpma_ep_get_fd(ep, &ep_fd))) {
		report("server", "rpma_ep_get_fd", ret);
		return -1;
	}
	if (set_nonblock(ep_fd)) {
		perror("server: fcntl");
		return -1;
	}
	for (;;) {
		struct pollfd pfd[3] = { { ep_fd, POLLIN, 0 },
					 { gpspm->ev_fd, POLLIN, 0 },
					 { gpspm->cq_fd, POLLIN, 0 } };
		int n = poll(pfd, gpspm->cq ? 3 : 2, WAIT_MS);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("server: poll");
			return -1;
		}
		if (n == 0) {
			printf("server: no messages connection within %d ms\n", WAIT_MS);
			return -1;
		}
		if (link_event(gpspm, &why)) {
			printf("server: the GPSPM connection went down (%s) before the messages "
			       "connection came\n",
			       why);
			return -1;
		}
		/* the client flushes nothing yet; a poll would serve it all the same */
		if (gpspm->cq && (pfd[2].revents & POLLIN)) {
			struct rpma_completion cmpl;

			(void)rpma_cq_wait(gpspm->cq);
			while (rpma_cq_get_completion(gpspm->cq, &cmpl) == 0)
				;
		}
		ret = rpma_ep_next_conn_req(ep, NULL, req);
		if (ret == RPMA_E_NO_EVENT)
			continue;
		if (ret) {
			report("server", "rpma_ep_next_conn_req", ret);
			return -1;
		}
		if (request_is(req, KIND_MESSAGES, session))
			return 0;
	}
}

/* what the server keeps about the client's records and its own messages */
struct serving {
	struct link links[2]; /* [0] GPSPM, [1] messages */
	const char *region;
	struct rpma_mr_local *msg_mr; /* [0, MSG_SIZE) receives, [MSG_SIZE, 2 * MSG_SIZE) sends */
	char *in, *out;
	uint32_t verified;  /* records found in memory, acknowledged */
	uint32_t ack_waits; /* an ack ready while out was busy; 0: none */
	bool sending;	    /* out is in flight */
	bool done;	    /* the client said "done": both connections close next */
};

static int recv_ctx, send_ctx;

static int send_ack(struct serving *s, uint32_t n)
{
	/* out is written again only after the send before completed */
	if (s->sending) {
		s->ack_waits = n;
		return 0;
	}
	snprintf(s->out, MSG_SIZE, "ack %u", n);
	int ret = rpma_send(s->links[1].conn, s->msg_mr, MSG_SIZE, MSG_SIZE,
			    RPMA_F_COMPLETION_ALWAYS, &send_ctx);
	if (ret) {
		report("server", "rpma_send", ret);
		return -1;
	}
	s->sending = true;
	s->ack_waits = 0;
	return 0;
}

/* one message from the client; -1 when the client broke the protocol */
static int on_message(struct serving *s, uint32_t len)
{
	char text[MSG_SIZE];
	unsigned n;
	char end;

	memcpy(text, s->in, MSG_SIZE);
	text[MSG_SIZE - 1] = '\0';
	if (len != MSG_SIZE) {
		fprintf(stderr, "server: a message of %u bytes\n", len);
		return -1;
	}
	if (sscanf(text, "done %u%c", &n, &end) == 1) {
		if (n != s->verified) {
			fprintf(stderr, "server: the client is done after %u records, it sent %u\n",
				n, s->verified);
			return -1;
		}
		s->done = true;
		printf("server: the client is done: %u records, each in memory when its "
		       "message came, each acknowledged\n",
		       n);
		fflush(stdout);
		return 0;
	}
	if (sscanf(text, "record %u%c", &n, &end) != 1) {
		fprintf(stderr, "server: an unknown message: \"%s\"\n", text);
		return -1;
	}
	if (n != s->verified + 1) {
		fprintf(stderr, "server: record %u came after record %u\n", n, s->verified);
		return -1;
	}

	/* the flush completed before the message was sent: the record must be here */
	char expected[SLOT_SIZE];
	const char *slot = s->region + record_offset(n);

	format_record(expected, n);
	if (memcmp(slot, expected, SLOT_SIZE) != 0) {
		fprintf(stderr, "server: record %u is not in memory: the slot holds \"%.*s\"\n", n,
			SLOT_SIZE, slot);
		return -1;
	}
	s->verified = n;
	if (n == 1 || n % PROGRESS == 0) {
		printf("server: record %u is in memory: \"%s\"; ack %u\n", n, slot, n);
		fflush(stdout);
	}

	/* the next record's message may follow the ack at once: receive first */
	int ret = rpma_recv(s->links[1].conn, s->msg_mr, 0, MSG_SIZE, &recv_ctx);

	if (ret) {
		report("server", "rpma_recv", ret);
		return -1;
	}
	return send_ack(s, n);
}

/*
 * The messages connection's completions. 0: all taken; 1: the connection
 * failed (*why says how); -1: the client broke the protocol.
 */
static int take_messages(struct serving *s, char *why, size_t why_size)
{
	struct link *l = &s->links[1];
	struct rpma_completion cmpl;
	int ret = rpma_cq_wait(l->cq); /* acknowledges the CQ's event, re-arms it */

	if (ret && ret != RPMA_E_NO_COMPLETION) {
		report("server", "rpma_cq_wait", ret);
		snprintf(why, why_size, "its CQ cannot be waited on");
		return 1;
	}
	while ((ret = rpma_cq_get_completion(l->cq, &cmpl)) == 0) {
		const char *op = cmpl.op_context == &send_ctx ? "an ack" : "a receive";

		if (cmpl.op_status != IBV_WC_SUCCESS) {
			snprintf(why, why_size, "%s completed with: %s", op,
				 ibv_wc_status_str(cmpl.op_status));
			return 1;
		}
		if (cmpl.op_context == &send_ctx) {
			s->sending = false;
			if (s->ack_waits && send_ack(s, s->ack_waits))
				return -1;
			continue;
		}
		if (on_message(s, cmpl.byte_len))
			return -1;
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		report("server", "rpma_cq_get_completion", ret);
		snprintf(why, why_size, "its completions cannot be taken");
		return 1;
	}
	return 0;
}

/* RPMA_GPSPM_POLLED: each poll of the CQ serves the requests that came */
static int serve_gpspm(struct serving *s, char *why, size_t why_size)
{
	struct link *l = &s->links[0];
	struct rpma_completion cmpl;
	int ret = rpma_cq_wait(l->cq);

	if (ret && ret != RPMA_E_NO_COMPLETION) {
		report("server", "rpma_cq_wait", ret);
		snprintf(why, why_size, "its CQ cannot be waited on");
		return 1;
	}
	/* none of them is the server's: it posts nothing on this connection */
	while ((ret = rpma_cq_get_completion(l->cq, &cmpl)) == 0) {
		snprintf(why, why_size, "a completion of nothing the server posted: %s",
			 ibv_wc_status_str(cmpl.op_status));
		return 1;
	}
	if (ret != RPMA_E_NO_COMPLETION) {
		report("server", "rpma_cq_get_completion", ret);
		snprintf(why, why_size, "its completions cannot be taken");
		return 1;
	}
	return 0;
}

/*
 * Serves until either connection goes down, then brings both down.
 * 0: they closed after the client's "done"; -1: otherwise.
 */
static int serve(struct serving *s)
{
	struct link *links = s->links;
	char why[96];
	const char *event_why;
	int gone = -1;

	for (;;) {
		struct pollfd pfd[4] = { { links[0].ev_fd, POLLIN, 0 },
					 { links[1].ev_fd, POLLIN, 0 },
					 { links[1].cq_fd, POLLIN, 0 },
					 { links[0].cq_fd, POLLIN, 0 } };
		int ret;

		if (poll(pfd, links[0].cq ? 4 : 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("server: poll");
			snprintf(why, sizeof(why), "the server cannot wait for it");
			gone = 1;
			break;
		}
		/* completions first: a message that came before a close still counts */
		if (links[0].cq && (pfd[3].revents & POLLIN) && serve_gpspm(s, why, sizeof(why))) {
			gone = 0;
			break;
		}
		if (pfd[2].revents & POLLIN) {
			ret = take_messages(s, why, sizeof(why));
			if (ret < 0) {
				/* both are up, and of no more use */
				printf("server: the client broke the protocol; bringing both "
				       "connections down\n");
				links_close(links);
				return -1;
			}
			if (ret) {
				gone = 1;
				break;
			}
		}
		for (int i = 0; i < 2 && gone < 0; i++) {
			if ((pfd[i].revents & POLLIN) && link_event(&links[i], &event_why)) {
				snprintf(why, sizeof(why), "%s", event_why);
				gone = i;
			}
		}
		if (gone >= 0)
			break;
	}
	/* after "done", the client closing either connection is the normal end */
	bool expected = s->done;

	links_down(links, gone, why, expected);
	return expected ? 0 : -1;
}

int main(int argc, char *argv[])
{
	enum rpma_gpspm_mode mode = RPMA_GPSPM_POLLED;

	if (argc > 1 && strcmp(argv[1], "--thread") == 0) {
		mode = RPMA_GPSPM_THREAD;
		argc--;
		argv++;
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s [--thread] <addr> <port> [<pmem-path>]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *path = argc == 4 ? argv[3] : NULL;

	int status = 1;
	int ret;
	struct pmem2_map *map = NULL;
	char *region, *dram = NULL, *msgs = NULL;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL, *msg_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *gconn = NULL, *mconn = NULL;
	struct serving s = { .verified = 0 };

	/* 1. the memory: pmem, or DRAM */
	if (path) {
		if (map_pmem(path, &map))
			return 1;
		if (pmem2_map_get_size(map) < REGION_SIZE) {
			fprintf(stderr, "server: %s is smaller than %d bytes\n", path, REGION_SIZE);
			goto out_unmap;
		}
		region = pmem2_map_get_address(map);
		pmem_persist = pmem2_get_persist_fn(map);
		printf("server: mapped %s; the client's flushes are persisted with libpmem2\n",
		       path);
		/* no record of an earlier run may pass for one of this run */
		memset(region, 0, REGION_SIZE);
		pmem_persist(region, REGION_SIZE);
	} else {
		dram = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);
		if (!dram) {
			fprintf(stderr, "server: out of memory\n");
			return 1;
		}
		memset(dram, 0, REGION_SIZE);
		region = dram;
		printf("server: no pmem path given: using DRAM, which nothing makes persistent; "
		       "the persist function only counts\n");
	}
	s.region = region;

	/* 2. the region, offered for GPSPM; the messages' buffers */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "opening the device", ret);
		goto out_unmap;
	}
	ret = rpma_mr_reg(peer, region, REGION_SIZE,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr);
	if (!ret)
		ret = rpma_mr_set_persist_fn(mr, counting_persist);
	if (ret) {
		report("server", "registering the region", ret);
		goto out_mr;
	}
	msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * MSG_SIZE);
	if (!msgs) {
		fprintf(stderr, "server: out of memory\n");
		goto out_mr;
	}
	memset(msgs, 0, 2 * MSG_SIZE);
	ret =
	    rpma_mr_reg(peer, msgs, 2 * MSG_SIZE, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &msg_mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_mr;
	}
	s.msg_mr = msg_mr;
	s.in = msgs;
	s.out = msgs + MSG_SIZE;

	/*
	 * 3. the GPSPM connection's configuration; the messages connection
	 * takes the defaults, a receive queue of the application's
	 */
	ret = rpma_peer_cfg_new(&pcfg);
	if (!ret)
		ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(cfg, mode);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, GPSPM_DEPTH);
	if (ret) {
		report("server", "configuring GPSPM", ret);
		goto out_cfg;
	}

	/* 4. the session and the versioned descriptors, for the client */
	union {
		struct server_pdata pd;
		uint8_t raw[PDATA_MAX];
	} buf;
	size_t mr_desc_size, pcfg_desc_size;

	ret = rpma_mr_get_versioned_descriptor_size(mr, &mr_desc_size);
	if (!ret)
		ret = rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &pcfg_desc_size);
	if (ret) {
		report("server", "getting the descriptor sizes", ret);
		goto out_cfg;
	}
	size_t pdata_len = sizeof(buf.pd) + mr_desc_size + pcfg_desc_size;

	if (pdata_len > sizeof(buf)) {
		fprintf(stderr, "server: the descriptors do not fit in the private data\n");
		goto out_cfg;
	}
	/* any number that another run is unlikely to give */
	buf.pd.session = ((uint32_t)getpid() << 16 ^ (uint32_t)time(NULL)) | 1;
	buf.pd.mr_desc_size = (uint8_t)mr_desc_size;
	buf.pd.pcfg_desc_size = (uint8_t)pcfg_desc_size;
	ret = rpma_mr_get_versioned_descriptor(mr, buf.pd.descriptors);
	if (!ret)
		ret = rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg,
							     buf.pd.descriptors + mr_desc_size);
	if (ret) {
		report("server", "getting the descriptors", ret);
		goto out_cfg;
	}
	struct rpma_conn_private_data pdata = { buf.raw, (uint8_t)pdata_len };

	/* 5. the client's GPSPM connection */
	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_cfg;
	}
	printf("server: listening on %s:%s; GPSPM requests are served %s\n", addr, port,
	       mode == RPMA_GPSPM_THREAD ? "by the library's thread"
					 : "while the server polls its CQ");
	fflush(stdout);
	do {
		ret = rpma_ep_next_conn_req(ep, cfg, &req);
		if (ret) {
			report("server", "rpma_ep_next_conn_req", ret);
			goto out_ep;
		}
	} while (!request_is(&req, KIND_GPSPM, 0));
	ret = rpma_conn_req_connect(&req, &pdata, &gconn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_ep;
	}
	if (established(gconn, "GPSPM") ||
	    link_init(&s.links[0], "server", "GPSPM", gconn, mode == RPMA_GPSPM_POLLED))
		goto out_gconn;
	printf("server: the GPSPM connection is up (session %u)\n", buf.pd.session);
	fflush(stdout);

	/* 6. its messages connection, with a receive posted before it starts */
	if (next_messages_req(ep, &s.links[0], buf.pd.session, &req))
		goto out_gconn;
	ret = rpma_conn_req_recv(req, msg_mr, 0, MSG_SIZE, &recv_ctx);
	if (ret) {
		report("server", "rpma_conn_req_recv", ret);
		rpma_conn_req_delete(&req);
		goto out_gconn;
	}
	ret = rpma_conn_req_connect(&req, NULL, &mconn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_gconn;
	}
	if (established(mconn, "messages") ||
	    link_init(&s.links[1], "server", "messages", mconn, true))
		goto out_mconn;
	printf("server: the messages connection is up\n");
	fflush(stdout);

	/* 7. the records and their messages, until the connections go */
	ret = serve(&s);
	printf("server: both connections are down; %u records verified and acknowledged, "
	       "%lu flushes served, %lu bytes persisted\n",
	       s.verified, atomic_load(&persist_calls), atomic_load(&persist_bytes));
	if (ret == 0)
		status = 0;
	else
		printf("server: the client went away before it was done\n");
	goto out_delete;

out_mconn:
	rpma_conn_disconnect(mconn);
out_gconn:
	rpma_conn_disconnect(gconn);
out_delete:
	if (mconn && (ret = rpma_conn_delete(&mconn)))
		report("server", "rpma_conn_delete", ret);
	if ((ret = rpma_conn_delete(&gconn)))
		report("server", "rpma_conn_delete", ret);
out_ep:
	rpma_ep_shutdown(&ep);
out_cfg:
	rpma_conn_cfg_delete(&cfg);
	rpma_peer_cfg_delete(&pcfg);
out_mr:
	if (msg_mr && (ret = rpma_mr_dereg(&msg_mr)))
		report("server", "rpma_mr_dereg", ret);
	free(msgs);
	if (mr && (ret = rpma_mr_dereg(&mr)))
		report("server", "rpma_mr_dereg", ret);
	rpma_peer_delete(&peer);
out_unmap:
	if (map)
		pmem2_map_delete(&map);
	free(dram);
	return status;
}
