/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_batch.c -- rpma_post_batch: the chain it posts with one doorbell,
 * every element checked before anything is posted, and what the caller
 * learns when an element is refused or the provider fails mid-chain
 */

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "fixture.h"

#define RADDR 0x7f0000200000ULL
#define RLEN  65536
#define RKEY  0x5eedU
#define LLEN  4096

static char lbuf[LLEN];
static int ctx[RPMA_BATCH_MAX];

static struct rpma_conn *conn;
static struct rdma_cm_id *id;
static struct rpma_mr_local *mr;
static struct rpma_mr_remote *rmr;

static int batch_setup(void **state)
{
	fx_setup(state);
	conn = fx_conn_active(NULL, &id);
	mr = fx_mr(lbuf, LLEN,
		   RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND);
	rmr = fx_mr_remote(RADDR, RLEN, RKEY,
			   RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			       RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			       RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	return 0;
}

static int batch_teardown(void **state)
{
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

static struct rpma_batch_op write_op(size_t remote_offset, size_t len, const void *op_context)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_WRITE;
	op.flags = RPMA_F_COMPLETION_ON_ERROR;
	op.op_context = op_context;
	op.local = mr;
	op.remote = rmr;
	op.remote_offset = remote_offset;
	op.len = len;
	return op;
}

static struct rpma_batch_op flush_op(size_t remote_offset, size_t len, const void *op_context)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_FLUSH;
	op.flags = RPMA_F_COMPLETION_ALWAYS;
	op.op_context = op_context;
	op.remote = rmr;
	op.remote_offset = remote_offset;
	op.len = len;
	op.flush_type = RPMA_FLUSH_TYPE_VISIBILITY;
	return op;
}

/* the flush's completion comes back with its own context, as RPMA_OP_FLUSH */
static void complete_flush(unsigned send_index, const void *expected_ctx)
{
	const struct fake_send_record *r = fake_verbs_send(send_index);
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = r->wr.wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = IBV_WC_RDMA_READ;
	wc.qp_num = id->qp->qp_num;
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), 0);
	assert_int_equal(cmpl.op, RPMA_OP_FLUSH);
	assert_ptr_equal(cmpl.op_context, expected_ctx);
}

static void args__refused(void **state)
{
	(void)state;
	struct rpma_batch_op ops[RPMA_BATCH_MAX + 1];
	for (int i = 0; i <= RPMA_BATCH_MAX; i++)
		ops[i] = write_op(0, 8, NULL);
	int failed = 12345;
	FX_INVAL(rpma_post_batch(NULL, ops, 1, &failed));
	assert_int_equal(failed, -1);
	FX_INVAL(rpma_post_batch(conn, NULL, 1, &failed));
	FX_INVAL(rpma_post_batch(conn, ops, 0, &failed));
	FX_INVAL(rpma_post_batch(conn, ops, RPMA_BATCH_MAX + 1, &failed));
	assert_int_equal(failed, -1);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
}

