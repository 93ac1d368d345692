// SPDX-License-Identifier: BSD-3-Clause
/*
 * common.c -- processes, pipes, connections and completions for the rdma tests
 */

#define _GNU_SOURCE

#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(NATIVE_FLUSH_VERBS) || defined(NATIVE_ATOMIC_WRITE_VERBS)
#include <rdma/ib_user_verbs.h>
#endif

struct t_env t_env = { .name = "?", .provider = "unknown", .role = T_PARENT };

/* pipes: server -> client, client -> server, children -> parent (skip reason) */
static int s2c[2] = { -1, -1 };
static int c2s[2] = { -1, -1 };
static int report[2] = { -1, -1 };

/* what the process is waiting for, told when the alarm fires */
static const char *volatile waiting_for = "nothing";

void t_waiting(const char *what)
{
	waiting_for = what;
}

static const char *role_str(void)
{
	switch (t_env.role) {
	case T_SERVER:
		return "server";
	case T_CLIENT:
		return "client";
	default:
		return "main";
	}
}

/* one write(2) per line, so that lines of the processes do not mix */
static void say(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "[%s %s] %s", t_env.name, role_str(), prefix);
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

void t_log(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

void t_fail(const char *file, int line, const char *fmt, ...)
{
	char prefix[256];
	snprintf(prefix, sizeof(prefix), "FAIL %s:%d: ", file, line);
	va_list ap;
	va_start(ap, fmt);
	say(prefix, fmt, ap);
	va_end(ap);
	exit(1);
}

void t_skip(const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);

	if (t_env.role == T_PARENT) {
		printf("%s\n", reason);
		fflush(stdout);
		exit(77);
	}
	t_log("skip: %s", reason);
	/* shorter than PIPE_BUF: arrives whole, the parent prints it last */
	ssize_t w = write(report[1], reason, strlen(reason));
	(void)w;
	exit(77);
}

void t_check_ret(int ret, int expected, const char *call, const char *file, int line)
{
	if (ret == expected)
		return;
	char provider[128] = "";
	if (ret == RPMA_E_PROVIDER) {
		int err = rpma_err_get_provider_error();
		snprintf(provider, sizeof(provider), ", provider errno %d (%s)", err,
			 strerror(err));
	}
	if (expected == 0)
		t_fail(file, line, "%s returned %d (%s)%s", call, ret, rpma_err_2str(ret),
		       provider);
	t_fail(file, line, "%s returned %d (%s)%s, expected %d (%s)", call, ret, rpma_err_2str(ret),
	       provider, expected, rpma_err_2str(expected));
}

void t_check_eq(unsigned long long a, unsigned long long b, const char *sa, const char *sb,
		const char *file, int line)
{
	if (a != b)
		t_fail(file, line, "%s == %s: %lld (%#llx) != %lld (%#llx)", sa, sb, (long long)a,
		       a, (long long)b, b);
}

static void detect_provider(void)
{
	const char *env = getenv("RPMA_TEST_PROVIDER");
	if (env && *env) {
		t_env.provider = env;
		return;
	}
	DIR *d = opendir("/sys/class/infiniband");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "siw", 3) == 0)
			t_env.provider = "siw";
		else if (strncmp(e->d_name, "rxe", 3) == 0)
			t_env.provider = "rxe";
	}
	closedir(d);
}

void t_init(const char *name, int index)
{
	t_env.name = name;
	t_env.role = T_PARENT;
	setvbuf(stdout, NULL, _IONBF, 0);
	snprintf(t_env.port, sizeof(t_env.port), "%d", 7300 + index);
	t_env.addr = getenv("RPMA_TEST_ADDR");
	if (t_env.addr == NULL || *t_env.addr == '\0')
		t_skip("RPMA_TEST_ADDR is not set: no RDMA device to test on");
	detect_provider();
	/* the library's own messages help when a test fails */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR);
}

bool t_is_siw(void)
{
	return strcmp(t_env.provider, "siw") == 0;
}

/* time */

