/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.c -- 04-write-flush: write a message into remote pmem and flush it
 *
 * usage: client <addr> <port> [message]
 *
 * The client connects to the server, takes the server's memory region and
 * peer configuration from the connection's private data, writes the
 * message into the region and flushes it: to the persistent domain when
 * the server supports direct write to pmem, otherwise only deep enough to
 * be visible to the server's CPU. The flush is the only operation that
 * asks for a completion; it completes after the write before it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define DEFAULT_MESSAGE "Hello, persistent world! (sent by the rpma-ng 04-write-flush client)"

/* op_context of the flush, to recognize its completion */
static int flush_ctx;

static const char *op_name(enum rpma_op op)
{
	switch (op) {
	case RPMA_OP_READ:
		return "read";
	case RPMA_OP_WRITE:
		return "write";
	case RPMA_OP_FLUSH:
		return "flush";
	case RPMA_OP_SEND:
		return "send";
	case RPMA_OP_RECV:
		return "recv";
	case RPMA_OP_RECV_RDMA_WITH_IMM:
		return "recv (write with immediate data)";
	}
	return "unknown";
}

/* wait for the next completion of cq */
static int next_completion(struct rpma_cq *cq, struct rpma_completion *cmpl)
{
	int ret;

	/*
	 * rpma_cq_wait() sleeps until the CQ signals a new completion; polling
	 * first means one that is already there is not waited for.
	 */
	while ((ret = rpma_cq_get_completion(cq, cmpl)) == RPMA_E_NO_COMPLETION) {
		ret = rpma_cq_wait(cq);
		if (ret)
			break;
	}
	return ret;
}

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s <addr> <port> [message]\n", argv[0]);
		return 2;
	}
	const char *addr = argv[1];
	const char *port = argv[2];
	const char *message = argc == 4 ? argv[3] : DEFAULT_MESSAGE;
	size_t len = strlen(message) + 1; /* with the terminating NUL */

	if (len > MSG_AREA_SIZE) {
		fprintf(stderr, "client: the message is longer than %d bytes\n", MSG_AREA_SIZE - 1);
		return 2;
	}

	int status = 1;
	int ret;
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	char *src = NULL;

	/* 1. the RDMA device that reaches addr, and its protection domain */
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

	/* 2. the message, in a region registered as the source of writes */
	src = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), MSG_AREA_SIZE);
	if (!src) {
		fprintf(stderr, "client: out of memory\n");
		goto out_peer;
	}
	memset(src, 0, MSG_AREA_SIZE);
	memcpy(src, message, len);
	ret = rpma_mr_reg(peer, src, MSG_AREA_SIZE, RPMA_MR_USAGE_WRITE_SRC, &src_mr);
	if (ret) {
		report("client", "rpma_mr_reg", ret);
		goto out_free;
	}

	/* 3. connect */
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
	if (ret) {
		report("client", "rpma_conn_next_event", ret);
		goto out_conn;
	}
	if (event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "client: could not connect to %s:%s: %s\n", addr, port,
			rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("client: connected to %s:%s\n", addr, port);

	/* 4. what the server sent along: its region and its peer configuration */
	struct rpma_conn_private_data pdata;

	ret = rpma_conn_get_private_data(conn, &pdata);
	if (ret) {
		report("client", "rpma_conn_get_private_data", ret);
		goto out_disconnect;
	}
	const struct server_pdata *pd = pdata.ptr;

	if (!pd || pdata.len < sizeof(*pd) ||
	    pdata.len < sizeof(*pd) + pd->mr_desc_size + pd->pcfg_desc_size) {
		fprintf(stderr, "client: the server sent no usable descriptors (%u bytes)\n",
			(unsigned)pdata.len);
		goto out_disconnect;
	}
	ret = rpma_mr_remote_from_descriptor(pd->descriptors, pd->mr_desc_size, &dst_mr);
	if (ret) {
		report("client", "rpma_mr_remote_from_descriptor", ret);
		goto out_disconnect;
	}
	ret = rpma_peer_cfg_from_descriptor(pd->descriptors + pd->mr_desc_size, pd->pcfg_desc_size,
					    &pcfg);
	if (ret) {
		report("client", "rpma_peer_cfg_from_descriptor", ret);
		goto out_disconnect;
	}
	/* the connection now knows whether the server can flush to persistence */
	ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg);
	if (ret) {
		report("client", "rpma_conn_apply_remote_peer_cfg", ret);
		goto out_disconnect;
	}

	size_t remote_size;
	int flush_types;
	bool direct_write;

	if ((ret = rpma_mr_remote_get_size(dst_mr, &remote_size)) ||
	    (ret = rpma_mr_remote_get_flush_type(dst_mr, &flush_types)) ||
	    (ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct_write))) {
		report("client", "inspecting the remote region", ret);
		goto out_disconnect;
	}
	if (remote_size < len) {
		fprintf(stderr, "client: the remote region has %zu bytes only\n", remote_size);
		goto out_disconnect;
	}
	enum rpma_flush_type type = RPMA_FLUSH_TYPE_VISIBILITY;

	if (direct_write && (flush_types & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT))
		type = RPMA_FLUSH_TYPE_PERSISTENT;
	printf("client: remote region of %zu bytes, direct write to pmem: %s, flush type: %s\n",
	       remote_size, direct_write ? "yes" : "no",
	       type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visibility");

	/* 5. write the message, then flush it; only the flush is signaled */
	ret = rpma_write(conn, dst_mr, 0, src_mr, 0, len, RPMA_F_COMPLETION_ON_ERROR, NULL);
	if (ret) {
		report("client", "rpma_write", ret);
		goto out_disconnect;
	}
	ret = rpma_flush(conn, dst_mr, 0, len, type, RPMA_F_COMPLETION_ALWAYS, &flush_ctx);
	if (ret) {
		report("client", "rpma_flush", ret);
		goto out_disconnect;
	}

	/* 6. the flush's completion (or the write's, should the write fail) */
	struct rpma_cq *cq = NULL;
	struct rpma_completion cmpl;

	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("client", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}
	ret = next_completion(cq, &cmpl);
	if (ret) {
		report("client", "waiting for the completion", ret);
		goto out_disconnect;
	}
	printf("client: completion: op %s, op_context %s, status %s, byte_len %u, flags 0x%x\n",
	       cmpl.op_status == IBV_WC_SUCCESS ? op_name(cmpl.op) : "-",
	       cmpl.op_context == &flush_ctx ? "the flush's" : "unknown",
	       ibv_wc_status_str(cmpl.op_status), cmpl.byte_len, cmpl.flags);
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_FLUSH ||
	    cmpl.op_context != &flush_ctx) {
		fprintf(stderr, "client: the message was not written\n");
		goto out_disconnect;
	}
	printf("client: wrote %zu bytes and flushed them: \"%s\"\n", len, message);
	status = 0;

out_disconnect:
	/* 7. disconnect and wait until the server has seen it */
	ret = rpma_conn_disconnect(conn);
	if (ret) {
		report("client", "rpma_conn_disconnect", ret);
	} else {
		ret = rpma_conn_next_event(conn, &event);
		if (ret)
			report("client", "rpma_conn_next_event", ret);
		else if (event != RPMA_CONN_CLOSED)
			fprintf(stderr, "client: unexpected event: %s\n",
				rpma_utils_conn_event_2str(event));
	}
out_conn:
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("client", "rpma_conn_delete", ret);
	if (pcfg)
		rpma_peer_cfg_delete(&pcfg);
	if (dst_mr)
		rpma_mr_remote_delete(&dst_mr);
out_mr:
	ret = rpma_mr_dereg(&src_mr);
	if (ret)
		report("client", "rpma_mr_dereg", ret);
out_free:
	free(src);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("client", "rpma_peer_delete", ret);
	return status;
}
