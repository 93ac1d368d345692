// SPDX-License-Identifier: BSD-3-Clause
/*
 * client.c -- the interop client: librpma 1.x calls only
 *
 * usage: interop_client_* --addr A --port P --sync DIR --expect-lib SO
 *        [--flush=persistent|visibility] [--no-messages] [--imm]
 *        [--expect-desc-sizes=MR,PCFG] [hook options]
 *
 * Connects with its plan in the private data, decodes the server's region
 * and peer-configuration descriptors from the server's (of the sizes
 * expected: 21 and 1 bytes, the librpma 1.x forms, unless told), sends its
 * request and takes the reply when the plan holds messages, then writes
 * and flushes, reads back, reads the server's bytes, writes 8 bytes
 * atomically, and sends and writes with immediate data when the plan says,
 * checking every byte that comes back. Exit status 0 when everything did.
 */

#include "interop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the local buffer */
#define L_WRITE	       0
#define L_BACK	       4096
#define L_READ	       8192
#define L_ATOMIC_BACK  10240
#define L_IMM_WRITE    11264
#define L_REPLY	       12288
#define L_REQUEST      12800
#define L_IMM_MSG      13312
#define L_SIZE	       16384
#define REPLY_SLOT_LEN 512

enum ctx {
	CTX_REPLY = 1,
	CTX_WRITE,
	CTX_FLUSH,
	CTX_READ_BACK,
	CTX_READ,
	CTX_ATOMIC,
	CTX_ATOMIC_FLUSH,
	CTX_ATOMIC_BACK,
	CTX_REQUEST,
	CTX_IMM_MSG,
	CTX_IMM_WRITE,
};

