/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 20-gpspm-messages: records made persistent by GPSPM, each
 *             announced by a message on a second connection
 *
 * usage: client <addr> <port> [records]
 *
 * The client makes two connections to the same server. The first carries
 * GPSPM (rpma_conn_cfg_set_gpspm(), RPMA_GPSPM_POLLED): it takes the
 * server's versioned descriptors and its session from the private data,
 * applies the server's peer configuration and checks with
 * rpma_conn_get_flush_method() that its persistent flushes go by GPSPM.
 * Its receive queue is the library's, for the answers to those flushes:
 * no message of the application's can go there. The second connection is
 * a plain one, whose request names the session: the messages go there.
 * Each request's private data starts with the kind of connection it is.
 *
 * For each record: rpma_write() into its slot of the server's region,
 * rpma_flush(RPMA_FLUSH_TYPE_PERSISTENT) of the slot (on RPMA_E_AGAIN,
 * rpma_conn_wait_flush_room() until the server has room for the request),
 * the flush's completion, and only then "record N" on the messages
 * connection: the record is persistent in the server's memory before the
 * server hears of it. The server checks that it is there and answers
 * "ack N". After the last one, "done N", and the client closes both
 * connections.
 *
 * While it waits for a completion on one connection, the client watches
 * the events of both. When either goes down (closed, lost, or an
 * operation that failed on it), it says which, brings the other down too
 * and ends with 1.
 */

#include <stdlib.h>
#include <unistd.h>

#include "common.h"

static const char *method_name(enum rpma_flush_method method)
{
	switch (method) {
	case RPMA_FLUSH_METHOD_NONE:
		return "none";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "read after write";
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "native RDMA FLUSH";
	}
	return "unknown";
}

/* op_contexts of the messages connection */
static int send_ctx, recv_ctx;

/*
 * Connects to addr:port with cfg (NULL: the defaults), sending the kind
 * of connection and the session in the private data. NULL on failure.
 */
static struct rpma_conn *connect_as(struct rpma_peer *peer, const char *addr, const char *port,
				    const struct rpma_conn_cfg *cfg, uint8_t kind, uint32_t session)
{
	struct client_pdata cp = { .kind = kind, .session = session };
	struct rpma_conn_private_data pdata = { &cp, sizeof(cp) };
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int ret = rpma_conn_req_new(peer, addr, port, cfg, &req);

	if (ret) {
		report("client", "rpma_conn_req_new", ret);
		return NULL;
	}
	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret) {
		report("client", "rpma_conn_req_connect", ret);
		return NULL;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		rpma_conn_delete(&conn);
		return NULL;
	}
	return conn;
}

/*
 * The next completion of links[which]'s CQ, waiting for it up to WAIT_MS
 * while watching the events of both connections. 0: *cmpl holds it; -1:
 * a connection went down or the wait failed, and *gone and *why say
 * which and how.
 */
static int next_completion(struct link links[2], int which, struct rpma_completion *cmpl, int *gone,
			   char *why, size_t why_size)
{
	struct link *l = &links[which];
	const char *event_why;

	for (;;) {
		/* what is there already, then sleep until something comes */
		int ret = rpma_cq_get_completion(l->cq, cmpl);

		if (ret == 0)
			return 0;
		*gone = which;
		if (ret != RPMA_E_NO_COMPLETION) {
			report("client", "rpma_cq_get_completion", ret);
			snprintf(why, why_size, "its completions cannot be taken");
			return -1;
		}
		struct pollfd pfd[3] = { { l->cq_fd, POLLIN, 0 },
					 { links[0].ev_fd, POLLIN, 0 },
					 { links[1].ev_fd, POLLIN, 0 } };
		int n = poll(pfd, 3, WAIT_MS);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, why_size,
				 n ? "the client cannot wait for it" : "nothing completed in time");
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if ((pfd[1 + i].revents & POLLIN) && link_event(&links[i], &event_why)) {
				*gone = i;
				snprintf(why, why_size, "%s", event_why);
				return -1;
			}
		}
		/* acknowledges the CQ's event and re-arms it before the next poll */
		if ((pfd[0].revents & POLLIN) && (ret = rpma_cq_wait(l->cq)) &&
		    ret != RPMA_E_NO_COMPLETION) {
			report("client", "rpma_cq_wait", ret);
			snprintf(why, why_size, "its CQ cannot be waited on");
			return -1;
		}
	}
}

/* what one record takes */
struct record_io {
	struct link *links; /* [0] GPSPM, [1] messages */
	struct rpma_mr_remote *dst;
	struct rpma_mr_local *src_mr, *msg_mr;
	char *out, *in; /* the messages' buffers: [0, MSG_SIZE), [MSG_SIZE, 2 * MSG_SIZE) */
	int gone;	/* when one fails: which connection */
	char why[96];	/* and how */
};