/* the common pair: a write and its flush, one doorbell */
static void persistent_write__one_doorbell(void **state)
{
	(void)state;
	struct rpma_batch_op ops[2] = { write_op(512, 1024, &ctx[0]),
					flush_op(512, 1024, &ctx[1]) };
	int failed = 12345;
	assert_int_equal(rpma_post_batch(conn, ops, 2, &failed), 0);
	assert_int_equal(failed, -1);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), 2);

	const struct fake_send_record *w = fake_verbs_send(0);
	assert_int_equal(w->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(w->wr.wr.rdma.remote_addr, RADDR + 512);
	assert_int_equal(w->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(w->wr.num_sge, 1);
	assert_int_equal(w->sge[0].addr, (uintptr_t)lbuf);
	assert_int_equal(w->sge[0].length, 1024);
	assert_false(w->wr.send_flags & IBV_SEND_SIGNALED);

	/* the flush reads from inside the range, behind the write */
	const struct fake_send_record *f = fake_verbs_send(1);
	assert_int_equal(f->wr.opcode, IBV_WR_RDMA_READ);
	assert_true(f->wr.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(f->wr.wr.rdma.remote_addr, RADDR + 512);
	assert_true(f->sge[0].length >= 1);
	complete_flush(1, &ctx[1]);
}

static void every_kind(void **state)
{
	(void)state;
	struct rpma_batch_op ops[5];
	ops[0] = write_op(0, 64, &ctx[0]);
	ops[1] = write_op(64, 64, &ctx[1]);
	ops[1].with_imm = true;
	ops[1].imm = 0x01020304;
	memset(&ops[2], 0, sizeof(ops[2]));
	ops[2].op = RPMA_OP_READ;
	ops[2].flags = RPMA_F_COMPLETION_ALWAYS;
	ops[2].op_context = &ctx[2];
	ops[2].local = mr;
	ops[2].local_offset = 128;
	ops[2].remote = rmr;
	ops[2].remote_offset = 4096;
	ops[2].len = 32;
	ops[3] = flush_op(0, 128, &ctx[3]);
	memset(&ops[4], 0, sizeof(ops[4]));
	ops[4].op = RPMA_OP_SEND;
	ops[4].flags = RPMA_F_COMPLETION_ALWAYS;
	ops[4].op_context = &ctx[4];
	ops[4].local = mr;
	ops[4].len = 16;
	ops[4].with_imm = true;
	ops[4].imm = 7;
	assert_int_equal(rpma_post_batch(conn, ops, 5, NULL), 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), 5);
	assert_int_equal(fake_verbs_send(0)->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(fake_verbs_send(1)->wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(fake_verbs_send(1)->wr.imm_data, htonl(0x01020304));
	assert_int_equal(fake_verbs_send(2)->wr.opcode, IBV_WR_RDMA_READ);
	assert_ptr_equal((void *)(uintptr_t)fake_verbs_send(2)->wr.wr_id, &ctx[2]);
	assert_int_equal(fake_verbs_send(2)->sge[0].addr, (uintptr_t)(lbuf + 128));
	assert_int_equal(fake_verbs_send(3)->wr.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(fake_verbs_send(4)->wr.opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(fake_verbs_send(4)->wr.imm_data, htonl(7));
	complete_flush(3, &ctx[3]);
}

static void full_batch(void **state)
{
	(void)state;
	struct rpma_batch_op ops[RPMA_BATCH_MAX];
	for (int i = 0; i < RPMA_BATCH_MAX - 1; i++)
		ops[i] = write_op((size_t)i * 64, 64, &ctx[i]);
	ops[RPMA_BATCH_MAX - 1] = flush_op(0, (RPMA_BATCH_MAX - 1) * 64, &ctx[RPMA_BATCH_MAX - 1]);
	assert_int_equal(rpma_post_batch(conn, ops, RPMA_BATCH_MAX, NULL), 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), RPMA_BATCH_MAX);
	complete_flush(RPMA_BATCH_MAX - 1, &ctx[RPMA_BATCH_MAX - 1]);

	/* as many elements that are not all plain writes (one with immediate data) */
	ops[0].with_imm = true;
	assert_int_equal(rpma_post_batch(conn, ops, RPMA_BATCH_MAX, NULL), 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 2);
	assert_int_equal(fake_verbs_sends(), 2 * RPMA_BATCH_MAX);
	assert_int_equal(fake_verbs_send(RPMA_BATCH_MAX)->wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	complete_flush(2 * RPMA_BATCH_MAX - 1, &ctx[RPMA_BATCH_MAX - 1]);
}

/* a bad element: nothing is posted, the caller learns which, no slot is kept */
static void bad_element__nothing_posted(void **state)
{
	(void)state;
	struct rpma_batch_op ops[4] = { write_op(0, 64, &ctx[0]), flush_op(0, 64, &ctx[1]),
					write_op(RLEN - 8, 64, &ctx[2]), flush_op(0, 64, &ctx[3]) };
	int failed = -1;
	FX_INVAL(rpma_post_batch(conn, ops, 4, &failed));
	assert_int_equal(failed, 2);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);

	/* the refused batch's flush holds nothing: a later one completes alone */
	struct rpma_batch_op again[1] = { flush_op(0, 64, &ctx[5]) };
	assert_int_equal(rpma_post_batch(conn, again, 1, &failed), 0);
	complete_flush(0, &ctx[5]);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NO_COMPLETION);
}

static void bad_element__kinds(void **state)
{
	(void)state;
	int failed = -1;
	struct rpma_batch_op op = write_op(0, 8, NULL);

	op.flags = 0; /* no completion flags */
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));
	assert_int_equal(failed, 0);

	op = write_op(0, 8, NULL);
	op.op = RPMA_OP_RECV; /* receives go to the receive queue */
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));

	op = write_op(0, 8, NULL);
	op.op = RPMA_OP_READ;
	op.with_imm = true; /* a read carries no immediate data */
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));

	op = flush_op(0, 8, NULL);
	op.flush_type = (enum rpma_flush_type)7;
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));

	op = flush_op(RLEN, 8, NULL); /* past the region */
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));

	op = flush_op(0, 8, NULL);
	op.remote = NULL;
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));

	op = write_op(0, LLEN + 1, NULL); /* more than the local region */
	FX_INVAL(rpma_post_batch(conn, &op, 1, &failed));
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
}

