// SPDX-License-Identifier: BSD-3-Clause
/*
 * server.c -- the interop server: librpma 1.x calls only
 *
 * usage: interop_server_* --addr A --port P --sync DIR --expect-lib SO
 *                         [--direct-write] [hook options]
 *
 * Offers one region filled with a pattern, hands its descriptor and the
 * peer configuration's (direct write to PMem with --direct-write) to the
 * client in the connection's private data, takes the client's plan from
 * the client's private data, answers the client's request when the plan
 * holds messages, takes its messages with immediate data, and
 * once the client has disconnected checks every byte of the region and of
 * the messages. Exit status 0 when everything arrived as the plan says.
 */

#include "interop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the message buffer: receive slots, then the reply */
#define SLOT_LEN       512
#define REQUEST_SLOT   0
#define IMM_MSG_SLOT   (1 * SLOT_LEN)
#define IMM_WRITE_SLOT (2 * SLOT_LEN)
#define SENTINEL_SLOT  (3 * SLOT_LEN)
#define REPLY_AT       (4 * SLOT_LEN)
#define MSG_BUF_LEN    4096
/* what a receive slot holds until a message lands in it */
#define UNTOUCHED 0xEE

enum ctx { CTX_REQUEST = 1, CTX_IMM_MSG, CTX_IMM_WRITE, CTX_SENTINEL, CTX_REPLY };

/* what byte `off` of the region holds after the session */
static enum io_stream region_stream(size_t off, const struct io_plan *plan)
{
	if (off >= IO_WRITE_OFF && off < IO_WRITE_OFF + IO_WRITE_LEN)
		return IO_W;
	if (off >= IO_ATOMIC_OFF && off < IO_ATOMIC_OFF + 8)
		return IO_ATOMIC;
	if ((plan->flags & IO_PLAN_IMM) && off >= IO_IMM_OFF && off < IO_IMM_OFF + IO_IMM_LEN)
		return IO_IMM_WRITE;
	return IO_P;
}

static void check_region(const unsigned char *region, const struct io_plan *plan)
{
	for (size_t off = 0; off < IO_REGION_SIZE; off++) {
		enum io_stream s = region_stream(off, plan);
		unsigned want = io_byte(off, plan->seed, s);
		if (region[off] != want)
			IO_FAIL("region byte %zu is %#x, expected %#x (stream %d)", off,
				region[off], want, (int)s);
	}
}

static void check_untouched(const unsigned char *buf, size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != UNTOUCHED)
			IO_FAIL("%s: byte %zu was written (%#x)", what, i, buf[i]);
}

