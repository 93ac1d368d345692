/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_native_flush.c -- native RDMA FLUSH on a device that has it: the QP
 * is created for it, the method both peers agree on (this device and the
 * region's descriptor), what rpma_flush posts (placement, range, the whole
 * region for a range a FLUSH cannot name), how its completion reads, and
 * how it is refused; a batch that holds one (posted through the ibv_qp_ex
 * work-request API, all or nothing); and that a device without it, or a
 * librpma 1.x descriptor, never gets one
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fixture.h"
#include "versioned.h"

#define RADDR 0x7f0000400000ULL
#define RLEN  8192
#define RKEY  0x00c0ffeeU
#define USAGE                                                                                      \
	(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |                           \
	 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
#define OFFSET 512
#define LEN    1024
#define NATIVE (VD_NATIVE_VIS | VD_NATIVE_PERS)

static int ctx;
static struct rpma_conn *conn;
static struct rdma_cm_id *id;

static int native_setup(void **state)
{
	fx_setup_native(state);
	conn = fx_conn_active(NULL, &id);
	return 0;
}

static int plain_setup(void **state)
{
	fx_setup(state);
	conn = fx_conn_active(NULL, &id);
	return 0;
}

static int teardown(void **state)
{
	fx_conn_delete(&conn);
	return fx_teardown(state);
}

/* a region as a target's versioned descriptor offers it */
static struct rpma_mr_remote *region_sized(uint8_t usage, uint8_t methods, uint64_t len)
{
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, len, RKEY, usage, methods);
	return vd_decode_region(d, sizeof(d));
}

static struct rpma_mr_remote *region(uint8_t methods)
{
	return region_sized(USAGE, methods, RLEN);
}

static enum rpma_flush_method method_of(struct rpma_mr_remote *rmr, enum rpma_flush_type type)
{
	enum rpma_flush_method m = (enum rpma_flush_method)0x5a;
	int ret = rpma_conn_get_flush_method(conn, rmr, type, &m);
	assert_int_equal(ret, m == RPMA_FLUSH_METHOD_NONE ? RPMA_E_NOSUPP : 0);
	return m;
}

/* the send record of the only work request posted since `before` */
static struct ibv_cq *main_cq(void)
{
	return id->qp->send_cq;
}

static const struct fake_send_record *posted_since(unsigned before)
{
	assert_int_equal(fake_verbs_sends(), before + 1);
	return fake_verbs_send(before);
}

/* the QP */