long long t_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void t_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void sleep_us(long us)
{
	struct timespec ts = { 0, us * 1000L };
	nanosleep(&ts, NULL);
}

/* processes */

int t_deadline_s = 60;

void t_set_deadline(int seconds)
{
	t_deadline_s = seconds;
}

static void on_alarm(int sig)
{
	(void)sig;
	char line[256];
	int n = snprintf(line, sizeof(line), "[%s %s] FAIL: timed out waiting for %s\n", t_env.name,
			 role_str(), waiting_for);
	if (n > 0) {
		ssize_t w = write(STDOUT_FILENO, line,
				  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
		(void)w;
	}
	_exit(1);
}

static pid_t start_child(enum t_role role, void (*fn)(void), const sigset_t *old_mask)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid > 0)
		return pid;

	t_env.role = role;
	sigprocmask(SIG_SETMASK, old_mask, NULL);
	/* never outlive the supervising parent */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(T_DEADLINE_S - 8);

	if (role == T_SERVER) {
		close(s2c[0]);
		close(c2s[1]);
	} else {
		close(s2c[1]);
		close(c2s[0]);
	}
	close(report[0]);

	fn();
	exit(0);
}

struct child {
	const char *name;
	pid_t pid;
	bool done;
	bool killed; /* by the parent, because the other child ended the test */
	int status;
};

static void kill_child(struct child *c)
{
	if (!c->done && c->pid > 0) {
		kill(c->pid, SIGKILL);
		c->killed = true;
	}
}

static void reap(struct child *ch, int n)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < n; i++) {
			if (ch[i].pid == pid) {
				ch[i].done = true;
				ch[i].status = status;
			}
		}
	}
}

/* which roles ended by t_die(): shared with the children */
static volatile bool *died_on_purpose;

static bool died_as_told(const struct child *c, int role)
{
	return died_on_purpose && died_on_purpose[role] && WIFSIGNALED(c->status) &&
	       WTERMSIG(c->status) == SIGKILL;
}

static bool child_ok(const struct child *c, int role)
{
	return c->done &&
	       ((WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0) || died_as_told(c, role));
}

void t_die(void)
{
	t_log("%s: dies now (SIGKILL), as a crashed peer would",
	      t_env.role == T_SERVER ? "server" : "client");
	died_on_purpose[t_env.role] = true;
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}

