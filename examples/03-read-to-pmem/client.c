/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 03-read-to-pmem: read the server's text into local pmem
 *
 * usage: client <addr> <port> [<pmem-path>]
 *
 * The client maps persistent memory with libpmem2 (a device DAX such as
 * /dev/dax0.0, or a file, created when missing), shows what it holds from
 * an earlier run, registers it as the destination of reads, reads the
 * server's text into it with rpma_read() and makes it persistent.
 * Without a path it reads into DRAM, and says so.
 *
 * The completion of an RDMA read into local memory means the bytes were
 * placed there, not that they are persistent: on most platforms the NIC
 * writes into the CPU caches (DDIO), which a power failure empties. The
 * persist function of libpmem2 flushes them to the persistent domain.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>

#include "common.h"

#define WAIT_MS	      10000
#define NEW_FILE_SIZE (1 << 20)

/*
 * Maps path with libpmem2; a path that does not exist becomes a regular
 * file of NEW_FILE_SIZE bytes. 0 or -1 (the reason printed).
 */
static int map_pmem(const char *path, struct pmem2_map **map)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	struct stat st;
	int ret = -1;
	int fd = open(path, O_RDWR | O_CREAT, 0600);

	if (fd < 0) {
		fprintf(stderr, "client: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < NEW_FILE_SIZE &&
	    ftruncate(fd, NEW_FILE_SIZE) != 0) {
		fprintf(stderr, "client: cannot size %s: %s\n", path, strerror(errno));
		goto out;
	}
	/* the weakest granularity: any mapping has it; the real one is asked later */
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) ||
	    pmem2_source_from_fd(&src, fd) || pmem2_map_new(map, cfg, src)) {
		fprintf(stderr, "client: cannot map %s: %s\n", path, pmem2_errormsg());
		goto out;
	}
	ret = 0;
out:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	close(fd); /* the mapping stays */
	return ret;
}

/* a printable string at the start of the area? */
static bool holds_text(const char *area)
{
	size_t len = strnlen(area, TEXT_SIZE);

	if (len == 0 || len == TEXT_SIZE)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)area[i] < 0x20)
			return false;
	return true;
}

int main(int argc, char *argv[])
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <addr> <port> [<pmem-path>]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *path = argc == 4 ? argv[3] : NULL;

	int status = 1;
	int ret;
	struct pmem2_map *map = NULL;
	pmem2_persist_fn persist = NULL;
	char *dram = NULL;
	char *buf;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	/* 1. the destination: pmem, or DRAM when no path is given */
	if (path) {
		if (map_pmem(path, &map))
			return 1;
		if (pmem2_map_get_size(map) < TEXT_SIZE) {
			fprintf(stderr, "client: %s is too small\n", path);
			goto out_unmap;
		}
		buf = pmem2_map_get_address(map);
		persist = pmem2_get_persist_fn(map);
		printf("client: mapped %s (%zu MiB)\n", path, pmem2_map_get_size(map) >> 20);
		if (holds_text(buf))
			printf("client: the pmem holds from an earlier run: \"%s\"\n", buf);
		else
			printf("client: the pmem holds no text yet\n");
	} else {
		dram = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), TEXT_SIZE);
		if (!dram) {
			fprintf(stderr, "client: out of memory\n");
			return 1;
		}
		buf = dram;
		printf("client: no pmem path given: reading into DRAM, which is not persistent\n");
	}
	memset(buf, 0, TEXT_SIZE);
	if (persist)
		persist(buf, TEXT_SIZE);

	/* 2. the device, the peer, and the destination registered for reads */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		report("client", "rpma_utils_get_ibv_context", ret);
		goto out_unmap;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "rpma_peer_new", ret);
		goto out_unmap;
	}
	ret = rpma_mr_reg(peer, buf, TEXT_SIZE, RPMA_MR_USAGE_READ_DST, &dst_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_peer;
	}

	/* 3. connect and take the server's region */
	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (ret) {
		report("client", "rpma_conn_req_new", ret);
		goto out_mr;
	}
	ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		report("client", "rpma_conn_req_connect", ret);
		goto out_mr;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	struct rpma_conn_private_data pdata;

	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		report("client", "rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	const struct server_pdata *pd = pdata.ptr;

	if (!pd || pdata.len < sizeof(*pd) || pdata.len < sizeof(*pd) + pd->mr_desc_size ||
	    pd->text_len == 0) {
		fprintf(stderr, "client: the server's private data is not what it should be\n");
		goto out_disconnect;
	}
	ret = rpma_mr_remote_from_descriptor(pd->mr_desc, pd->mr_desc_size, &src_mr);
	if (ret) {
		report("client", "rpma_mr_remote_from_descriptor", ret);
		goto out_disconnect;
	}
	size_t remote_size;

	ret = rpma_mr_remote_get_size(src_mr, &remote_size);
	if (ret || remote_size < pd->text_len) {
		fprintf(stderr, "client: the remote region is too small\n");
		goto out_disconnect;
	}

	/* 4. read, wait for the completion, then persist what arrived */
	static int read_ctx;
	struct rpma_cq *cq;
	struct rpma_completion cmpl;

	ret = rpma_read(conn, dst_mr, 0, src_mr, 0, pd->text_len, RPMA_F_COMPLETION_ALWAYS,
			&read_ctx);
	if (ret) {
		report("client", "rpma_read", ret);
		goto out_disconnect;
	}
	ret = rpma_conn_get_cq(conn, &cq);
	if (!ret)
		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
	if (ret) {
		report("client", "waiting for the read", ret);
		goto out_disconnect;
	}
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op_context != &read_ctx) {
		fprintf(stderr, "client: the read failed: %s\n", ibv_wc_status_str(cmpl.op_status));
		goto out_disconnect;
	}
	buf[TEXT_SIZE - 1] = '\0';
	if (persist) {
		persist(buf, pd->text_len);
		printf("client: read into pmem and persisted: \"%s\"\n", buf);
	} else {
		printf("client: read into DRAM: \"%s\"\n", buf);
	}
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret) {
		report("client", "rpma_conn_disconnect", ret);
		status = 1;
	} else if ((ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		status = 1;
	}
out_conn:
	if (src_mr)
		rpma_mr_remote_delete(&src_mr);
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
out_mr:
	ret = rpma_mr_dereg(&dst_mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("client", "rpma_peer_delete", ret);
out_unmap:
	if (map)
		pmem2_map_delete(&map);
	free(dram);
	return status;
}
