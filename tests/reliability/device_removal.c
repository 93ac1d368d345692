// SPDX-License-Identifier: BSD-3-Clause
/*
 * device_removal.c -- the RDMA device is deleted (`rdma link delete`) while
 * the client streams writes and persistent flushes and waits for them in
 * rpma_cq_wait_completion(). Nothing may hang or crash: every flush comes
 * back (done, or failed with the connection lost), the connection ends in
 * RPMA_CONN_CLOSED or RPMA_CONN_LOST, both sides delete everything, and
 * once they have let go of the device its removal completes.
 *
 * What the kernel does depends on the provider: rxe and siw cannot take a
 * device away from a process (no disassociate_ucontext), so the removal
 * waits, without an event, until every process has closed the device; the
 * connection keeps working until then. A device that can be taken away
 * reports RPMA_CONN_LOST and fails the outstanding work instead. The test
 * accepts both and logs which it saw. The supervising parent (which does
 * nothing RDMA) then waits for the link to be gone and adds it back, for
 * the programs that run after this one in the same boot.
 */

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common.h"

#define SIZE		  (1 << 20)
#define WRITE_LEN	  4096
#define WRITES_PER_FLUSH  16
#define FLUSHES_IN_FLIGHT 4
#define FLUSHES_BEFORE	  20
/* how long the client goes on streaming once the removal has begun */
#define STREAM_ON_MS 2000
#define MAX_FLUSHES  100000
/* from the removal to the last completion and the event */
#define BOUND_MS 10000

#define FLUSH_CTX(i) ((void *)(uintptr_t)(0xF0000000u + (unsigned)(i)))

extern char **environ;

/* runs the rdma tool with args, not waiting for it; its pid */
static pid_t rdma_tool(const char *const args[])
{
	pid_t pid;
	int err = posix_spawnp(&pid, "rdma", NULL, NULL, (char *const *)args, environ);
	if (err)
		T_FAIL("cannot run rdma: %s", strerror(err));
	return pid;
}

