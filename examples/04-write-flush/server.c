/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 04-write-flush: the target of a persistent write
 *
 * usage: server [--direct-write-to-pmem] <addr> <port> [<pmem-path>]
 *
 * The server maps persistent memory with libpmem2 -- a device DAX such as
 * /dev/dax0.0, a file on a DAX file system, or any regular file as a
 * fallback (created when missing) -- and registers its first bytes for
 * remote writes and flushes. Without a path it uses DRAM, which no flush
 * makes persistent. Its answer to the client's connection request carries
 * the region's descriptor and the server's peer configuration in the
 * connection's private data; the client writes a message there and
 * flushes it. When the client disconnects, the server prints the message.
 *
 * Whatever the pmem holds when the server starts is shown first, so
 * running the server again on the same path shows that the previous
 * message survived.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>

#include "common.h"

#define FALLBACK_FILE_SIZE (1 << 20)

static const char *granularity_name(enum pmem2_granularity g)
{
	switch (g) {
	case PMEM2_GRANULARITY_BYTE:
		return "byte (the CPU caches are persistent too)";
	case PMEM2_GRANULARITY_CACHE_LINE:
		return "cache line (persistent memory)";
	case PMEM2_GRANULARITY_PAGE:
		return "page (not persistent memory: msync makes it durable)";
	}
	return "unknown";
}

/* a printable, NUL-terminated string at the start of the area? */
static bool holds_message(const char *area)
{
	size_t len = strnlen(area, MSG_AREA_SIZE);

	if (len == 0 || len == MSG_AREA_SIZE)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)area[i] < 0x20 && area[i] != '\n' && area[i] != '\t')
			return false;
	return true;
}

