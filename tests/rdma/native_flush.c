// SPDX-License-Identifier: BSD-3-Clause
/*
 * native_flush.c -- rpma_flush by the RDMA FLUSH verb where both sides
 * have it, read-after-write where either does not; skipped on a device
 * without it (Linux 6.1's rxe, siw), where there is nothing native to test.
 *
 * The target registers a region of persistent memory (the VM's device DAX)
 * and one of DRAM, both for both flush types, declares direct write to
 * PMem (read-after-write persists where native flush cannot), and sends
 * their versioned descriptors. Where this device flushes natively (Linux
 * 6.2 and later with rdma-core 45 and later: rxe in the Debian 13 flavor),
 * the PMem region offers native persistent and visibility flushes, the
 * DRAM one native visibility only (the device refuses persistent flush
 * access to DRAM); elsewhere (Debian 12, siw) neither offers any native
 * method. The client checks that rpma_conn_get_flush_method names the
 * method both sides support, flushes, and the target checks the data:
 * - the PMem region: persistent and visibility flushes of ranges, an
 *   unsignaled one, an empty range at the end, one read through
 *   rpma_cq_get_wc (as the read librpma 1.x carried flushes with), and a
 *   batch of writes with both flushes (rpma_post_batch: one doorbell);
 * - the same region as a librpma 1.x descriptor, and as a versioned one
 *   without the native methods (a target whose device has none):
 *   read-after-write;
 * - the DRAM region: persistent by read-after-write, visibility natively;
 * - ranges beyond the region: RPMA_E_INVAL, nothing posted.
 * Last, the proof that the verb is really used: a second connection gets
 * the DRAM region's descriptor claiming native persistent flush, which its
 * registration does not allow; the native flush then fails at the target's
 * device (IBV_WC_REM_ACCESS_ERR), where read-after-write would succeed.
 */

#include <string.h>

#include "common.h"

#define PMEM_SIZE (64 * 1024)
#define DRAM_SIZE 8192
#define USAGE                                                                                      \
	(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |                           \
	 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)
/* where the client writes in the PMem region, and with which seed */
#define OFF_A	 4096
#define LEN_A	 4096
#define OFF_B	 (3 * 4096 + 100)
#define LEN_B	 1000
#define OFF_C	 (8 * 4096)
#define LEN_C	 512
#define OFF_D	 (10 * 4096)
#define LEN_D	 256
#define OFF_E	 (12 * 4096)
#define LEN_E	 2048
#define OFF_F	 (13 * 4096)
#define LEN_F	 4096
#define WRITES_F 8
#define OFF_DR	 1024
#define LEN_DR	 2048

#define RAW    RPMA_FLUSH_METHOD_READ_AFTER_WRITE
#define NATIVE RPMA_FLUSH_METHOD_NATIVE

/* skips, in the server and the client alike, where the device has no RDMA FLUSH */
static void skip_without_native_flush(void)
{
	if (!t_native_flush())
		t_skip("%s does not offer RDMA FLUSH (IB_UVERBS_DEVICE_FLUSH_GLOBAL and "
		       "_PERSISTENT: rxe on Linux 6.2 and later)",
		       t_env.provider);
}

