/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * replica.c -- 19-replicated-log: one replica of the writer's log
 *
 * usage: replica [--direct-write-to-pmem] [--format] [--sessions N]
 *                <addr> <port> [<pmem-path>]
 *
 * A replica keeps a copy of the log (common.h) in persistent memory
 * mapped with libpmem2 -- a device DAX such as /dev/dax1.0, or a file --
 * or in DRAM without a path. At start it reads its log back and checks
 * every record's sequence number and checksum; a damaged log is reported
 * and not served (--format starts over). Then it lets writers in, one at
 * a time, and stays out of their way: a writer appends with one-sided
 * writes, flushes and atomic writes, which take no CPU here. After each
 * writer it checks the log again and reports what it holds. It serves
 * writers until SIGINT or SIGTERM, or N of them with --sessions N.
 *
 * On pmem the replica offers GPSPM (see 15-gpspm): a writer's persistent
 * flush asks this CPU to persist the range, which a thread of the library
 * does with libpmem2's persist function, whatever the platform. With
 * --direct-write-to-pmem, from the person who knows that the platform
 * allows it (eADR, or DDIO off), it also declares direct write to pmem,
 * and the writers' flushes do without this CPU (see 04-write-flush). In
 * DRAM writers can only reach visibility.
 */

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define DRAM_LOG_SIZE (16u << 20)

static int signal_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	char c = (char)sig;

	if (write(signal_pipe[1], &c, 1) < 0) {
		/* the pipe is full: a signal is pending already */
	}
}

/* waits until fd is readable (1) or a signal came (0); -1 on error */
static int wait_readable(int fd)
{
	struct pollfd pfd[2] = { { fd, POLLIN, 0 }, { signal_pipe[0], POLLIN, 0 } };

	for (;;) {
		if (poll(pfd, 2, -1) >= 0)
			break;
		if (errno != EINTR)
			return -1;
	}
	return (pfd[1].revents & POLLIN) ? 0 : 1;
}

static void print_check(const struct log_memory *mem, const struct log_check *chk)
{
	const struct log_header *hdr = (const void *)mem->addr;

	printf("replica: the log (id %016llx) holds %llu records, %llu bytes; every checksum "
	       "good; digest %08x\n",
	       (unsigned long long)le64toh(hdr->log_id), (unsigned long long)chk->records,
	       (unsigned long long)chk->bytes, chk->digest);
	if (chk->records > 0)
		printf("replica: the last record: seq %llu, \"%.*s\"\n",
		       (unsigned long long)(chk->next_seq - 1),
		       (int)(chk->last_len < 60 ? chk->last_len : 60), chk->last_payload);
	fflush(stdout);
}

/* reads the log back; false when it is damaged */
static bool replay(const struct log_memory *mem)
{
	struct log_check chk;

	log_check(mem->addr, mem->size, &chk);
	if (chk.problem) {
		printf("replica: the log is damaged after %llu good records (%llu bytes): %s\n",
		       (unsigned long long)chk.records, (unsigned long long)chk.bytes, chk.problem);
		return false;
	}
	print_check(mem, &chk);
	return true;
}

/*
 * The answer to a writer: the log's state and the descriptors, in their
 * versioned forms, which say whether the region offers GPSPM
 */
static int make_pdata(const struct log_memory *mem, struct rpma_mr_local *mr,
		      const struct rpma_peer_cfg *pcfg, const struct rpma_conn_cfg *cfg,
		      uint8_t *buf, uint8_t *len)
{
	const struct log_header *hdr = (const void *)mem->addr;
	struct replica_pdata *pd = (void *)buf;
	size_t mr_desc_size, pcfg_desc_size;
	int ret;

	if ((ret = rpma_mr_get_versioned_descriptor_size(mr, &mr_desc_size)) ||
	    (ret = rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &pcfg_desc_size)))
		return ret;
	if (sizeof(*pd) + mr_desc_size + pcfg_desc_size > PDATA_MAX)
		return RPMA_E_NOSUPP;
	pd->magic = htole32(REPLICA_MAGIC);
	pd->version = PROTOCOL_VERSION;
	pd->mr_desc_size = (uint8_t)mr_desc_size;
	pd->pcfg_desc_size = (uint8_t)pcfg_desc_size;
	pd->pad = 0;
	pd->log_id = hdr->log_id;
	pd->tail = hdr->tail;
	pd->capacity = hdr->capacity;
	if ((ret = rpma_mr_get_versioned_descriptor(mr, pd->descriptors)) ||
	    (ret =
		 rpma_peer_cfg_get_versioned_descriptor(pcfg, cfg, pd->descriptors + mr_desc_size)))
		return ret;
	*len = (uint8_t)(sizeof(*pd) + mr_desc_size + pcfg_desc_size);
	return 0;
}

