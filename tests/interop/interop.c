// SPDX-License-Identifier: BSD-3-Clause
/*
 * interop.c -- plumbing of the interop client and server, librpma 1.x calls only
 */

#define _GNU_SOURCE

#include "interop.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef INTEROP_BUILT_AGAINST
#error "INTEROP_BUILT_AGAINST names the header and library of this build"
#endif

static const char *io_role = "?";

/* one write(2) per line: the lines of the two processes do not mix */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s: %s", io_role, prefix);
	if (n < 0 || n >= (int)sizeof(line))
		n = 0;
	int m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	size_t len = (m < 0) ? (size_t)n : (size_t)n + (size_t)m;
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	line[len++] = '\n';
	ssize_t w = write(STDOUT_FILENO, line, len);
	(void)w;
}

void io_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

void io_fail(const char *file, int line, const char *fmt, ...)
{
	char prefix[256];
	snprintf(prefix, sizeof(prefix), "FAIL %s:%d: ", file, line);
	va_list ap;
	va_start(ap, fmt);
	say(prefix, fmt, ap);
	va_end(ap);
	exit(1);
}

void io_check_ret(int ret, int expected, const char *call, const char *file, int line)
{
	if (ret == expected)
		return;
	if (expected == 0)
		io_fail(file, line, "%s returned %d (%s)", call, ret, rpma_err_2str(ret));
	io_fail(file, line, "%s returned %d (%s), expected %d (%s)", call, ret, rpma_err_2str(ret),
		expected, rpma_err_2str(expected));
}

void io_init(const char *role)
{
	io_role = role;
	/* both libraries print their own errors to stderr from this level on */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR);
}

/* patterns */

unsigned io_byte(size_t offset, uint32_t seed, enum io_stream stream)
{
	uint32_t x = (uint32_t)offset * 2654435761u ^ (seed + (uint32_t)stream * 0x9E3779B9u);
	x ^= x >> 15;
	x *= 0x2C1B3C6Du;
	x ^= x >> 12;
	return x & 0xff;
}

void io_fill(void *buf, size_t len, size_t origin, uint32_t seed, enum io_stream stream)
{
	unsigned char *b = buf;
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)io_byte(origin + i, seed, stream);
}

long io_mismatch(const void *buf, size_t len, size_t origin, uint32_t seed, enum io_stream stream)
{
	const unsigned char *b = buf;
	for (size_t i = 0; i < len; i++)
		if (b[i] != io_byte(origin + i, seed, stream))
			return (long)i;
	return -1;
}

uint32_t io_imm(uint32_t seed, enum io_stream stream)
{
	uint32_t imm = 0;
	for (int i = 0; i < 4; i++)
		imm = imm << 8 | io_byte((size_t)i, seed, stream);
	return imm;
}

/* the plan */

void io_plan_encode(const struct io_plan *plan, uint8_t buf[IO_PLAN_LEN])
{
	memcpy(buf, IO_PLAN_MAGIC, 4);
	buf[4] = plan->flags;
	for (int i = 0; i < 4; i++)
		buf[5 + i] = (uint8_t)(plan->seed >> (8 * i));
}

int io_plan_decode(const void *buf, size_t len, struct io_plan *plan)
{
	const uint8_t *b = buf;
	if (b == NULL || len < IO_PLAN_LEN || memcmp(b, IO_PLAN_MAGIC, 4) != 0)
		return -1;
	plan->flags = b[4];
	plan->seed = 0;
	for (int i = 0; i < 4; i++)
		plan->seed |= (uint32_t)b[5 + i] << (8 * i);
	return 0;
}

/* the command line and the library */

void io_check_library(const char *expected)
{
	Dl_info info;
	if (dladdr((void *)rpma_peer_new, &info) == 0 || info.dli_fname == NULL)
		IO_FAIL("dladdr(rpma_peer_new) failed: cannot tell which librpma is loaded");
	char loaded[PATH_MAX], wanted[PATH_MAX];
	if (realpath(info.dli_fname, loaded) == NULL)
		IO_FAIL("realpath(%s): %s", info.dli_fname, strerror(errno));
	if (realpath(expected, wanted) == NULL)
		IO_FAIL("realpath(%s): %s", expected, strerror(errno));
	if (strcmp(loaded, wanted) != 0)
		IO_FAIL("runs on %s, expected %s", loaded, wanted);
	io_log("built against %s, runs on %s", INTEROP_BUILT_AGAINST, loaded);
}

