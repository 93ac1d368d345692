/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 14-atomic-write-log: append entries to the server's log
 *
 * usage: client <addr> <port> <entry>...
 *
 * The client reads the log's `used` with rpma_read(), then appends each
 * entry as common.h describes: rpma_write() of the entry past `used`,
 * rpma_flush() of it, rpma_atomic_write() of the new `used`, and a flush
 * of that. Only the last flush asks for a completion: operations on one
 * connection complete in order, and an error completes even unasked.
 * The atomic write does not start before the flush ahead of it has
 * completed (the library fences it), so `used` never covers an entry
 * that is not flushed yet.
 */

#include <endian.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

#define STAGING_SIZE 4096

static int wait_for(struct rpma_cq *cq, const void *ctx, enum rpma_op op)
{
	struct rpma_completion cmpl;
	int ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);

	if (ret) {
		report("client", "rpma_cq_wait_completion", ret);
		return -1;
	}
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op_context != ctx || cmpl.op != op) {
		fprintf(stderr, "client: an operation failed: %s\n",
			ibv_wc_status_str(cmpl.op_status));
		return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s <addr> <port> <entry>...\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];

	for (int i = 3; i < argc; i++) {
		if (strlen(argv[i]) + 1 > STAGING_SIZE || strchr(argv[i], '\n')) {
			fprintf(stderr, "client: an entry is one line of less than %d bytes\n",
				STAGING_SIZE);
			return 2;
		}
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *local_mr = NULL;
	struct rpma_mr_remote *log_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (ret) {
		report("client", "rpma_utils_get_ibv_context", ret);
		return 1;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "rpma_peer_new", ret);
		return 1;
	}
	/* [0, 8): where `used` is read to; then the entry being appended */
	char *local = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 8 + STAGING_SIZE);

	if (!local) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	ret = rpma_mr_reg(peer, local, 8 + STAGING_SIZE,
			  RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC, &local_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}

	ret = rpma_conn_req_new(peer, addr, port, NULL, &req);
	if (!ret)
		ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		report("client", "connecting", ret);
		goto out_mr;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: cannot connect to %s:%s: %s\n", addr, port,
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}

	/* the log's region and the server's peer configuration */
	struct rpma_conn_private_data pdata;
	const struct server_pdata *pd;
	size_t log_size = 0;

	ret = rpma_conn_get_private_data(conn, &pdata);
	pd = pdata.ptr;
	if (ret || !pd || pdata.len < sizeof(*pd) ||
	    pdata.len < sizeof(*pd) + pd->mr_desc_size + pd->pcfg_desc_size) {
		fprintf(stderr, "client: the server sent no usable descriptors\n");
		goto out_disconnect;
	}
	if ((ret = rpma_mr_remote_from_descriptor(pd->descriptors, pd->mr_desc_size, &log_mr)) ||
	    (ret = rpma_peer_cfg_from_descriptor(pd->descriptors + pd->mr_desc_size,
						 pd->pcfg_desc_size, &pcfg)) ||
	    (ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg)) ||
	    (ret = rpma_mr_remote_get_size(log_mr, &log_size)) ||
	    (ret = rpma_conn_get_cq(conn, &cq))) {
		report("client", "taking the server's descriptors", ret);
		goto out_disconnect;
	}
	if (log_size < LOG_SIZE) {
		fprintf(stderr, "client: the log's region has %zu bytes only\n", log_size);
		goto out_disconnect;
	}
	bool direct_write = false;
	int flush_types = 0;

	rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct_write);
	rpma_mr_remote_get_flush_type(log_mr, &flush_types);
	enum rpma_flush_type type =
	    direct_write && (flush_types & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
		? RPMA_FLUSH_TYPE_PERSISTENT
		: RPMA_FLUSH_TYPE_VISIBILITY;
	printf("client: connected; appends are flushed to %s\n",
	       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistence" : "visibility");

	/* 1. where does the log end? */
	static int read_ctx, commit_ctx;
	uint64_t used;

	ret = rpma_read(conn, local_mr, 0, log_mr, LOG_USED_OFFSET, 8, RPMA_F_COMPLETION_ALWAYS,
			&read_ctx);
	if (ret) {
		report("client", "rpma_read", ret);
		goto out_disconnect;
	}
	if (wait_for(cq, &read_ctx, RPMA_OP_READ))
		goto out_disconnect;
	memcpy(&used, local, 8);
	used = le64toh(used);
	if (used > LOG_DATA_SIZE) {
		fprintf(stderr, "client: the log's header is damaged\n");
		goto out_disconnect;
	}
	printf("client: the log holds %llu bytes\n", (unsigned long long)used);

	/* 2. append, committing each entry with an atomic write of `used` */
	for (int i = 3; i < argc; i++) {
		size_t len = strlen(argv[i]) + 1;
		size_t at = LOG_DATA_OFFSET + used;

		if (len > LOG_DATA_SIZE - used) {
			fprintf(stderr, "client: the log is full\n");
			goto out_disconnect;
		}
		memcpy(local + 8, argv[i], len - 1);
		local[8 + len - 1] = '\n';
		uint64_t new_used = htole64(used + len);
		char src[8];

		memcpy(src, &new_used, 8);
		if ((ret = rpma_write(conn, log_mr, at, local_mr, 8, len,
				      RPMA_F_COMPLETION_ON_ERROR, NULL)) ||
		    (ret = rpma_flush(conn, log_mr, at, len, type, RPMA_F_COMPLETION_ON_ERROR,
				      NULL)) ||
		    (ret = rpma_atomic_write(conn, log_mr, LOG_USED_OFFSET, src,
					     RPMA_F_COMPLETION_ON_ERROR, NULL)) ||
		    (ret = rpma_flush(conn, log_mr, LOG_USED_OFFSET, 8, type,
				      RPMA_F_COMPLETION_ALWAYS, &commit_ctx))) {
			report("client", "posting an append", ret);
			goto out_disconnect;
		}
		if (wait_for(cq, &commit_ctx, RPMA_OP_FLUSH))
			goto out_disconnect;
		used += len;
		printf("client: appended \"%s\"; the log holds %llu bytes\n", argv[i],
		       (unsigned long long)used);
	}
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret || (ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete\n");
		status = 1;
	}
out_conn:
	if (log_mr)
		rpma_mr_remote_delete(&log_mr);
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	rpma_conn_delete(&conn);
out_mr:
	ret = rpma_mr_dereg(&local_mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_free:
	free(local);
out_peer:
	rpma_peer_delete(&peer);
	return status;
}