/* writes record n and makes it persistent by GPSPM: 0, or -1 */
static int persist_record(struct record_io *io, uint32_t n)
{
	struct rpma_conn *conn = io->links[0].conn;
	struct rpma_completion cmpl;
	size_t at = record_offset(n);
	int ret = rpma_write(conn, io->dst, at, io->src_mr, at, SLOT_SIZE,
			     RPMA_F_COMPLETION_ON_ERROR, NULL);

	if (ret) {
		report("client", "rpma_write", ret);
		snprintf(io->why, sizeof(io->why), "rpma_write failed");
		io->gone = 0;
		return -1;
	}
	/*
	 * The server takes GPSPM_DEPTH requests at a time. With one record in
	 * flight there is always room; a client with more flushes in flight
	 * is refused with RPMA_E_AGAIN and waits for an answer.
	 */
	while ((ret = rpma_flush(conn, io->dst, at, SLOT_SIZE, RPMA_FLUSH_TYPE_PERSISTENT,
				 RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)n)) == RPMA_E_AGAIN) {
		ret = rpma_conn_wait_flush_room(conn, WAIT_MS);
		if (ret) {
			report("client", "rpma_conn_wait_flush_room", ret);
			snprintf(io->why, sizeof(io->why), "no answer to the flushes in flight");
			io->gone = 0;
			return -1;
		}
	}
	if (ret) {
		report("client", "rpma_flush", ret);
		snprintf(io->why, sizeof(io->why), "no flush could be posted");
		io->gone = 0;
		return -1;
	}
	if (next_completion(io->links, 0, &cmpl, &io->gone, io->why, sizeof(io->why)))
		return -1;
	if (cmpl.op_status != IBV_WC_SUCCESS) {
		/* the write's error, or the flush's: the connection has failed */
		snprintf(io->why, sizeof(io->why), "the %s of record %u completed with: %s",
			 cmpl.op == RPMA_OP_FLUSH ? "flush" : "write", n,
			 ibv_wc_status_str(cmpl.op_status));
		io->gone = 0;
		return -1;
	}
	if (cmpl.op != RPMA_OP_FLUSH || cmpl.op_context != (void *)(uintptr_t)n) {
		snprintf(io->why, sizeof(io->why), "a completion that is not record %u's flush", n);
		io->gone = 0;
		return -1;
	}
	return 0;
}

/*
 * Sends the text in out on the messages connection and waits for the
 * send's completion and, with answer, for the server's answer, which
 * must be `answer`: 0, or -1.
 */
