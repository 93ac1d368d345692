/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * instructions.c -- the loops whose instructions count.py counts: each case
 * runs ROUNDS operations of one kind over the loopback provider, in a
 * function of its own (measure_CASE) that callgrind's --toggle-collect
 * names
 *
 * usage: instructions CASE       run one case (under callgrind)
 *        instructions --list     the cases, one per line
 *        instructions --syscalls the system calls of one rpma_cq_wait
 *
 * Both sides of every connection are in this process: a client that
 * writes and flushes, a server that owns the region (and serves GPSPM).
 */

#define _GNU_SOURCE

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <librpma.h>

#include "loopback.h"

#define ROUNDS 1000
#define LEN    64
#define REGION (1 << 20)

#define CHECK(call)                                                                                \
	do {                                                                                       \
		int ret_ = (call);                                                                 \
		if (ret_) {                                                                        \
			fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, ret_);       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

enum method { RAW, NATIVE, GPSPM };

struct pair {
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	struct rpma_conn *client;
	struct rpma_conn *server;
	struct rpma_cq *client_cq;
	struct rpma_cq *server_cq;
	struct rpma_mr_local *src;     /* the client's */
	struct rpma_mr_local *target;  /* the server's */
	struct rpma_mr_remote *dst;    /* the client's view of target */
	struct rpma_mr_local *msgs[2]; /* send/recv buffers: client, server */
	char *src_buf, *target_buf, *msg_buf[2];
};

static void persist_nothing(const void *ptr, size_t len)
{
	(void)ptr;
	(void)len;
}

static void *region(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, REGION))
		exit(1);
	memset(p, 0, REGION);
	return p;
}

/* Two connected sides on the loopback provider, their regions and configurations. */
static void connect_pair(struct pair *p, enum method method)
{
	memset(p, 0, sizeof(*p));
	loopback_set_native(method == NATIVE, 0);
	CHECK(rpma_peer_new(loopback_context(), &p->peer));
	CHECK(rpma_ep_listen(p->peer, "127.0.0.1", "7204", &p->ep));

	struct rpma_conn_cfg *cfg;
	CHECK(rpma_conn_cfg_new(&cfg));
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 64));
	CHECK(rpma_conn_cfg_set_sq_size(cfg, 64));
	CHECK(rpma_conn_cfg_set_rq_size(cfg, 64));
	if (method == GPSPM)
		CHECK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));

	/* the server's region and what it promises */
	p->target_buf = region();
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
	CHECK(rpma_mr_reg(p->peer, p->target_buf, REGION, usage, &p->target));
	if (method != RAW)
		CHECK(rpma_mr_set_persist_fn(p->target, persist_nothing));
	char desc[64];
	CHECK(rpma_mr_get_versioned_descriptor(p->target, desc));
	struct rpma_peer_cfg *pcfg;
	CHECK(rpma_peer_cfg_new(&pcfg));
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, method == RAW));
	char pdesc[16];
	CHECK(rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, pdesc));

	p->src_buf = region();
	CHECK(rpma_mr_reg(p->peer, p->src_buf, REGION,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &p->src));
	for (int i = 0; i < 2; i++) {
		p->msg_buf[i] = region();
		CHECK(rpma_mr_reg(p->peer, p->msg_buf[i], REGION,
				  RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &p->msgs[i]));
	}

	struct rpma_conn_req *req;
	CHECK(rpma_conn_req_new(p->peer, "127.0.0.1", "7204", cfg, &req));
	CHECK(rpma_conn_req_connect(&req, NULL, &p->client));
	struct rpma_conn_req *sreq;
	CHECK(rpma_ep_next_conn_req(p->ep, cfg, &sreq));
	CHECK(rpma_conn_req_connect(&sreq, NULL, &p->server));
	enum rpma_conn_event ev;
	CHECK(rpma_conn_next_event(p->client, &ev));
	CHECK(rpma_conn_next_event(p->server, &ev));

	struct rpma_peer_cfg *remote_cfg;
	CHECK(rpma_peer_cfg_from_descriptor(pdesc, sizeof(pdesc), &remote_cfg));
	CHECK(rpma_conn_apply_remote_peer_cfg(p->client, remote_cfg));
	CHECK(rpma_mr_remote_from_descriptor(desc, sizeof(desc), &p->dst));
	CHECK(rpma_conn_get_cq(p->client, &p->client_cq));
	CHECK(rpma_conn_get_cq(p->server, &p->server_cq));

	enum rpma_flush_method m;
	CHECK(rpma_conn_get_flush_method(p->client, p->dst, RPMA_FLUSH_TYPE_PERSISTENT, &m));
	const enum rpma_flush_method want[] = { RPMA_FLUSH_METHOD_READ_AFTER_WRITE,
						RPMA_FLUSH_METHOD_NATIVE, RPMA_FLUSH_METHOD_GPSPM };
	if (m != want[method]) {
		fprintf(stderr, "the connection flushes by method %d, not %d\n", m, want[method]);
		exit(1);
	}
}