int main(int argc, char **argv)
{
	io_init("client");
	struct io_args args;
	io_args_parse(&argc, argv, &args);
	struct io_plan plan = { .flags = IO_PLAN_PERSISTENT | IO_PLAN_MESSAGES };
	unsigned long want_mr_desc = 21, want_pcfg_desc = 1;
	for (int i = 1; i < argc; i++) {
		char name[64];
		const char *value;
		io_option_split(argv[i], name, sizeof(name), &value);
		if (strcmp(name, "--flush") == 0 && value && strcmp(value, "persistent") == 0) {
			plan.flags |= IO_PLAN_PERSISTENT;
		} else if (strcmp(name, "--flush") == 0 && value &&
			   strcmp(value, "visibility") == 0) {
			plan.flags &= (uint8_t)~IO_PLAN_PERSISTENT;
		} else if (strcmp(name, "--no-messages") == 0 && value == NULL) {
			plan.flags &= (uint8_t)~IO_PLAN_MESSAGES;
		} else if (strcmp(name, "--imm") == 0 && value == NULL) {
			plan.flags |= IO_PLAN_IMM;
		} else if (strcmp(name, "--expect-desc-sizes") == 0 && value &&
			   sscanf(value, "%lu,%lu", &want_mr_desc, &want_pcfg_desc) == 2) {
			continue;
		} else if (!io_hook_option(name, value)) {
			IO_FAIL("unknown option %s; known: --flush=persistent|visibility, "
				"--no-messages, --imm, --expect-desc-sizes=MR,PCFG%s",
				argv[i], io_hook_usage);
		}
	}
	if ((plan.flags & IO_PLAN_IMM) && !(plan.flags & IO_PLAN_MESSAGES))
		IO_FAIL("--imm needs the messages (no --no-messages)");
	const bool persistent = (plan.flags & IO_PLAN_PERSISTENT) != 0;
	const enum rpma_flush_type flush_type =
	    persistent ? RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	plan.seed = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() << 16;
	io_log("plan: seed %#x", plan.seed);

	struct rpma_peer *peer = io_peer_new(args.addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	unsigned char *buf = aligned_alloc(4096, L_SIZE);
	IO_ASSERT(buf != NULL);
	memset(buf, 0, L_SIZE);
	struct rpma_mr_local *mr = NULL;
	IO_OK(rpma_mr_reg(peer, buf, L_SIZE,
			  RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND |
			      RPMA_MR_USAGE_RECV,
			  &mr));
	struct rpma_conn_cfg *cfg = NULL;
	IO_OK(rpma_conn_cfg_new(&cfg));
	io_hook_client_cfg(cfg);

	io_sync_await(&args, "listening");
	struct rpma_conn_req *req = NULL;
	IO_OK(rpma_conn_req_new(peer, args.addr, args.port, cfg, &req));
	if (plan.flags & IO_PLAN_MESSAGES)
		IO_OK(rpma_conn_req_recv(req, mr, L_REPLY, REPLY_SLOT_LEN, IO_CTX(CTX_REPLY)));
	uint8_t plan_buf[IO_PLAN_LEN];
	io_plan_encode(&plan, plan_buf);
	struct rpma_conn_private_data connect_pdata = { plan_buf, IO_PLAN_LEN };
	struct rpma_conn *conn = NULL;
	IO_OK(rpma_conn_req_connect(&req, &connect_pdata, &conn));
	io_expect_event(conn, RPMA_CONN_ESTABLISHED);

	/* the server's descriptors */
	struct rpma_conn_private_data pdata = { NULL, 0 };
	IO_OK(rpma_conn_get_private_data(conn, &pdata));
	size_t mr_desc_len = 0, pcfg_desc_len = 0;
	const void *mr_desc = io_pdata_item(pdata.ptr, pdata.len, 0, &mr_desc_len);
	const void *pcfg_desc = io_pdata_item(pdata.ptr, pdata.len, 1, &pcfg_desc_len);
	IO_EQ(mr_desc_len, want_mr_desc);
	IO_EQ(pcfg_desc_len, want_pcfg_desc);
	struct rpma_mr_remote *dst = NULL;
	IO_OK(rpma_mr_remote_from_descriptor(mr_desc, mr_desc_len, &dst));
	size_t remote_size = 0;
	IO_OK(rpma_mr_remote_get_size(dst, &remote_size));
	IO_EQ(remote_size, IO_REGION_SIZE);
	int remote_flush = 0;
	IO_OK(rpma_mr_remote_get_flush_type(dst, &remote_flush));
	IO_EQ(remote_flush,
	      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_peer_cfg *remote_pcfg = NULL;
	IO_OK(rpma_peer_cfg_from_descriptor(pcfg_desc, pcfg_desc_len, &remote_pcfg));
	bool direct_write = !persistent;
	IO_OK(rpma_peer_cfg_get_direct_write_to_pmem(remote_pcfg, &direct_write));
	/* the cases pair a persistent flush with a server that declares direct write */
	IO_EQ(direct_write, persistent);
	IO_OK(rpma_conn_apply_remote_peer_cfg(conn, remote_pcfg));
	io_log("descriptors: region %zu and peer configuration %zu bytes decoded; %zu-byte "
	       "region, direct write to PMem %s",
	       mr_desc_len, pcfg_desc_len, remote_size, direct_write ? "declared" : "not declared");

	io_hook_client_connected(conn, dst, &plan);

	/* nothing before the server's end is established (see README.md) */
	io_sync_await(&args, "established");
	struct rpma_cq *cq = NULL;
	IO_OK(rpma_conn_get_cq(conn, &cq));
	if (plan.flags & IO_PLAN_MESSAGES) {
		/* the initiator speaks first: iWARP wants it so (README.md) */
		io_fill(buf + L_REQUEST, IO_REQUEST_LEN, 0, plan.seed, IO_REQUEST);
		IO_OK(rpma_send(conn, mr, L_REQUEST, IO_REQUEST_LEN, RPMA_F_COMPLETION_ALWAYS,
				IO_CTX(CTX_REQUEST)));
		const bool imm = (plan.flags & IO_PLAN_IMM) != 0;
		struct io_expected_wc exp[2] = {
			{ .ctx = IO_CTX(CTX_REQUEST), .opcode = IBV_WC_SEND },
			{ .ctx = IO_CTX(CTX_REPLY),
			  .opcode = IBV_WC_RECV,
			  .byte_len = IO_REPLY_LEN,
			  .with_imm = imm,
			  .imm = io_imm(plan.seed, IO_REPLY) },
		};
		io_expect_wcs(cq, exp, 2);
		IO_PATTERN(buf + L_REPLY, IO_REPLY_LEN, 0, plan.seed, IO_REPLY);
		for (size_t i = IO_REPLY_LEN; i < REPLY_SLOT_LEN; i++)
			IO_EQ(buf[L_REPLY + i], 0);
		io_log("request sent, reply of %d bytes%s intact", IO_REPLY_LEN,
		       imm ? " and its immediate data" : "");
	}

	/* write, flush, read back */
	io_fill(buf + L_WRITE, IO_WRITE_LEN, IO_WRITE_OFF, plan.seed, IO_W);
	IO_OK(rpma_write(conn, dst, IO_WRITE_OFF, mr, L_WRITE, IO_WRITE_LEN,
			 RPMA_F_COMPLETION_ALWAYS, IO_CTX(CTX_WRITE)));
	IO_WC(cq, IBV_WC_RDMA_WRITE, IO_CTX(CTX_WRITE), NULL);
	IO_OK(rpma_flush(conn, dst, IO_WRITE_OFF, IO_WRITE_LEN, flush_type,
			 RPMA_F_COMPLETION_ALWAYS, IO_CTX(CTX_FLUSH)));
	/* both libraries flush by reading after the write */
	IO_WC(cq, IBV_WC_RDMA_READ, IO_CTX(CTX_FLUSH), NULL);
	IO_OK(rpma_read(conn, mr, L_BACK, dst, IO_WRITE_OFF, IO_WRITE_LEN, RPMA_F_COMPLETION_ALWAYS,
			IO_CTX(CTX_READ_BACK)));
	IO_WC(cq, IBV_WC_RDMA_READ, IO_CTX(CTX_READ_BACK), NULL);
	IO_PATTERN(buf + L_BACK, IO_WRITE_LEN, IO_WRITE_OFF, plan.seed, IO_W);
	io_log("write of %d bytes, %s flush, read back: intact", IO_WRITE_LEN,
	       persistent ? "persistent" : "visibility");

	/* the server's own bytes */
	IO_OK(rpma_read(conn, mr, L_READ, dst, IO_READ_OFF, IO_READ_LEN, RPMA_F_COMPLETION_ALWAYS,
			IO_CTX(CTX_READ)));
	IO_WC(cq, IBV_WC_RDMA_READ, IO_CTX(CTX_READ), NULL);
	IO_PATTERN(buf + L_READ, IO_READ_LEN, IO_READ_OFF, plan.seed, IO_P);

	/* 8 bytes at once */
	char atomic[8];
	io_fill(atomic, sizeof(atomic), IO_ATOMIC_OFF, plan.seed, IO_ATOMIC);
	IO_OK(rpma_atomic_write(conn, dst, IO_ATOMIC_OFF, atomic, RPMA_F_COMPLETION_ALWAYS,
				IO_CTX(CTX_ATOMIC)));
	IO_WC(cq, IBV_WC_RDMA_WRITE, IO_CTX(CTX_ATOMIC), NULL);
	IO_OK(rpma_flush(conn, dst, IO_ATOMIC_OFF, sizeof(atomic), flush_type,
			 RPMA_F_COMPLETION_ALWAYS, IO_CTX(CTX_ATOMIC_FLUSH)));
	IO_WC(cq, IBV_WC_RDMA_READ, IO_CTX(CTX_ATOMIC_FLUSH), NULL);
	IO_OK(rpma_read(conn, mr, L_ATOMIC_BACK, dst, IO_ATOMIC_OFF, sizeof(atomic),
			RPMA_F_COMPLETION_ALWAYS, IO_CTX(CTX_ATOMIC_BACK)));
	IO_WC(cq, IBV_WC_RDMA_READ, IO_CTX(CTX_ATOMIC_BACK), NULL);
	IO_PATTERN(buf + L_ATOMIC_BACK, sizeof(atomic), IO_ATOMIC_OFF, plan.seed, IO_ATOMIC);
	io_log("read of the server's %d bytes and atomic write of 8: intact", IO_READ_LEN);

	if (plan.flags & IO_PLAN_IMM) {
		io_fill(buf + L_IMM_MSG, IO_IMM_MSG_LEN, 0, plan.seed, IO_IMM_MSG);
		IO_OK(rpma_send_with_imm(conn, mr, L_IMM_MSG, IO_IMM_MSG_LEN,
					 RPMA_F_COMPLETION_ALWAYS, io_imm(plan.seed, IO_IMM_MSG),
					 IO_CTX(CTX_IMM_MSG)));
		IO_WC(cq, IBV_WC_SEND, IO_CTX(CTX_IMM_MSG), NULL);
		io_fill(buf + L_IMM_WRITE, IO_IMM_LEN, IO_IMM_OFF, plan.seed, IO_IMM_WRITE);
		IO_OK(rpma_write_with_imm(conn, dst, IO_IMM_OFF, mr, L_IMM_WRITE, IO_IMM_LEN,
					  RPMA_F_COMPLETION_ALWAYS, io_imm(plan.seed, IO_IMM_WRITE),
					  IO_CTX(CTX_IMM_WRITE)));
		IO_WC(cq, IBV_WC_RDMA_WRITE, IO_CTX(CTX_IMM_WRITE), NULL);
		io_log("message and write with immediate data sent");
	}

	/* every operation completed, so the server has it all: leave */
	IO_OK(rpma_conn_disconnect(conn));
	io_expect_event(conn, RPMA_CONN_CLOSED);
	IO_OK(rpma_conn_delete(&conn));

	IO_OK(rpma_peer_cfg_delete(&remote_pcfg));
	IO_OK(rpma_mr_remote_delete(&dst));
	IO_OK(rpma_conn_cfg_delete(&cfg));
	IO_OK(rpma_mr_dereg(&mr));
	IO_OK(rpma_peer_delete(&peer));
	free(buf);
	io_log("ok");
	return 0;
}
