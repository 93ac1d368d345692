/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 15-gpspm: remote writes made persistent by the target's CPU
 *
 * usage: server [--thread] <addr> <port> [<pmem-path>]
 *
 * GPSPM, the General Purpose Server Persistency Method: the client writes
 * with one-sided writes, and its persistent flush asks this side's CPU to
 * persist the range; the flush completes when the answer comes back. It
 * holds whatever the platform does with the NIC's writes -- DDIO on or
 * off, ADR or eADR -- so this server declares no direct write to pmem.
 *
 * The library speaks the protocol. The server only
 *   - says how its region is made persistent: rpma_mr_set_persist_fn(),
 *     with libpmem2's persist function for the mapping
 *     (pmem2_get_persist_fn()), wrapped here to count the calls;
 *   - configures its connections for GPSPM: rpma_conn_cfg_set_gpspm();
 *   - hands out the versioned descriptors
 *     (rpma_mr_get_versioned_descriptor(),
 *     rpma_peer_cfg_get_versioned_descriptor()), which tell the client
 *     that it may flush this way.
 * The requests are served
 *   - by default (RPMA_GPSPM_POLLED) whenever the server polls the
 *     connection's CQ: it sleeps in poll() on the CQ's descriptor and on
 *     the connection's event descriptor, and every rpma_cq_get_completion()
 *     serves what has come; the requests never show as completions;
 *   - with --thread (RPMA_GPSPM_THREAD) by a thread of the library, while
 *     the server does nothing but wait for the client to go.
 *
 * The memory is persistent memory mapped with libpmem2 (a device DAX such
 * as /dev/dax0.0, or a file, created when missing), or DRAM without a
 * path, where the persist function can do nothing but count. What the
 * memory holds from the last run is shown first.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>

#include "common.h"

#define NEW_FILE_SIZE (1 << 20)

/* libpmem2's persist function for the mapping; NULL for DRAM */
static pmem2_persist_fn pmem_persist;
static atomic_ulong persist_calls, persist_bytes;

/*
 * What the library calls to serve a flush (rpma_persist_fn): from the
 * thread that polls the CQ, or from the library's own thread with
 * --thread, hence the atomic counters.
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

/*
 * RPMA_GPSPM_POLLED: sleeps until the CQ or the connection has something,
 * polls the CQ (which serves the client's requests) and ends when the
 * connection closes. 0 or -1.
 */
static int serve_polled(struct rpma_conn *conn)
{
	struct rpma_cq *cq;
	struct rpma_completion cmpl;
	enum rpma_conn_event event;
	int cq_fd, ev_fd;
	int ret;

	if ((ret = rpma_conn_get_cq(conn, &cq)) || (ret = rpma_cq_get_fd(cq, &cq_fd)) ||
	    (ret = rpma_conn_get_event_fd(conn, &ev_fd))) {
		report("server", "getting the descriptors", ret);
		return -1;
	}
	/* a wake-up with nothing to take must not block */
	if (fcntl(ev_fd, F_SETFL, fcntl(ev_fd, F_GETFL) | O_NONBLOCK)) {
		perror("server: fcntl");
		return -1;
	}
	for (;;) {
		struct pollfd pfd[2] = { { cq_fd, POLLIN, 0 }, { ev_fd, POLLIN, 0 } };

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("server: poll");
			return -1;
		}
		if (pfd[0].revents & POLLIN) {
			/* acknowledge the CQ's event and re-arm it */
			ret = rpma_cq_wait(cq);
			if (ret && ret != RPMA_E_NO_COMPLETION) {
				report("server", "rpma_cq_wait", ret);
				return -1;
			}
			/* each poll serves the requests that came; none is the server's */
			while ((ret = rpma_cq_get_completion(cq, &cmpl)) == 0) {
				fprintf(stderr, "server: a completion of nothing it posted\n");
				return -1;
			}
			if (ret != RPMA_E_NO_COMPLETION) {
				report("server", "rpma_cq_get_completion", ret);
				return -1;
			}
		}
		if (pfd[1].revents & POLLIN) {
			ret = rpma_conn_next_event(conn, &event);
			if (ret == RPMA_E_NO_EVENT)
				continue;
			if (ret) {
				report("server", "rpma_conn_next_event", ret);
				return -1;
			}
			if (event == RPMA_CONN_CLOSED)
				return 0;
			fprintf(stderr, "server: the connection ended with: %s\n",
				rpma_utils_conn_event_2str(event));
			return -1;
		}
	}
}

/* RPMA_GPSPM_THREAD: the library's thread serves; wait for the end */
static int serve_by_thread(struct rpma_conn *conn)
{
	enum rpma_conn_event event;
	int ret = rpma_conn_next_event(conn, &event);

	if (ret) {
		report("server", "rpma_conn_next_event", ret);
		return -1;
	}
	if (event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			rpma_utils_conn_event_2str(event));
		return -1;
	}
	return 0;
}

static void print_contents(const char *region, const char *when)
{
	const char *last;
	int n = used_slots(region, &last);

	if (n == 0)
		printf("server: %s: the memory holds no lines\n", when);
	else
		printf("server: %s: the memory holds %d lines, the last: \"%s\"\n", when, n, last);
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
	char *region, *dram = NULL;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

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
		printf("server: mapped %s; the clients' flushes are persisted with libpmem2\n",
		       path);
		print_contents(region, "at start");
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

	/* 2. the region, offered for GPSPM with the function that persists it */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "opening the device", ret);
		goto out_unmap;
	}
	ret = rpma_mr_reg(peer, region, REGION_SIZE,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_peer;
	}
	ret = rpma_mr_set_persist_fn(mr, counting_persist);
	if (ret) {
		report("server", "rpma_mr_set_persist_fn", ret);
		goto out_mr;
	}

	/* 3. connections that carry GPSPM; no direct write to pmem declared */
	ret = rpma_peer_cfg_new(&pcfg);
	if (!ret)
		ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(cfg, mode);
	/* the depth: requests taken at a time, as many receives kept posted */
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, GPSPM_DEPTH);
	if (ret) {
		report("server", "configuring GPSPM", ret);
		goto out_cfg;
	}

	/* 4. the versioned descriptors, for the client */
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

	/* 5. one client */
	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_cfg;
	}
	printf("server: listening on %s:%s; GPSPM requests are served %s\n", addr, port,
	       mode == RPMA_GPSPM_THREAD ? "by the library's thread"
					 : "while the server polls its CQ");
	fflush(stdout);
	ret = rpma_ep_next_conn_req(ep, cfg, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: the connection was not established: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: client connected\n");
	fflush(stdout);

	ret = mode == RPMA_GPSPM_THREAD ? serve_by_thread(conn) : serve_polled(conn);
	if (ret)
		goto out_conn;
	printf("server: client disconnected; %lu flushes served, %lu bytes persisted\n",
	       atomic_load(&persist_calls), atomic_load(&persist_bytes));
	print_contents(region, "now");
	status = 0;

out_conn:
	rpma_conn_disconnect(conn);
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("server", "rpma_conn_delete", ret);
out_ep:
	rpma_ep_shutdown(&ep);
out_cfg:
	rpma_conn_cfg_delete(&cfg);
	rpma_peer_cfg_delete(&pcfg);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("server", "rpma_mr_dereg", ret);
out_peer:
	rpma_peer_delete(&peer);
out_unmap:
	if (map)
		pmem2_map_delete(&map);
	free(dram);
	return status;
}