static void server(void)
{
	skip_without_native_flush();
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist;
	unsigned char *pmem = t_pmem_map(PMEM_SIZE, &persist);
	unsigned char *dram = t_alloc(DRAM_SIZE);
	struct rpma_mr_local *mr_p = t_mr_reg(peer, pmem, PMEM_SIZE, USAGE);
	struct rpma_mr_local *mr_d = t_mr_reg(peer, dram, DRAM_SIZE, USAGE);

	/* what the regions offer: native where the device and the memory allow */
	const bool native = t_native_flush();
	const uint8_t native_p =
	    native
		? (uint8_t)(T_METHOD_NATIVE_VIS | (t_pmem_is_device() ? T_METHOD_NATIVE_PERS : 0))
		: 0;
	const uint8_t native_d = native ? T_METHOD_NATIVE_VIS : 0;
	t_log("this device flushes natively: %s; persistent memory: %s", native ? "yes" : "no",
	      t_pmem_is_device() ? "yes" : "no");
	/* persistence is offered once the application says how the region persists */
	T_EQ(t_mr_methods(mr_p) & ~T_METHOD_NATIVE_AW,
	     T_METHOD_RAW | (native_p & T_METHOD_NATIVE_VIS));
	T_OK(rpma_mr_set_persist_fn(mr_p, persist));
	T_EQ(t_mr_methods(mr_p) & ~T_METHOD_NATIVE_AW, T_METHOD_RAW | T_METHOD_GPSPM | native_p);
	T_EQ(t_mr_methods(mr_d) & ~T_METHOD_NATIVE_AW, T_METHOD_RAW | native_d);

	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr_versioned(&pd, mr_p);
	t_pdata_add_mr_versioned(&pd, mr_d);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, NULL);
	/* the PMem region as a target whose device has no native flush offers it */
	t_pdata_add_mr_versioned_methods(&pd, mr_p, T_METHOD_RAW);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	t_await('P');
	T_BYTES(pmem, OFF_A, 0);
	T_PATTERN(pmem + OFF_A, LEN_A, 0, 1);
	T_BYTES(pmem + OFF_A + LEN_A, OFF_B - OFF_A - LEN_A, 0);
	T_PATTERN(pmem + OFF_B, LEN_B, 0, 2);
	T_PATTERN(pmem + OFF_C, LEN_C, 0, 3);
	T_PATTERN(pmem + OFF_D, LEN_D, 0, 4);
	T_PATTERN(pmem + OFF_E, LEN_E, 0, 5);
	T_BYTES(pmem + OFF_E + LEN_E, OFF_F - OFF_E - LEN_E, 0);
	T_PATTERN(pmem + OFF_F, LEN_F, 0, 9);
	T_BYTES(pmem + OFF_F + LEN_F, PMEM_SIZE - OFF_F - LEN_F, 0);
	t_signal('p');

	t_await('D');
	T_BYTES(dram, OFF_DR, 0);
	T_PATTERN(dram + OFF_DR, LEN_DR, 0, 6);
	T_BYTES(dram + OFF_DR + LEN_DR, DRAM_SIZE - OFF_DR - LEN_DR, 0);
	t_signal('d');
	t_close(&conn, false);

	/* the proof: the DRAM region claims native persistent flush */
	pd.len = 0;
	t_pdata_add_mr_versioned_methods(&pd, mr_d, T_METHOD_RAW | T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, NULL);
	conn = t_accept(ep, NULL, &pd);
	t_await('X');
	t_close(&conn, false);

	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr_d));
	T_OK(rpma_mr_dereg(&mr_p));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void expect_method(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			  enum rpma_flush_type type, enum rpma_flush_method expected,
			  const char *what)
{
	enum rpma_flush_method method = RPMA_FLUSH_METHOD_NONE;
	T_OK(rpma_conn_get_flush_method(conn, dst, type, &method));
	t_log("%s, %s flush: %s", what,
	      type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visibility",
	      t_method_str(method));
	if (method != expected)
		T_FAIL("%s: the method is %s, expected %s", what, t_method_str(method),
		       t_method_str(expected));
}

/*
 * Writes len bytes of pattern seed from off of buf (src) to off of dst,
 * flushes them with type and waits for the flush.
 */
static void write_and_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			    struct rpma_mr_local *src, unsigned char *buf, size_t off, size_t len,
			    unsigned seed, enum rpma_flush_type type)
{
	t_fill(buf + off, len, seed);
	T_OK(rpma_write(conn, dst, off, src, off, len, RPMA_F_COMPLETION_ON_ERROR, NULL));
	T_OK(rpma_flush(conn, dst, off, len, type, RPMA_F_COMPLETION_ALWAYS, T_CTX(seed)));
	T_CMPL(t_cq(conn), T_CTX(seed), RPMA_OP_FLUSH, NULL);
}