/* One completion of cq, successful, of op (what rpma_cq_get_wc calls it). */
static void take_wc(struct rpma_cq *cq, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;
	CHECK(rpma_cq_get_wc(cq, 1, &wc, NULL));
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op) {
		fprintf(stderr, "completion status %d opcode %d\n", wc.status, wc.opcode);
		exit(1);
	}
}

/* The steps of the cases: each a function of its own, for --toggle-collect. */

__attribute__((noinline)) void measure_write_flush_1x(struct pair *p, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_write(p->client, p->dst, 0, p->src, 0, LEN, RPMA_F_COMPLETION_ON_ERROR,
				 NULL));
		CHECK(rpma_flush(p->client, p->dst, 0, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				 RPMA_F_COMPLETION_ALWAYS, p));
		take_wc(p->client_cq, IBV_WC_RDMA_READ);
	}
}

__attribute__((noinline)) void measure_write_flush_completion(struct pair *p, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_write(p->client, p->dst, 0, p->src, 0, LEN, RPMA_F_COMPLETION_ON_ERROR,
				 NULL));
		CHECK(rpma_flush(p->client, p->dst, 0, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				 RPMA_F_COMPLETION_ALWAYS, p));
		struct rpma_completion c;
		CHECK(rpma_cq_get_completion(p->client_cq, &c));
		if (c.op != RPMA_OP_FLUSH || c.op_status != IBV_WC_SUCCESS)
			exit(1);
	}
}

static struct rpma_batch_op write_op(struct pair *p, size_t offset)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_WRITE;
	op.flags = RPMA_F_COMPLETION_ON_ERROR;
	op.local = p->src;
	op.local_offset = offset;
	op.remote = p->dst;
	op.remote_offset = offset;
	op.len = LEN;
	return op;
}

static struct rpma_batch_op flush_op(struct pair *p, size_t len)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_FLUSH;
	op.flags = RPMA_F_COMPLETION_ALWAYS;
	op.op_context = p;
	op.remote = p->dst;
	op.len = len;
	op.flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
	return op;
}

__attribute__((noinline)) void measure_batch_16(struct pair *p, struct rpma_batch_op *ops,
						int rounds)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_post_batch(p->client, ops, 17, NULL));
		take_wc(p->client_cq, IBV_WC_RDMA_READ);
	}
}

__attribute__((noinline)) void measure_batch_1(struct pair *p, struct rpma_batch_op *ops,
					       int rounds)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_post_batch(p->client, ops, 2, NULL));
		struct rpma_completion c;
		CHECK(rpma_cq_get_completion(p->client_cq, &c));
	}
}

__attribute__((noinline)) void measure_template_16(struct pair *p, struct rpma_write_template *t,
						   const struct rpma_write_range *w, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_write_template_post(t, w, 16, RPMA_F_COMPLETION_ALWAYS, p));
		take_wc(p->client_cq, IBV_WC_RDMA_READ);
	}
}

