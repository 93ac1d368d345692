// SPDX-License-Identifier: BSD-3-Clause
/*
 * probe.c -- native RDMA FLUSH and RDMA ATOMIC WRITE (IBTA 1.5) over raw verbs
 *
 * Proves that the platform (kernel, provider, rdma-core, emulated persistent
 * memory) offers the verbs natively, without the library: a forked server
 * maps the device DAX of RPMA_TEST_PMEM and registers it for persistent and
 * global flushes; a forked client, over rdma_cm on RPMA_TEST_ADDR, writes,
 * flushes (persistent and global placement; a range and the whole region)
 * and atomically writes 8 bytes, checking each completion's opcode
 * (IBV_WC_RDMA_WRITE, IBV_WC_FLUSH, IBV_WC_ATOMIC_WRITE); the server then
 * checks every byte. Also checked: a persistent flush into a region
 * registered without IBV_ACCESS_FLUSH_PERSISTENT fails at the responder,
 * and (rxe) that ordinary memory cannot be registered for persistent
 * flushes, which is what makes the successful registration of the DAX
 * device meaningful.
 *
 * The device's capability bits (device_cap_flags_ex of ibv_query_device_ex)
 * are printed first; a device without IB_UVERBS_DEVICE_FLUSH_GLOBAL,
 * _FLUSH_PERSISTENT and _ATOMIC_WRITE (siw) skips, after showing that a
 * queue pair asking for these operations is refused.
 *
 * Exit status: 0 pass, 1 fail, 77 skip (the reason printed last).
 * Environment: RPMA_TEST_ADDR, RPMA_TEST_PMEM (a device DAX), RPMA_TEST_PROVIDER.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>

#define PORT "7390"
/* one device DAX page: devdax maps in units of its 2 MiB alignment */
#define REGION_SIZE (2u << 20)
#define DRAM_SIZE   4096u
#define CHUNK	    4096u
/* where the client writes: two chunks apart, the 8 bytes of the atomic write */
#define OFF_A	     0u
#define OFF_B	     (2 * CHUNK)
#define OFF_ATOMIC   (16 * CHUNK)
#define ATOMIC_VALUE UINT64_C(0x0123456789abcdef)
#define WAIT_MS	     20000
#define DEADLINE_S   90

static const char *role = "main";
static int s2c[2], c2s[2], report[2];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "[probe %s] ", role);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	ssize_t w = write(STDOUT_FILENO, line, len);
	(void)w;
}

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		say("FAIL: " __VA_ARGS__);                                                         \
		exit(1);                                                                           \
	} while (0)

/* a child's skip: the reason goes to the parent, which prints it last */
static void skip(const char *reason)
{
	say("skip: %s", reason);
	ssize_t w = write(report[1], reason, strlen(reason));
	(void)w;
	exit(77);
}

static void signal_peer(int fd, char tag)
{
	if (write(fd, &tag, 1) != 1)
		FAIL("cannot signal '%c' to the peer: %s", tag, strerror(errno));
}

static char await_peer(int fd)
{
	char tag = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, WAIT_MS) != 1 || read(fd, &tag, 1) != 1)
		FAIL("the peer went away or said nothing for %d ms", WAIT_MS);
	return tag;
}

static struct rdma_cm_event *expect_event(struct rdma_event_channel *ch,
					  enum rdma_cm_event_type want)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	if (poll(&p, 1, WAIT_MS) != 1)
		FAIL("no %s within %d ms", rdma_event_str(want), WAIT_MS);
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		FAIL("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		FAIL("got %s (status %d), expected %s", rdma_event_str(ev->event), ev->status,
		     rdma_event_str(want));
	return ev;
}

static const char *yes(uint64_t flags, uint64_t bit)
{
	return (flags & bit) ? "yes" : "no";
}

