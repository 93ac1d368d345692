// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr_usage.c -- rpma_mr_reg refuses bad arguments with RPMA_E_INVAL and
 * leaves nothing behind; the usage bits decide what the peer may do: a
 * region registered for READ_SRC only cannot be written remotely, one for
 * WRITE_DST only cannot be read remotely (both tried on real connections;
 * siw does not enforce the remote read permission, so there the read is
 * not tried, and a refused write completes but closes the connection)
 */

#include <string.h>

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *a = t_alloc(SIZE);
	t_fill(a, SIZE, 33);
	unsigned char *b = t_alloc(SIZE);
	struct rpma_mr_local *mr_a = t_mr_reg(peer, a, SIZE, RPMA_MR_USAGE_READ_SRC);
	struct rpma_mr_local *mr_b = t_mr_reg(peer, b, SIZE, RPMA_MR_USAGE_WRITE_DST);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr_a);
	t_pdata_add_mr(&pd, mr_b);

	struct rpma_ep *ep = t_listen(peer);
	/* the first connection: allowed operations, then a read of b */
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	t_await('W');
	T_PATTERN(b, 100, 0, 34);
	T_BYTES(b + 100, SIZE - 100, 0);
	t_signal('V');
	t_close(&conn, false);

	/* the second connection: a write to a */
	conn = t_accept(ep, NULL, &pd);
	t_close(&conn, false);
	T_PATTERN(a, SIZE, 0, 33);
	T_PATTERN(b, 100, 0, 34);
	T_BYTES(b + 100, SIZE - 100, 0);

	T_OK(rpma_mr_dereg(&mr_a));
	T_OK(rpma_mr_dereg(&mr_b));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void reg_errors(struct rpma_peer *peer, void *buf)
{
	struct rpma_mr_local *mr = NULL;
	const int u = RPMA_MR_USAGE_READ_SRC;
	T_RET(rpma_mr_reg(NULL, buf, SIZE, u, &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, NULL, SIZE, u, &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, buf, 0, u, &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, buf, SIZE, 0, &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, buf, SIZE, 1 << 8, &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, buf, SIZE, u | (1 << 12), &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, buf, SIZE, -1, &mr), RPMA_E_INVAL);
	T_RET(rpma_mr_reg(peer, buf, SIZE, u, NULL), RPMA_E_INVAL);
	T_PTR_EQ(mr, NULL);

	/* every single usage bit registers */
	for (int bit = 0; bit < 8; bit++) {
		T_OK(rpma_mr_reg(peer, buf, SIZE, 1 << bit, &mr));
		void *ptr = NULL;
		size_t size = 0;
		T_OK(rpma_mr_get_ptr(mr, &ptr));
		T_PTR_EQ(ptr, buf);
		T_OK(rpma_mr_get_size(mr, &size));
		T_EQ(size, SIZE);
		T_OK(rpma_mr_dereg(&mr));
		T_PTR_EQ(mr, NULL);
	}
	T_OK(rpma_mr_dereg(&mr));
	T_RET(rpma_mr_dereg(NULL), RPMA_E_INVAL);
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 34);
	reg_errors(peer, buf);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);
	unsigned char *rbuf = t_alloc(SIZE);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, SIZE, RPMA_MR_USAGE_READ_DST);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *a = t_pdata_mr(&pd, 0);
	struct rpma_mr_remote *b = t_pdata_mr(&pd, 1);
	struct rpma_cq *cq = t_cq(conn);
	const int f = RPMA_F_COMPLETION_ALWAYS;

	/* what the usage allows */
	T_OK(rpma_read(conn, rmr, 0, a, 0, SIZE, f, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_READ, NULL);
	T_PATTERN(rbuf, SIZE, 0, 33);
	T_OK(rpma_write(conn, b, 0, mr, 0, 100, f, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_WRITE, NULL);
	t_signal('W');
	t_await('V');

	/* reading b, registered for remote writes only */
	struct rpma_completion c;
	if (!t_is_siw()) {
		memset(rbuf, 0, SIZE);
		T_OK(rpma_read(conn, rmr, 0, b, 0, 64, f, T_CTX(3)));
		t_next_cmpl(cq, &c);
		T_PTR_EQ(c.op_context, T_CTX(3));
		T_EQ(c.op_status, IBV_WC_REM_ACCESS_ERR);
		T_BYTES(rbuf, SIZE, 0);
	}
	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&a));
	T_OK(rpma_mr_remote_delete(&b));

	/* writing a, registered for remote reads only */
	conn = t_connect(peer, NULL, NULL);
	t_conn_pdata(conn, &pd);
	a = t_pdata_mr(&pd, 0);
	cq = t_cq(conn);
	T_OK(rpma_write(conn, a, 0, mr, 0, 64, f, T_CTX(4)));
	if (t_is_siw()) {
		/* iWARP completes a write when it is sent: the read after it fails */
		T_OK(rpma_read(conn, rmr, 0, a, 0, 64, f, T_CTX(5)));
		t_next_cmpl(cq, &c);
		T_PTR_EQ(c.op_context, T_CTX(4));
		/* or fails, when Linux 6.12's siw takes the TERMINATE first */
		if (c.op_status != IBV_WC_LOC_QP_OP_ERR)
			T_EQ(c.op_status, IBV_WC_SUCCESS);
		t_expect_terminated(conn, cq, T_CTX(5));
		T_OK(rpma_conn_disconnect(conn));
		T_OK(rpma_conn_delete(&conn));
	} else {
		t_next_cmpl(cq, &c);
		T_PTR_EQ(c.op_context, T_CTX(4));
		T_EQ(c.op_status, IBV_WC_REM_ACCESS_ERR);
		t_close(&conn, true);
	}
	T_OK(rpma_mr_remote_delete(&a));

	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("mr_usage", 29);
	return t_run(server, client);
}
