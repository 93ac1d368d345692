/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_data_path.c -- rpma_read, rpma_write, rpma_write_with_imm,
 * rpma_atomic_write, rpma_flush, rpma_send, rpma_send_with_imm, rpma_recv:
 * the exact work request each one posts, and every way to refuse one
 */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "fixture.h"
#include "versioned.h"

#define RADDR 0x7f0000100000ULL
#define RLEN  4096
#define RKEY  0xabcd1234U
#define RUSAGE_ALL                                                                                 \
	(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |  \
	 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
#define LUSAGE_ALL                                                                                 \
	(RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV)
#define LLEN 1024

static char lbuf[LLEN];
static int ctx = 0; /* its address is the op_context */

static struct rpma_conn *conn;
static struct rdma_cm_id *id;
static struct rpma_mr_local *mr;
static struct rpma_mr_remote *rmr;

static int dp_start(void)
{
	conn = fx_conn_active(NULL, &id);
	mr = fx_mr(lbuf, LLEN, LUSAGE_ALL);
	rmr = fx_mr_remote(RADDR, RLEN, RKEY, RUSAGE_ALL);
	return 0;
}

static int dp_setup(void **state)
{
	fx_setup(state);
	return dp_start();
}

/*
 * Both devices take RDMA ATOMIC WRITE: this one, and the target's, whose
 * versioned region descriptor says so
 */
static int dp_setup_native(void **state)
{
	fx_setup_native_atomic_write(state);
	dp_start();
	fx_mr_remote_delete(&rmr);
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, RUSAGE_ALL, VD_RAW | VD_NATIVE_AW);
	rmr = vd_decode_region(d, sizeof(d));
	return 0;
}