int t_run(void (*server)(void), void (*client)(void))
{
	if (pipe(s2c) || pipe(c2s) || pipe(report)) {
		perror("pipe");
		return 1;
	}
	void *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	died_on_purpose = (volatile bool *)shared;

	sigset_t chld, old_mask;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);

	/* without a server, its slot counts as a success that never runs */
	struct child ch[2] = { { .name = "server", .done = !server }, { .name = "client" } };
	const int n = 2;
	if (server)
		ch[0].pid = start_child(T_SERVER, server, &old_mask);
	ch[1].pid = start_child(T_CLIENT, client, &old_mask);

	close(s2c[0]);
	close(s2c[1]);
	close(c2s[0]);
	close(c2s[1]);
	close(report[1]);

	long long start = t_now_ms();
	long long deadline = start + (long long)T_DEADLINE_S * 1000;
	/* when the survivor of a failed or skipped peer gets killed */
	long long grace = -1;
	bool survivor_killed = false, timed_out = false;

	for (;;) {
		reap(ch, n);
		if (ch[0].done && ch[1].done)
			break;
		long long now = t_now_ms();
		if (grace < 0) {
			for (int i = 0; i < n; i++)
				if (ch[i].done && !child_ok(&ch[i], i == 0 ? T_SERVER : T_CLIENT))
					grace = now + 2000;
		}
		if (grace >= 0 && now >= grace && !survivor_killed) {
			for (int i = 0; i < n; i++)
				kill_child(&ch[i]);
			survivor_killed = true;
		}
		if (now >= deadline && !timed_out) {
			timed_out = true;
			for (int i = 0; i < n; i++) {
				if (!ch[i].done) {
					t_log(
					    "FAIL: the %s is still running after %d s, killing it",
					    ch[i].name, T_DEADLINE_S);
					kill(ch[i].pid, SIGKILL);
				}
			}
		}
		long long next = timed_out ? now + 1000 : deadline;
		if (grace >= 0 && !survivor_killed && grace < next)
			next = grace;
		long long wait = next - now;
		if (wait < 1)
			wait = 1;
		struct timespec ts = { wait / 1000, (long)(wait % 1000) * 1000000L };
		sigtimedwait(&chld, NULL, &ts);
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	bool failed = timed_out, skipped = false;
	for (int i = 0; i < n; i++) {
		const struct child *c = &ch[i];
		if (WIFEXITED(c->status)) {
			int code = WEXITSTATUS(c->status);
			if (code == 77)
				skipped = true;
			else if (code != 0) {
				failed = true;
				t_log("the %s exited with %d", c->name, code);
			}
		} else if (WIFSIGNALED(c->status)) {
			if (c->killed && !timed_out)
				continue;
			if (died_as_told(c, i == 0 ? T_SERVER : T_CLIENT))
				continue;
			failed = true;
			t_log("the %s was killed by signal %d (%s)", c->name, WTERMSIG(c->status),
			      strsignal(WTERMSIG(c->status)));
		}
	}
	long long took = t_now_ms() - start;

	if (failed) {
		t_log("FAIL (%lld ms)", took);
		return 1;
	}
	if (skipped) {
		char reason[512];
		ssize_t r = read(report[0], reason, sizeof(reason) - 1);
		if (r <= 0)
			snprintf(reason, sizeof(reason), "skipped");
		else
			reason[r] = '\0';
		printf("%s\n", reason);
		return 77;
	}
	t_log("PASS (%lld ms)", took);
	return 0;
}

/* synchronization */

static int peer_in(void)
{
	return t_env.role == T_SERVER ? c2s[0] : s2c[0];
}

static int peer_out(void)
{
	return t_env.role == T_SERVER ? s2c[1] : c2s[1];
}

void t_send_blob(const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(peer_out(), p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			T_FAIL("writing to the peer's pipe: %s", strerror(errno));
		p += w;
		len -= (size_t)w;
	}
}

void t_recv_blob(void *buf, size_t len)
{
	char *p = buf;
	long long deadline = t_now_ms() + T_WAIT_MS;
	while (len > 0) {
		struct pollfd pfd = { .fd = peer_in(), .events = POLLIN };
		long long left = deadline - t_now_ms();
		if (left <= 0)
			T_FAIL("the peer sent nothing within %d ms", T_WAIT_MS);
		int r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t got = read(peer_in(), p, len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got == 0)
			T_FAIL("the peer exited before sending what was expected");
		if (got < 0)
			T_FAIL("reading the peer's pipe: %s", strerror(errno));
		p += got;
		len -= (size_t)got;
	}
}

void t_signal(char tag)
{
	t_send_blob(&tag, 1);
}

void t_await(char tag)
{
	static char what[64];
	snprintf(what, sizeof(what), "the peer's signal '%c'", tag);
	waiting_for = what;
	char got;
	t_recv_blob(&got, 1);
	if (got != tag)
		T_FAIL("expected the peer's signal '%c', got '%c'", tag, got);
}

bool t_peer_signaled(void)
{
	struct pollfd pfd = { .fd = peer_in(), .events = POLLIN };
	return poll(&pfd, 1, 0) > 0;
}

void t_serve_until(struct rpma_conn *conn, char tag)
{
	struct rpma_cq *cq = t_cq(conn);
	long long deadline = t_now_ms() + T_WAIT_MS;
	static char what[64];
	snprintf(what, sizeof(what), "the peer's signal '%c' (serving its flushes)", tag);
	while (!t_peer_signaled()) {
		struct rpma_completion cmpl;
		int ret = rpma_cq_wait_completion(cq, &cmpl, 10);
		if (ret == 0)
			T_FAIL("a completion of nothing the server posted: op %s, status %d",
			       t_op_str(cmpl.op), cmpl.op_status);
		if (ret != RPMA_E_NO_COMPLETION)
			T_RET(ret, RPMA_E_NO_COMPLETION);
		if (t_now_ms() > deadline) {
			waiting_for = what;
			T_FAIL("timed out waiting for %s", what);
		}
	}
	t_await(tag);
}

