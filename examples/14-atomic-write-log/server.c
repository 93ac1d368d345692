/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 14-atomic-write-log: keep a log that clients append to
 *
 * usage: server [--direct-write-to-pmem] [--clients N] <addr> <port> [<pmem-path>]
 *
 * The server keeps the log described in common.h in persistent memory
 * mapped with libpmem2 (a device DAX, or a file, created when missing),
 * or in DRAM without a path. At start it reads back what the log holds;
 * then it serves N clients (1 by default), one after the other, each of
 * which appends entries without the server's CPU doing anything, and
 * prints the log after each.
 *
 * What a client's flush can promise depends on the platform, as in
 * 04-write-flush: persistence only where the server declares direct write
 * to pmem, which it does only when started with --direct-write-to-pmem
 * by the person who knows that the platform allows it (eADR, or DDIO off),
 * visibility otherwise, in which case the server persists the log itself
 * after each client.
 */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>

#include "common.h"

/* maps path (a file of LOG_SIZE bytes when it does not exist); 0 or -1 */
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
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < LOG_SIZE &&
	    ftruncate(fd, LOG_SIZE) != 0) {
		fprintf(stderr, "server: cannot size %s: %s\n", path, strerror(errno));
		goto out;
	}
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

/* prints the committed entries; the log came from a client: check `used` */
static void print_log(const char *log)
{
	const struct log_header *hdr = (const struct log_header *)log;
	uint64_t used = le64toh(hdr->used);
	int entries = 0;

	if (used > LOG_DATA_SIZE) {
		printf("server: the log's header is damaged (used = %llu)\n",
		       (unsigned long long)used);
		return;
	}
	for (const char *p = log + LOG_DATA_OFFSET, *end = p + used; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		int len = (int)((nl ? nl : end) - p);

		printf("server:   %d: %.*s\n", ++entries, len, p);
		p += len + 1;
	}
	printf("server: the log holds %d entries, %llu bytes\n", entries, (unsigned long long)used);
}