__attribute__((noinline)) void measure_template_1(struct pair *p, struct rpma_write_template *t,
						  const struct rpma_write_range *w, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_write_template_post(t, w, 1, RPMA_F_COMPLETION_ALWAYS, p));
		struct rpma_completion c;
		CHECK(rpma_cq_get_completion(p->client_cq, &c));
	}
}

__attribute__((noinline)) void gpspm_initiator_post(struct pair *p)
{
	CHECK(rpma_write(p->client, p->dst, 0, p->src, 0, LEN, RPMA_F_COMPLETION_ON_ERROR, NULL));
	CHECK(rpma_flush(p->client, p->dst, 0, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
			 RPMA_F_COMPLETION_ALWAYS, p));
}

__attribute__((noinline)) void gpspm_target_serve(struct pair *p)
{
	/* serves the request; nothing of the application's completes here */
	struct ibv_wc wc;
	int n = 0;
	int ret = rpma_cq_get_wc(p->server_cq, 1, &wc, &n);
	if (ret != RPMA_E_NO_COMPLETION)
		exit(1);
}

__attribute__((noinline)) void gpspm_initiator_complete(struct pair *p)
{
	take_wc(p->client_cq, IBV_WC_RDMA_READ);
}

static void run_gpspm(struct pair *p, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		gpspm_initiator_post(p);
		gpspm_target_serve(p);
		gpspm_initiator_complete(p);
	}
}

__attribute__((noinline)) void send_side(struct pair *p)
{
	CHECK(rpma_send(p->client, p->msgs[0], 0, LEN, RPMA_F_COMPLETION_ALWAYS, NULL));
	take_wc(p->client_cq, IBV_WC_SEND);
}

__attribute__((noinline)) void recv_side(struct pair *p)
{
	take_wc(p->server_cq, IBV_WC_RECV);
	CHECK(rpma_recv(p->server, p->msgs[1], 0, LEN, NULL));
}

static void run_sendrecv(struct pair *p, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		send_side(p);
		recv_side(p);
	}
}

/* ------------------------------------------------------ system calls */

static bool counting;
static int syscalls;

static void *next_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);
	if (f == NULL)
		abort();
	return f;
}

/* The calls of libc that enter the kernel on a wait's path, counted. */
int fcntl(int fd, int cmd, ...)
{
	static int (*real)(int, int, ...);
	if (real == NULL)
		real = next_fn("fcntl");
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	if (counting)
		syscalls++;
	return real(fd, cmd, arg);
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	static int (*real)(struct pollfd *, nfds_t, int);
	if (real == NULL)
		real = next_fn("poll");
	if (counting)
		syscalls++;
	return real(fds, nfds, timeout);
}

ssize_t read(int fd, void *buf, size_t count)
{
	static ssize_t (*real)(int, void *, size_t);
	if (real == NULL)
		real = next_fn("read");
	if (counting)
		syscalls++;
	return real(fd, buf, count);
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);
	if (real == NULL)
		real = next_fn("epoll_wait");
	if (counting)
		syscalls++;
	return real(epfd, events, maxevents, timeout);
}

/*
 * rpma_cq_wait with the completion already there, as librpma 1.x
 * programs call it: the calls into the kernel it makes, the provider's
 * included (on rxe, re-arming the CQ is a system call: the loopback
 * provider counts it, loopback_rearms()).
 */
static int cq_wait_syscalls(void)
{
	struct pair p;
	connect_pair(&p, RAW);
	const int rounds = 10;
	int total = 0;
	for (int i = 0; i < rounds; i++) {
		CHECK(rpma_flush(p.client, p.dst, 0, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				 RPMA_F_COMPLETION_ALWAYS, &p));
		const unsigned rearms = loopback_rearms();
		syscalls = 0;
		counting = true;
		CHECK(rpma_cq_wait(p.client_cq));
		counting = false;
		total += syscalls + (int)(loopback_rearms() - rearms);
		take_wc(p.client_cq, IBV_WC_RDMA_READ);
	}
	return total / rounds;
}

