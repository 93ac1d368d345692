/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.c -- 02-send-recv: answer one message
 *
 * usage: server <addr> <port>
 *
 * The server posts a receive before it accepts the connection (so the
 * client's send always finds a buffer), waits for the client's message,
 * prints it and sends back a reply with the message reversed. Completions
 * are taken with rpma_cq_wait_completion(), which waits, polls and re-arms
 * the completion queue in one call.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librpma.h>

#define MSG_SIZE 1024
#define WAIT_MS 30000

static int recv_ctx, send_ctx;

static void report(const char *call, int ret)
{
	fprintf(stderr, "server: %s failed: %s\n", call, rpma_err_2str(ret));
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
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_cq *cq = NULL;
	struct rpma_completion cmpl;
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;

	ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
	if (ret) {
		report("rpma_utils_get_ibv_context", ret);
		return 1;
	}
	ret = rpma_peer_new(ibv_ctx, &peer);
	if (ret) {
		report("rpma_peer_new", ret);
		return 1;
	}

	/* one buffer: the message received in the first half, the reply in the second */
	char *buf = aligned_alloc((size_t)sysconf(_SC_PAGESIZE), 2 * MSG_SIZE);

	if (!buf) {
		fprintf(stderr, "server: out of memory\n");
		goto out_peer;
	}
	memset(buf, 0, 2 * MSG_SIZE);
	ret = rpma_mr_reg(peer, buf, 2 * MSG_SIZE, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_SEND, &mr);
	if (ret) {
		report("rpma_mr_reg", ret);
		goto out_free;
	}

	ret = rpma_ep_listen(peer, addr, port, &ep);
	if (ret) {
		report("rpma_ep_listen", ret);
		goto out_mr;
	}
	printf("server: listening on %s:%s\n", addr, port);
	fflush(stdout);

	ret = rpma_ep_next_conn_req(ep, NULL, &req);
	if (ret) {
		report("rpma_ep_next_conn_req", ret);
		goto out_ep;
	}
	/* the receive is posted before the connection exists */
	ret = rpma_conn_req_recv(req, mr, 0, MSG_SIZE, &recv_ctx);
	if (ret) {
		report("rpma_conn_req_recv", ret);
		rpma_conn_req_delete(&req);
		goto out_ep;
	}
	ret = rpma_conn_req_connect(&req, NULL, &conn);
	if (ret) {
		report("rpma_conn_req_connect", ret);
		goto out_ep;
	}
	ret = rpma_conn_next_event(conn, &event);
	if (ret || event != RPMA_CONN_ESTABLISHED) {
		fprintf(stderr, "server: the connection was not established (%s)\n",
			ret ? rpma_err_2str(ret) : rpma_utils_conn_event_2str(event));
		goto out_conn;
	}
	printf("server: client connected\n");

	ret = rpma_conn_get_cq(conn, &cq);
	if (ret) {
		report("rpma_conn_get_cq", ret);
		goto out_disconnect;
	}

	/* the client's message */
	ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
	if (ret) {
		report("rpma_cq_wait_completion", ret);
		goto out_disconnect;
	}
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_RECV ||
	    cmpl.op_context != &recv_ctx) {
		fprintf(stderr, "server: no message received (%s)\n",
			ibv_wc_status_str(cmpl.op_status));
		goto out_disconnect;
	}
	size_t len = cmpl.byte_len < MSG_SIZE ? cmpl.byte_len : MSG_SIZE - 1;

	buf[len] = '\0';
	printf("server: received %u bytes: \"%s\"\n", cmpl.byte_len, buf);

	/* the reply: the message reversed */
	char *reply = buf + MSG_SIZE;
	size_t n = strlen(buf);

	for (size_t i = 0; i < n; i++)
		reply[i] = buf[n - 1 - i];
	reply[n] = '\0';
	ret = rpma_send(conn, mr, MSG_SIZE, n + 1, RPMA_F_COMPLETION_ALWAYS, &send_ctx);
	if (ret) {
		report("rpma_send", ret);
		goto out_disconnect;
	}
	ret = rpma_cq_wait_completion(cq, &cmpl, WAIT_MS);
	if (ret) {
		report("rpma_cq_wait_completion", ret);
		goto out_disconnect;
	}
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_SEND) {
		fprintf(stderr, "server: the reply failed (%s)\n", ibv_wc_status_str(cmpl.op_status));
		goto out_disconnect;
	}
	printf("server: replied: \"%s\"\n", reply);

	/* the client disconnects once it has the reply */
	ret = rpma_conn_next_event(conn, &event);
	if (ret)
		report("rpma_conn_next_event", ret);
	else if (event != RPMA_CONN_CLOSED)
		fprintf(stderr, "server: unexpected event: %s\n", rpma_utils_conn_event_2str(event));
	else
		printf("server: client disconnected\n");
	status = 0;

out_disconnect:
	ret = rpma_conn_disconnect(conn);
	if (ret)
		report("rpma_conn_disconnect", ret);
out_conn:
	ret = rpma_conn_delete(&conn);
	if (ret)
		report("rpma_conn_delete", ret);
out_ep:
	ret = rpma_ep_shutdown(&ep);
	if (ret)
		report("rpma_ep_shutdown", ret);
out_mr:
	ret = rpma_mr_dereg(&mr);
	if (ret)
		report("rpma_mr_dereg", ret);
out_free:
	free(buf);
out_peer:
	ret = rpma_peer_delete(&peer);
	if (ret)
		report("rpma_peer_delete", ret);
	return status;
}