/* Print the device's IBTA 1.5 capability bits; true when it has them all. */
static bool report_caps(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	memset(&attr, 0, sizeof(attr));
	int err = ibv_query_device_ex(ctx, NULL, &attr);
	if (err)
		FAIL("ibv_query_device_ex: %s", strerror(err));
	uint64_t f = attr.device_cap_flags_ex;
	say("device %s: device_cap_flags_ex %#" PRIx64 ": FLUSH_GLOBAL %s, FLUSH_PERSISTENT %s, "
	    "ATOMIC_WRITE %s",
	    ibv_get_device_name(ctx->device), f, yes(f, IB_UVERBS_DEVICE_FLUSH_GLOBAL),
	    yes(f, IB_UVERBS_DEVICE_FLUSH_PERSISTENT), yes(f, IB_UVERBS_DEVICE_ATOMIC_WRITE));
	const uint64_t all = IB_UVERBS_DEVICE_FLUSH_GLOBAL | IB_UVERBS_DEVICE_FLUSH_PERSISTENT |
			     IB_UVERBS_DEVICE_ATOMIC_WRITE;
	return (f & all) == all;
}

static bool is_rxe(struct ibv_context *ctx)
{
	const char *p = getenv("RPMA_TEST_PROVIDER");
	if (p && *p)
		return strcmp(p, "rxe") == 0;
	return strncmp(ibv_get_device_name(ctx->device), "rxe", 3) == 0;
}

/* what the server tells the client in the connection's private data */
struct region_info {
	uint64_t pmem_addr;
	uint64_t dram_addr;
	uint32_t pmem_rkey;
	uint32_t dram_rkey;
	uint32_t pmem_len;
	uint32_t dram_len;
};

static const uint32_t qp_remote_flush = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT;

static unsigned char pattern(size_t i, unsigned seed)
{
	return (unsigned char)((i * 131u + seed * 29u + (i >> 8)) & 0xff);
}

static void check_pattern(const unsigned char *p, size_t len, unsigned seed, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern(i, seed))
			FAIL("%s: byte %zu is %#x, expected %#x", what, i, p[i], pattern(i, seed));
}

static void check_zero(const unsigned char *p, size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != 0)
			FAIL("%s: byte %zu is %#x, expected 0", what, i, p[i]);
}

