// SPDX-License-Identifier: BSD-3-Clause
/*
 * zero_length.c -- zero-length read, write and send (with no regions at all,
 * and with real regions) complete successfully with their contexts and
 * change nothing; a 0-byte send completes a receive with byte_len 0;
 * NULL regions with a non-zero length are RPMA_E_INVAL. siw refuses a
 * receive without any buffer (ibv_post_recv with no SGE: EINVAL), so there
 * both receives get a zero-length buffer
 */

#include <errno.h>
#include <string.h>

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 15);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST);
	unsigned char *rbuf = t_alloc(64);
	memset(rbuf, 0x5a, 64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);

	T_RET(rpma_recv(conn, NULL, 4, 0, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_recv(conn, NULL, 0, 4, T_CTX(9)), RPMA_E_INVAL);
	/* a receive without a buffer, then one with a buffer */
	if (t_is_siw()) {
		T_RET(rpma_recv(conn, NULL, 0, 0, T_CTX(10)), RPMA_E_PROVIDER);
		T_EQ(rpma_err_get_provider_error(), EINVAL);
		T_OK(rpma_recv(conn, rmr, 32, 0, T_CTX(10)));
	} else {
		T_OK(rpma_recv(conn, NULL, 0, 0, T_CTX(10)));
	}
	T_OK(rpma_recv(conn, rmr, 0, 64, T_CTX(11)));
	t_signal('R');

	struct rpma_completion c;
	T_CMPL(cq, T_CTX(10), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 0);
	T_CMPL(cq, T_CTX(11), RPMA_OP_RECV, &c);
	T_EQ(c.byte_len, 0);
	T_BYTES(rbuf, 64, 0x5a);
	T_NO_CMPL(cq, 50);

	t_await('D');
	T_PATTERN(buf, SIZE, 0, 15);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	memset(buf, 0xee, SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *rmt = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	const int f = RPMA_F_COMPLETION_ALWAYS;

	/* a length with no regions */
	T_RET(rpma_write(conn, NULL, 0, NULL, 0, 8, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_read(conn, NULL, 0, NULL, 0, 8, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_send(conn, NULL, 0, 8, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_send(conn, NULL, 8, 0, f, T_CTX(9)), RPMA_E_INVAL);
	/* one region given, the other NULL */
	T_RET(rpma_write(conn, rmt, 0, NULL, 0, 0, f, T_CTX(9)), RPMA_E_INVAL);
	T_RET(rpma_read(conn, mr, 0, NULL, 0, 0, f, T_CTX(9)), RPMA_E_INVAL);
	T_NO_CMPL(cq, 50);

	/* no regions at all */
	T_OK(rpma_read(conn, NULL, 0, NULL, 0, 0, f, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_READ, NULL);
	T_OK(rpma_write(conn, NULL, 0, NULL, 0, 0, f, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_WRITE, NULL);

	/* real regions, zero length */
	T_OK(rpma_read(conn, mr, 16, rmt, 32, 0, f, T_CTX(3)));
	T_CMPL(cq, T_CTX(3), RPMA_OP_READ, NULL);
	T_OK(rpma_write(conn, rmt, 32, mr, 16, 0, f, T_CTX(4)));
	T_CMPL(cq, T_CTX(4), RPMA_OP_WRITE, NULL);
	T_BYTES(buf, SIZE, 0xee);

	t_await('R');
	T_OK(rpma_send(conn, NULL, 0, 0, f, T_CTX(5)));
	T_CMPL(cq, T_CTX(5), RPMA_OP_SEND, NULL);
	T_OK(rpma_send(conn, mr, 0, 0, f, T_CTX(6)));
	T_CMPL(cq, T_CTX(6), RPMA_OP_SEND, NULL);
	T_NO_CMPL(cq, 50);
	t_signal('D');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&rmt));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("zero_length", 15);
	return t_run(server, client);
}