int main(int argc, char **argv)
{
	io_init("server");
	struct io_args args;
	io_args_parse(&argc, argv, &args);
	bool direct_write = false;
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *value;
		io_option_split(argv[i], name, sizeof(name), &value);
		if (strcmp(name, "--direct-write") == 0 && value == NULL)
			direct_write = true;
		else if (!io_hook_option(name, value))
			IO_FAIL("unknown option %s; known: --direct-write%s", argv[i],
				io_hook_usage);
	}

	struct rpma_peer *peer = io_peer_new(args.addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	unsigned char *region = aligned_alloc(4096, IO_REGION_SIZE);
	unsigned char *msgs = aligned_alloc(4096, MSG_BUF_LEN);
	IO_ASSERT(region != NULL && msgs != NULL);
	struct rpma_mr_local *region_mr = NULL;
	IO_OK(rpma_mr_reg(peer, region, IO_REGION_SIZE,
			  RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
			      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
			      RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			  &region_mr));
	struct rpma_mr_local *msg_mr = NULL;
	IO_OK(
	    rpma_mr_reg(peer, msgs, MSG_BUF_LEN, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV, &msg_mr));
	struct rpma_peer_cfg *pcfg = NULL;
	IO_OK(rpma_peer_cfg_new(&pcfg));
	IO_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, direct_write));

	struct rpma_ep *ep = NULL;
	IO_OK(rpma_ep_listen(peer, args.addr, args.port, &ep));
	io_sync_mark(&args, "listening");

	struct rpma_conn_req *req = io_next_conn_req(ep, NULL);
	struct rpma_conn_private_data req_pdata = { NULL, 0 };
	IO_OK(rpma_conn_req_get_private_data(req, &req_pdata));
	struct io_plan plan;
	if (io_plan_decode(req_pdata.ptr, req_pdata.len, &plan))
		IO_FAIL("the client's private data (%u bytes) holds no plan", req_pdata.len);
	io_log("plan: seed %#x,%s flush,%s messages%s; direct write to PMem declared: %s",
	       plan.seed, (plan.flags & IO_PLAN_PERSISTENT) ? " persistent" : " visibility",
	       (plan.flags & IO_PLAN_MESSAGES) ? "" : " no",
	       (plan.flags & IO_PLAN_IMM) ? ", immediate data" : "", direct_write ? "yes" : "no");
	if ((plan.flags & IO_PLAN_IMM) && !(plan.flags & IO_PLAN_MESSAGES))
		IO_FAIL("a plan with immediate data holds messages too");

	io_fill(region, IO_REGION_SIZE, 0, plan.seed, IO_P);
	memset(msgs, UNTOUCHED, MSG_BUF_LEN);

	/* the receives the plan needs, before the client can send */
	if (plan.flags & IO_PLAN_MESSAGES) {
		IO_OK(rpma_conn_req_recv(req, msg_mr, REQUEST_SLOT, SLOT_LEN, IO_CTX(CTX_REQUEST)));
	} else {
		/*
		 * A receive nothing should ever complete: a message the client's
		 * library sent by itself (a GPSPM flush request) would land here.
		 */
		IO_OK(
		    rpma_conn_req_recv(req, msg_mr, SENTINEL_SLOT, SLOT_LEN, IO_CTX(CTX_SENTINEL)));
	}
	if (plan.flags & IO_PLAN_IMM) {
		IO_OK(rpma_conn_req_recv(req, msg_mr, IMM_MSG_SLOT, SLOT_LEN, IO_CTX(CTX_IMM_MSG)));
		IO_OK(rpma_conn_req_recv(req, msg_mr, IMM_WRITE_SLOT, SLOT_LEN,
					 IO_CTX(CTX_IMM_WRITE)));
	}

	struct io_pdata pd = { .len = 0 };
	io_hook_server_describe(region_mr, pcfg, &pd);
	struct rpma_conn_private_data accept_pdata = { pd.buf, pd.len };
	struct rpma_conn *conn = NULL;
	IO_OK(rpma_conn_req_connect(&req, &accept_pdata, &conn));
	io_expect_event(conn, RPMA_CONN_ESTABLISHED);
	io_sync_mark(&args, "established");
	struct rpma_cq *cq = NULL;
	IO_OK(rpma_conn_get_cq(conn, &cq));

	if (plan.flags & IO_PLAN_MESSAGES) {
		/* the initiator speaks first (README.md): reply, never open */
		struct io_expected_wc request = { .ctx = IO_CTX(CTX_REQUEST),
						  .opcode = IBV_WC_RECV,
						  .byte_len = IO_REQUEST_LEN };
		io_expect_wcs(cq, &request, 1);
		IO_PATTERN(msgs + REQUEST_SLOT, IO_REQUEST_LEN, 0, plan.seed, IO_REQUEST);
		check_untouched(msgs + REQUEST_SLOT + IO_REQUEST_LEN, SLOT_LEN - IO_REQUEST_LEN,
				"the request's slot past the request");

		io_fill(msgs + REPLY_AT, IO_REPLY_LEN, 0, plan.seed, IO_REPLY);
		if (plan.flags & IO_PLAN_IMM)
			IO_OK(rpma_send_with_imm(conn, msg_mr, REPLY_AT, IO_REPLY_LEN,
						 RPMA_F_COMPLETION_ALWAYS,
						 io_imm(plan.seed, IO_REPLY), IO_CTX(CTX_REPLY)));
		else
			IO_OK(rpma_send(conn, msg_mr, REPLY_AT, IO_REPLY_LEN,
					RPMA_F_COMPLETION_ALWAYS, IO_CTX(CTX_REPLY)));
		struct io_expected_wc exp[3];
		int n = 0;
		exp[n++] =
		    (struct io_expected_wc){ .ctx = IO_CTX(CTX_REPLY), .opcode = IBV_WC_SEND };
		if (plan.flags & IO_PLAN_IMM) {
			exp[n++] = (struct io_expected_wc){ .ctx = IO_CTX(CTX_IMM_MSG),
							    .opcode = IBV_WC_RECV,
							    .byte_len = IO_IMM_MSG_LEN,
							    .with_imm = true,
							    .imm = io_imm(plan.seed, IO_IMM_MSG) };
			exp[n++] =
			    (struct io_expected_wc){ .ctx = IO_CTX(CTX_IMM_WRITE),
						     .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
						     .with_imm = true,
						     .imm = io_imm(plan.seed, IO_IMM_WRITE) };
		}
		io_expect_wcs(cq, exp, n);
		if (plan.flags & IO_PLAN_IMM) {
			IO_PATTERN(msgs + IMM_MSG_SLOT, IO_IMM_MSG_LEN, 0, plan.seed, IO_IMM_MSG);
			check_untouched(msgs + IMM_MSG_SLOT + IO_IMM_MSG_LEN,
					SLOT_LEN - IO_IMM_MSG_LEN,
					"the message slot past the message");
			check_untouched(msgs + IMM_WRITE_SLOT, SLOT_LEN,
					"the receive a write with immediate data consumed");
		}
		io_log("messages: the request%s arrived intact, the reply went",
		       (plan.flags & IO_PLAN_IMM) ? " and both immediates" : "");
	}

	io_expect_event(conn, RPMA_CONN_CLOSED);

	/* whatever is left must be a receive flushed by the disconnection */
	for (;;) {
		struct ibv_wc wc;
		int n = 0;
		int ret = rpma_cq_get_wc(cq, 1, &wc, &n);
		if (ret == RPMA_E_NO_COMPLETION)
			break;
		IO_OK(ret);
		if (wc.status == IBV_WC_SUCCESS)
			IO_FAIL("a completion the plan does not hold: context %p, opcode %d, %u "
				"bytes%s",
				(void *)wc.wr_id, wc.opcode, wc.byte_len,
				wc.wr_id == (uintptr_t)IO_CTX(CTX_SENTINEL)
				    ? ": the client's library sent a message by itself"
				    : "");
	}
	check_untouched(msgs + SENTINEL_SLOT, SLOT_LEN, "the receive no message may reach");
	if (!(plan.flags & IO_PLAN_MESSAGES))
		io_log("messages: none arrived, as the plan says");

	IO_OK(rpma_conn_disconnect(conn));
	IO_OK(rpma_conn_delete(&conn));

	check_region(region, &plan);
	io_log("region: all %d bytes as the plan says (write, atomic write%s, the rest "
	       "untouched)",
	       IO_REGION_SIZE, (plan.flags & IO_PLAN_IMM) ? ", write with immediate data" : "");

	IO_OK(rpma_ep_shutdown(&ep));
	IO_OK(rpma_peer_cfg_delete(&pcfg));
	IO_OK(rpma_mr_dereg(&msg_mr));
	IO_OK(rpma_mr_dereg(&region_mr));
	IO_OK(rpma_peer_delete(&peer));
	free(msgs);
	free(region);
	io_log("ok");
	return 0;
}