static void server(void)
{
	role = "server";
	const char *addr = getenv("RPMA_TEST_ADDR");
	const char *dax = getenv("RPMA_TEST_PMEM");

	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid;
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP))
		FAIL("rdma_create_id: %s", strerror(errno));
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;
	if (rdma_getaddrinfo(addr, PORT, &hints, &ai))
		FAIL("rdma_getaddrinfo(%s): %s", addr, strerror(errno));
	if (rdma_bind_addr(lid, ai->ai_src_addr))
		FAIL("rdma_bind_addr(%s): %s", addr, strerror(errno));
	rdma_freeaddrinfo(ai);
	if (!lid->verbs)
		FAIL("%s is not the address of an RDMA device", addr);

	if (!report_caps(lid->verbs)) {
		signal_peer(s2c[1], 'S');
		char reason[160];
		snprintf(reason, sizeof(reason),
			 "%s lacks native RDMA FLUSH and ATOMIC WRITE (IBTA 1.5 capability bits)",
			 ibv_get_device_name(lid->verbs->device));
		skip(reason);
	}
	if (!dax || !*dax) {
		signal_peer(s2c[1], 'S');
		skip("RPMA_TEST_PMEM is not set: no device DAX to flush to");
	}

	struct ibv_pd *pd = ibv_alloc_pd(lid->verbs);
	if (!pd)
		FAIL("ibv_alloc_pd: %s", strerror(errno));

	/* ordinary memory: rxe refuses it for persistent flushes */
	unsigned char *dram = aligned_alloc(4096, DRAM_SIZE);
	if (!dram)
		FAIL("out of memory");
	memset(dram, 0, DRAM_SIZE);
	struct ibv_mr *bad = ibv_reg_mr(pd, dram, DRAM_SIZE,
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_FLUSH_PERSISTENT);
	if (bad) {
		say("DRAM registered with IBV_ACCESS_FLUSH_PERSISTENT");
		if (is_rxe(lid->verbs))
			FAIL("rxe registered ordinary memory for persistent flushes");
		ibv_dereg_mr(bad);
	} else {
		say("DRAM with IBV_ACCESS_FLUSH_PERSISTENT: refused (%s), as it is not pmem",
		    strerror(errno));
	}
	/* the same memory for global flushes only: the negative case */
	struct ibv_mr *dram_mr =
	    ibv_reg_mr(pd, dram, DRAM_SIZE,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL);
	if (!dram_mr)
		FAIL("ibv_reg_mr(DRAM, IBV_ACCESS_FLUSH_GLOBAL): %s", strerror(errno));

	int fd = open(dax, O_RDWR);
	if (fd < 0)
		FAIL("open %s: %s", dax, strerror(errno));
	unsigned char *pmem = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pmem == MAP_FAILED)
		FAIL("mmap %s: %s", dax, strerror(errno));
	memset(pmem, 0, REGION_SIZE);
	const int access = IBV_ACCESS_FLUSH_PERSISTENT | IBV_ACCESS_FLUSH_GLOBAL |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *mr = ibv_reg_mr(pd, pmem, REGION_SIZE, access);
	if (!mr)
		FAIL("ibv_reg_mr(%s, IBV_ACCESS_FLUSH_PERSISTENT | IBV_ACCESS_FLUSH_GLOBAL | ...): "
		     "%s: the provider does not take this memory as persistent",
		     dax, strerror(errno));
	say("%s (%u KiB) registered with IBV_ACCESS_FLUSH_PERSISTENT | IBV_ACCESS_FLUSH_GLOBAL",
	    dax, REGION_SIZE / 1024);

	if (rdma_listen(lid, 1))
		FAIL("rdma_listen: %s", strerror(errno));
	signal_peer(s2c[1], 'L');

	struct rdma_cm_event *ev = expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	struct rdma_cm_id *id = ev->id;
	rdma_ack_cm_event(ev);
	if (id->verbs != lid->verbs)
		FAIL("the request came on another device");

	struct ibv_cq *cq = ibv_create_cq(id->verbs, 4, NULL, NULL, 0);
	if (!cq)
		FAIL("ibv_create_cq: %s", strerror(errno));
	struct ibv_qp_init_attr qattr = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	if (rdma_create_qp(id, pd, &qattr))
		FAIL("rdma_create_qp: %s", strerror(errno));
	struct region_info info = {
		.pmem_addr = (uintptr_t)pmem,
		.dram_addr = (uintptr_t)dram,
		.pmem_rkey = mr->rkey,
		.dram_rkey = dram_mr->rkey,
		.pmem_len = REGION_SIZE,
		.dram_len = DRAM_SIZE,
	};
	struct rdma_conn_param cp = {
		.private_data = &info,
		.private_data_len = sizeof(info),
		.responder_resources = 4,
		.initiator_depth = 4,
		.rnr_retry_count = 7,
	};
	if (rdma_accept(id, &cp))
		FAIL("rdma_accept: %s", strerror(errno));
	ev = expect_event(ch, RDMA_CM_EVENT_ESTABLISHED);
	rdma_ack_cm_event(ev);

	/*
	 * The responder checks an incoming flush's placement type against its
	 * QP's access flags as well as the region's: rdma_cm must have granted
	 * them to the QP it connected.
	 */
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(id->qp, &qa, IBV_QP_ACCESS_FLAGS | IBV_QP_STATE, &qi))
		FAIL("ibv_query_qp: %s", strerror(errno));
	if ((qa.qp_access_flags & qp_remote_flush) != qp_remote_flush)
		FAIL("the connected QP's access flags are %#x, without the flush flags",
		     qa.qp_access_flags);
	say("the connected QP's access flags: %#x (with IBV_ACCESS_FLUSH_GLOBAL and _PERSISTENT)",
	    qa.qp_access_flags);
	signal_peer(s2c[1], 'R');

	/* the client has every completion: what it wrote must be here */
	if (await_peer(c2s[0]) != 'D')
		FAIL("the client failed");
	check_pattern(pmem + OFF_A, CHUNK, 1, "pmem chunk A (written, flushed persistent range)");
	check_zero(pmem + OFF_A + CHUNK, OFF_B - OFF_A - CHUNK, "pmem between A and B");
	check_pattern(pmem + OFF_B, CHUNK, 2, "pmem chunk B (written, flushed global range)");
	check_zero(pmem + OFF_B + CHUNK, OFF_ATOMIC - OFF_B - CHUNK, "pmem between B and atomic");
	uint64_t v;
	memcpy(&v, pmem + OFF_ATOMIC, sizeof(v));
	if (v != ATOMIC_VALUE)
		FAIL("the atomic write left %#" PRIx64 ", expected %#" PRIx64, v, ATOMIC_VALUE);
	check_zero(pmem + OFF_ATOMIC + 8, REGION_SIZE - OFF_ATOMIC - 8, "pmem after the atomic");
	check_pattern(dram, DRAM_SIZE, 3, "DRAM (written, flushed global)");
	say("the server sees every byte the client wrote, nothing else changed");
	signal_peer(s2c[1], 'V');

	/* the client's refused flush broke the connection: just tear down */
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(dram_mr);
	ibv_dealloc_pd(pd);
	munmap(pmem, REGION_SIZE);
	close(fd);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
}