static int message(struct record_io *io, const char *answer)
{
	struct rpma_conn *conn = io->links[1].conn;
	struct rpma_completion cmpl;
	bool sent = false, received = !answer;
	int ret;

	/* the receive first: the answer may come before the send completes */
	if (answer && (ret = rpma_recv(conn, io->msg_mr, MSG_SIZE, MSG_SIZE, &recv_ctx))) {
		report("client", "rpma_recv", ret);
		snprintf(io->why, sizeof(io->why), "rpma_recv failed");
		io->gone = 1;
		return -1;
	}
	ret = rpma_send(conn, io->msg_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS, &send_ctx);
	if (ret) {
		report("client", "rpma_send", ret);
		snprintf(io->why, sizeof(io->why), "rpma_send failed");
		io->gone = 1;
		return -1;
	}
	while (!sent || !received) {
		if (next_completion(io->links, 1, &cmpl, &io->gone, io->why, sizeof(io->why)))
			return -1;
		io->gone = 1;
		if (cmpl.op_status != IBV_WC_SUCCESS) {
			snprintf(io->why, sizeof(io->why), "the %s of \"%s\" completed with: %s",
				 cmpl.op_context == &send_ctx ? "send" : "receive for the answer",
				 io->out, ibv_wc_status_str(cmpl.op_status));
			return -1;
		}
		if (cmpl.op_context == &send_ctx) {
			sent = true;
			continue;
		}
		io->in[MSG_SIZE - 1] = '\0';
		if (cmpl.op_context != &recv_ctx || cmpl.byte_len != MSG_SIZE ||
		    strcmp(io->in, answer) != 0) {
			snprintf(io->why, sizeof(io->why), "\"%.32s\" where \"%s\" was due", io->in,
				 answer);
			return -1;
		}
		received = true;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s <addr> <port> [records]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	long records = argc == 4 ? atol(argv[3]) : 100;

	if (records < 1 || records > 100000000) {
		fprintf(stderr, "client: 1 to 100000000 records\n");
		return 2;
	}

	int status = 1;
	int ret;
	char *src = NULL, *msgs = NULL;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL, *msg_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *gconn = NULL, *mconn = NULL;
	struct link links[2];

	/* 1. the records' slots, the source of the writes; the messages' buffers */
	src = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);
	msgs = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * MSG_SIZE);
	if (!src || !msgs) {
		fprintf(stderr, "client: out of memory\n");
		goto out_free;
	}
	memset(src, 0, REGION_SIZE);
	memset(msgs, 0, 2 * MSG_SIZE);
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "opening the device", ret);
		goto out_free;
	}
	ret = rpma_mr_reg(peer, src, REGION_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr);
	if (!ret)
		ret = rpma_mr_reg(peer, msgs, 2 * MSG_SIZE, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
				  &msg_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_mr;
	}

	/*
	 * 2. the GPSPM connection: its receive queue takes the answers to the
	 * flushes, as many as the server can have requests in flight
	 */
	ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, GPSPM_DEPTH);
	if (ret) {
		report("client", "configuring GPSPM", ret);
		goto out_mr;
	}
	gconn = connect_as(peer, addr, port, cfg, KIND_GPSPM, 0);
	if (!gconn)
		goto out_mr;

	/* its private data: the session, the region, the peer configuration */
	struct rpma_conn_private_data pdata;
	const struct server_pdata *pd = NULL;

	ret = rpma_conn_get_private_data(gconn, &pdata);
	if (ret) {
		report("client", "rpma_conn_get_private_data", ret);
		goto out_gconn;
	}
	pd = pdata.ptr;
	if (!pd || pdata.len < sizeof(*pd) ||
	    pdata.len < sizeof(*pd) + pd->mr_desc_size + pd->pcfg_desc_size) {
		fprintf(stderr, "client: the server sent no usable descriptors\n");
		goto out_gconn;
	}
	if ((ret = rpma_mr_remote_from_descriptor(pd->descriptors, pd->mr_desc_size, &dst_mr)) ||
	    (ret = rpma_peer_cfg_from_descriptor(pd->descriptors + pd->mr_desc_size,
						 pd->pcfg_desc_size, &pcfg)) ||
	    (ret = rpma_conn_apply_remote_peer_cfg(gconn, pcfg))) {
		report("client", "taking the server's descriptors", ret);
		goto out_gconn;
	}
	size_t remote_size;
	enum rpma_flush_method method = RPMA_FLUSH_METHOD_NONE;

	if ((ret = rpma_mr_remote_get_size(dst_mr, &remote_size))) {
		report("client", "rpma_mr_remote_get_size", ret);
		goto out_gconn;
	}
	if (remote_size < REGION_SIZE) {
		fprintf(stderr, "client: the server's region has %zu bytes only\n", remote_size);
		goto out_gconn;
	}
	/* this example is about GPSPM: another method is not what it shows */
	ret = rpma_conn_get_flush_method(gconn, dst_mr, RPMA_FLUSH_TYPE_PERSISTENT, &method);
	if (ret || method != RPMA_FLUSH_METHOD_GPSPM) {
		fprintf(stderr, "client: persistent flushes would go by %s, not by GPSPM\n",
			ret ? rpma_err_2str(ret) : method_name(method));
		goto out_gconn;
	}
	uint32_t session = pd->session;

	printf("client: the GPSPM connection is up (session %u); persistent flushes go by "
	       "%s\n",
	       session, method_name(method));
	fflush(stdout);

	/*
	 * 3. the messages connection: the defaults, a receive queue of the
	 * client's own
	 */
	mconn = connect_as(peer, addr, port, NULL, KIND_MESSAGES, session);
	if (!mconn)
		goto out_gconn;
	if (link_init(&links[0], "client", "GPSPM", gconn, true) ||
	    link_init(&links[1], "client", "messages", mconn, true))
		goto out_mconn;
	printf("client: the messages connection is up\n");
	fflush(stdout);

	/* 4. each record persistent first, then announced, then acknowledged */
	struct record_io io = { .links = links,
				.dst = dst_mr,
				.src_mr = src_mr,
				.msg_mr = msg_mr,
				.out = msgs,
				.in = msgs + MSG_SIZE };
	char answer[MSG_SIZE];
	uint32_t n;

	for (n = 1; n <= (uint32_t)records; n++) {
		format_record(src + record_offset(n), n);
		if (persist_record(&io, n))
			goto out_down;
		snprintf(io.out, MSG_SIZE, "record %u", n);
		snprintf(answer, sizeof(answer), "ack %u", n);
		if (message(&io, answer))
			goto out_down;
		if (n % PROGRESS == 0) {
			printf("client: %u records persistent and acknowledged\n", n);
			fflush(stdout);
		}
	}
	snprintf(io.out, MSG_SIZE, "done %u", n - 1);
	if (message(&io, NULL))
		goto out_down;

	/* 5. the end: both connections close, the server sees them go */
	printf("client: %ld records written, made persistent by GPSPM, announced and "
	       "acknowledged over the messages connection; closing both connections\n",
	       records);
	links_close(links);
	status = 0;
	goto out_delete;

out_down:
	links_down(links, io.gone, io.why, false);
	printf("client: %u records were acknowledged before that\n", n - 1);
	goto out_delete;

out_mconn:
	rpma_conn_disconnect(mconn);
out_gconn:
	rpma_conn_disconnect(gconn);
out_delete:
	if (mconn)
		rpma_conn_delete(&mconn);
	rpma_conn_delete(&gconn);
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	if (dst_mr)
		rpma_mr_remote_delete(&dst_mr);
out_mr:
	rpma_conn_cfg_delete(&cfg);
	if (msg_mr)
		rpma_mr_dereg(&msg_mr);
	if (src_mr)
		rpma_mr_dereg(&src_mr);
	rpma_peer_delete(&peer);
out_free:
	free(msgs);
	free(src);
	return status;
}
