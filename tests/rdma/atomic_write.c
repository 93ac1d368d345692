// SPDX-License-Identifier: BSD-3-Clause
/*
 * atomic_write.c -- rpma_atomic_write stores 8 bytes at an 8-aligned remote
 * offset, completes as a write, and refuses a misaligned offset. The target
 * sends its librpma 1.x region descriptor, which says nothing of RDMA
 * ATOMIC WRITE: the library writes inline, as to a librpma 1.x target, even
 * where both devices have the verb (IBV_WC_RDMA_WRITE, not
 * IBV_WC_ATOMIC_WRITE)
 */

#include <string.h>

#include "common.h"

#define SIZE 4096
#define OFF  24

static const char value[8] = { '\x01', '\x23', '\x45', '\x67', '\x89', '\xab', '\xcd', '\xef' };
static const char value2[8] = "RPMA-NG";

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	memset(buf, 0x77, SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	t_await('W');
	T_BYTES(buf, OFF, 0x77);
	T_ASSERT(memcmp(buf + OFF, value, 8) == 0);
	T_BYTES(buf + OFF + 8, SIZE - 8 - OFF - 8, 0x77);
	T_ASSERT(memcmp(buf + SIZE - 8, value2, 8) == 0);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	/* misaligned: refused before anything is posted */
	T_RET(rpma_atomic_write(conn, dst, OFF + 4, value, RPMA_F_COMPLETION_ALWAYS, T_CTX(9)),
	      RPMA_E_INVAL);
	T_RET(rpma_atomic_write(conn, dst, OFF + 1, value, RPMA_F_COMPLETION_ALWAYS, T_CTX(9)),
	      RPMA_E_INVAL);
	T_NO_CMPL(cq, 50);

	/* every provider: where the device has no atomic write, the library emulates it */
	T_OK(rpma_atomic_write(conn, dst, OFF, value, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	struct ibv_wc wc;
	int got = 0;
	const long long deadline = t_now_ms() + T_WAIT_MS;
	int ret;
	while ((ret = rpma_cq_get_wc(cq, 1, &wc, &got)) == RPMA_E_NO_COMPLETION)
		if (t_now_ms() > deadline)
			T_FAIL("no completion of the atomic write");
	T_OK(ret);
	T_EQ(wc.status, IBV_WC_SUCCESS);
	T_PTR_EQ(wc.wr_id, (uintptr_t)T_CTX(1));
	T_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
	if (t_native_atomic_write())
		t_log("the device has RDMA ATOMIC WRITE; the 1.x target got the inline write");
	/* the last 8 bytes of the region */
	T_OK(rpma_atomic_write(conn, dst, SIZE - 8, value2, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_WRITE, NULL);
	T_OK(rpma_flush(conn, dst, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(3)));
	T_CMPL(cq, T_CTX(3), RPMA_OP_FLUSH, NULL);
	t_signal('W');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("atomic_write", 9);
	return t_run(server, client);
}