/* open the path given; a missing path becomes a regular file */
static int open_pmem(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDWR);

	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			printf("server: %s did not exist: created a %d KiB file\n", path,
			       FALLBACK_FILE_SIZE >> 10);
	}
	if (fd < 0) {
		fprintf(stderr, "server: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < FALLBACK_FILE_SIZE &&
	    ftruncate(fd, FALLBACK_FILE_SIZE) != 0) {
		fprintf(stderr, "server: cannot resize %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char *argv[])
{
	bool declared_direct_write = false;

	if (argc >= 2 && strcmp(argv[1], "--direct-write-to-pmem") == 0) {
		declared_direct_write = true;
		argc--;
		argv++;
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s [--direct-write-to-pmem] <addr> <port> [<pmem-path>]\n",
			argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *path = argc == 4 ? argv[3] : NULL;

	int status = 1;
	int ret;
	int fd = -1;
	char *dram = NULL;
	struct pmem2_config *pcfg2 = NULL;
	struct pmem2_source *src = NULL;
	struct pmem2_map *map = NULL;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	/* 1. map the persistent memory, or take DRAM */
	char *area;
	size_t map_size;
	enum pmem2_granularity gran;
	pmem2_persist_fn persist = NULL;

	if (path) {
		fd = open_pmem(path);
		if (fd < 0)
			return 1;
		/*
		 * PAGE is the weakest store granularity: any mapping satisfies it,
		 * so a regular file works too. What the mapping really offers is
		 * asked below.
		 */
		if (pmem2_config_new(&pcfg2) ||
		    pmem2_config_set_required_store_granularity(pcfg2, PMEM2_GRANULARITY_PAGE) ||
		    pmem2_source_from_fd(&src, fd) || pmem2_map_new(&map, pcfg2, src)) {
			fprintf(stderr, "server: cannot map %s: %s\n", path, pmem2_errormsg());
			goto out_pmem;
		}
		area = pmem2_map_get_address(map);
		map_size = pmem2_map_get_size(map);
		gran = pmem2_map_get_store_granularity(map);
		persist = pmem2_get_persist_fn(map);
		if (map_size < MSG_AREA_SIZE) {
			fprintf(stderr, "server: %s is too small (%zu bytes)\n", path, map_size);
			goto out_pmem;
		}
		printf("server: mapped %s: %zu MiB, store granularity: %s\n", path, map_size >> 20,
		       granularity_name(gran));
	} else {
		dram = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), MSG_AREA_SIZE);
		if (!dram) {
			fprintf(stderr, "server: out of memory\n");
			return 1;
		}
		memset(dram, 0, MSG_AREA_SIZE);
		area = dram;
		gran = PMEM2_GRANULARITY_PAGE;
		printf("server: no pmem path given: using DRAM, which nothing makes persistent\n");
	}

	/*
	 * Direct write to pmem means: once the RDMA NIC has placed incoming data
	 * into the target's memory and a read issued after the writes has
	 * completed, the data is persistent -- the memory is persistent and
	 * nothing volatile sits between the NIC and it. It is what
	 * rpma_flush(RPMA_FLUSH_TYPE_PERSISTENT) relies on, and nothing in
	 * software can check it:
	 *  - byte store granularity means the platform flushes the CPU caches
	 *    on power failure (eADR): data the NIC placed in a cache survives;
	 *  - cache-line granularity is an ordinary ADR platform: with DDIO on
	 *    (the default on Intel servers) the NIC's writes land in the CPU
	 *    cache and are lost on power failure until the CPU flushes them;
	 *    only the person who turned DDIO off for the NIC knows better, and
	 *    says so with --direct-write-to-pmem;
	 *  - page granularity is the page cache of an ordinary file: durable
	 *    only after msync (pmem2's persist function).
	 * The server declares it only when the person running it says so,
	 * even on byte granularity, where it only suggests it. Without the
	 * declaration the server offers visibility flushes only, and persists
	 * the message itself once the client has gone.
	 */
	bool direct_write = declared_direct_write && gran != PMEM2_GRANULARITY_PAGE;

	if (declared_direct_write && gran == PMEM2_GRANULARITY_PAGE)
		printf("server: %s is not persistent memory: --direct-write-to-pmem ignored\n",
		       path ? path : "DRAM");
	if (!declared_direct_write && gran == PMEM2_GRANULARITY_BYTE)
		printf("server: the CPU caches are persistent here (eADR): "
		       "--direct-write-to-pmem would hold\n");
	printf("server: guarantee offered to the client: %s\n",
	       direct_write ? "persistence (direct write to pmem)"
	       : persist    ? "visibility only (the server persists the message itself)"
			    : "visibility only (DRAM: the message is lost when the server ends)");

	if (path) {
		if (holds_message(area))
			printf("server: the memory already holds a message: \"%s\"\n", area);
		else
			printf("server: the memory holds no message yet\n");
		memset(area, 0, MSG_AREA_SIZE);
		persist(area, MSG_AREA_SIZE);
	}

	/* 2. the RDMA device that serves addr, and its protection domain */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (ret) {
		report("server", "rpma_utils_get_ibv_context", ret);
		goto out_pmem;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "rpma_peer_new", ret);
		goto out_pmem;
	}

	/* 3. register the message area */
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

	if (direct_write)
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	ret = rpma_mr_reg(peer, area, MSG_AREA_SIZE, usage, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_peer;
	}

	/* 4. describe the region and the peer configuration for the client */
	ret = rpma_peer_cfg_new(&pcfg);
	if (ret) {
		report("server", "rpma_peer_cfg_new", ret);
		goto out_mr;
	}
	ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, direct_write);
	if (ret) {
		report("server", "rpma_peer_cfg_set_direct_write_to_pmem", ret);
		goto out_pcfg;
	}

	size_t mr_desc_size, pcfg_desc_size;

	ret = rpma_mr_get_descriptor_size(mr, &mr_desc_size);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc_size);
	if (ret) {
		report("server", "getting the descriptor sizes", ret);
		goto out_pcfg;
	}
	union {
		struct server_pdata pd;
		uint8_t raw[PDATA_MAX];
	} buf;
	size_t pdata_len = sizeof(buf.pd) + mr_desc_size + pcfg_desc_size;

	if (pdata_len > sizeof(buf) || mr_desc_size > UINT8_MAX || pcfg_desc_size > UINT8_MAX) {
		fprintf(stderr, "server: the descriptors (%zu + %zu bytes) do not fit\n",
			mr_desc_size, pcfg_desc_size);
		goto out_pcfg;
	}
	buf.pd.mr_desc_size = (uint8_t)mr_desc_size;
	buf.pd.pcfg_desc_size = (uint8_t)pcfg_desc_size;
	ret = rpma_mr_get_descriptor(mr, buf.pd.descriptors);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor(pcfg, buf.pd.descriptors + mr_desc_size);
	if (ret) {
		report("server", "getting the descriptors", ret);
		goto out_pcfg;
	}
	struct rpma_conn_private_data pdata = { .ptr = buf.raw, .len = (uint8_t)pdata_len };

	/* 5. wait for one client */
	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_pcfg;
	}
	printf("server: listening on %s:%s (direct write to pmem: %s)\n", addr, port,
	       direct_write ? "yes" : "no");
	fflush(stdout);

	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	/* accept it, handing over the descriptors */
	ret = rpma_conn_req_connect(&req, &pdata, &conn);
	if (ret) {
		report("server", "rpma_conn_req_connect", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		report("server", "rpma_conn_next_event", ret);
		goto out_conn;
	}
	if (event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: unexpected event: %s\n",
			rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: client connected\n");
	fflush(stdout);

	/* 6. the client writes and flushes; the server only waits for it to go */
	ret = rpma_conn_next_event(conn, &event);
	if (ret) {
		report("server", "rpma_conn_next_event", ret);
		goto out_conn;
	}
	if (event != RPMA_CONN_CLOSED)
		fprintf(stderr, "server: the connection ended with: %s\n",
			rpma_utils_conn_event_2str(event));
	else
		printf("server: client disconnected\n");

	/* 7. make sure the message is durable whatever the memory, and show it */
	if (persist)
		persist(area, MSG_AREA_SIZE);
	if (holds_message(area)) {
		printf("server: received%s: \"%s\"\n", persist ? " and persisted" : "", area);
		status = 0;
	} else {
		printf("server: nothing arrived\n");
	}

out_conn:
	ret = rpma_conn_disconnect(conn);
	if (ret)
		report("server", "rpma_conn_disconnect", ret);
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("server", "rpma_conn_delete", ret);
out_ep:
	ret = rpma_ep_shutdown(&ep);
	if (ret)
		report("server", "rpma_ep_shutdown", ret);
out_pcfg:
	rpma_peer_cfg_delete(&pcfg);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("server", "rpma_mr_dereg", ret);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("server", "rpma_peer_delete", ret);
out_pmem:
	if (map)
		pmem2_map_delete(&map);
	if (src)
		pmem2_source_delete(&src);
	if (pcfg2)
		pmem2_config_delete(&pcfg2);
	if (fd >= 0)
		close(fd);
	free(dram);
	return status;
}