/* memory */

void *t_alloc(size_t size)
{
	void *p = NULL;
	long page = sysconf(_SC_PAGESIZE);
	size_t rounded = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
	if (rounded == 0)
		rounded = (size_t)page;
	if (posix_memalign(&p, (size_t)page, rounded))
		T_FAIL("out of memory");
	memset(p, 0, rounded);
	/* kept reachable, so that valgrind tells these from the library's leaks */
	static void *volatile kept[64];
	static unsigned nkept;
	if (nkept < sizeof(kept) / sizeof(kept[0]))
		kept[nkept++] = p;
	return p;
}

static unsigned char pattern_byte(size_t i, unsigned seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + 17u;
	return (unsigned char)(x >> 13);
}

void t_fill(void *buf, size_t len, unsigned seed)
{
	unsigned char *b = buf;
	for (size_t i = 0; i < len; i++)
		b[i] = pattern_byte(i, seed);
}

long t_check_pattern(const void *buf, size_t len, size_t origin, unsigned seed)
{
	const unsigned char *b = buf;
	for (size_t i = 0; i < len; i++)
		if (b[i] != pattern_byte(origin + i, seed))
			return (long)i;
	return -1;
}

/* the IBTA 1.5 verbs */

/* device_cap_flags_ex of this process's device */
static __attribute__((unused)) uint64_t device_caps(void)
{
	struct ibv_context *ibv = NULL;
	enum rpma_util_ibv_context_type type =
	    t_env.role == T_SERVER ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE;
	T_OK(rpma_utils_get_ibv_context(t_env.addr, type, &ibv));
	struct ibv_device_attr_ex attr;
	memset(&attr, 0, sizeof(attr));
	const int err = ibv_query_device_ex(ibv, NULL, &attr);
	if (err)
		T_FAIL("ibv_query_device_ex: %s", strerror(err));
	return attr.device_cap_flags_ex;
}

bool t_native_flush(void)
{
#ifdef NATIVE_FLUSH_VERBS
	const uint64_t caps = device_caps();
	return (caps & IB_UVERBS_DEVICE_FLUSH_GLOBAL) && (caps & IB_UVERBS_DEVICE_FLUSH_PERSISTENT);
#else
	return false;
#endif
}

bool t_native_atomic_write(void)
{
#ifdef NATIVE_ATOMIC_WRITE_VERBS
	return (device_caps() & IB_UVERBS_DEVICE_ATOMIC_WRITE) != 0;
#else
	return false;
#endif
}

const char *t_method_str(enum rpma_flush_method method)
{
	switch (method) {
	case RPMA_FLUSH_METHOD_NONE:
		return "none";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "read-after-write";
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "native";
	}
	return "?";
}

/* peers and regions */

struct rpma_peer *t_peer_new(void)
{
	struct ibv_context *ibv = NULL;
	enum rpma_util_ibv_context_type type =
	    t_env.role == T_SERVER ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE;
	waiting_for = "rpma_utils_get_ibv_context";
	T_OK(rpma_utils_get_ibv_context(t_env.addr, type, &ibv));
	T_ASSERT(ibv != NULL);
	struct rpma_peer *peer = NULL;
	T_OK(rpma_peer_new(ibv, &peer));
	T_ASSERT(peer != NULL);
	return peer;
}

struct rpma_mr_local *t_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage)
{
	struct rpma_mr_local *mr = NULL;
	T_OK(rpma_mr_reg(peer, ptr, size, usage, &mr));
	T_ASSERT(mr != NULL);
	return mr;
}

/* private data */

