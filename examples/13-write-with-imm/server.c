/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 13-write-with-imm: learn where the client wrote
 *
 * usage: server <addr> <port>
 *
 * The client writes into the server's region with one-sided writes,
 * which the server's CPU does not see happen. rpma_write_with_imm()
 * changes that: it also consumes a receive posted by the server, whose
 * completion (RPMA_OP_RECV_RDMA_WITH_IMM) comes once the data is in place
 * and carries the writer's 32-bit immediate value -- here, where the
 * write went. The receives take no data, so they need no buffer space
 * (length 0).
 */

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"

static int recv_ctx;

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
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (ret) {
		report("server", "rpma_utils_get_ibv_context", ret);
		return 1;
	}
	if (!has_immediate_data("server", ibv_ctx))
		return 1;
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("server", "rpma_peer_new", ret);
		return 1;
	}
	char *region = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), REGION_SIZE);

	if (!region) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(region, 0, REGION_SIZE);
	/* written to from afar; RECV for the empty receives that go with it */
	ret = rpma_mr_reg(peer, region, REGION_SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV,
			  &mr);
	if (ret) {
		report("server", "rpma_mr_reg", ret);
		goto out_free;
	}
	union {
		struct server_pdata pd;
		uint8_t raw[PDATA_MAX];
	} pd;
	size_t desc_size;

	ret = rpma_mr_get_descriptor_size(mr, &desc_size);
	if (!ret && sizeof(pd.pd) + desc_size > sizeof(pd))
		ret = RPMA_E_NOSUPP;
	if (!ret)
		ret = rpma_mr_get_descriptor(mr, pd.pd.mr_desc);
	if (ret) {
		report("server", "describing the region", ret);
		goto out_mr;
	}
	pd.pd.mr_desc_size = (uint8_t)desc_size;
	struct rpma_conn_private_data pdata = { pd.raw, (uint8_t)(sizeof(pd.pd) + desc_size) };

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("server", "rpma_ep_listen", ret);
		goto out_mr;
	}
	printf("server: listening on %s:%s\n", addr, port);
	fflush(stdout);
	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret) {
		report("server", "rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	/* one empty receive per write, before the client can write */
	for (int i = 0; i < WRITES; i++) {
		ret = rpma_conn_req_recv(req, mr, 0, 0, &recv_ctx);
		if (ret) {
			report("server", "rpma_conn_req_recv", ret);
			rpma_conn_req_delete(&req);
			goto out_ep;
		}
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
	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("server", "rpma_conn_get_cq", ret);
		goto out_disconnect;
	}
	printf("server: client connected\n");
	fflush(stdout);

	for (int i = 0; i < WRITES; i++) {
		struct rpma_completion cmpl;

		ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
		if (ret) {
			report("server", "rpma_cq_wait_completion", ret);
			goto out_disconnect;
		}
		if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_RECV_RDMA_WITH_IMM ||
		    !(cmpl.flags & IBV_WC_WITH_IMM)) {
			fprintf(stderr, "server: not a write with immediate data (%s)\n",
				ibv_wc_status_str(cmpl.op_status));
			goto out_disconnect;
		}
		uint32_t off = IMM_OFFSET(cmpl.imm), len = IMM_LEN(cmpl.imm);

		/* the value came from the network: check it before using it */
		if (off > REGION_SIZE || len > REGION_SIZE - off) {
			fprintf(stderr, "server: a write out of the region (0x%08x)\n", cmpl.imm);
			goto out_disconnect;
		}
		printf("server: the client wrote %u bytes at offset %u: \"%.*s\"\n", len, off,
		       (int)len, region + off);
	}

	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_CLOSED) {
		fprintf(stderr, "server: the connection ended with: %s\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_disconnect;
	}
	printf("server: client disconnected\n");
	status = 0;

out_disconnect:
	rpma_conn_disconnect(conn);
out_conn:
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("server", "rpma_conn_delete", ret);
out_ep:
	ret = rpma_ep_shutdown(&ep);
	if (ret)
		report("server", "rpma_ep_shutdown", ret);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("server", "rpma_mr_dereg", ret);
out_free:
	free(region);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("server", "rpma_peer_delete", ret);
	return status;
}
