/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 16-completion-api: three ways to take completions
 *
 * usage: client <addr> <port>
 *
 * The completion API of rpma-ng (struct rpma_completion, no struct ibv_wc):
 *   1. rpma_cq_wait_completion() waits for one completion, with a
 *      timeout; on an empty CQ it returns RPMA_E_NO_COMPLETION once the
 *      time is up;
 *   2. rpma_cq_get_completions() takes up to n completions with one poll
 *      of the CQ and says how many it took (0: the CQ is empty, and
 *      rpma_cq_wait() sleeps until it signals);
 *   3. rpma_cq_get_completion() takes one without waiting: a loop on it
 *      is a busy poll, the lowest latency at the price of a CPU.
 * The client writes CHUNKS chunks with one signaled write each and takes
 * their completions in batches (2), then flushes and busy-polls for the
 * flush's completion (3).
 */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define BATCH 8

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char *argv[])
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_completion cmpl;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "opening the device", ret);
		return 1;
	}
	uint8_t *src = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);

	if (!src) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	for (int i = 0; i < CHUNKS; i++)
		memset(src + i * CHUNK_SIZE, chunk_byte(i), CHUNK_SIZE);
	ret = rpma_mr_reg(peer, src, REGION_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}
	/* room for every write in flight at once, and for their completions */
	ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(cfg, CHUNKS + 1);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, CHUNKS + 1);
	if (!ret)
		ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
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
	struct rpma_conn_private_data pdata;
	size_t size = 0;

	ret = rpma_conn_get_private_data(conn, &pdata);
	const struct server_pdata *pd = pdata.ptr;

	if (ret || !pd || pdata.len < sizeof(*pd) || pdata.len < sizeof(*pd) + pd->mr_desc_size ||
	    rpma_mr_remote_from_descriptor(pd->mr_desc, pd->mr_desc_size, &dst_mr) ||
	    rpma_mr_remote_get_size(dst_mr, &size) || size < REGION_SIZE) {
		fprintf(stderr, "client: the server did not describe a usable region\n");
		goto out_disconnect;
	}
	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("client", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}

	/* 1. waiting on an empty CQ: the timeout ends it */
	double t0 = now_ms();

	ret = rpma_cq_wait_completion(cq, &cmpl, 100);
	if (ret != RPMA_E_NO_COMPLETION) {
		fprintf(stderr, "client: an empty CQ gave a completion (%d)\n", ret);
		goto out_disconnect;
	}
	printf("client: 1. rpma_cq_wait_completion() on an empty CQ: \"%s\" after %.0f ms\n",
	       rpma_err_2str(ret), now_ms() - t0);

	/* 2. CHUNKS signaled writes; their completions in batches */
	static int write_ctx[CHUNKS];

	for (int i = 0; i < CHUNKS; i++) {
		ret = rpma_write(conn, dst_mr, i * CHUNK_SIZE, src_mr, i * CHUNK_SIZE, CHUNK_SIZE,
				 RPMA_F_COMPLETION_ALWAYS, &write_ctx[i]);
		if (ret) {
			report("client", "rpma_write", ret);
			goto out_disconnect;
		}
	}
	int done = 0, polls = 0, biggest = 0;

	while (done < CHUNKS) {
		struct rpma_completion cmpls[BATCH];
		int n = rpma_cq_get_completions(cq, cmpls, BATCH);

		if (n < 0) {
			report("client", "rpma_cq_get_completions", n);
			goto out_disconnect;
		}
		polls++;
		if (n == 0) {
			/* empty: sleep until the CQ signals (it is re-armed here) */
			ret = rpma_cq_wait(cq);
			if (ret) {
				report("client", "rpma_cq_wait", ret);
				goto out_disconnect;
			}
			continue;
		}
		for (int i = 0; i < n; i++) {
			/* they come in the order they were posted */
			if (cmpls[i].op_status != IBV_WC_SUCCESS || cmpls[i].op != RPMA_OP_WRITE ||
			    cmpls[i].op_context != &write_ctx[done + i]) {
				fprintf(stderr, "client: write %d: %s\n", done + i,
					ibv_wc_status_str(cmpls[i].op_status));
				goto out_disconnect;
			}
		}
		done += n;
		biggest = n > biggest ? n : biggest;
	}
	printf("client: 2. %d writes completed, taken with %d polls of up to %d "
	       "(the biggest batch: %d)\n",
	       CHUNKS, polls, BATCH, biggest);

	/* 3. a flush, and a busy poll for its completion */
	static int flush_ctx;
	long spins = 0;

	ret = rpma_flush(conn, dst_mr, 0, REGION_SIZE, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, &flush_ctx);
	if (ret) {
		report("client", "rpma_flush", ret);
		goto out_disconnect;
	}
	t0 = now_ms();
	while ((ret = rpma_cq_get_completion(cq, &cmpl)) == RPMA_E_NO_COMPLETION) {
		spins++;
		if (now_ms() - t0 > 10000) {
			fprintf(stderr, "client: no flush completion in 10 s\n");
			goto out_disconnect;
		}
	}
	if (ret || cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_FLUSH ||
	    cmpl.op_context != &flush_ctx) {
		fprintf(stderr, "client: the flush failed\n");
		goto out_disconnect;
	}
	printf("client: 3. the flush completed (op RPMA_OP_FLUSH) after %ld empty polls\n", spins);
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret || (ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete\n");
		status = 1;
	}
out_conn:
	if (dst_mr)
		rpma_mr_remote_delete(&dst_mr);
	rpma_conn_delete(&conn);
out_mr:
	rpma_conn_cfg_delete(&cfg);
	ret = rpma_mr_dereg(&src_mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_free:
	free(src);
out_peer:
	rpma_peer_delete(&peer);
	return status;
}