void t_pdata_add(struct t_pdata *pd, const void *item, size_t len)
{
	if (len > 255 || (size_t)pd->len + 1 + len > sizeof(pd->buf))
		T_FAIL("private data item of %zu bytes does not fit", len);
	pd->buf[pd->len] = (unsigned char)len;
	memcpy(pd->buf + pd->len + 1, item, len);
	pd->len = (uint8_t)(pd->len + 1 + len);
}

void t_pdata_add_mr(struct t_pdata *pd, const struct rpma_mr_local *mr)
{
	size_t size = 0;
	unsigned char desc[255];
	T_OK(rpma_mr_get_descriptor_size(mr, &size));
	if (size < 21 || size > sizeof(desc))
		T_FAIL("region descriptor size %zu", size);
	T_OK(rpma_mr_get_descriptor(mr, desc));
	t_pdata_add(pd, desc, size);
}

void t_pdata_add_mr_versioned(struct t_pdata *pd, const struct rpma_mr_local *mr)
{
	size_t size = 0;
	unsigned char desc[255];
	T_OK(rpma_mr_get_versioned_descriptor_size(mr, &size));
	if (size <= 21 || size > sizeof(desc))
		T_FAIL("versioned region descriptor size %zu", size);
	T_OK(rpma_mr_get_versioned_descriptor(mr, desc));
	t_pdata_add(pd, desc, size);
}

static uint8_t crc8(const uint8_t *p, size_t len)
{
	uint8_t crc = 0;
	for (size_t i = 0; i < len; i++) {
		crc ^= p[i];
		for (int bit = 0; bit < 8; bit++)
			crc = (uint8_t)(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);
	}
	return crc;
}

void t_pdata_add_mr_versioned_methods(struct t_pdata *pd, const struct rpma_mr_local *mr,
				      uint8_t methods)
{
	size_t size = 0;
	unsigned char desc[255];
	T_OK(rpma_mr_get_versioned_descriptor_size(mr, &size));
	if (size != T_MR_VERSIONED_SIZE)
		T_FAIL("versioned region descriptor size %zu", size);
	T_OK(rpma_mr_get_versioned_descriptor(mr, desc));
	T_EQ(desc[24], crc8(desc, 24));
	desc[23] = methods;
	desc[24] = crc8(desc, 24);
	t_pdata_add(pd, desc, size);
}

uint8_t t_mr_methods(const struct rpma_mr_local *mr)
{
	unsigned char desc[T_MR_VERSIONED_SIZE];
	T_OK(rpma_mr_get_versioned_descriptor(mr, desc));
	T_EQ(desc[21], 0xD7);
	T_EQ(desc[24], crc8(desc, 24));
	return desc[23];
}

void t_pdata_add_peer_cfg_versioned(struct t_pdata *pd, const struct rpma_peer_cfg *pcfg,
				    const struct rpma_conn_cfg *cfg)
{
	size_t size = 0;
	unsigned char desc[255];
	T_OK(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &size));
	if (size <= 1 || size > sizeof(desc))
		T_FAIL("versioned peer configuration descriptor size %zu", size);
	T_OK(rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, desc));
	t_pdata_add(pd, desc, size);
}

void t_pdata_add_peer_cfg(struct t_pdata *pd, const struct rpma_peer_cfg *pcfg)
{
	size_t size = 0;
	unsigned char desc[255];
	T_OK(rpma_peer_cfg_get_descriptor_size(pcfg, &size));
	if (size < 1 || size > sizeof(desc))
		T_FAIL("peer configuration descriptor size %zu", size);
	T_OK(rpma_peer_cfg_get_descriptor(pcfg, desc));
	t_pdata_add(pd, desc, size);
}

const void *t_pdata_item(const struct rpma_conn_private_data *pd, int item, size_t *len)
{
	const unsigned char *p = pd->ptr;
	size_t off = 0;
	if (p == NULL)
		T_FAIL("no private data");
	for (int i = 0;; i++) {
		if (off >= pd->len)
			T_FAIL("private data of %u bytes has no item %d", pd->len, item);
		size_t l = p[off];
		if (off + 1 + l > pd->len)
			T_FAIL("private data item %d overruns %u bytes", i, pd->len);
		if (i == item) {
			*len = l;
			return p + off + 1;
		}
		off += 1 + l;
	}
}