static int dp_teardown(void **state)
{
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

/* the only send work request posted so far */
static const struct fake_send_record *only_send(void)
{
	assert_int_equal(fake_verbs_sends(), 1);
	const struct fake_send_record *r = fake_verbs_send(0);
	assert_non_null(r);
	assert_ptr_equal(r->qp, id->qp);
	assert_null(r->wr.next);
	return r;
}

static const struct fake_recv_record *only_recv(void)
{
	assert_int_equal(fake_verbs_recvs(), 1);
	const struct fake_recv_record *r = fake_verbs_recv(0);
	assert_non_null(r);
	assert_ptr_equal(r->qp, id->qp);
	assert_null(r->srq);
	return r;
}

static bool signaled(const struct fake_send_record *r)
{
	return (r->wr.send_flags & IBV_SEND_SIGNALED) != 0;
}

static bool is_zero_length(unsigned num_sge, const struct ibv_sge *sge)
{
	return num_sge == 0 || (num_sge == 1 && sge[0].length == 0);
}

/* the key the fake handed out for lbuf */
static uint32_t mr_lkey(void)
{
	return fx_lkey_of(lbuf, LLEN);
}

/* rpma_read */

static void read__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_read(NULL, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void read__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_read(conn, mr, 0, rmr, 0, 8, 0, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void read__always(void **state)
{
	(void)state;
	assert_int_equal(rpma_read(conn, mr, 8, rmr, 100, 64, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + 100);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + 8);
	assert_int_equal(r->sge[0].length, 64);
	uint32_t lkey = r->sge[0].lkey;
	assert_int_equal(lkey, mr_lkey());
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 1);
}

static void read__on_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
	assert_false(signaled(r));
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
}

static void read__zero_length(void **state)
{
	(void)state;
	assert_int_equal(rpma_read(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(is_zero_length((unsigned)r->wr.num_sge, r->sge));
}

static void read__null_dst_with_src(void **state)
{
	(void)state;
	FX_INVAL(rpma_read(conn, NULL, 0, rmr, 0, 0, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_read(conn, NULL, 0, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_read(conn, NULL, 8, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void read__null_src_with_dst(void **state)
{
	(void)state;
	FX_INVAL(rpma_read(conn, mr, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_read(conn, mr, 0, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_read(conn, NULL, 0, NULL, 8, 0, RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void read__beyond_regions(void **state)
{
	(void)state;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	FX_INVAL(rpma_read(conn, mr, 0, rmr, RLEN - 7, 8, f, &ctx));
	FX_INVAL(rpma_read(conn, mr, LLEN - 7, rmr, 0, 8, f, &ctx));
	FX_INVAL(rpma_read(conn, mr, 0, rmr, 0, LLEN + 1, f, &ctx));
	FX_INVAL(rpma_read(conn, mr, 0, rmr, SIZE_MAX, 2, f, &ctx));
	FX_INVAL(rpma_read(conn, mr, SIZE_MAX, rmr, 0, 2, f, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
	/* up to the very end is fine */
	assert_int_equal(rpma_read(conn, mr, LLEN - 8, rmr, RLEN - 8, 8, f, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + RLEN - 8);
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + LLEN - 8);
}

static void read__post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) >= 1);
	/* the connection goes on */
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
}

/* rpma_write */

static void write__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_write(NULL, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void write__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_write(conn, rmr, 0, mr, 0, 8, 0, &ctx));
}

static void write__always(void **state)
{
	(void)state;
	assert_int_equal(rpma_write(conn, rmr, 256, mr, 16, 100, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + 256);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + 16);
	assert_int_equal(r->sge[0].length, 100);
	uint32_t lkey = r->sge[0].lkey;
	assert_int_equal(lkey, mr_lkey());
}

static void write__on_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_false(signaled(r));
	assert_int_equal(r->wr.wr_id, 0);
}

static void write__zero_length(void **state)
{
	(void)state;
	assert_int_equal(rpma_write(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_true(is_zero_length((unsigned)r->wr.num_sge, r->sge));
}

static void write__null_mismatch(void **state)
{
	(void)state;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	FX_INVAL(rpma_write(conn, NULL, 0, mr, 0, 0, f, &ctx));
	FX_INVAL(rpma_write(conn, rmr, 0, NULL, 0, 0, f, &ctx));
	FX_INVAL(rpma_write(conn, NULL, 0, NULL, 0, 1, f, &ctx));
	FX_INVAL(rpma_write(conn, NULL, 4, NULL, 0, 0, f, &ctx));
	FX_INVAL(rpma_write(conn, NULL, 0, NULL, 4, 0, f, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void write__beyond_regions(void **state)
{
	(void)state;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	FX_INVAL(rpma_write(conn, rmr, RLEN, mr, 0, 1, f, &ctx));
	FX_INVAL(rpma_write(conn, rmr, 0, mr, LLEN, 1, f, &ctx));
	FX_INVAL(rpma_write(conn, rmr, 0, mr, 0, LLEN + 1, f, &ctx));
	FX_INVAL(rpma_write(conn, rmr, SIZE_MAX - 1, mr, 0, 4, f, &ctx));
	FX_INVAL(rpma_write(conn, rmr, 0, mr, SIZE_MAX - 1, 4, f, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

/*
 * One operation carries at most 2^32 - 1 bytes: a work request's length is
 * 32 bits. A longer one, between regions that hold it, is refused with a
 * message that says so, and nothing is posted: a length cut to 32 bits
 * would move other bytes than asked for.
 */
static void operations__longer_than_32_bits(void **state)
{
	(void)state;
	const size_t huge = (size_t)5 << 30;
	const size_t len = ((size_t)1 << 32) + 16;
	/* never touched: the fake registers any address */
	void *far = (void *)(uintptr_t)0x100000000000ULL;
	struct rpma_mr_local *big = fx_mr(far, huge, LUSAGE_ALL);
	struct rpma_mr_remote *rbig = fx_mr_remote(RADDR, huge, RKEY, RUSAGE_ALL);
	const int f = RPMA_F_COMPLETION_ALWAYS;

	fx_log_reset();
	FX_INVAL(rpma_write(conn, rbig, 0, big, 0, len, f, &ctx));
	assert_non_null(strstr(fx_log_last(), "at most 4294967295 bytes"));
	FX_INVAL(rpma_read(conn, big, 0, rbig, 0, len, f, &ctx));
	FX_INVAL(rpma_write_with_imm(conn, rbig, 0, big, 0, len, f, 1, &ctx));
	FX_INVAL(rpma_send(conn, big, 0, len, f, &ctx));
	FX_INVAL(rpma_recv(conn, big, 0, len, &ctx));
	/* 2^32 - 1 bytes is the most: posted as it is */
	assert_int_equal(rpma_write(conn, rbig, 0, big, 0, UINT32_MAX, f, &ctx), 0);
	assert_int_equal(fake_verbs_sends(), 1);
	assert_int_equal(fake_verbs_send(0)->wr.sg_list[0].length, UINT32_MAX);
	/* a flush reads a few bytes, whatever the length of the range */
	assert_int_equal(rpma_flush(conn, rbig, 0, len, RPMA_FLUSH_TYPE_VISIBILITY, f, &ctx), 0);

	fx_mr_remote_delete(&rbig);
	fx_mr_dereg(&big);
}

static void write__post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOSPC);
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOSPC);
}

/* rpma_write_with_imm */

static void write_with_imm__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_write_with_imm(NULL, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 7, &ctx));
}

static void write_with_imm__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_write_with_imm(conn, rmr, 0, mr, 0, 8, 0, 7, &ctx));
}

static void write_with_imm__always(void **state)
{
	(void)state;
	assert_int_equal(rpma_write_with_imm(conn, rmr, 8, mr, 24, 40, RPMA_F_COMPLETION_ALWAYS,
					     0x12345678, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(r->wr.imm_data, htonl(0x12345678));
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + 8);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + 24);
	assert_int_equal(r->sge[0].length, 40);
}

static void write_with_imm__on_error_zero_length(void **state)
{
	(void)state;
	assert_int_equal(rpma_write_with_imm(conn, NULL, 0, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR,
					     0xa1b2c3d4, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
	assert_int_equal(r->wr.imm_data, htonl(0xa1b2c3d4));
	assert_false(signaled(r));
	assert_true(is_zero_length((unsigned)r->wr.num_sge, r->sge));
}

static void write_with_imm__beyond_regions(void **state)
{
	(void)state;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	FX_INVAL(rpma_write_with_imm(conn, rmr, RLEN - 1, mr, 0, 2, f, 1, &ctx));
	FX_INVAL(rpma_write_with_imm(conn, rmr, 0, mr, LLEN - 1, 2, f, 1, &ctx));
	FX_INVAL(rpma_write_with_imm(conn, NULL, 0, mr, 0, 2, f, 1, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void write_with_imm__post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, EAGAIN);
	assert_int_equal(
	    rpma_write_with_imm(conn, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, &ctx),
	    RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EAGAIN);
}

/* rpma_atomic_write */

static const char src8[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

static void atomic_write__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_atomic_write(NULL, rmr, 0, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void atomic_write__null_dst(void **state)
{
	(void)state;
	FX_INVAL(rpma_atomic_write(conn, NULL, 0, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void atomic_write__null_src(void **state)
{
	(void)state;
	FX_INVAL(rpma_atomic_write(conn, rmr, 0, NULL, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void atomic_write__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_atomic_write(conn, rmr, 0, src8, 0, &ctx));
}

static void atomic_write__unaligned(void **state)
{
	(void)state;
	for (size_t off = 1; off < RPMA_ATOMIC_WRITE_ALIGNMENT; off++)
		FX_INVAL(
		    rpma_atomic_write(conn, rmr, 16 + off, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void atomic_write__beyond_region(void **state)
{
	(void)state;
	FX_INVAL(rpma_atomic_write(conn, rmr, RLEN, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_atomic_write(conn, rmr, SIZE_MAX - 7, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void atomic_write__emulated(void **state)
{
	(void)state;
	char src[8];
	memcpy(src, src8, sizeof(src));
	assert_int_equal(
	    rpma_atomic_write(conn, rmr, RLEN - 8, src, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	/* the source may change as soon as the call returns */
	memset(src, 0xee, sizeof(src));

	const struct fake_send_record *r = only_send();
	assert_false(r->native_atomic_write);
	assert_int_equal(fake_verbs_calls(FAKE_POST_ATOMIC_WRITE), 0);
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_true(r->wr.send_flags & IBV_SEND_FENCE);
	assert_true(r->wr.send_flags & IBV_SEND_INLINE);
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + RLEN - 8);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].length, 8);
	assert_memory_equal(r->inline_data, src8, 8);
}

static void atomic_write__emulated_on_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_atomic_write(conn, rmr, 0, src8, RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_false(signaled(r));
	assert_true(r->wr.send_flags & IBV_SEND_FENCE);
	assert_true(r->wr.send_flags & IBV_SEND_INLINE);
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR);
}

static void atomic_write__emulated_post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	assert_int_equal(rpma_atomic_write(conn, rmr, 0, src8, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
}

static void atomic_write__native(void **state)
{
	(void)state;
	char src[8];
	memcpy(src, src8, sizeof(src));
	assert_int_equal(rpma_atomic_write(conn, rmr, 64, src, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	memset(src, 0xee, sizeof(src));
	assert_int_equal(fake_verbs_calls(FAKE_POST_ATOMIC_WRITE), 1);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 0);
	const struct fake_send_record *r = only_send();
	assert_true(r->native_atomic_write);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	/* ordered behind earlier flushes, as the emulated one */
	assert_true(r->wr.send_flags & IBV_SEND_FENCE);
	assert_int_equal(r->wr.wr.rdma.remote_addr, RADDR + 64);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_memory_equal(r->inline_data, src8, 8);
}

/*
 * This device takes ATOMIC WRITE, the target's may not: a librpma 1.x
 * descriptor, or a versioned one that does not say so, gets the inline
 * write, which every target executes
 */
static void atomic_write__native_needs_the_target(void **state)
{
	(void)state;
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, RUSAGE_ALL, VD_RAW | VD_NATIVE_VIS | VD_NATIVE_PERS);
	struct rpma_mr_remote *targets[2] = { fx_mr_remote(RADDR, RLEN, RKEY, RUSAGE_ALL),
					      vd_decode_region(d, sizeof(d)) };
	for (int i = 0; i < 2; i++) {
		const unsigned sends = fake_verbs_sends();
		assert_int_equal(
		    rpma_atomic_write(conn, targets[i], 64, src8, RPMA_F_COMPLETION_ALWAYS, &ctx),
		    0);
		assert_int_equal(fake_verbs_sends(), sends + 1);
		const struct fake_send_record *r = fake_verbs_send(sends);
		assert_false(r->native_atomic_write);
		assert_int_equal(r->wr.opcode, IBV_WR_RDMA_WRITE);
		assert_true(r->wr.send_flags & IBV_SEND_INLINE);
		assert_true(r->wr.send_flags & IBV_SEND_FENCE);
		assert_memory_equal(r->inline_data, src8, 8);
		fx_mr_remote_delete(&targets[i]);
	}
	assert_int_equal(fake_verbs_calls(FAKE_POST_ATOMIC_WRITE), 0);
}

static void atomic_write__native_on_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_atomic_write(conn, rmr, 0, src8, RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_true(r->native_atomic_write);
	assert_false(signaled(r));
}

static void atomic_write__native_post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_ATOMIC_WRITE, 1, EOPNOTSUPP);
	assert_int_equal(rpma_atomic_write(conn, rmr, 0, src8, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EOPNOTSUPP);
}

static void atomic_write__native_still_checks(void **state)
{
	(void)state;
	FX_INVAL(rpma_atomic_write(conn, rmr, 4, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_atomic_write(conn, rmr, 0, src8, 0, &ctx));
	FX_INVAL(rpma_atomic_write(conn, rmr, RLEN, src8, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

/* rpma_flush */

static void apply_pmem(bool direct_write)
{
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, direct_write), 0);
	assert_int_equal(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	/* the connection keeps what it needs, not the object */
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
}

/*
 * The read that carries a flush: a few bytes of the remote region (any of
 * them: on one QP the read cannot overtake the writes before it).
 */
static void expect_flush_read(bool is_signaled)
{
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.num_sge, 1);
	assert_true(r->sge[0].length >= 1);
	assert_true(r->sge[0].length <= 8);
	/* inside the region, within or right at the flushed range */
	assert_true(r->wr.wr.rdma.remote_addr >= RADDR);
	assert_true(r->wr.wr.rdma.remote_addr + r->sge[0].length <= RADDR + RLEN);
	/* into an internal buffer, not the user's memory, registered under that key */
	assert_true(r->sge[0].addr + r->sge[0].length <= (uintptr_t)lbuf ||
		    r->sge[0].addr >= (uintptr_t)lbuf + LLEN);
	uint32_t lkey = r->sge[0].lkey;
	assert_int_equal(lkey,
			 fx_lkey_of((const void *)(uintptr_t)r->sge[0].addr, r->sge[0].length));
	assert_int_equal(signaled(r), is_signaled);
}

static void flush__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_flush(NULL, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			    &ctx));
}

static void flush__null_dst(void **state)
{
	(void)state;
	FX_INVAL(rpma_flush(conn, NULL, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			    &ctx));
}

static void flush__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 0, &ctx));
}

static void flush__unknown_type(void **state)
{
	(void)state;
	apply_pmem(true);
	FX_INVAL(
	    rpma_flush(conn, rmr, 0, 8, (enum rpma_flush_type)2, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_flush(conn, rmr, 0, 8, (enum rpma_flush_type) - 1, RPMA_F_COMPLETION_ALWAYS,
			    &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void flush__beyond_region(void **state)
{
	(void)state;
	const int f = RPMA_F_COMPLETION_ALWAYS;
	FX_INVAL(rpma_flush(conn, rmr, RLEN - 4, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, &ctx));
	FX_INVAL(rpma_flush(conn, rmr, 0, RLEN + 1, RPMA_FLUSH_TYPE_VISIBILITY, f, &ctx));
	FX_INVAL(rpma_flush(conn, rmr, SIZE_MAX, 2, RPMA_FLUSH_TYPE_VISIBILITY, f, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void flush__persistent_without_peer_cfg(void **state)
{
	(void)state;
	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void flush__persistent_without_direct_write(void **state)
{
	(void)state;
	apply_pmem(false);
	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void flush__persistent_without_usage(void **state)
{
	(void)state;
	apply_pmem(true);
	struct rpma_mr_remote *vis = fx_mr_remote(
	    RADDR, RLEN, RKEY, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(conn, vis, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
	fx_mr_remote_delete(&vis);
}

static void flush__visibility_without_usage(void **state)
{
	(void)state;
	apply_pmem(true);
	struct rpma_mr_remote *plain =
	    fx_mr_remote(RADDR, RLEN, RKEY, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC);
	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(conn, plain, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
	fx_mr_remote_delete(&plain);
}

static void flush__persistent(void **state)
{
	(void)state;
	apply_pmem(true);
	assert_int_equal(rpma_flush(conn, rmr, 512, 256, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	expect_flush_read(true);
}

static void flush__visibility(void **state)
{
	(void)state;
	struct rpma_mr_remote *vis = fx_mr_remote(
	    RADDR, RLEN, RKEY, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	/* no peer configuration needed for visibility */
	assert_int_equal(rpma_flush(conn, vis, 0, 16, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	expect_flush_read(true);
	fx_mr_remote_delete(&vis);
}

static void flush__on_error(void **state)
{
	(void)state;
	apply_pmem(true);
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	expect_flush_read(false);
}

static void flush__last_byte(void **state)
{
	(void)state;
	apply_pmem(true);
	/* the read stays inside the region even at its very end */
	assert_int_equal(rpma_flush(conn, rmr, RLEN - 1, 1, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	expect_flush_read(true);
}

static void flush__small_region(void **state)
{
	(void)state;
	struct rpma_mr_remote *tiny =
	    fx_mr_remote(RADDR, 2, RKEY, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	assert_int_equal(rpma_flush(conn, tiny, 0, 2, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
	assert_true(r->wr.wr.rdma.remote_addr >= RADDR);
	assert_true(r->wr.wr.rdma.remote_addr + r->sge[0].length <= RADDR + 2);
	fx_mr_remote_delete(&tiny);
}

/*
 * A zero-length read need not touch the target's memory, so it would not
 * push the writes before it anywhere: an empty flush still reads a byte.
 */
static void flush__zero_length_reads_a_byte(void **state)
{
	(void)state;
	apply_pmem(true);
	assert_int_equal(rpma_flush(conn, rmr, 100, 0, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	expect_flush_read(true);
	assert_int_equal(only_send()->wr.wr.rdma.remote_addr, RADDR + 100);
}

/* an empty range right at the end of the region: the byte before it */
static void flush__zero_length_at_the_end(void **state)
{
	(void)state;
	apply_pmem(true);
	assert_int_equal(rpma_flush(conn, rmr, RLEN, 0, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	expect_flush_read(true);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.wr.rdma.remote_addr + r->sge[0].length, RADDR + RLEN);
}

/* a region without a byte cannot be flushed at all */
static void flush__empty_region(void **state)
{
	(void)state;
	apply_pmem(true);
	struct rpma_mr_remote *empty = fx_mr_remote(RADDR, 0, RKEY, RUSAGE_ALL);
	FX_INVAL(rpma_flush(conn, empty, 0, 0, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			    &ctx));
	FX_INVAL(rpma_flush(conn, empty, 0, 0, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			    &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
	fx_mr_remote_delete(&empty);
}

static void flush__post_fails(void **state)
{
	(void)state;
	apply_pmem(true);
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
	assert_int_equal(
	    rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, &ctx),
	    RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	/* the connection goes on */
	assert_int_equal(
	    rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, &ctx),
	    0);
}

/*
 * Each failed post gives its slot back: more failures than the connection
 * has slots, on the common path (a range) and on the general one (an empty
 * range, which reads the byte before the end), and a flush still goes.
 */
static void flush__post_fails_gives_slots_back(void **state)
{
	(void)state;
	apply_pmem(true);
	const size_t lens[] = { 8, 0 };
	for (size_t l = 0; l < 2; l++) {
		for (int i = 0; i < 300; i++) {
			fake_verbs_fail(FAKE_POST_SEND, 1, ENOMEM);
			assert_int_equal(rpma_flush(conn, rmr, RLEN - lens[l], lens[l],
						    RPMA_FLUSH_TYPE_PERSISTENT,
						    RPMA_F_COMPLETION_ALWAYS, &ctx),
					 RPMA_E_PROVIDER);
		}
		assert_int_equal(rpma_flush(conn, rmr, RLEN - lens[l], lens[l],
					    RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
					    &ctx),
				 0);
	}
	assert_int_equal(fake_verbs_sends(), 2);
	/* the empty range read one byte, the one before the end */
	assert_int_equal(fake_verbs_send(1)->sge[0].length, 1);
	assert_int_equal(fake_verbs_send(1)->wr.wr.rdma.remote_addr, RADDR + RLEN - 1);
}

static void flush__after_write_one_post_each(void **state)
{
	(void)state;
	apply_pmem(true);
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, NULL), 0);
	assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	assert_int_equal(fake_verbs_sends(), 2);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND), 2);
	assert_int_equal(fake_verbs_send(0)->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(fake_verbs_send(1)->wr.opcode, IBV_WR_RDMA_READ);
}

/* rpma_send */

static void send__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_send(NULL, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void send__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_send(conn, mr, 0, 8, 0, &ctx));
}

static void send__null_src_with_len(void **state)
{
	(void)state;
	FX_INVAL(rpma_send(conn, NULL, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_send(conn, NULL, 8, 0, RPMA_F_COMPLETION_ALWAYS, &ctx));
}

static void send__beyond_region(void **state)
{
	(void)state;
	FX_INVAL(rpma_send(conn, mr, LLEN - 4, 8, RPMA_F_COMPLETION_ALWAYS, &ctx));
	FX_INVAL(rpma_send(conn, mr, SIZE_MAX, 2, RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
}

static void send__always(void **state)
{
	(void)state;
	assert_int_equal(rpma_send(conn, mr, 32, 200, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + 32);
	assert_int_equal(r->sge[0].length, 200);
	uint32_t lkey = r->sge[0].lkey;
	assert_int_equal(lkey, mr_lkey());
}

static void send__on_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_send(conn, mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_false(signaled(r));
}

static void send__zero_length(void **state)
{
	(void)state;
	assert_int_equal(rpma_send(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_SEND);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(is_zero_length((unsigned)r->wr.num_sge, r->sge));
}

static void send__post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, ENOBUFS);
	assert_int_equal(rpma_send(conn, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOBUFS);
}

/* rpma_send_with_imm */

static void send_with_imm__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_send_with_imm(NULL, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 5, &ctx));
}

static void send_with_imm__no_flags(void **state)
{
	(void)state;
	FX_INVAL(rpma_send_with_imm(conn, mr, 0, 8, 0, 5, &ctx));
}

static void send_with_imm__always(void **state)
{
	(void)state;
	assert_int_equal(
	    rpma_send_with_imm(conn, mr, 4, 12, RPMA_F_COMPLETION_ALWAYS, 0xdeadbeef, &ctx), 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(r->wr.imm_data, htonl(0xdeadbeef));
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(signaled(r));
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + 4);
	assert_int_equal(r->sge[0].length, 12);
}

static void send_with_imm__zero_length_on_error(void **state)
{
	(void)state;
	assert_int_equal(rpma_send_with_imm(conn, NULL, 0, 0, RPMA_F_COMPLETION_ON_ERROR, 1, &ctx),
			 0);
	const struct fake_send_record *r = only_send();
	assert_int_equal(r->wr.opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(r->wr.imm_data, htonl(1));
	assert_false(signaled(r));
	assert_true(is_zero_length((unsigned)r->wr.num_sge, r->sge));
}

static void send_with_imm__invalid_src(void **state)
{
	(void)state;
	FX_INVAL(rpma_send_with_imm(conn, NULL, 0, 4, RPMA_F_COMPLETION_ALWAYS, 1, &ctx));
	FX_INVAL(rpma_send_with_imm(conn, mr, LLEN, 1, RPMA_F_COMPLETION_ALWAYS, 1, &ctx));
}

static void send_with_imm__post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_SEND, 1, EIO);
	assert_int_equal(rpma_send_with_imm(conn, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
}

/* rpma_recv */

static void recv__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_recv(NULL, mr, 0, 8, &ctx));
	assert_int_equal(fake_verbs_recvs(), 0);
}

static void recv__null_dst_with_len(void **state)
{
	(void)state;
	FX_INVAL(rpma_recv(conn, NULL, 0, 8, &ctx));
	FX_INVAL(rpma_recv(conn, NULL, 8, 0, &ctx));
	assert_int_equal(fake_verbs_recvs(), 0);
}

static void recv__beyond_region(void **state)
{
	(void)state;
	FX_INVAL(rpma_recv(conn, mr, LLEN - 1, 2, &ctx));
	FX_INVAL(rpma_recv(conn, mr, 0, LLEN + 1, &ctx));
	FX_INVAL(rpma_recv(conn, mr, SIZE_MAX, 2, &ctx));
	assert_int_equal(fake_verbs_recvs(), 0);
}

static void recv__success(void **state)
{
	(void)state;
	assert_int_equal(rpma_recv(conn, mr, 128, 512, &ctx), 0);
	const struct fake_recv_record *r = only_recv();
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)lbuf + 128);
	assert_int_equal(r->sge[0].length, 512);
	assert_int_equal(fake_verbs_sends(), 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_RECV), 1);
	uint32_t lkey = r->sge[0].lkey;
	assert_int_equal(lkey, mr_lkey());
}

static void recv__zero_length(void **state)
{
	(void)state;
	assert_int_equal(rpma_recv(conn, NULL, 0, 0, &ctx), 0);
	const struct fake_recv_record *r = only_recv();
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_true(is_zero_length((unsigned)r->wr.num_sge, r->sge));
}

static void recv__null_context(void **state)
{
	(void)state;
	assert_int_equal(rpma_recv(conn, mr, 0, LLEN, NULL), 0);
	const struct fake_recv_record *r = only_recv();
	assert_int_equal(r->wr.wr_id, 0);
	assert_int_equal(r->sge[0].length, LLEN);
}

static void recv__post_fails(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_POST_RECV, 1, ENOMEM);
	assert_int_equal(rpma_recv(conn, mr, 0, 8, &ctx), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_int_equal(rpma_recv(conn, mr, 0, 8, &ctx), 0);
}

/* siw returns -EINVAL from ibv_post_* and leaves errno alone */
static void post_fails_with_negative_errno(void **state)
{
	(void)state;
	fake_verbs_set_negative_post_errors(true);
	fake_verbs_fail(FAKE_POST_SEND, 1, EINVAL);
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, &ctx),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EINVAL);
	fake_verbs_fail(FAKE_POST_RECV, 1, ENOMEM);
	assert_int_equal(rpma_recv(conn, mr, 0, 8, &ctx), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
}

/* the server's side of a connection posts on the QP of the client's request */
static void passive__posts_on_request_qp(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *pid = NULL;
	struct rpma_conn *pconn = fx_conn_passive(ep, evch, NULL, NULL, 0, &pid);
	assert_int_equal(rpma_send(pconn, mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	assert_int_equal(rpma_recv(pconn, mr, 16, 16, &ctx), 0);
	assert_int_equal(rpma_write(pconn, rmr, 0, mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, &ctx), 0);
	assert_int_equal(fake_verbs_sends(), 2);
	assert_ptr_equal(fake_verbs_send(0)->qp, pid->qp);
	assert_ptr_equal(fake_verbs_send(1)->qp, pid->qp);
	assert_ptr_equal(fake_verbs_recv(0)->qp, pid->qp);
	assert_ptr_not_equal(pid->qp, id->qp);
	fx_conn_delete(&pconn);
	fx_shutdown(&ep);
}

/* all of them: one post, one doorbell, each op_context back in wr_id */
static void all__one_post_each(void **state)
{
	(void)state;
	apply_pmem(true);
	const int f = RPMA_F_COMPLETION_ALWAYS;
	int c[7] = { 0 };
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 8, f, &c[0]), 0);
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 8, f, &c[1]), 0);
	assert_int_equal(rpma_write_with_imm(conn, rmr, 0, mr, 0, 8, f, 3, &c[2]), 0);
	assert_int_equal(rpma_atomic_write(conn, rmr, 8, src8, f, &c[3]), 0);
	assert_int_equal(rpma_send(conn, mr, 0, 8, f, &c[4]), 0);
	assert_int_equal(rpma_send_with_imm(conn, mr, 0, 8, f, 4, &c[5]), 0);
	assert_int_equal(rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, f, &c[6]), 0);
	assert_int_equal(fake_verbs_sends(), 7);
	assert_int_equal(
	    fake_verbs_calls(FAKE_POST_SEND) + fake_verbs_calls(FAKE_POST_ATOMIC_WRITE), 7);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(fake_verbs_send(i)->wr.wr_id, (uintptr_t)&c[i]);
}

/*
 * librpma 1.x refused only flags == 0 and signaled a work request when the
 * (1 << 1) bit of RPMA_F_COMPLETION_ALWAYS was set: programs that pass e.g.
 * (1 << 1) alone, or other bits along, keep working.
 */
static int post_one(int op, int flags)
{
	switch (op) {
	case 0:
		return rpma_read(conn, mr, 0, rmr, 0, 8, flags, &ctx);
	case 1:
		return rpma_write(conn, rmr, 0, mr, 0, 8, flags, &ctx);
	case 2:
		return rpma_write_with_imm(conn, rmr, 0, mr, 0, 8, flags, 7, &ctx);
	case 3:
		return rpma_atomic_write(conn, rmr, 8, src8, flags, &ctx);
	case 4:
		return rpma_flush(conn, rmr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, flags, &ctx);
	case 5:
		return rpma_send(conn, mr, 0, 8, flags, &ctx);
	default:
		return rpma_send_with_imm(conn, mr, 0, 8, flags, 7, &ctx);
	}
}

static void all__flags_as_librpma(void **state)
{
	(void)state;
	const struct {
		int flags;
		bool signaled;
	} cases[] = {
		{ RPMA_F_COMPLETION_ALWAYS, true },
		{ RPMA_F_COMPLETION_ON_ERROR, false },
		{ 1 << 1, true },
		{ 1 << 2, false },
		{ (1 << 1) | (1 << 7), true },
		{ -1, true },
		{ INT_MIN, false },
	};
	unsigned posted = 0;
	for (int op = 0; op < 7; op++) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			print_message("# op %d, flags %#x\n", op, (unsigned)cases[i].flags);
			assert_int_equal(post_one(op, cases[i].flags), 0);
			assert_int_equal(fake_verbs_sends(), ++posted);
			assert_int_equal(signaled(fake_verbs_send(posted - 1)), cases[i].signaled);
		}
		FX_INVAL(post_one(op, 0));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, dp_setup, dp_teardown)
#define N(f) cmocka_unit_test_setup_teardown(f, dp_setup_native, dp_teardown)
		T(read__null_conn),
		T(read__no_flags),
		T(read__always),
		T(read__on_error),
		T(read__zero_length),
		T(read__null_dst_with_src),
		T(read__null_src_with_dst),
		T(read__beyond_regions),
		T(read__post_fails),
		T(write__null_conn),
		T(write__no_flags),
		T(write__always),
		T(write__on_error),
		T(write__zero_length),
		T(write__null_mismatch),
		T(write__beyond_regions),
		T(operations__longer_than_32_bits),
		T(write__post_fails),
		T(write_with_imm__null_conn),
		T(write_with_imm__no_flags),
		T(write_with_imm__always),
		T(write_with_imm__on_error_zero_length),
		T(write_with_imm__beyond_regions),
		T(write_with_imm__post_fails),
		T(atomic_write__null_conn),
		T(atomic_write__null_dst),
		T(atomic_write__null_src),
		T(atomic_write__no_flags),
		T(atomic_write__unaligned),
		T(atomic_write__beyond_region),
		T(atomic_write__emulated),
		T(atomic_write__emulated_on_error),
		T(atomic_write__emulated_post_fails),
		N(atomic_write__native),
		N(atomic_write__native_needs_the_target),
		N(atomic_write__native_on_error),
		N(atomic_write__native_post_fails),
		N(atomic_write__native_still_checks),
		T(flush__null_conn),
		T(flush__null_dst),
		T(flush__no_flags),
		T(flush__unknown_type),
		T(flush__beyond_region),
		T(flush__persistent_without_peer_cfg),
		T(flush__persistent_without_direct_write),
		T(flush__persistent_without_usage),
		T(flush__visibility_without_usage),
		T(flush__persistent),
		T(flush__visibility),
		T(flush__on_error),
		T(flush__last_byte),
		T(flush__small_region),
		T(flush__zero_length_reads_a_byte),
		T(flush__zero_length_at_the_end),
		T(flush__empty_region),
		T(flush__post_fails),
		T(flush__post_fails_gives_slots_back),
		T(flush__after_write_one_post_each),
		T(send__null_conn),
		T(send__no_flags),
		T(send__null_src_with_len),
		T(send__beyond_region),
		T(send__always),
		T(send__on_error),
		T(send__zero_length),
		T(send__post_fails),
		T(send_with_imm__null_conn),
		T(send_with_imm__no_flags),
		T(send_with_imm__always),
		T(send_with_imm__zero_length_on_error),
		T(send_with_imm__invalid_src),
		T(send_with_imm__post_fails),
		T(recv__null_conn),
		T(recv__null_dst_with_len),
		T(recv__beyond_region),
		T(recv__success),
		T(recv__zero_length),
		T(recv__null_context),
		T(recv__post_fails),
		T(post_fails_with_negative_errno),
		T(passive__posts_on_request_qp),
		T(all__flags_as_librpma),
		T(all__one_post_each),
#undef N
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("data_path", tests, NULL, NULL);
}