/* persistent without a peer that declared direct write: no method, refused at its index */
static void flush_without_method(void **state)
{
	(void)state;
	struct rpma_batch_op ops[2] = { write_op(0, 64, NULL), flush_op(0, 64, NULL) };
	ops[1].flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
	int failed = -1;
	assert_int_equal(rpma_post_batch(conn, ops, 2, &failed), RPMA_E_NOSUPP);
	assert_int_equal(failed, 1);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
}

static void provider_fails_whole_chain(void **state)
{
	(void)state;
	struct rpma_batch_op ops[2] = { write_op(0, 64, NULL), flush_op(0, 64, &ctx[1]) };
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	int failed = -1;
	assert_int_equal(rpma_post_batch(conn, ops, 2, &failed), RPMA_E_PROVIDER);
	assert_int_equal(failed, 0);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
}

/* the provider posts the first two and fails at the third: the caller learns so */
static void provider_fails_mid_chain(void **state)
{
	(void)state;
	struct rpma_batch_op ops[4] = { write_op(0, 64, NULL), flush_op(0, 64, &ctx[1]),
					write_op(64, 64, NULL), flush_op(64, 64, &ctx[3]) };
	fake_verbs_fail_send_at(2, ENOSPC);
	int failed = -1;
	assert_int_equal(rpma_post_batch(conn, ops, 4, &failed), RPMA_E_PROVIDER);
	assert_int_equal(failed, 2);
	assert_int_equal(rpma_err_get_provider_error(), ENOSPC);
	assert_int_equal(fake_verbs_sends(), 2);
	/* the posted flush completes as itself; the unposted one holds nothing */
	complete_flush(1, &ctx[1]);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NO_COMPLETION);
}

static struct rpma_batch_op read_op(size_t local_offset, size_t remote_offset, size_t len,
				    const void *op_context)
{
	struct rpma_batch_op op = write_op(remote_offset, len, op_context);
	op.op = RPMA_OP_READ;
	op.flags = RPMA_F_COMPLETION_ALWAYS;
	op.local_offset = local_offset;
	return op;
}

/* one element as posted: opcode, context, signaled, remote and local ranges */
static void expect_sent(unsigned index, enum ibv_wr_opcode opcode, const void *op_context,
			bool signaled, uint64_t raddr, uintptr_t laddr, uint32_t len)
{
	const struct fake_send_record *r = fake_verbs_send(index);
	assert_int_equal(r->wr.opcode, opcode);
	if (op_context)
		assert_ptr_equal((void *)(uintptr_t)r->wr.wr_id, op_context);
	assert_int_equal(!!(r->wr.send_flags & IBV_SEND_SIGNALED), signaled);
	assert_int_equal(r->wr.wr.rdma.remote_addr, raddr);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, 1);
	if (laddr)
		assert_int_equal(r->sge[0].addr, laddr);
	assert_int_equal(r->sge[0].length, len);
}

