// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep_reconnect.c -- one endpoint serves three connections one after the
 * other; each gets its own private data and its own message, and each
 * closes cleanly before the next one starts
 */

#include <stdio.h>
#include <string.h>

#include "common.h"

#define ROUNDS 3

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	char *rbuf = t_alloc(64);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, 64, RPMA_MR_USAGE_RECV);
	struct rpma_ep *ep = t_listen(peer);

	for (int r = 0; r < ROUNDS; r++) {
		struct rpma_conn_req *req = t_next_req(ep, NULL);
		struct rpma_conn_private_data pd = { NULL, 0 };
		T_OK(rpma_conn_req_get_private_data(req, &pd));
		T_ASSERT(pd.ptr != NULL && pd.len >= 1);
		T_EQ(*(const unsigned char *)pd.ptr, r);
		T_OK(rpma_conn_req_recv(req, rmr, 0, 64, T_CTX(r)));

		struct t_pdata out = { .len = 1 };
		out.buf[0] = (unsigned char)(100 + r);
		struct rpma_conn *conn = t_accept_req(&req, &out);

		struct rpma_completion c;
		T_CMPL(t_cq(conn), T_CTX(r), RPMA_OP_RECV, &c);
		char expected[32];
		snprintf(expected, sizeof(expected), "round %d", r);
		T_EQ(c.byte_len, strlen(expected) + 1);
		if (strcmp(rbuf, expected) != 0)
			T_FAIL("got '%s', expected '%s'", rbuf, expected);
		memset(rbuf, 0, 64);
		t_close(&conn, false);
	}

	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	char *sbuf = t_alloc(64);
	struct rpma_mr_local *smr = t_mr_reg(peer, sbuf, 64, RPMA_MR_USAGE_SEND);

	for (int r = 0; r < ROUNDS; r++) {
		struct t_pdata out = { .len = 1 };
		out.buf[0] = (unsigned char)r;
		struct rpma_conn_req *req = t_client_req(peer, NULL);
		struct rpma_conn *conn = t_connect_req(&req, &out);
		struct rpma_conn_private_data pd;
		t_conn_pdata(conn, &pd);
		T_EQ(*(const unsigned char *)pd.ptr, 100 + r);

		int n = snprintf(sbuf, 64, "round %d", r);
		T_OK(rpma_send(conn, smr, 0, (size_t)n + 1, RPMA_F_COMPLETION_ALWAYS, T_CTX(r)));
		T_CMPL(t_cq(conn), T_CTX(r), RPMA_OP_SEND, NULL);
		t_close(&conn, true);
	}

	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("ep_reconnect", 33);
	return t_run(server, client);
}