/* ---------------------------------------------------------------- main */

static const char *const cases[] = {
	"write_flush_1x",
	"write_flush_completion",
	"native_write_flush_1x",
	"batch_16_writes",
	"batch_write_flush",
	"template_16_writes",
	"template_write_flush",
	"gpspm_initiator",
	"gpspm_target",
	"send",
	"recv",
};

int main(int argc, char *argv[])
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CASE | --list | --syscalls\n", argv[0]);
		return 2;
	}
	const char *name = argv[1];
	if (strcmp(name, "--list") == 0) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			printf("%s\n", cases[i]);
		return 0;
	}
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR);
	if (strcmp(name, "--syscalls") == 0) {
		printf("cq_wait %d\n", cq_wait_syscalls());
		return 0;
	}

	struct pair p;
	/* each loop runs once unmeasured first: what a first call does is not counted */
	if (strcmp(name, "write_flush_1x") == 0 || strcmp(name, "native_write_flush_1x") == 0) {
		connect_pair(&p, name[0] == 'n' ? NATIVE : RAW);
		measure_write_flush_1x(&p, 10);
		measure_write_flush_1x(&p, ROUNDS);
	} else if (strcmp(name, "write_flush_completion") == 0) {
		connect_pair(&p, RAW);
		measure_write_flush_completion(&p, 10);
		measure_write_flush_completion(&p, ROUNDS);
	} else if (strcmp(name, "batch_16_writes") == 0) {
		connect_pair(&p, RAW);
		struct rpma_batch_op ops[17];
		for (int i = 0; i < 16; i++)
			ops[i] = write_op(&p, (size_t)i * LEN);
		ops[16] = flush_op(&p, 16 * LEN);
		measure_batch_16(&p, ops, 10);
		measure_batch_16(&p, ops, ROUNDS);
	} else if (strcmp(name, "batch_write_flush") == 0) {
		connect_pair(&p, RAW);
		struct rpma_batch_op ops[2] = { write_op(&p, 0), flush_op(&p, LEN) };
		measure_batch_1(&p, ops, 10);
		measure_batch_1(&p, ops, ROUNDS);
	} else if (strcmp(name, "template_16_writes") == 0 ||
		   strcmp(name, "template_write_flush") == 0) {
		connect_pair(&p, RAW);
		struct rpma_write_template *t = NULL;
		CHECK(rpma_write_template_new(p.client, p.dst, p.src, RPMA_FLUSH_TYPE_PERSISTENT,
					      &t));
		struct rpma_write_range w[16];
		for (int i = 0; i < 16; i++)
			w[i] = (struct rpma_write_range){ (size_t)i * LEN, (size_t)i * LEN, LEN };
		if (name[9] == '1') {
			measure_template_16(&p, t, w, 10);
			measure_template_16(&p, t, w, ROUNDS);
		} else {
			measure_template_1(&p, t, w, 10);
			measure_template_1(&p, t, w, ROUNDS);
		}
		CHECK(rpma_write_template_delete(&t));
	} else if (strncmp(name, "gpspm_", 6) == 0) {
		connect_pair(&p, GPSPM);
		run_gpspm(&p, 10);
		run_gpspm(&p, ROUNDS);
	} else if (strcmp(name, "send") == 0 || strcmp(name, "recv") == 0) {
		connect_pair(&p, RAW);
		CHECK(rpma_recv(p.server, p.msgs[1], 0, LEN, NULL));
		run_sendrecv(&p, 10);
		run_sendrecv(&p, ROUNDS);
	} else {
		fprintf(stderr, "no case %s (--list)\n", name);
		return 2;
	}
	return 0;
}