static void client(void)
{
	skip_without_native_flush();
	struct rpma_peer *peer = t_peer_new();
	const bool native = t_native_flush();
	const bool pmem = t_pmem_is_device();
	unsigned char *buf = t_alloc(PMEM_SIZE);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, PMEM_SIZE, RPMA_MR_USAGE_WRITE_SRC);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *p = t_pdata_mr(&pd, 0);
	struct rpma_mr_remote *d = t_pdata_mr(&pd, 1);
	struct rpma_mr_remote *p_raw_only = t_pdata_mr(&pd, 3);
	size_t len = 0;
	const unsigned char *desc = t_pdata_item(&pd, 2, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	/* the first 21 bytes of the versioned descriptor: the librpma 1.x form */
	desc = t_pdata_item(&pd, 0, &len);
	struct rpma_mr_remote *p_1x = NULL;
	T_OK(rpma_mr_remote_from_descriptor(desc, 21, &p_1x));
	struct rpma_cq *cq = t_cq(conn);

	expect_method(conn, p, RPMA_FLUSH_TYPE_PERSISTENT, native && pmem ? NATIVE : RAW, "pmem");
	expect_method(conn, p, RPMA_FLUSH_TYPE_VISIBILITY, native ? NATIVE : RAW, "pmem");
	expect_method(conn, d, RPMA_FLUSH_TYPE_PERSISTENT, RAW, "dram");
	expect_method(conn, d, RPMA_FLUSH_TYPE_VISIBILITY, native ? NATIVE : RAW, "dram");
	expect_method(conn, p_1x, RPMA_FLUSH_TYPE_PERSISTENT, RAW, "pmem, librpma 1.x form");
	expect_method(conn, p_1x, RPMA_FLUSH_TYPE_VISIBILITY, RAW, "pmem, librpma 1.x form");
	expect_method(conn, p_raw_only, RPMA_FLUSH_TYPE_PERSISTENT, RAW, "pmem, no native");
	expect_method(conn, p_raw_only, RPMA_FLUSH_TYPE_VISIBILITY, RAW, "pmem, no native");

	/* the PMem region: each method, each type */
	write_and_flush(conn, p, src, buf, OFF_A, LEN_A, 1, RPMA_FLUSH_TYPE_PERSISTENT);
	write_and_flush(conn, p, src, buf, OFF_B, LEN_B, 2, RPMA_FLUSH_TYPE_VISIBILITY);
	write_and_flush(conn, p_1x, src, buf, OFF_C, LEN_C, 3, RPMA_FLUSH_TYPE_PERSISTENT);
	write_and_flush(conn, p_raw_only, src, buf, OFF_D, LEN_D, 4, RPMA_FLUSH_TYPE_PERSISTENT);

	/* unsignaled, then signaled: only the second completes */
	t_fill(buf + OFF_E, LEN_E, 5);
	T_OK(rpma_write(conn, p, OFF_E, src, OFF_E, LEN_E, RPMA_F_COMPLETION_ON_ERROR, NULL));
	T_OK(rpma_flush(conn, p, OFF_E, LEN_E / 2, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ON_ERROR, T_CTX(50)));
	T_OK(rpma_flush(conn, p, OFF_E + LEN_E / 2, LEN_E / 2, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, T_CTX(51)));
	T_CMPL(cq, T_CTX(51), RPMA_OP_FLUSH, NULL);

	/* an empty range at the very end, seen through rpma_cq_get_wc */
	T_OK(rpma_flush(conn, p, PMEM_SIZE, 0, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(52)));
	struct ibv_wc wc;
	memset(&wc, 0, sizeof(wc));
	int got = 0;
	long long until = t_now_ms() + T_WAIT_MS;
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, &wc, &got)) == RPMA_E_NO_COMPLETION &&
	       t_now_ms() < until)
		t_sleep_ms(1);
	T_OK(ret);
	T_EQ(got, 1);
	T_EQ(wc.wr_id, (uintptr_t)T_CTX(52));
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_EQ(wc.opcode, IBV_WC_RDMA_READ);

	/* a batch: writes, then both flushes of their range, one doorbell */
	t_fill(buf + OFF_F, LEN_F, 9);
	struct rpma_batch_op ops[WRITES_F + 2];
	memset(ops, 0, sizeof(ops));
	for (int w = 0; w < WRITES_F; w++) {
		ops[w].op = RPMA_OP_WRITE;
		ops[w].flags = RPMA_F_COMPLETION_ON_ERROR;
		ops[w].local = src;
		ops[w].local_offset = OFF_F + (size_t)w * (LEN_F / WRITES_F);
		ops[w].remote = p;
		ops[w].remote_offset = ops[w].local_offset;
		ops[w].len = LEN_F / WRITES_F;
	}
	for (int f = 0; f < 2; f++) {
		struct rpma_batch_op *op = &ops[WRITES_F + f];
		op->op = RPMA_OP_FLUSH;
		op->flags = RPMA_F_COMPLETION_ALWAYS;
		op->op_context = T_CTX(70 + f);
		op->remote = p;
		op->remote_offset = OFF_F;
		op->len = LEN_F;
		op->flush_type = f ? RPMA_FLUSH_TYPE_VISIBILITY : RPMA_FLUSH_TYPE_PERSISTENT;
	}
	int failed = 99;
	T_OK(rpma_post_batch(conn, ops, WRITES_F + 2, &failed));
	T_EQ(failed, -1);
	T_CMPL(cq, T_CTX(70), RPMA_OP_FLUSH, NULL);
	T_CMPL(cq, T_CTX(71), RPMA_OP_FLUSH, NULL);

	/* ranges beyond the region: refused, nothing posted */
	T_RET(rpma_flush(conn, p, PMEM_SIZE + 1, 0, RPMA_FLUSH_TYPE_PERSISTENT,
			 RPMA_F_COMPLETION_ALWAYS, T_CTX(60)),
	      RPMA_E_INVAL);
	T_RET(rpma_flush(conn, p, PMEM_SIZE - 8, 16, RPMA_FLUSH_TYPE_PERSISTENT,
			 RPMA_F_COMPLETION_ALWAYS, T_CTX(61)),
	      RPMA_E_INVAL);
	T_RET(rpma_flush(conn, p, 0, PMEM_SIZE + 1, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, T_CTX(62)),
	      RPMA_E_INVAL);
	T_RET(rpma_flush(conn, d, 8, SIZE_MAX - 4, RPMA_FLUSH_TYPE_VISIBILITY,
			 RPMA_F_COMPLETION_ALWAYS, T_CTX(63)),
	      RPMA_E_INVAL);
	T_NO_CMPL(cq, 50);
	t_signal('P');
	t_await('p');

	/* the DRAM region: read-after-write persists, visibility is native */
	t_fill(buf + OFF_DR, LEN_DR, 6);
	T_OK(
	    rpma_write(conn, d, OFF_DR, src, OFF_DR, LEN_DR / 2, RPMA_F_COMPLETION_ON_ERROR, NULL));
	T_OK(rpma_flush(conn, d, OFF_DR, LEN_DR / 2, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, T_CTX(6)));
	T_CMPL(cq, T_CTX(6), RPMA_OP_FLUSH, NULL);
	T_OK(rpma_write(conn, d, OFF_DR + LEN_DR / 2, src, OFF_DR + LEN_DR / 2, LEN_DR / 2,
			RPMA_F_COMPLETION_ON_ERROR, NULL));
	T_OK(rpma_flush(conn, d, OFF_DR, LEN_DR, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, T_CTX(7)));
	T_CMPL(cq, T_CTX(7), RPMA_OP_FLUSH, NULL);
	T_NO_CMPL(cq, 20);
	t_signal('D');
	t_await('d');
	t_close(&conn, true);

	/* the proof: a native flush the target's device refuses fails there */
	conn = t_connect(peer, NULL, NULL);
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *claims = t_pdata_mr(&pd, 0);
	struct rpma_peer_cfg *pcfg2 = NULL;
	desc = t_pdata_item(&pd, 1, &len);
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg2));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg2));
	expect_method(conn, claims, RPMA_FLUSH_TYPE_PERSISTENT, native ? NATIVE : RAW,
		      "dram claiming native persistence");
	T_OK(rpma_flush(conn, claims, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(8)));
	struct rpma_completion c;
	t_next_cmpl(t_cq(conn), &c);
	t_log("its flush completed: %s", ibv_wc_status_str(c.op_status));
	T_PTR_EQ(c.op_context, T_CTX(8));
	T_EQ(c.op_status, native ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS);
	if (c.op_status == IBV_WC_SUCCESS)
		T_EQ(c.op, RPMA_OP_FLUSH);
	t_signal('X');
	t_close(&conn, true);

	T_OK(rpma_peer_cfg_delete(&pcfg2));
	T_OK(rpma_mr_remote_delete(&claims));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&p_1x));
	T_OK(rpma_mr_remote_delete(&p_raw_only));
	T_OK(rpma_mr_remote_delete(&d));
	T_OK(rpma_mr_remote_delete(&p));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("native_flush", 48);
#ifndef NATIVE_FLUSH_VERBS
	t_skip("the library was built with an rdma-core without RDMA FLUSH (rdma-core 45 and "
	       "later have it)");
#endif
	/*
	 * The device is asked in the server and the client, not here: a
	 * context opened before the fork would be theirs too, and the kernel
	 * refuses (EACCES) commands written to it by another process.
	 */
	return t_run(server, client);
}