void io_option_split(const char *arg, char *name, size_t name_size, const char **value)
{
	if (strncmp(arg, "--", 2) != 0)
		IO_FAIL("unexpected argument '%s'", arg);
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	if (len >= name_size)
		IO_FAIL("unknown option '%s'", arg);
	memcpy(name, arg, len);
	name[len] = '\0';
	*value = eq ? eq + 1 : NULL;
}

void io_args_parse(int *argc, char **argv, struct io_args *args)
{
	memset(args, 0, sizeof(*args));
	int kept = 1;
	for (int i = 1; i < *argc; i++) {
		const char **dst = NULL;
		if (strcmp(argv[i], "--addr") == 0)
			dst = &args->addr;
		else if (strcmp(argv[i], "--port") == 0)
			dst = &args->port;
		else if (strcmp(argv[i], "--sync") == 0)
			dst = &args->sync;
		else if (strcmp(argv[i], "--expect-lib") == 0)
			dst = &args->expect_lib;
		if (dst == NULL) {
			argv[kept++] = argv[i];
			continue;
		}
		if (i + 1 >= *argc)
			IO_FAIL("%s needs a value", argv[i]);
		*dst = argv[++i];
	}
	*argc = kept;
	argv[kept] = NULL;
	if (!args->addr || !args->port || !args->sync || !args->expect_lib)
		IO_FAIL("usage: --addr ADDR --port PORT --sync DIR --expect-lib LIBRPMA.SO.0 "
			"[options]");
	io_check_library(args->expect_lib);
}

/* synchronization */

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sync_path(const struct io_args *args, const char *name, char *path, size_t size)
{
	if (snprintf(path, size, "%s/%s", args->sync, name) >= (int)size)
		IO_FAIL("the sync directory's path is too long");
}

void io_sync_mark(const struct io_args *args, const char *name)
{
	char path[PATH_MAX];
	sync_path(args, name, path, sizeof(path));
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		IO_FAIL("cannot create %s: %s", path, strerror(errno));
	close(fd);
}

void io_sync_await(const struct io_args *args, const char *name)
{
	char path[PATH_MAX];
	sync_path(args, name, path, sizeof(path));
	const long long deadline = now_ms() + IO_WAIT_MS;
	while (access(path, F_OK) != 0) {
		if (now_ms() > deadline)
			IO_FAIL("the peer did not get to '%s' within %d ms", name, IO_WAIT_MS);
		struct timespec ts = { 0, 10 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

/* time-limited waits: poll(2) on the descriptors librpma 1.x offers */

static void wait_readable(int fd, const char *what)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ret;
	do
		ret = poll(&p, 1, IO_WAIT_MS);
	while (ret < 0 && errno == EINTR);
	if (ret < 0)
		IO_FAIL("poll (%s): %s", what, strerror(errno));
	if (ret == 0)
		IO_FAIL("no %s within %d ms", what, IO_WAIT_MS);
}

struct rpma_peer *io_peer_new(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *ibv = NULL;
	IO_OK(rpma_utils_get_ibv_context(addr, type, &ibv));
	struct rpma_peer *peer = NULL;
	IO_OK(rpma_peer_new(ibv, &peer));
	return peer;
}

struct rpma_conn_req *io_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg)
{
	int fd = -1;
	IO_OK(rpma_ep_get_fd(ep, &fd));
	wait_readable(fd, "connection request");
	struct rpma_conn_req *req = NULL;
	IO_OK(rpma_ep_next_conn_req(ep, cfg, &req));
	return req;
}

void io_expect_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	int fd = -1;
	IO_OK(rpma_conn_get_event_fd(conn, &fd));
	wait_readable(fd, rpma_utils_conn_event_2str(expected));
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	IO_OK(rpma_conn_next_event(conn, &event));
	if (event != expected)
		IO_FAIL("connection event %s, expected %s", rpma_utils_conn_event_2str(event),
			rpma_utils_conn_event_2str(expected));
}

void io_next_wc(struct rpma_cq *cq, struct ibv_wc *wc)
{
	int fd = -1;
	IO_OK(rpma_cq_get_fd(cq, &fd));
	for (;;) {
		int n = 0;
		int ret = rpma_cq_get_wc(cq, 1, wc, &n);
		if (ret == 0) {
			IO_EQ(n, 1);
			return;
		}
		IO_RET(ret, RPMA_E_NO_COMPLETION);
		/* nothing yet: sleep on the completion channel, then re-arm it */
		wait_readable(fd, "completion");
		ret = rpma_cq_wait(cq);
		if (ret != RPMA_E_NO_COMPLETION)
			IO_OK(ret);
	}
}