static int rdma_tool_wait(const char *const args[])
{
	int status = 0;
	if (waitpid(rdma_tool(args), &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *device(void)
{
	const char *dev = getenv("RPMA_TEST_DEVICE");
	if (dev == NULL || *dev == '\0')
		t_skip("RPMA_TEST_DEVICE is not set: no soft device of the test VM to delete");
	return dev;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);
	t_pdata_add_peer_cfg(&pd, pcfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	t_await('R');
	/* not waited for: the kernel completes it once both processes are done */
	const char *const del[] = { "rdma", "link", "delete", device(), NULL };
	rdma_tool(del);
	const long long start = t_now_ms();
	enum rpma_conn_event ev = t_next_event_timeout(conn, STREAM_ON_MS + BOUND_MS);
	t_log("server: %s %lld ms after the removal began",
	      ev == RPMA_CONN_UNDEFINED ? "no event" : rpma_utils_conn_event_2str(ev),
	      t_now_ms() - start);
	if (ev != RPMA_CONN_LOST && ev != RPMA_CONN_CLOSED)
		T_FAIL("the connection neither closed nor was lost");

	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_peer_delete(&peer));
}

static unsigned char flush_state[MAX_FLUSHES]; /* 1 posted, 2 completed */

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(WRITE_LEN);
	t_fill(buf, WRITE_LEN, 5);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, WRITE_LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, (WRITES_PER_FLUSH + 1) * FLUSHES_IN_FLIGHT + 8));
	T_OK(rpma_conn_cfg_set_cq_size(cfg, (WRITES_PER_FLUSH + 1) * FLUSHES_IN_FLIGHT + 8));
	struct rpma_conn *conn = t_connect(peer, cfg, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t len = 0;
	const void *desc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	struct rpma_cq *cq = t_cq(conn);

	unsigned posted = 0, ok = 0, failed = 0;
	bool may_post = true, error_seen = false;
	long long removal = -1;
	t_waiting("completions while the device goes away");
	while (ok + failed < posted || may_post) {
		while (may_post && !error_seen && posted - ok - failed < FLUSHES_IN_FLIGHT) {
			if (posted == MAX_FLUSHES)
				T_FAIL("the device's removal was never noticed");
			int ret = 0;
			for (unsigned w = 0; w < WRITES_PER_FLUSH && !ret; w++)
				ret = rpma_write(conn, dst, (size_t)w * WRITE_LEN, src, 0,
						 WRITE_LEN, RPMA_F_COMPLETION_ON_ERROR, NULL);
			if (!ret)
				ret = rpma_flush(conn, dst, 0, WRITES_PER_FLUSH * WRITE_LEN,
						 RPMA_FLUSH_TYPE_PERSISTENT,
						 RPMA_F_COMPLETION_ALWAYS, FLUSH_CTX(posted));
			if (ret) {
				t_log("posting after the removal failed: %s", rpma_err_2str(ret));
				may_post = false;
				break;
			}
			flush_state[posted++] = 1;
		}
		if (removal < 0 && ok >= FLUSHES_BEFORE) {
			t_signal('R');
			removal = t_now_ms();
		}
		if (removal >= 0 && t_now_ms() - removal > STREAM_ON_MS)
			may_post = false;
		if (ok + failed == posted)
			break;
		struct rpma_completion cmpl;
		int ret = rpma_cq_wait_completion(cq, &cmpl, BOUND_MS);
		if (ret == RPMA_E_NO_COMPLETION)
			T_FAIL("no completion for %d ms with %u flushes outstanding", BOUND_MS,
			       posted - ok - failed);
		T_OK(ret);
		uintptr_t c = (uintptr_t)cmpl.op_context;
		if (cmpl.op_status == IBV_WC_SUCCESS) {
			T_EQ(cmpl.op, RPMA_OP_FLUSH);
		} else {
			error_seen = true;
			may_post = false;
			if (c == 0)
				continue; /* a write flushed with an error */
		}
		T_ASSERT(c >= 0xF0000000u && c < 0xF0000000u + posted);
		unsigned i = (unsigned)(c - 0xF0000000u);
		if (flush_state[i] != 1)
			T_FAIL("flush %u came back twice", i);
		flush_state[i] = 2;
		if (cmpl.op_status == IBV_WC_SUCCESS)
			ok++;
		else
			failed++;
	}
	const long long took = t_now_ms() - removal;
	t_log("client: %u flushes done, %u failed, the last %lld ms after the removal began", ok,
	      failed, took);
	T_ASSERT(removal >= 0);
	if (took > STREAM_ON_MS + BOUND_MS)
		T_FAIL("the flushes took %lld ms to come back", took);
	bool up = true;
	T_OK(rpma_conn_is_up(conn, &up));
	if (error_seen) {
		/* the device was taken away: the connection is lost */
		T_EQ(up, false);
		T_EQ(t_next_event_timeout(conn, BOUND_MS), RPMA_CONN_LOST);
		t_log("client: the device was taken away, the connection lost");
	} else {
		/* the device waits for the processes: the connection still works, and ends */
		T_EQ(up, true);
		T_OK(rpma_conn_disconnect(conn));
		enum rpma_conn_event ev = t_next_event_timeout(conn, BOUND_MS);
		if (ev != RPMA_CONN_CLOSED && ev != RPMA_CONN_LOST)
			T_FAIL("no end of the connection after rpma_conn_disconnect");
		t_log("client: the removal waited for the processes; the connection worked "
		      "on and ended: %s",
		      rpma_utils_conn_event_2str(ev));
	}

	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

/* the netdev under the device, from `rdma link show DEV` */
static void netdev_of(const char *dev, char netdev[64])
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rdma link show %s/1", dev);
	FILE *f = popen(cmd, "r");
	if (f == NULL)
		T_FAIL("cannot run %s", cmd);
	char line[512] = "";
	const char *found = NULL;
	while (fgets(line, sizeof(line), f))
		if ((found = strstr(line, " netdev ")) != NULL)
			break;
	pclose(f);
	if (found == NULL || sscanf(found, " netdev %63s", netdev) != 1)
		T_FAIL("%s names no netdev", cmd);
}

static bool link_exists(const char *dev)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rdma link show %s >/dev/null 2>&1", dev);
	return system(cmd) == 0;
}

int main(void)
{
	t_init("reliability_device_removal", 206);
	const char *dev = device();
	char netdev[64];
	netdev_of(dev, netdev);
	int result = t_run(server, client);

	/* the removal ends once both processes let go of the device */
	long long start = t_now_ms();
	while (link_exists(dev) && t_now_ms() - start < 30000)
		t_sleep_ms(100);
	if (link_exists(dev)) {
		t_log("main: %s is still there 30 s after both sides ended", dev);
		return 1;
	}
	t_log("main: %s gone %lld ms after both sides ended; adding it back", dev,
	      t_now_ms() - start);
	const char *const add[] = { "rdma",	    "link",   "add",  dev, "type",
				    t_env.provider, "netdev", netdev, NULL };
	if (rdma_tool_wait(add) != 0) {
		t_log("main: cannot add %s back on %s", dev, netdev);
		return 1;
	}
	/* the programs after this one need the port up again */
	char active[128];
	snprintf(active, sizeof(active), "rdma link show %s/1 | grep -q 'state ACTIVE'", dev);
	start = t_now_ms();
	while (system(active) != 0) {
		if (t_now_ms() - start > 10000) {
			t_log("main: %s is back but its port is not active", dev);
			return 1;
		}
		t_sleep_ms(100);
	}
	return result;
}