static bool from_a_writer(struct rpma_conn_req *req)
{
	struct rpma_conn_private_data pdata;
	struct writer_pdata wp;

	if (rpma_conn_req_get_private_data(req, &pdata) || !pdata.ptr || pdata.len < sizeof(wp))
		return false;
	memcpy(&wp, pdata.ptr, sizeof(wp));
	return le32toh(wp.magic) == WRITER_MAGIC && wp.version == PROTOCOL_VERSION;
}

/* one writer, from its connection request to its disconnection; 1: a signal came */
static int serve_writer(struct rpma_conn_req **req, struct rpma_conn_private_data *pdata)
{
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	int fd, ret;
	int result = 0;

	ret = rpma_conn_req_connect(req, pdata, &conn);
	if (ret) {
		report("replica", "rpma_conn_req_connect", ret);
		return -1;
	}
	ret = rpma_conn_get_event_fd(conn, &fd);
	while (!ret) {
		int r = wait_readable(fd);

		if (r <= 0) {
			result = r < 0 ? -1 : 1;
			break;
		}
		ret = rpma_conn_next_event(conn, &event);
		if (ret)
			break;
		if (event == RPMA_CONN_ESTABLISHED) {
			printf("replica: a writer connected\n");
			fflush(stdout);
			continue;
		}
		if (event == RPMA_CONN_CLOSED)
			printf("replica: the writer disconnected\n");
		else
			printf("replica: the writer is gone: %s\n",
			       rpma_utils_conn_event_2str(event));
		break;
	}
	if (ret) {
		report("replica", "waiting for the writer", ret);
		result = -1;
	}
	rpma_conn_disconnect(conn);
	rpma_conn_delete(&conn);
	return result;
}