void io_expect_wc_at(struct rpma_cq *cq, enum ibv_wc_opcode opcode, const void *ctx,
		     struct ibv_wc *out, const char *file, int line)
{
	struct ibv_wc wc;
	io_next_wc(cq, &wc);
	if (wc.status != IBV_WC_SUCCESS)
		io_fail(file, line, "completion of %p: status %d (%s), opcode %d", (void *)wc.wr_id,
			wc.status, ibv_wc_status_str(wc.status), wc.opcode);
	if (wc.opcode != opcode || wc.wr_id != (uintptr_t)ctx)
		io_fail(file, line,
			"completion opcode %d context %p, expected opcode %d context %p", wc.opcode,
			(void *)wc.wr_id, opcode, ctx);
	if (out)
		*out = wc;
}

void io_expect_wcs(struct rpma_cq *cq, struct io_expected_wc *exp, int n)
{
	for (int got = 0; got < n; got++) {
		struct ibv_wc wc;
		io_next_wc(cq, &wc);
		struct io_expected_wc *e = NULL;
		for (int i = 0; i < n; i++)
			if (wc.wr_id == (uintptr_t)exp[i].ctx)
				e = &exp[i];
		if (e == NULL || e->seen)
			IO_FAIL("unexpected completion: context %p, opcode %d, status %s",
				(void *)wc.wr_id, wc.opcode, ibv_wc_status_str(wc.status));
		e->seen = true;
		if (wc.status != IBV_WC_SUCCESS)
			IO_FAIL("completion %p: status %s", e->ctx, ibv_wc_status_str(wc.status));
		if (wc.opcode != e->opcode)
			IO_FAIL("completion %p: opcode %d, expected %d", e->ctx, wc.opcode,
				e->opcode);
		if (e->byte_len && wc.byte_len != e->byte_len)
			IO_FAIL("completion %p: %u bytes, expected %u", e->ctx, wc.byte_len,
				e->byte_len);
		if (!(wc.opcode & IBV_WC_RECV))
			continue;
		const bool with_imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
		if (with_imm != e->with_imm)
			IO_FAIL("completion %p: %s immediate data", e->ctx,
				with_imm ? "unexpected" : "no");
		if (with_imm && ntohl(wc.imm_data) != e->imm)
			IO_FAIL("completion %p: immediate data %#x, expected %#x", e->ctx,
				ntohl(wc.imm_data), e->imm);
	}
}

/* private data */

void io_pdata_add(struct io_pdata *pd, const void *item, size_t len)
{
	if (len > 255 || pd->len + 1 + len > sizeof(pd->buf))
		IO_FAIL("private data item of %zu bytes does not fit", len);
	pd->buf[pd->len++] = (uint8_t)len;
	memcpy(pd->buf + pd->len, item, len);
	pd->len = (uint8_t)(pd->len + len);
}

const void *io_pdata_item(const void *pd, size_t pd_len, int item, size_t *len)
{
	const uint8_t *p = pd;
	size_t at = 0;
	for (int i = 0;; i++) {
		if (p == NULL || at >= pd_len)
			IO_FAIL("the private data (%zu bytes) has no item %d", pd_len, item);
		size_t n = p[at];
		if (at + 1 + n > pd_len)
			IO_FAIL("private data item %d overruns its %zu bytes", i, pd_len);
		if (i == item) {
			*len = n;
			return p + at + 1;
		}
		at += 1 + n;
	}
}

void io_describe_1x(const struct rpma_mr_local *mr, const struct rpma_peer_cfg *pcfg,
		    struct io_pdata *pd)
{
	uint8_t desc[64];
	size_t size = 0;
	IO_OK(rpma_mr_get_descriptor_size(mr, &size));
	IO_EQ(size, 21);
	IO_OK(rpma_mr_get_descriptor(mr, desc));
	io_pdata_add(pd, desc, size);
	IO_OK(rpma_peer_cfg_get_descriptor_size(pcfg, &size));
	IO_EQ(size, 1);
	IO_OK(rpma_peer_cfg_get_descriptor(pcfg, desc));
	io_pdata_add(pd, desc, size);
}