/* a device with the verbs: the QP is created to post them through ibv_qp_ex */
static void qp__created_for_native_ops(void **state)
{
	(void)state;
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_non_null(attr);
	assert_true(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	assert_true(attr->send_ops_flags & FAKE_QP_EX_WITH_FLUSH);
	assert_true(attr->send_ops_flags & FAKE_QP_EX_WITH_ATOMIC_WRITE);
	/* and still for everything else the library posts */
	const uint64_t ordinary = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				  IBV_QP_EX_WITH_RDMA_READ;
	assert_int_equal(attr->send_ops_flags & ordinary, ordinary);
}

/* a device without them: an ordinary QP, as librpma 1.x made */
static void qp__ordinary_without_native_ops(void **state)
{
	(void)state;
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_non_null(attr);
	assert_false(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
}

/* the method */

/*
 * The rule on a device with native flush: native where the region offers
 * it for the type; then read-after-write, for a persistent flush only
 * where the target declared direct write to PMem; nothing else.
 */
static enum rpma_flush_method rule(bool legacy, uint8_t offered, bool direct_write,
				   enum rpma_flush_type type)
{
	if (legacy)
		offered = VD_RAW; /* librpma 1.x: read-after-write, nothing more */
	if (type == RPMA_FLUSH_TYPE_PERSISTENT) {
		if (offered & VD_NATIVE_PERS)
			return RPMA_FLUSH_METHOD_NATIVE;
		if (direct_write && (offered & VD_RAW))
			return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
		return RPMA_FLUSH_METHOD_NONE;
	}
	if (offered & VD_NATIVE_VIS)
		return RPMA_FLUSH_METHOD_NATIVE;
	if (offered & VD_RAW)
		return RPMA_FLUSH_METHOD_READ_AFTER_WRITE;
	return RPMA_FLUSH_METHOD_NONE;
}

/* what rpma_flush posts must be what the method says */
static void expect_posted(struct rpma_mr_remote *rmr, enum rpma_flush_type type,
			  enum rpma_flush_method method)
{
	const unsigned before = fake_verbs_sends();
	const int ret = rpma_flush(conn, rmr, OFFSET, LEN, type, RPMA_F_COMPLETION_ALWAYS, &ctx);
	if (method == RPMA_FLUSH_METHOD_NONE) {
		assert_int_equal(ret, RPMA_E_NOSUPP);
		assert_int_equal(fake_verbs_sends(), before);
		return;
	}
	assert_int_equal(ret, 0);
	const struct fake_send_record *r = posted_since(before);
	if (method == RPMA_FLUSH_METHOD_READ_AFTER_WRITE) {
		assert_int_equal(r->native_flush, 0);
		assert_int_equal(r->wr.opcode, IBV_WR_RDMA_READ);
		return;
	}
	assert_int_equal(method, RPMA_FLUSH_METHOD_NATIVE);
	assert_int_equal(r->wr.opcode, FAKE_WR_FLUSH);
	assert_int_equal(r->native_flush, type == RPMA_FLUSH_TYPE_PERSISTENT ? FAKE_FLUSH_PERSISTENT
									     : FAKE_FLUSH_GLOBAL);
}

static void method__every_combination(void **state)
{
	(void)state;
	static const uint8_t offers[] = {
		VD_RAW, VD_RAW | VD_NATIVE_VIS, VD_RAW | VD_NATIVE_PERS,   VD_RAW | NATIVE,
		NATIVE, VD_NATIVE_PERS,		VD_RAW | VD_GPSPM | NATIVE
	};
	static const enum rpma_flush_type types[] = { RPMA_FLUSH_TYPE_PERSISTENT,
						      RPMA_FLUSH_TYPE_VISIBILITY };
	unsigned seen[4] = { 0 };
	for (int legacy = 0; legacy <= 1; legacy++)
		for (size_t o = 0; o < sizeof(offers); o++)
			for (int direct = 0; direct <= 1; direct++) {
				fx_conn_delete(&conn);
				conn = fx_conn_active(NULL, &id);
				vd_apply_target(conn, direct, 0);
				uint8_t d[VD_REGION_SIZE];
				vd_region(d, RADDR, RLEN, RKEY, USAGE, offers[o]);
				struct rpma_mr_remote *rmr =
				    vd_decode_region(d, legacy ? 21 : VD_REGION_SIZE);
				for (size_t t = 0; t < 2; t++) {
					const enum rpma_flush_method want =
					    rule(legacy, offers[o], direct, types[t]);
					const enum rpma_flush_method got = method_of(rmr, types[t]);
					if (got != want)
						fail_msg("%s descriptor offering %#x, direct write "
							 "%d, %s: method %d, expected %d",
							 legacy ? "librpma 1.x" : "versioned",
							 offers[o], direct,
							 t ? "visibility" : "persistent", got,
							 want);
					expect_posted(rmr, types[t], want);
					seen[want]++;
				}
				fx_mr_remote_delete(&rmr);
			}
	assert_true(seen[RPMA_FLUSH_METHOD_NATIVE] > 0);
	assert_true(seen[RPMA_FLUSH_METHOD_READ_AFTER_WRITE] > 0);
	assert_true(seen[RPMA_FLUSH_METHOD_NONE] > 0);
	assert_int_equal(seen[RPMA_FLUSH_METHOD_GPSPM], 0);
}

/* a librpma 1.x descriptor never gets native flush, whatever its bytes after the 21st */
static void method__legacy_descriptor_never_native(void **state)
{
	(void)state;
	uint8_t d[VD_REGION_SIZE];
	vd_region(d, RADDR, RLEN, RKEY, USAGE, VD_RAW | NATIVE);
	d[24] ^= 0x01; /* a bad checksum: not a trailer */
	struct rpma_mr_remote *rmr = vd_decode_region(d, sizeof(d));
	assert_int_equal(method_of(rmr, RPMA_FLUSH_TYPE_VISIBILITY),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	assert_int_equal(method_of(rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	vd_apply_target(conn, true, 0);
	assert_int_equal(method_of(rmr, RPMA_FLUSH_TYPE_PERSISTENT),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND_EX), 0);
	fx_mr_remote_delete(&rmr);
}

/* native beats GPSPM too, where both sides carry GPSPM */
static void method__native_beats_gpspm(void **state)
{
	(void)state;
	fx_conn_delete(&conn);
	struct rpma_conn_cfg *cfg = vd_gpspm_cfg(RPMA_GPSPM_POLLED, 4);
	conn = fx_conn_active(cfg, &id);
	fx_cfg_delete(&cfg);
	vd_apply_target(conn, false, 4);
	struct rpma_mr_remote *gpspm = region(VD_RAW | VD_GPSPM);
	struct rpma_mr_remote *both = region(VD_RAW | VD_GPSPM | VD_NATIVE_PERS);
	assert_int_equal(method_of(gpspm, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_GPSPM);
	assert_int_equal(method_of(both, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NATIVE);
	expect_posted(both, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_FLUSH_METHOD_NATIVE);
	fx_mr_remote_delete(&both);
	fx_mr_remote_delete(&gpspm);
}

/* the region's usage still decides which flush types it takes */
static void method__usage_still_decides(void **state)
{
	(void)state;
	struct rpma_mr_remote *vis_only = region_sized(
	    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, VD_RAW | NATIVE, RLEN);
	assert_int_equal(method_of(vis_only, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	const unsigned errors = fx_log_count(RPMA_LOG_LEVEL_ERROR);
	FX_REFUSED(RPMA_E_NOSUPP, rpma_flush(conn, vis_only, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
					     RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), errors + 1);
	assert_non_null(strstr(fx_log_last(), "persistent"));
	assert_int_equal(method_of(vis_only, RPMA_FLUSH_TYPE_VISIBILITY), RPMA_FLUSH_METHOD_NATIVE);
	fx_mr_remote_delete(&vis_only);
}

/* this side's device without native flush: the region's offer is no use */
static void method__device_without_native(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	assert_int_equal(method_of(rmr, RPMA_FLUSH_TYPE_VISIBILITY),
			 RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	assert_int_equal(method_of(rmr, RPMA_FLUSH_TYPE_PERSISTENT), RPMA_FLUSH_METHOD_NONE);
	vd_apply_target(conn, true, 0);
	expect_posted(rmr, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	expect_posted(rmr, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_FLUSH_METHOD_READ_AFTER_WRITE);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND_EX), 0);
	fx_mr_remote_delete(&rmr);
}

/* what rpma_flush posts */

static void expect_native(const struct fake_send_record *r, uint8_t placement, uint64_t raddr,
			  uint32_t len, bool whole_region)
{
	assert_int_equal(r->wr.opcode, FAKE_WR_FLUSH);
	assert_int_equal(r->native_flush, placement);
	assert_int_equal(r->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(r->wr.wr.rdma.remote_addr, raddr);
	assert_int_equal(r->flush_len, len);
	assert_int_equal(r->flush_whole_region, whole_region);
	assert_ptr_equal(r->qp, id->qp);
}

static void flush__persistent(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	struct fx_calls calls;
	fx_calls_snap(&calls);
	const unsigned before = fake_verbs_sends();
	assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	const struct fake_send_record *r = posted_since(before);
	expect_native(r, FAKE_FLUSH_PERSISTENT, RADDR + OFFSET, LEN, false);
	assert_true(r->wr.send_flags & IBV_SEND_SIGNALED);
	/* the work request names the flush by a slot of the library's */
	assert_true(r->wr.wr_id != (uintptr_t)&ctx);
	/* one post, one doorbell, nothing else */
	assert_int_equal(fx_calls_since(&calls, FAKE_POST_SEND_EX), 1);
	assert_int_equal(fx_calls_since(&calls, FAKE_POST_SEND), 0);
	assert_int_equal(fx_calls_since(&calls, FAKE_REG_MR), 0);
	fx_mr_remote_delete(&rmr);
}

static void flush__visibility(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	const unsigned before = fake_verbs_sends();
	assert_int_equal(rpma_flush(conn, rmr, 0, RLEN, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	expect_native(posted_since(before), FAKE_FLUSH_GLOBAL, RADDR, RLEN, false);
	fx_mr_remote_delete(&rmr);
}

/*
 * unsignaled: no slot; only a failure completes, and it still comes back
 * as a flush with its context, once
 */
static void flush__unsignaled(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	const unsigned before = fake_verbs_sends();
	assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	const struct fake_send_record *r = posted_since(before);
	expect_native(r, FAKE_FLUSH_PERSISTENT, RADDR + OFFSET, LEN, false);
	assert_false(r->wr.send_flags & IBV_SEND_SIGNALED);

	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_wc wc = fx_wc(r->wr.wr_id, (enum ibv_wc_opcode)0x5f, IBV_WC_REM_ACCESS_ERR);
	fake_verbs_push_wc(main_cq(), &wc);
	fake_verbs_push_wc(main_cq(), &wc); /* the same work request twice */
	struct rpma_completion c;
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_int_equal(c.op_status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
	fx_mr_remote_delete(&rmr);
}

/* an empty range at the end, the whole region, the longest range a FLUSH names */
static void flush__range_edges(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	unsigned before = fake_verbs_sends();
	assert_int_equal(rpma_flush(conn, rmr, RLEN, 0, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	expect_native(posted_since(before), FAKE_FLUSH_PERSISTENT, RADDR + RLEN, 0, false);
	fx_mr_remote_delete(&rmr);

	const uint64_t huge = 16ULL << 30;
	rmr = region_sized(USAGE, VD_RAW | NATIVE, huge);
	before = fake_verbs_sends();
	assert_int_equal(rpma_flush(conn, rmr, 4096, UINT32_MAX, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ON_ERROR, &ctx),
			 0);
	expect_native(posted_since(before), FAKE_FLUSH_PERSISTENT, RADDR + 4096, UINT32_MAX, false);
	fx_mr_remote_delete(&rmr);
}

/* a range longer than a FLUSH can name (32 bits): the whole region covers it */
static void flush__long_range_whole_region(void **state)
{
	(void)state;
	const uint64_t huge = 16ULL << 30;
	struct rpma_mr_remote *rmr = region_sized(USAGE, VD_RAW | NATIVE, huge);
	for (int t = 0; t < 2; t++) {
		const unsigned before = fake_verbs_sends();
		assert_int_equal(
		    rpma_flush(conn, rmr, 8192, (size_t)UINT32_MAX + 1,
			       t ? RPMA_FLUSH_TYPE_VISIBILITY : RPMA_FLUSH_TYPE_PERSISTENT,
			       RPMA_F_COMPLETION_ON_ERROR, &ctx),
		    0);
		expect_native(posted_since(before), t ? FAKE_FLUSH_GLOBAL : FAKE_FLUSH_PERSISTENT,
			      RADDR, 0, true);
	}
	fx_mr_remote_delete(&rmr);
}

/* a range beyond the region is refused before anything is posted */
static void flush__bad_range(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	for (int t = 0; t < 2; t++) {
		const enum rpma_flush_type type =
		    t ? RPMA_FLUSH_TYPE_VISIBILITY : RPMA_FLUSH_TYPE_PERSISTENT;
		FX_INVAL(rpma_flush(conn, rmr, RLEN + 1, 0, type, RPMA_F_COMPLETION_ALWAYS, &ctx));
		FX_INVAL(rpma_flush(conn, rmr, 0, RLEN + 1, type, RPMA_F_COMPLETION_ALWAYS, &ctx));
		FX_INVAL(rpma_flush(conn, rmr, RLEN - 8, 16, type, RPMA_F_COMPLETION_ALWAYS, &ctx));
		FX_INVAL(
		    rpma_flush(conn, rmr, 8, SIZE_MAX - 4, type, RPMA_F_COMPLETION_ALWAYS, &ctx));
		FX_INVAL(rpma_flush(conn, rmr, OFFSET, LEN, type, 0, &ctx));
	}
	FX_INVAL(rpma_flush(conn, rmr, OFFSET, LEN, (enum rpma_flush_type)7,
			    RPMA_F_COMPLETION_ALWAYS, &ctx));
	assert_int_equal(fake_verbs_sends(), 0);
	fx_mr_remote_delete(&rmr);
}

/* a failed post is the provider's error, and gives its slot back */
static void flush__post_fails(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	/* more failures than the connection has slots */
	for (int i = 0; i < 300; i++) {
		fake_verbs_fail(FAKE_POST_SEND_EX, 1, ENOMEM);
		assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
					    RPMA_F_COMPLETION_ALWAYS, &ctx),
				 RPMA_E_PROVIDER);
		assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	}
	assert_int_equal(fake_verbs_sends(), 0);
	assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	assert_int_equal(fake_verbs_sends(), 1);
	fx_mr_remote_delete(&rmr);
}

/* batches */

static char lbuf[4096];

static struct rpma_batch_op batch_write(struct rpma_mr_local *src, struct rpma_mr_remote *dst,
					size_t offset, size_t len, unsigned flags)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_WRITE;
	op.flags = (int)flags;
	op.local = src;
	op.local_offset = offset;
	op.remote = dst;
	op.remote_offset = offset;
	op.len = len;
	return op;
}

static struct rpma_batch_op batch_flush(struct rpma_mr_remote *dst, size_t offset, size_t len,
					enum rpma_flush_type type, const void *op_context)
{
	struct rpma_batch_op op;
	memset(&op, 0, sizeof(op));
	op.op = RPMA_OP_FLUSH;
	op.flags = RPMA_F_COMPLETION_ALWAYS;
	op.op_context = op_context;
	op.remote = dst;
	op.remote_offset = offset;
	op.len = len;
	op.flush_type = type;
	return op;
}

/*
 * Writes, a native persistent flush, a send, a native visibility flush:
 * one post through ibv_qp_ex (one doorbell), each element as it was asked.
 */
static void batch__native_flush_through_qp_ex(void **state)
{
	(void)state;
	struct rpma_mr_local *src =
	    fx_mr(lbuf, sizeof(lbuf), RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND);
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	int ctx2 = 0;
	struct rpma_batch_op ops[5];
	ops[0] = batch_write(src, rmr, 0, 1024, RPMA_F_COMPLETION_ON_ERROR);
	ops[1] = batch_write(src, rmr, 1024, 8, RPMA_F_COMPLETION_ON_ERROR);
	ops[2] = batch_flush(rmr, 0, 1032, RPMA_FLUSH_TYPE_PERSISTENT, &ctx);
	memset(&ops[3], 0, sizeof(ops[3]));
	ops[3].op = RPMA_OP_SEND;
	ops[3].flags = RPMA_F_COMPLETION_ALWAYS;
	ops[3].local = src;
	ops[3].len = 64;
	ops[3].with_imm = true;
	ops[3].imm = 0xabcd;
	ops[4] = batch_flush(rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_VISIBILITY, &ctx2);

	struct fx_calls calls;
	fx_calls_snap(&calls);
	int failed = 99;
	assert_int_equal(rpma_post_batch(conn, ops, 5, &failed), 0);
	assert_int_equal(failed, -1);
	assert_int_equal(fx_calls_since(&calls, FAKE_POST_SEND_EX), 1);
	assert_int_equal(fx_calls_since(&calls, FAKE_POST_SEND), 0);
	assert_int_equal(fake_verbs_sends(), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_true(fake_verbs_send(i)->posted_ex);

	const struct fake_send_record *w = fake_verbs_send(0);
	assert_int_equal(w->wr.opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(w->native_flush, 0);
	assert_int_equal(w->wr.wr.rdma.remote_addr, RADDR);
	assert_int_equal(w->wr.wr.rdma.rkey, RKEY);
	assert_int_equal(w->wr.num_sge, 1);
	assert_int_equal(w->sge[0].addr, (uintptr_t)lbuf);
	assert_int_equal(w->sge[0].length, 1024);
	assert_false(w->wr.send_flags & IBV_SEND_SIGNALED);
	assert_int_equal(fake_verbs_send(1)->wr.wr.rdma.remote_addr, RADDR + 1024);
	expect_native(fake_verbs_send(2), FAKE_FLUSH_PERSISTENT, RADDR, 1032, false);
	assert_true(fake_verbs_send(2)->wr.send_flags & IBV_SEND_SIGNALED);
	const struct fake_send_record *m = fake_verbs_send(3);
	assert_int_equal(m->wr.opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(m->wr.imm_data, htonl(0xabcd));
	assert_int_equal(m->sge[0].length, 64);
	expect_native(fake_verbs_send(4), FAKE_FLUSH_GLOBAL, RADDR + OFFSET, LEN, false);

	/* each flush completes with its own context, as RPMA_OP_FLUSH */
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	struct ibv_wc wc =
	    fx_wc(fake_verbs_send(4)->wr.wr_id, (enum ibv_wc_opcode)FAKE_WC_FLUSH, IBV_WC_SUCCESS);
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	wc = fx_wc(fake_verbs_send(2)->wr.wr_id, (enum ibv_wc_opcode)FAKE_WC_FLUSH, IBV_WC_SUCCESS);
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	struct rpma_completion c;
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx2);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&src);
}

/* a batch without a native flush is posted as before, by ibv_post_send */
static void batch__without_native_flush_as_before(void **state)
{
	(void)state;
	struct rpma_mr_local *src = fx_mr(lbuf, sizeof(lbuf), RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_mr_remote *native = region(VD_RAW | NATIVE);
	struct rpma_mr_remote *raw = region(VD_RAW);
	struct rpma_batch_op ops[3];
	ops[0] = batch_write(src, native, 0, 64, RPMA_F_COMPLETION_ON_ERROR);
	ops[1] = batch_flush(raw, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY, &ctx);
	ops[2] = batch_write(src, raw, 64, 64, RPMA_F_COMPLETION_ALWAYS);
	struct fx_calls calls;
	fx_calls_snap(&calls);
	assert_int_equal(rpma_post_batch(conn, ops, 3, NULL), 0);
	assert_int_equal(fx_calls_since(&calls, FAKE_POST_SEND), 1);
	assert_int_equal(fx_calls_since(&calls, FAKE_POST_SEND_EX), 0);
	assert_int_equal(fake_verbs_sends(), 3);
	assert_false(fake_verbs_send(0)->posted_ex);
	assert_int_equal(fake_verbs_send(1)->wr.opcode, IBV_WR_RDMA_READ);
	fx_mr_remote_delete(&raw);
	fx_mr_remote_delete(&native);
	fx_mr_dereg(&src);
}

/*
 * ibv_wr_complete fails: nothing of the batch was posted, *failed is 0,
 * and the flushes' slots are given back (more failures than slots)
 */
static void batch__failure_posts_nothing(void **state)
{
	(void)state;
	struct rpma_mr_local *src = fx_mr(lbuf, sizeof(lbuf), RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	struct rpma_batch_op ops[4];
	ops[0] = batch_write(src, rmr, 0, 64, RPMA_F_COMPLETION_ON_ERROR);
	ops[1] = batch_flush(rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT, &ctx);
	ops[2] = batch_write(src, rmr, 64, 64, RPMA_F_COMPLETION_ON_ERROR);
	ops[3] = batch_flush(rmr, 64, 64, RPMA_FLUSH_TYPE_VISIBILITY, &ctx);
	for (int i = 0; i < 200; i++) {
		fake_verbs_fail_send_at(i % 4, ENOSPC);
		int failed = 99;
		assert_int_equal(rpma_post_batch(conn, ops, 4, &failed), RPMA_E_PROVIDER);
		assert_int_equal(rpma_err_get_provider_error(), ENOSPC);
		assert_int_equal(failed, 0);
	}
	assert_int_equal(fake_verbs_sends(), 0);
	int failed = 99;
	assert_int_equal(rpma_post_batch(conn, ops, 4, &failed), 0);
	assert_int_equal(fake_verbs_sends(), 4);
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&src);
}

/* an element refused before posting: nothing posted, its index told, slots back */
static void batch__refused_element(void **state)
{
	(void)state;
	struct rpma_mr_local *src = fx_mr(lbuf, sizeof(lbuf), RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	struct rpma_batch_op ops[3];
	ops[0] = batch_flush(rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT, &ctx);
	ops[1] = batch_write(src, rmr, 0, 64, RPMA_F_COMPLETION_ON_ERROR);
	ops[2] = batch_flush(rmr, RLEN, 1, RPMA_FLUSH_TYPE_VISIBILITY, &ctx);
	for (int i = 0; i < 300; i++) {
		int failed = 99;
		assert_int_equal(rpma_post_batch(conn, ops, 3, &failed), RPMA_E_INVAL);
		assert_int_equal(failed, 2);
	}
	assert_int_equal(fake_verbs_sends(), 0);
	assert_int_equal(fake_verbs_calls(FAKE_POST_SEND_EX), 0);
	ops[2].remote_offset = 0;
	assert_int_equal(rpma_post_batch(conn, ops, 3, NULL), 0);
	assert_int_equal(fake_verbs_sends(), 3);
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&src);
}

/* completions */

/* the flush's completion (IBV_WC_FLUSH) is RPMA_OP_FLUSH with its context */
static void completion__as_flush(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	int ctx2 = 0;
	assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_VISIBILITY,
				    RPMA_F_COMPLETION_ALWAYS, &ctx2),
			 0);
	struct ibv_wc wc =
	    fx_wc(fake_verbs_send(0)->wr.wr_id, (enum ibv_wc_opcode)FAKE_WC_FLUSH, IBV_WC_SUCCESS);
	fake_verbs_push_wc(main_cq(), &wc);
	wc = fx_wc(fake_verbs_send(1)->wr.wr_id, (enum ibv_wc_opcode)FAKE_WC_FLUSH,
		   IBV_WC_REM_ACCESS_ERR);
	fake_verbs_push_wc(main_cq(), &wc);

	struct rpma_completion c;
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx);
	assert_int_equal(c.op, RPMA_OP_FLUSH);
	assert_int_equal(c.op_status, IBV_WC_SUCCESS);
	assert_int_equal(c.byte_len, 0);
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(rpma_cq_get_completion(cq, &c), 0);
	assert_ptr_equal(c.op_context, &ctx2);
	assert_int_equal(c.op_status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(rpma_cq_get_completion(cq, &c), RPMA_E_NO_COMPLETION);
	fx_mr_remote_delete(&rmr);
}

/* through rpma_cq_get_wc: the RDMA read that librpma 1.x carried every flush with */
static void completion__as_read_in_get_wc(void **state)
{
	(void)state;
	struct rpma_mr_remote *rmr = region(VD_RAW | NATIVE);
	struct rpma_cq *cq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_flush(conn, rmr, OFFSET, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
				    RPMA_F_COMPLETION_ALWAYS, &ctx),
			 0);
	struct ibv_wc wc =
	    fx_wc(fake_verbs_send(0)->wr.wr_id, (enum ibv_wc_opcode)FAKE_WC_FLUSH, IBV_WC_SUCCESS);
	fake_verbs_push_wc(main_cq(), &wc);
	struct ibv_wc got[2];
	memset(got, 0x5a, sizeof(got));
	int n = -1;
	assert_int_equal(rpma_cq_get_wc(cq, 2, got, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(got[0].wr_id, (uintptr_t)&ctx);
	assert_int_equal(got[0].opcode, IBV_WC_RDMA_READ);
	assert_int_equal(got[0].status, IBV_WC_SUCCESS);
	fx_mr_remote_delete(&rmr);
}

#define N(f) cmocka_unit_test_setup_teardown(f, native_setup, teardown)
#define P(f) cmocka_unit_test_setup_teardown(f, plain_setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		N(qp__created_for_native_ops),
		P(qp__ordinary_without_native_ops),
		N(method__every_combination),
		N(method__legacy_descriptor_never_native),
		N(method__native_beats_gpspm),
		N(method__usage_still_decides),
		P(method__device_without_native),
		N(flush__persistent),
		N(flush__visibility),
		N(flush__unsignaled),
		N(flush__range_edges),
		N(flush__long_range_whole_region),
		N(flush__bad_range),
		N(flush__post_fails),
		N(batch__native_flush_through_qp_ex),
		N(batch__without_native_flush_as_before),
		N(batch__failure_posts_nothing),
		N(batch__refused_element),
		N(completion__as_flush),
		N(completion__as_read_in_get_wc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