int main(int argc, char *argv[])
{
	bool declared = false, format = false;
	int sessions = 0; /* 0: until a signal */

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (strcmp(argv[1], "--direct-write-to-pmem") == 0) {
			declared = true;
		} else if (strcmp(argv[1], "--format") == 0) {
			format = true;
		} else if (strcmp(argv[1], "--sessions") == 0 && argc > 2) {
			sessions = atoi(argv[2]);
			argc--, argv++;
		} else {
			break;
		}
	}
	if (argc != 3 && argc != 4) {
		fprintf(
		    stderr,
		    "usage: %s [--direct-write-to-pmem] [--format] [--sessions N] <addr> <port> "
		    "[<pmem-path>]\n",
		    argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *path = argc == 4 ? argv[3] : NULL;

	int status = 1;
	int ret;
	struct log_memory mem;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_cfg *cfg = NULL; /* NULL: the defaults, no GPSPM */
	struct rpma_ep *ep = NULL;

	/* 1. the log: read back and checked, or new */
	if (path) {
		if (log_memory_map("replica", path, declared, &mem))
			return 1;
		printf("replica: mapped %s (%zu MiB)\n", path, mem.size >> 20);
	} else {
		if (log_memory_dram(DRAM_LOG_SIZE, &mem)) {
			fprintf(stderr, "replica: out of memory\n");
			return 1;
		}
		printf("replica: no pmem path given: the log is in DRAM and ends with the "
		       "replica\n");
	}
	if (format || !log_exists(&mem)) {
		log_format(&mem, 0);
		printf("replica: %s: a new, empty log\n", format ? "formatted" : "no log found");
	}
	if (!replay(&mem)) {
		printf("replica: not serving a damaged log (--format starts a new one)\n");
		goto out_mem;
	}
	printf("replica: the writers' flushes reach %s here\n",
	       mem.direct_write ? "persistence (direct write to pmem)"
	       : mem.persist	? "persistence by GPSPM (this CPU persists what they flush)"
				: "visibility only (DRAM)");

	/* 2. the whole log, for remote writes and flushes */
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("replica", "opening the device", ret);
		goto out_mem;
	}
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

	if (mem.direct_write || mem.persist)
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	ret = rpma_mr_reg(peer, mem.addr, mem.size, usage, &mr);
	if (ret) {
		report("replica", "rpma_mr_reg", ret);
		goto out_peer;
	}
	/*
	 * pmem: GPSPM is offered, served by a thread of the library, since
	 * this one sleeps until the writer goes. The writers use it unless
	 * direct write to pmem lets their flushes do without this CPU.
	 */
	ret = rpma_peer_cfg_new(&pcfg);
	if (!ret)
		ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, mem.direct_write);
	if (!ret && mem.persist) {
		ret = rpma_mr_set_persist_fn(mr, mem.persist);
		if (!ret)
			ret = rpma_conn_cfg_new(&cfg);
		if (!ret)
			ret = rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD);
		if (!ret)
			ret = rpma_conn_cfg_set_rq_size(cfg, FLUSHES_IN_FLIGHT);
	}
	if (ret) {
		report("replica", "making the configurations", ret);
		goto out_mr;
	}

	if (pipe(signal_pipe)) {
		perror("replica: pipe");
		goto out_mr;
	}
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("replica", "rpma_ep_listen", ret);
		goto out_mr;
	}
	int ep_fd;

	ret = rpma_ep_get_fd(ep, &ep_fd);
	if (ret) {
		report("replica", "rpma_ep_get_fd", ret);
		goto out_ep;
	}
	printf("replica: listening on %s:%s\n", addr, port);
	fflush(stdout);

	/* 3. writers, one after the other */
	for (int served = 0; sessions == 0 || served < sessions;) {
		struct rpma_conn_req *req = NULL;
		int r = wait_readable(ep_fd);

		if (r == 0)
			break; /* a signal */
		if (r < 0)
			goto out_ep;
		ret = rpma_ep_next_conn_req(ep, cfg, &req);
		if (ret) {
			report("replica", "rpma_ep_next_conn_req", ret);
			goto out_ep;
		}
		if (!from_a_writer(req)) {
			printf("replica: turned down a peer that is not a log writer\n");
			rpma_conn_req_delete(&req);
			continue;
		}
		uint8_t buf[PDATA_MAX];
		struct rpma_conn_private_data pdata = { buf, 0 };

		ret = make_pdata(&mem, mr, pcfg, cfg, buf, &pdata.len);
		if (ret) {
			report("replica", "describing the log", ret);
			rpma_conn_req_delete(&req);
			goto out_ep;
		}
		r = serve_writer(&req, &pdata);
		if (r < 0)
			goto out_ep;
		/* durable now, whatever the writer's flushes could promise */
		uint64_t tail = le64toh(((struct log_header *)mem.addr)->tail);

		if (tail <= mem.size - LOG_HEADER_SIZE)
			log_memory_persist(&mem, mem.addr, LOG_HEADER_SIZE + tail);
		if (!replay(&mem))
			goto out_ep;
		served++;
		if (r == 1)
			break; /* a signal */
	}
	printf("replica: done\n");
	status = 0;

out_ep:
	rpma_ep_shutdown(&ep);
out_mr:
	rpma_conn_cfg_delete(&cfg);
	rpma_peer_cfg_delete(&pcfg);
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("replica", "rpma_mr_dereg", ret);
out_peer:
	rpma_peer_delete(&peer);
out_mem:
	log_memory_release(&mem);
	return status;
}
