/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 15-gpspm: persistent flushes that the target's CPU carries out
 *
 * usage: client <addr> <port> [lines [text]]
 *
 * The client configures its connection for GPSPM
 * (rpma_conn_cfg_set_gpspm(), RPMA_GPSPM_POLLED: the answers are taken
 * when it polls its CQ), connects, and takes the server's versioned
 * descriptors from the private data. Applying the server's peer
 * configuration (rpma_conn_apply_remote_peer_cfg()) settles how a
 * persistent flush reaches persistence there; rpma_conn_get_flush_method()
 * tells which. The server declares no direct write to pmem, so the
 * method is GPSPM, where librpma 1.x had nothing to offer.
 *
 * Then it writes the lines, one slot each, and makes each persistent with
 * rpma_flush(RPMA_FLUSH_TYPE_PERSISTENT), exactly as with any other
 * method: the library sends the request, the server's CPU persists the
 * range, and the flush completes as RPMA_OP_FLUSH when the answer comes,
 * in order with the others. The server takes a limited number of requests
 * at a time; a flush beyond it is refused with RPMA_E_AGAIN, and the
 * client takes a completion before it tries again.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

static const char *method_name(enum rpma_flush_method method)
{
	switch (method) {
	case RPMA_FLUSH_METHOD_NONE:
		return "none";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "read after write (the server declares direct write to pmem)";
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM (the server's CPU persists each flushed range)";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "native RDMA FLUSH";
	}
	return "unknown";
}

/* takes the next flush completion, which must be line `expected`'s */
static int take_flush(struct rpma_cq *cq, int expected)
{
	struct rpma_completion cmpl;
	int ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);

	if (ret) {
		report("client", "rpma_cq_wait_completion", ret);
		return -1;
	}
	if (cmpl.op_status != IBV_WC_SUCCESS) {
		fprintf(stderr, "client: line %d did not reach persistence: %s\n", expected + 1,
			ibv_wc_status_str(cmpl.op_status));
		return -1;
	}
	if (cmpl.op != RPMA_OP_FLUSH || cmpl.op_context != (void *)(uintptr_t)(expected + 1)) {
		fprintf(stderr, "client: the flush of line %d completed out of order\n",
			expected + 1);
		return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s <addr> <port> [lines [text]]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	int lines = argc >= 4 ? atoi(argv[3]) : 20;
	const char *text = argc == 5 ? argv[4] : "made persistent by GPSPM";

	if (lines < 1 || lines > SLOTS) {
		fprintf(stderr, "client: 1 to %d lines\n", SLOTS);
		return 2;
	}

	int status = 1;
	int ret;
	char *src = NULL;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	/* 1. the lines, one slot each, registered as the source of writes */
	src = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);
	if (!src) {
		fprintf(stderr, "client: out of memory\n");
		return 1;
	}
	memset(src, 0, REGION_SIZE);
	for (int i = 0; i < lines; i++)
		snprintf(src + (size_t)i * SLOT_SIZE, SLOT_SIZE, "line %d of %d: %s", i + 1, lines,
			 text);
	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
	if (!ret)
		ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("client", "opening the device", ret);
		goto out_free;
	}
	ret = rpma_mr_reg(peer, src, REGION_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_peer;
	}

	/*
	 * 2. a connection that carries GPSPM: its receive queue takes the
	 * answers (as many as the server can have requests in flight); the
	 * send queue holds a write and a flush per line in flight
	 */
	ret = rpma_conn_cfg_new(&cfg);
	if (!ret)
		ret = rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(cfg, GPSPM_DEPTH);
	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(cfg, 2 * GPSPM_DEPTH + 2);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(cfg, 2 * GPSPM_DEPTH + 2);
	if (!ret)
		ret = rpma_conn_req_new(peer, addr, port, cfg, &req);
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
	printf("client: connected to %s:%s\n", addr, port);

	/* 3. the server's region and peer configuration, and the method they allow */
	struct rpma_conn_private_data pdata;

	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		report("client", "rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	const struct server_pdata *pd = pdata.ptr;

	if (!pd || pdata.len < sizeof(*pd) ||
	    pdata.len < sizeof(*pd) + pd->mr_desc_size + pd->pcfg_desc_size) {
		fprintf(stderr, "client: the server sent no usable descriptors\n");
		goto out_disconnect;
	}
	/* both decoders read the versioned forms as well as librpma's */
	if ((ret = rpma_mr_remote_from_descriptor(pd->descriptors, pd->mr_desc_size, &dst_mr)) ||
	    (ret = rpma_peer_cfg_from_descriptor(pd->descriptors + pd->mr_desc_size,
						 pd->pcfg_desc_size, &pcfg)) ||
	    (ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg))) {
		report("client", "taking the server's descriptors", ret);
		goto out_disconnect;
	}
	size_t remote_size;
	bool direct_write;
	enum rpma_flush_method method;

	if ((ret = rpma_mr_remote_get_size(dst_mr, &remote_size)) ||
	    (ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct_write))) {
		report("client", "inspecting the server's region", ret);
		goto out_disconnect;
	}
	if (remote_size < REGION_SIZE) {
		fprintf(stderr, "client: the server's region has %zu bytes only\n", remote_size);
		goto out_disconnect;
	}
	ret = rpma_conn_get_flush_method(conn, dst_mr, RPMA_FLUSH_TYPE_PERSISTENT, &method);
	if (ret) {
		report("client", "rpma_conn_get_flush_method", ret);
		fprintf(stderr, "client: nothing can make the writes persistent on that server\n");
		goto out_disconnect;
	}
	printf("client: direct write to pmem: %s; persistent flushes go by %s\n",
	       direct_write ? "yes" : "no", method_name(method));

	/* 4. each line written, then flushed to persistence; only the flushes complete */
	struct rpma_cq *cq;
	int flushed = 0, completed = 0, in_flight_max = 0, refusals = 0;

	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("client", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}
	for (int i = 0; i < lines; i++) {
		size_t at = (size_t)i * SLOT_SIZE;

		ret = rpma_write(conn, dst_mr, at, src_mr, at, SLOT_SIZE,
				 RPMA_F_COMPLETION_ON_ERROR, NULL);
		if (ret) {
			report("client", "rpma_write", ret);
			goto out_disconnect;
		}
		/* the server takes so many requests at a time: wait for room */
		while ((ret = rpma_flush(conn, dst_mr, at, SLOT_SIZE, RPMA_FLUSH_TYPE_PERSISTENT,
					 RPMA_F_COMPLETION_ALWAYS, (void *)(uintptr_t)(i + 1))) ==
		       RPMA_E_AGAIN) {
			refusals++;
			if (take_flush(cq, completed))
				goto out_disconnect;
			completed++;
		}
		if (ret) {
			report("client", "rpma_flush", ret);
			goto out_disconnect;
		}
		flushed++;
		if (flushed - completed > in_flight_max)
			in_flight_max = flushed - completed;
	}
	while (completed < flushed) {
		if (take_flush(cq, completed))
			goto out_disconnect;
		completed++;
	}
	printf("client: %d lines written and persisted, in order, up to %d flushes in flight; "
	       "%d times the next flush had to wait for an answer (RPMA_E_AGAIN)\n",
	       completed, in_flight_max, refusals);
	printf("client: the last: \"%s\"\n", src + (size_t)(lines - 1) * SLOT_SIZE);
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret || (ret = rpma_conn_next_event(conn, &event)) || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "client: the disconnection did not complete\n");
		status = 1;
	}
out_conn:
	rpma_conn_delete(&conn);
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	if (dst_mr)
		rpma_mr_remote_delete(&dst_mr);
out_mr:
	rpma_conn_cfg_delete(&cfg);
	rpma_mr_dereg(&src_mr);
out_peer:
	rpma_peer_delete(&peer);
out_free:
	free(src);
	return status;
}