struct rpma_mr_remote *t_pdata_mr(const struct rpma_conn_private_data *pd, int item)
{
	size_t len;
	const void *desc = t_pdata_item(pd, item, &len);
	struct rpma_mr_remote *mr = NULL;
	T_OK(rpma_mr_remote_from_descriptor(desc, len, &mr));
	T_ASSERT(mr != NULL);
	return mr;
}

/* connections */

struct rpma_ep *t_listen(struct rpma_peer *peer)
{
	struct rpma_ep *ep = NULL;
	T_OK(rpma_ep_listen(peer, t_env.addr, t_env.port, &ep));
	T_ASSERT(ep != NULL);
	t_signal('L');
	return ep;
}

struct rpma_conn_req *t_next_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg)
{
	struct rpma_conn_req *req = NULL;
	waiting_for = "a connection request (rpma_ep_next_conn_req)";
	T_OK(rpma_ep_next_conn_req(ep, cfg, &req));
	T_ASSERT(req != NULL);
	return req;
}

static struct rpma_conn *establish(struct rpma_conn_req **req, const struct t_pdata *pd)
{
	struct rpma_conn_private_data p = { NULL, 0 };
	if (pd && pd->len) {
		p.ptr = (void *)pd->buf;
		p.len = pd->len;
	}
	struct rpma_conn *conn = NULL;
	T_OK(rpma_conn_req_connect(req, p.len ? &p : NULL, &conn));
	T_ASSERT(*req == NULL);
	T_ASSERT(conn != NULL);
	t_expect_event(conn, RPMA_CONN_ESTABLISHED);
	return conn;
}

struct rpma_conn *t_accept_req(struct rpma_conn_req **req, const struct t_pdata *pd)
{
	struct rpma_conn *conn = establish(req, pd);
	t_signal('A');
	return conn;
}

struct rpma_conn *t_accept(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			   const struct t_pdata *pd)
{
	struct rpma_conn_req *req = t_next_req(ep, cfg);
	return t_accept_req(&req, pd);
}

void t_wait_listener(void)
{
	static bool listening;
	if (!listening) {
		waiting_for = "the server to listen";
		t_await('L');
		listening = true;
	}
}

struct rpma_conn_req *t_client_req(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg)
{
	t_wait_listener();
	struct rpma_conn_req *req = NULL;
	waiting_for = "rpma_conn_req_new";
	T_OK(rpma_conn_req_new(peer, t_env.addr, t_env.port, cfg, &req));
	T_ASSERT(req != NULL);
	return req;
}

struct rpma_conn *t_connect_req(struct rpma_conn_req **req, const struct t_pdata *pd)
{
	struct rpma_conn *conn = establish(req, pd);
	t_await('A');
	return conn;
}

struct rpma_conn *t_connect(struct rpma_peer *peer, const struct rpma_conn_cfg *cfg,
			    const struct t_pdata *pd)
{
	struct rpma_conn_req *req = t_client_req(peer, cfg);
	return t_connect_req(&req, pd);
}

void t_expect_event(struct rpma_conn *conn, enum rpma_conn_event expected)
{
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	static char what[128];
	snprintf(what, sizeof(what), "the connection event %s",
		 rpma_utils_conn_event_2str(expected));
	waiting_for = what;
	long long start = t_now_ms();
	T_OK(rpma_conn_next_event(conn, &ev));
	waiting_for = "nothing";
	long long took = t_now_ms() - start;
	if (took > 2000)
		t_log("waited %lld ms for %s", took, rpma_utils_conn_event_2str(ev));
	if (ev != expected)
		T_FAIL("connection event %d (%s), expected %d (%s)", (int)ev,
		       rpma_utils_conn_event_2str(ev), (int)expected,
		       rpma_utils_conn_event_2str(expected));
}