/*
 * Reads and writes and a last signaled flush (what rpma_post_batch fills
 * straight into its chain): each element as rpma_read, rpma_write and
 * rpma_flush would post it, in order, one doorbell.
 */
static void reads_writes_flush__as_single_calls(void **state)
{
	(void)state;
	struct rpma_batch_op ops[4] = { write_op(0, 64, &ctx[0]), read_op(128, 4096, 32, &ctx[1]),
					write_op(64, 64, &ctx[2]), flush_op(0, 128, &ctx[3]) };
	ops[2].flags = RPMA_F_COMPLETION_ALWAYS;
	int failed = 12345;
	assert_int_equal(rpma_post_batch(conn, ops, 4, &failed), 0);
	assert_int_equal(failed, -1);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
	assert_int_equal(fake_verbs_sends(), 4);
	expect_sent(0, IBV_WR_RDMA_WRITE, &ctx[0], false, RADDR, (uintptr_t)lbuf, 64);
	expect_sent(1, IBV_WR_RDMA_READ, &ctx[1], true, RADDR + 4096, (uintptr_t)(lbuf + 128), 32);
	expect_sent(2, IBV_WR_RDMA_WRITE, &ctx[2], true, RADDR + 64, (uintptr_t)lbuf, 64);
	/* the flush's read lands in the library's sink, not in lbuf */
	expect_sent(3, IBV_WR_RDMA_READ, NULL, true, RADDR, 0, 8);
	complete_flush(3, &ctx[3]);
}

/*
 * A last flush that completes only on error, or of an empty range: posted
 * as rpma_flush posts them (remembered for its failure; one byte read,
 * the one before the region's end)
 */
static void last_flush__unsignaled_and_empty(void **state)
{
	(void)state;
	struct rpma_batch_op ops[2] = { write_op(0, 64, &ctx[0]), flush_op(0, 64, &ctx[1]) };
	ops[1].flags = RPMA_F_COMPLETION_ON_ERROR;
	assert_int_equal(rpma_post_batch(conn, ops, 2, NULL), 0);
	expect_sent(1, IBV_WR_RDMA_READ, NULL, false, RADDR, 0, 8);

	ops[1] = flush_op(RLEN, 0, &ctx[1]);
	assert_int_equal(rpma_post_batch(conn, ops, 2, NULL), 0);
	expect_sent(3, IBV_WR_RDMA_READ, NULL, true, RADDR + RLEN - 1, 0, 1);
	complete_flush(3, &ctx[1]);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 2);
}

/*
 * A post that fails gives the flush's slot back: more failures than the
 * connection has slots, at the flush and before it, and a batch still
 * goes out and completes alone.
 */
static void post_fails__slot_given_back(void **state)
{
	(void)state;
	struct rpma_batch_op ops[3] = { write_op(0, 64, NULL), write_op(64, 64, NULL),
					flush_op(0, 128, &ctx[2]) };
	for (int i = 0; i < 300; i++) {
		const int at = i % 3;
		fake_verbs_fail_send_at(at, ENOSPC);
		int failed = -1;
		assert_int_equal(rpma_post_batch(conn, ops, 3, &failed), RPMA_E_PROVIDER);
		assert_int_equal(failed, at);
	}
	/* the elements before each failure went out */
	const unsigned sends = fake_verbs_sends();
	assert_int_equal(sends, 300);
	assert_int_equal(rpma_post_batch(conn, ops, 3, NULL), 0);
	assert_int_equal(fake_verbs_sends(), sends + 3);
	complete_flush(sends + 2, &ctx[2]);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct rpma_completion cmpl;
	assert_int_equal(rpma_cq_get_completion(cq, &cmpl), RPMA_E_NO_COMPLETION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, batch_setup, batch_teardown)
		T(args__refused),
		T(persistent_write__one_doorbell),
		T(every_kind),
		T(full_batch),
		T(bad_element__nothing_posted),
		T(bad_element__kinds),
		T(flush_without_method),
		T(provider_fails_whole_chain),
		T(provider_fails_mid_chain),
		T(reads_writes_flush__as_single_calls),
		T(last_flush__unsignaled_and_empty),
		T(post_fails__slot_given_back),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