static struct ibv_cq *ccq;
static struct ibv_qp_ex *qpx;
static uint64_t next_wr_id = 1;

static const char *wc_opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND:
		return "IBV_WC_SEND";
	case IBV_WC_RDMA_WRITE:
		return "IBV_WC_RDMA_WRITE";
	case IBV_WC_RDMA_READ:
		return "IBV_WC_RDMA_READ";
	case IBV_WC_FLUSH:
		return "IBV_WC_FLUSH";
	case IBV_WC_ATOMIC_WRITE:
		return "IBV_WC_ATOMIC_WRITE";
	default:
		return "another opcode";
	}
}

/* the next completion, which must be for wr_id */
static struct ibv_wc take_completion(uint64_t wr_id, const char *what)
{
	struct ibv_wc wc;
	for (int waited = 0;; waited++) {
		int n = ibv_poll_cq(ccq, 1, &wc);
		if (n < 0)
			FAIL("ibv_poll_cq: %d", n);
		if (n == 1)
			break;
		if (waited > WAIT_MS * 10)
			FAIL("%s: no completion within %d ms", what, WAIT_MS);
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	if (wc.wr_id != wr_id)
		FAIL("%s: completion of wr_id %" PRIu64 ", expected %" PRIu64, what, wc.wr_id,
		     wr_id);
	return wc;
}

static void expect_success(uint64_t wr_id, enum ibv_wc_opcode want, const char *what)
{
	struct ibv_wc wc = take_completion(wr_id, what);
	if (wc.status != IBV_WC_SUCCESS)
		FAIL("%s: completion status %s (%d)", what, ibv_wc_status_str(wc.status),
		     wc.status);
	if (wc.opcode != want)
		FAIL("%s: completion opcode %s (%d), expected %s (%d)", what,
		     wc_opcode_str(wc.opcode), wc.opcode, wc_opcode_str(want), want);
	say("%s: %s", what, wc_opcode_str(wc.opcode));
}

static uint64_t start_wr(void)
{
	ibv_wr_start(qpx);
	qpx->wr_id = next_wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	return next_wr_id++;
}

static void complete_wr(const char *what)
{
	int err = ibv_wr_complete(qpx);
	if (err)
		FAIL("%s: ibv_wr_complete: %s", what, strerror(err));
}

static void write_chunk(struct ibv_mr *src, size_t src_off, uint32_t rkey, uint64_t raddr,
			uint32_t len, const char *what)
{
	uint64_t id = start_wr();
	ibv_wr_rdma_write(qpx, rkey, raddr);
	ibv_wr_set_sge(qpx, src->lkey, (uintptr_t)src->addr + src_off, len);
	complete_wr(what);
	expect_success(id, IBV_WC_RDMA_WRITE, what);
}

static void flush(uint32_t rkey, uint64_t raddr, size_t len, uint8_t type, uint8_t level,
		  const char *what)
{
	uint64_t id = start_wr();
	ibv_wr_flush(qpx, rkey, raddr, len, type, level);
	complete_wr(what);
	expect_success(id, IBV_WC_FLUSH, what);
}

/* a device without the verbs: show how a QP that asks for them fares */
static void client_without_caps(struct rdma_cm_id *id)
{
	struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
	struct ibv_cq *cq = pd ? ibv_create_cq(id->verbs, 4, NULL, NULL, 0) : NULL;
	if (!cq)
		FAIL("ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags =
		    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(id->verbs, &qa);
	if (qp) {
		say("a QP with IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE was created "
		    "although the device does not advertise them");
		ibv_destroy_qp(qp);
	} else {
		say("a QP with IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE: refused (%s)",
		    strerror(errno));
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static void client(void)
{
	role = "client";
	const char *addr = getenv("RPMA_TEST_ADDR");
	char tag = await_peer(s2c[0]);

	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		FAIL("rdma_create_id: %s", strerror(errno));
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *ai;
	if (rdma_getaddrinfo(addr, PORT, &hints, &ai))
		FAIL("rdma_getaddrinfo(%s): %s", addr, strerror(errno));
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, WAIT_MS))
		FAIL("rdma_resolve_addr: %s", strerror(errno));
	rdma_freeaddrinfo(ai);
	rdma_ack_cm_event(expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, WAIT_MS))
		FAIL("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));

	if (tag == 'S') {
		/* the server skips (it says why); show the QP side of it */
		client_without_caps(id);
		rdma_destroy_id(id);
		rdma_destroy_event_channel(ch);
		exit(77);
	}
	if (tag != 'L')
		FAIL("unexpected signal '%c' from the server", tag);

	struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
	if (!pd)
		FAIL("ibv_alloc_pd: %s", strerror(errno));
	ccq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
	if (!ccq)
		FAIL("ibv_create_cq: %s", strerror(errno));
	struct ibv_qp_init_attr_ex qa = {
		.send_cq = ccq,
		.recv_cq = ccq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = { .max_send_wr = 16,
			 .max_recv_wr = 1,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
				  IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	if (rdma_create_qp_ex(id, &qa))
		FAIL("rdma_create_qp_ex(IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_ATOMIC_WRITE): %s",
		     strerror(errno));
	qpx = ibv_qp_to_qp_ex(id->qp);
	if (!qpx)
		FAIL("ibv_qp_to_qp_ex: no extended QP");

	unsigned char *src = aligned_alloc(4096, 3 * CHUNK);
	if (!src)
		FAIL("out of memory");
	for (size_t i = 0; i < CHUNK; i++) {
		src[i] = pattern(i, 1);
		src[CHUNK + i] = pattern(i, 2);
		src[2 * CHUNK + i] = pattern(i, 3);
	}
	struct ibv_mr *smr = ibv_reg_mr(pd, src, 3 * CHUNK, IBV_ACCESS_LOCAL_WRITE);
	if (!smr)
		FAIL("ibv_reg_mr(source): %s", strerror(errno));

	struct rdma_conn_param cp = {
		.responder_resources = 4,
		.initiator_depth = 4,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	if (rdma_connect(id, &cp))
		FAIL("rdma_connect: %s", strerror(errno));
	struct rdma_cm_event *ev = expect_event(ch, RDMA_CM_EVENT_ESTABLISHED);
	struct region_info info;
	if (ev->param.conn.private_data_len < sizeof(info))
		FAIL("private data of %u bytes, expected %zu", ev->param.conn.private_data_len,
		     sizeof(info));
	memcpy(&info, ev->param.conn.private_data, sizeof(info));
	rdma_ack_cm_event(ev);
	if (await_peer(s2c[0]) != 'R')
		FAIL("the server is not ready");

	const uint64_t pmem = info.pmem_addr;
	write_chunk(smr, 0, info.pmem_rkey, pmem + OFF_A, CHUNK, "write A to pmem");
	flush(info.pmem_rkey, pmem + OFF_A, CHUNK, IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE,
	      "flush A (IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE)");
	write_chunk(smr, CHUNK, info.pmem_rkey, pmem + OFF_B, CHUNK, "write B to pmem");
	flush(info.pmem_rkey, pmem + OFF_B, CHUNK, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE,
	      "flush B (IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE)");
	flush(info.pmem_rkey, pmem, info.pmem_len, IBV_FLUSH_PERSISTENT, IBV_FLUSH_MR,
	      "flush the region (IBV_FLUSH_PERSISTENT, IBV_FLUSH_MR)");
	flush(info.pmem_rkey, pmem, info.pmem_len, IBV_FLUSH_GLOBAL, IBV_FLUSH_MR,
	      "flush the region (IBV_FLUSH_GLOBAL, IBV_FLUSH_MR)");

	uint64_t value = ATOMIC_VALUE;
	uint64_t wid = start_wr();
	ibv_wr_atomic_write(qpx, info.pmem_rkey, pmem + OFF_ATOMIC, &value);
	value = 0; /* the 8 bytes are taken at post time */
	complete_wr("atomic write");
	expect_success(wid, IBV_WC_ATOMIC_WRITE, "atomic write of 8 bytes to pmem");
	flush(info.pmem_rkey, pmem + OFF_ATOMIC, 8, IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE,
	      "flush the atomic write (IBV_FLUSH_PERSISTENT, IBV_FLUSH_RANGE)");

	write_chunk(smr, 2 * CHUNK, info.dram_rkey, info.dram_addr, info.dram_len, "write to DRAM");
	flush(info.dram_rkey, info.dram_addr, info.dram_len, IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE,
	      "flush DRAM (IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE)");

	/* the responder must refuse a placement the region was not registered for */
	wid = start_wr();
	ibv_wr_flush(qpx, info.dram_rkey, info.dram_addr, info.dram_len, IBV_FLUSH_PERSISTENT,
		     IBV_FLUSH_RANGE);
	complete_wr("persistent flush of DRAM");
	struct ibv_wc wc = take_completion(wid, "persistent flush of DRAM");
	if (wc.status == IBV_WC_SUCCESS)
		FAIL(
		    "a persistent flush of a region without IBV_ACCESS_FLUSH_PERSISTENT succeeded");
	say("flush DRAM (IBV_FLUSH_PERSISTENT), not registered for it: refused (%s)",
	    ibv_wc_status_str(wc.status));

	signal_peer(c2s[1], 'D');
	if (await_peer(s2c[0]) != 'V')
		FAIL("the server failed");

	rdma_disconnect(id);
	rdma_destroy_qp(id);
	ibv_dereg_mr(smr);
	ibv_destroy_cq(ccq);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
}

static pid_t spawn(void (*fn)(void))
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(DEADLINE_S);
		fn();
		exit(0);
	}
	return pid;
}

static int status_of(pid_t pid, const char *who)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	printf("[probe main] the %s was killed by signal %d%s\n", who, WTERMSIG(st),
	       WTERMSIG(st) == SIGALRM ? " (deadline)" : "");
	return 1;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	const char *addr = getenv("RPMA_TEST_ADDR");
	if (!addr || !*addr) {
		printf("RPMA_TEST_ADDR is not set: no RDMA device to probe\n");
		return 77;
	}
	if (pipe(s2c) || pipe(c2s) || pipe(report)) {
		perror("pipe");
		return 1;
	}
	pid_t s = spawn(server);
	pid_t c = spawn(client);
	close(report[1]);
	int rs = status_of(s, "server");
	if (rs != 0 && rs != 77)
		kill(c, SIGKILL); /* a failed server leaves the client waiting */
	int rc = status_of(c, "client");
	if (rs == 1 || rc == 1 || (rs != 0 && rs != 77) || (rc != 0 && rc != 77))
		return 1;
	if (rs == 77 || rc == 77) {
		char reason[512];
		ssize_t n = read(report[0], reason, sizeof(reason) - 1);
		reason[n > 0 ? n : 0] = '\0';
		printf("%s\n", n > 0 ? reason : "skipped");
		return 77;
	}
	printf("native RDMA FLUSH and ATOMIC WRITE work\n");
	return 0;
}