enum rpma_conn_event t_next_event_timeout(struct rpma_conn *conn, int timeout_ms)
{
	int fd = -1;
	T_OK(rpma_conn_get_event_fd(conn, &fd));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;
	do {
		r = poll(&pfd, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return RPMA_CONN_UNDEFINED;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	T_OK(rpma_conn_next_event(conn, &ev));
	return ev;
}

void t_conn_pdata(const struct rpma_conn *conn, struct rpma_conn_private_data *pd)
{
	pd->ptr = NULL;
	pd->len = 0;
	T_OK(rpma_conn_get_private_data(conn, pd));
	if (pd->ptr == NULL || pd->len == 0)
		T_FAIL("the connection has no private data from the peer");
}

void t_close(struct rpma_conn **conn, bool initiator)
{
	if (initiator) {
		T_OK(rpma_conn_disconnect(*conn));
		t_expect_event(*conn, RPMA_CONN_CLOSED);
	} else {
		t_expect_event(*conn, RPMA_CONN_CLOSED);
		T_OK(rpma_conn_disconnect(*conn));
	}
	T_OK(rpma_conn_delete(conn));
	T_ASSERT(*conn == NULL);
}

/* completions */

struct rpma_cq *t_cq(const struct rpma_conn *conn)
{
	struct rpma_cq *cq = NULL;
	T_OK(rpma_conn_get_cq(conn, &cq));
	T_ASSERT(cq != NULL);
	return cq;
}

struct rpma_cq *t_rcq(const struct rpma_conn *conn)
{
	struct rpma_cq *rcq = NULL;
	T_OK(rpma_conn_get_rcq(conn, &rcq));
	T_ASSERT(rcq != NULL);
	return rcq;
}

bool t_try_cmpl(struct rpma_cq *cq, struct rpma_completion *cmpl, int ms)
{
	long long deadline = t_now_ms() + ms;
	t_waiting("a completion");
	for (;;) {
		memset(cmpl, 0xa5, sizeof(*cmpl));
		int ret = rpma_cq_get_completion(cq, cmpl);
		if (ret == 0)
			return true;
		if (ret != RPMA_E_NO_COMPLETION)
			T_OK(ret);
		if (t_now_ms() > deadline)
			return false;
		sleep_us(200);
	}
}

void t_next_cmpl_at(struct rpma_cq *cq, struct rpma_completion *cmpl, const char *file, int line)
{
	if (!t_try_cmpl(cq, cmpl, T_WAIT_MS))
		t_fail(file, line, "no completion within %d ms", T_WAIT_MS);
}

void t_expect_terminated(struct rpma_conn *conn, struct rpma_cq *cq, const void *ctx)
{
	t_expect_terminated_after_write(conn, cq, ctx, NULL);
}

void t_expect_terminated_after_write(struct rpma_conn *conn, struct rpma_cq *cq, const void *ctx,
				     const void *write_ctx)
{
	enum rpma_conn_event ev = t_next_event_timeout(conn, T_WAIT_MS);
	if (ev != RPMA_CONN_CLOSED)
		T_FAIL("connection event %s, expected %s after the failed write",
		       ev == RPMA_CONN_UNDEFINED ? "none" : rpma_utils_conn_event_2str(ev),
		       rpma_utils_conn_event_2str(RPMA_CONN_CLOSED));
	/*
	 * ctx may complete twice: siw flushes a read it has already put on its
	 * outbound read queue while its send queue element is still queued
	 * from both (siw_sq_flush, Linux 6.1 and 6.12); write_ctx once
	 */
	struct rpma_completion c;
	int ctx_seen = 0, write_seen = 0;
	enum ibv_wc_status ctx_status = IBV_WC_SUCCESS;
	/* until the CQ stays quiet: 200 ms for the first completion, 100 after */
	while (t_try_cmpl(cq, &c, (ctx_seen + write_seen) ? 100 : 200)) {
		T_ASSERT(c.op_status != IBV_WC_SUCCESS);
		if (write_ctx != NULL && c.op_context == write_ctx) {
			t_log("the failed write completed: %s", ibv_wc_status_str(c.op_status));
			if (++write_seen > 1)
				T_FAIL("the failed write completed twice");
			continue;
		}
		T_PTR_EQ(c.op_context, ctx);
		if (ctx_seen == 0) {
			t_log("the operation behind the failed write completed: %s",
			      ibv_wc_status_str(c.op_status));
			ctx_status = c.op_status;
		} else {
			t_log("and again: %s", ibv_wc_status_str(c.op_status));
			T_EQ(c.op_status, ctx_status);
		}
		if (++ctx_seen > 2)
			T_FAIL("the operation behind the failed write completed %d times",
			       ctx_seen);
	}
}

const char *t_op_str(enum rpma_op op)
{
	switch (op) {
	case RPMA_OP_READ:
		return "READ";
	case RPMA_OP_WRITE:
		return "WRITE";
	case RPMA_OP_FLUSH:
		return "FLUSH";
	case RPMA_OP_SEND:
		return "SEND";
	case RPMA_OP_RECV:
		return "RECV";
	case RPMA_OP_RECV_RDMA_WITH_IMM:
		return "RECV_RDMA_WITH_IMM";
	}
	return "unknown";
}

void t_expect_cmpl_at(struct rpma_cq *cq, const void *ctx, enum rpma_op op,
		      struct rpma_completion *out, const char *file, int line)
{
	struct rpma_completion c;
	if (!t_try_cmpl(cq, &c, T_WAIT_MS))
		t_fail(file, line, "no completion within %d ms, expected context %p (%s)",
		       T_WAIT_MS, ctx, t_op_str(op));
	if (c.op_status != IBV_WC_SUCCESS)
		t_fail(file, line, "completion of context %p failed: status %d (%s)", c.op_context,
		       (int)c.op_status, ibv_wc_status_str(c.op_status));
	if (c.op_context != ctx)
		t_fail(file, line, "completion has context %p (op %s), expected %p", c.op_context,
		       t_op_str(c.op), ctx);
	if (c.op != op)
		t_fail(file, line, "completion of context %p has op %d (%s), expected %d (%s)",
		       c.op_context, (int)c.op, t_op_str(c.op), (int)op, t_op_str(op));
	if (out)
		*out = c;
}

void t_expect_send_and_recv(struct rpma_cq *cq, const void *send_ctx, const void *recv_ctx,
			    uint32_t recv_len)
{
	bool sent = false, received = false;
	for (int i = 0; i < 2; i++) {
		struct rpma_completion c;
		t_next_cmpl(cq, &c);
		T_EQ(c.op_status, IBV_WC_SUCCESS);
		if (c.op_context == send_ctx) {
			T_EQ(c.op, RPMA_OP_SEND);
			T_ASSERT(!sent);
			sent = true;
		} else if (c.op_context == recv_ctx) {
			T_EQ(c.op, RPMA_OP_RECV);
			T_EQ(c.byte_len, recv_len);
			T_ASSERT(!received);
			received = true;
		} else {
			T_FAIL("unexpected completion context %p, expected the send %p or the "
			       "receive %p",
			       c.op_context, send_ctx, recv_ctx);
		}
	}
}

void t_expect_no_cmpl_at(struct rpma_cq *cq, int ms, const char *file, int line)
{
	long long deadline = t_now_ms() + ms;
	do {
		struct rpma_completion c;
		int ret = rpma_cq_get_completion(cq, &c);
		if (ret == 0)
			t_fail(file, line,
			       "unexpected completion: context %p, op %s, status %s, byte_len %u",
			       c.op_context, t_op_str(c.op), ibv_wc_status_str(c.op_status),
			       c.byte_len);
		if (ret != RPMA_E_NO_COMPLETION)
			t_check_ret(ret, RPMA_E_NO_COMPLETION, "rpma_cq_get_completion", file,
				    line);
		sleep_us(1000);
	} while (t_now_ms() < deadline);
}