int main(int argc, char *argv[])
{
	bool declared = false;
	int clients = 1;

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (strcmp(argv[1], "--direct-write-to-pmem") == 0) {
			declared = true;
		} else if (strcmp(argv[1], "--clients") == 0 && argc > 2) {
			clients = atoi(argv[2]);
			argc--, argv++;
		} else {
			break;
		}
	}
	if ((argc != 3 && argc != 4) || clients < 1) {
		fprintf(stderr,
			"usage: %s [--direct-write-to-pmem] [--clients N] <addr> <port> "
			"[<pmem-path>]\n",
			argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *path = argc == 4 ? argv[3] : NULL;

	int status = 1;
	int ret;
	struct pmem2_map *map = NULL;
	pmem2_persist_fn persist = NULL;
	char *log, *dram = NULL;
	bool direct_write = false;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_ep *ep = NULL;

	/* 1. the log: in pmem, read back; or in DRAM, new */
	if (path) {
		if (map_pmem(path, &map))
			return 1;
		if (pmem2_map_get_size(map) < LOG_SIZE) {
			fprintf(stderr, "server: %s is smaller than %d bytes\n", path, LOG_SIZE);
			goto out_unmap;
		}
		log = pmem2_map_get_address(map);
		persist = pmem2_get_persist_fn(map);
		enum pmem2_granularity gran = pmem2_map_get_store_granularity(map);

		/* only on the word of the person running it (see 04-write-flush) */
		direct_write = declared && gran != PMEM2_GRANULARITY_PAGE;
		printf("server: mapped %s\n", path);
		if (!declared && gran == PMEM2_GRANULARITY_BYTE)
			printf("server: the CPU caches are persistent here (eADR): "
			       "--direct-write-to-pmem would hold\n");
	} else {
		dram = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), LOG_SIZE);
		if (!dram) {
			fprintf(stderr, "server: out of memory\n");
			return 1;
		}
		memset(dram, 0, LOG_SIZE);
		log = dram;
		printf("server: no pmem path given: the log is in DRAM and ends with the server\n");
	}
	struct log_header *hdr = (struct log_header *)log;

	if (memcmp(hdr->signature, LOG_SIGNATURE, sizeof(LOG_SIGNATURE)) == 0) {
		printf("server: found a log\n");
		print_log(log);
	} else {
		/* the header goes last: a crash meanwhile leaves no log at all */
		memset(log, 0, LOG_DATA_OFFSET);
		if (persist)
			persist(log, LOG_DATA_OFFSET);
		memcpy(hdr->signature, LOG_SIGNATURE, sizeof(LOG_SIGNATURE));
		if (persist)
			persist(hdr, sizeof(*hdr));
		printf("server: no log found: started an empty one\n");
	}
	printf("server: the clients' flushes give %s\n",
	       direct_write ? "persistence (direct write to pmem)"
	       : persist    ? "visibility; the server persists the log after each client"
			    : "visibility (DRAM)");

	/* 2. the region: written and read from afar, flushed */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "opening the device", ret);
		goto out_unmap;
	}
	int usage =
	    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

	if (direct_write)
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	ret = rpma_mr_reg(peer, log, LOG_SIZE, usage, &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_peer;
	}
	union {
		struct server_pdata pd;
		uint8_t raw[PDATA_MAX];
	} pd;
	size_t mr_desc_size, pcfg_desc_size;

	ret = rpma_peer_cfg_new(&pcfg);
	if (!ret)
		ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, direct_write);
	if (!ret)
		ret = rpma_mr_get_descriptor_size(mr, &mr_desc_size);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_desc_size);
	if (!ret && sizeof(pd.pd) + mr_desc_size + pcfg_desc_size > sizeof(pd))
		ret = RPMA_E_NOSUPP;
	if (!ret)
		ret = rpma_mr_get_descriptor(mr, pd.pd.descriptors);
	if (!ret)
		ret = rpma_peer_cfg_get_descriptor(pcfg, pd.pd.descriptors + mr_desc_size);
	if (ret) {
		report("server", "describing the log", ret);
		goto out_mr;
	}
	pd.pd.mr_desc_size = (uint8_t)mr_desc_size;
	pd.pd.pcfg_desc_size = (uint8_t)pcfg_desc_size;
	struct rpma_conn_private_data pdata = { pd.raw, (uint8_t)(sizeof(pd.pd) + mr_desc_size +
								  pcfg_desc_size) };

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_mr;
	}
	printf("server: listening on %s:%s for %d client(s)\n", addr, port, clients);
	fflush(stdout);

	/* 3. the clients, one after the other */
	for (int i = 1; i <= clients; i++) {
		struct rpma_conn_req *req = NULL;
		struct rpma_conn *conn = NULL;
		enum rpma_conn_event event;

		ret = rpma_ep_next_conn_req(ep, NULL, &req);
		if (!ret)
			ret = rpma_conn_req_connect(&req, &pdata, &conn);
		if (ret) {
			report("server", "accepting a client", ret);
			goto out_ep;
		}
		ret = rpma_conn_next_event(conn, &event);
		if (!ret && event == RPMA_CONN_ESTABLISHED) {
			printf("server: client %d connected\n", i);
			fflush(stdout);
			/* the client appends; this side only waits for it to go */
			ret = rpma_conn_next_event(conn, &event);
		}
		if (ret || event != RPMA_CONN_CLOSED)
			fprintf(stderr, "server: client %d: the connection ended with: %s\n", i,
				ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		rpma_conn_disconnect(conn);
		rpma_conn_delete(&conn);
		if (ret || event != RPMA_CONN_CLOSED)
			goto out_ep;
		if (persist)
			persist(log, LOG_SIZE);
		printf("server: client %d disconnected\n", i);
		print_log(log);
		fflush(stdout);
	}
	status = 0;

out_ep:
	rpma_ep_shutdown(&ep);
out_mr:
	rpma_peer_cfg_delete(&pcfg);
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
