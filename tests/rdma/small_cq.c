// SPDX-License-Identifier: BSD-3-Clause
/*
 * small_cq.c -- with cq_size 4 (and queues of 4), 256 writes and 64 messages
 * go through in windows of at most 4 outstanding operations: every
 * completion is a success, in order, nothing overruns, and all the data
 * arrives. Messages go in rounds of 4, one per receive the server has
 * posted: iWARP has no receiver-not-ready retry, so a send that finds no
 * receive breaks the connection, and a send completes there when it was
 * sent, not when it was received.
 */

#include <string.h>

#include "common.h"

#define Q	4
#define NWRITES 256
#define CHUNK	64
#define SIZE	(NWRITES * CHUNK)
#define NMSG	64

static struct rpma_conn_cfg *small_cfg(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	uint32_t size = 0;
	T_OK(rpma_conn_cfg_get_cq_size(cfg, &size));
	T_EQ(size, 10);
	T_OK(rpma_conn_cfg_set_cq_size(cfg, Q));
	T_OK(rpma_conn_cfg_set_sq_size(cfg, Q));
	T_OK(rpma_conn_cfg_set_rq_size(cfg, Q));
	T_OK(rpma_conn_cfg_get_cq_size(cfg, &size));
	T_EQ(size, Q);
	T_OK(rpma_conn_cfg_get_sq_size(cfg, &size));
	T_EQ(size, Q);
	T_OK(rpma_conn_cfg_get_rq_size(cfg, &size));
	T_EQ(size, Q);
	return cfg;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	unsigned char *rbuf = t_alloc(Q * 16);
	struct rpma_mr_local *rmr = t_mr_reg(peer, rbuf, Q * 16, RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);
	struct rpma_conn_cfg *cfg = small_cfg();

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn_req *req = t_next_req(ep, cfg);
	for (int s = 0; s < Q; s++)
		T_OK(rpma_conn_req_recv(req, rmr, (size_t)s * 16, 16, T_CTX(s)));
	struct rpma_conn *conn = t_accept_req(&req, &pd);
	struct rpma_cq *cq = t_cq(conn);

	for (uint32_t i = 0; i < NMSG; i++) {
		int s = (int)(i % Q);
		struct rpma_completion c;
		T_CMPL(cq, T_CTX(s), RPMA_OP_RECV, &c);
		T_EQ(c.byte_len, sizeof(i));
		uint32_t got;
		memcpy(&got, rbuf + s * 16, sizeof(got));
		T_EQ(got, i);
		memset(rbuf + s * 16, 0, 16);
		T_OK(rpma_recv(conn, rmr, (size_t)s * 16, 16, T_CTX(s)));
		/* a round consumed and posted again */
		if (s == Q - 1)
			t_signal('K');
	}

	t_await('W');
	T_PATTERN(buf, SIZE, 0, 31);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_mr_dereg(&rmr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 31);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC);
	uint32_t *msgs = t_alloc(NMSG * sizeof(uint32_t));
	for (uint32_t i = 0; i < NMSG; i++)
		msgs[i] = i;
	struct rpma_mr_local *smr =
	    t_mr_reg(peer, msgs, NMSG * sizeof(uint32_t), RPMA_MR_USAGE_SEND);
	struct rpma_conn_cfg *cfg = small_cfg();

	struct rpma_conn_req *req = t_client_req(peer, cfg);
	struct rpma_conn *conn = t_connect_req(&req, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	/* writes in the order opposite to the data: a misplaced one shows */
	int posted = 0, done = 0;
	while (done < NWRITES) {
		if (posted < NWRITES && posted - done < Q) {
			size_t off = (size_t)(NWRITES - 1 - posted) * CHUNK;
			T_OK(rpma_write(conn, dst, off, src, off, CHUNK, RPMA_F_COMPLETION_ALWAYS,
					T_CTX(posted)));
			posted++;
		} else {
			T_CMPL(cq, T_CTX(done), RPMA_OP_WRITE, NULL);
			done++;
		}
	}
	T_NO_CMPL(cq, 10);

	for (int round = 0; round < NMSG / Q; round++) {
		for (int i = round * Q; i < (round + 1) * Q; i++)
			T_OK(rpma_send(conn, smr, (size_t)i * sizeof(uint32_t), sizeof(uint32_t),
				       RPMA_F_COMPLETION_ALWAYS, T_CTX(1000 + i)));
		for (int i = round * Q; i < (round + 1) * Q; i++)
			T_CMPL(cq, T_CTX(1000 + i), RPMA_OP_SEND, NULL);
		t_await('K');
	}

	T_OK(rpma_flush(conn, dst, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(5000)));
	T_CMPL(cq, T_CTX(5000), RPMA_OP_FLUSH, NULL);
	T_NO_CMPL(cq, 50);
	t_signal('W');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_mr_dereg(&smr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("small_cq", 27);
	return t_run(server, client);
}
