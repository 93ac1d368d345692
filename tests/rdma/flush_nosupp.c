// SPDX-License-Identifier: BSD-3-Clause
/*
 * flush_nosupp.c -- RPMA_FLUSH_TYPE_PERSISTENT is RPMA_E_NOSUPP until the
 * remote peer configuration declares direct write to PMem, and a flush type
 * the remote region was not registered for is RPMA_E_NOSUPP; refused
 * flushes post nothing
 */

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *a = t_alloc(SIZE);
	unsigned char *b = t_alloc(SIZE);
	struct rpma_mr_local *mr_a =
	    t_mr_reg(peer, a, SIZE,
		     RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
			 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_mr_local *mr_b = t_mr_reg(peer, b, SIZE, RPMA_MR_USAGE_WRITE_DST);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr_a);
	t_pdata_add_mr(&pd, mr_b);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	t_close(&conn, false);

	T_OK(rpma_mr_dereg(&mr_a));
	T_OK(rpma_mr_dereg(&mr_b));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *a = t_pdata_mr(&pd, 0);
	struct rpma_mr_remote *b = t_pdata_mr(&pd, 1);
	struct rpma_cq *cq = t_cq(conn);
	const int f = RPMA_F_COMPLETION_ALWAYS;

	int flush_type = -1;
	T_OK(rpma_mr_remote_get_flush_type(b, &flush_type));
	T_EQ(flush_type, 0);

	/* no peer configuration applied: the target made no promise */
	T_RET(rpma_flush(conn, a, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT, f, T_CTX(1)), RPMA_E_NOSUPP);
	/* region b was registered without any flush usage */
	T_RET(rpma_flush(conn, b, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, f, T_CTX(2)), RPMA_E_NOSUPP);
	T_RET(rpma_flush(conn, b, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT, f, T_CTX(3)), RPMA_E_NOSUPP);
	T_NO_CMPL(cq, 100);

	/* what is supported still works after the refusals */
	T_OK(rpma_flush(conn, a, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, f, T_CTX(4)));
	T_CMPL(cq, T_CTX(4), RPMA_OP_FLUSH, NULL);

	/* a peer configuration without direct write to PMem changes nothing */
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	T_RET(rpma_flush(conn, a, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT, f, T_CTX(5)), RPMA_E_NOSUPP);

	/* with it, region a can be flushed to persistence, region b still not */
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	T_RET(rpma_flush(conn, b, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT, f, T_CTX(6)), RPMA_E_NOSUPP);
	T_OK(rpma_flush(conn, a, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT, f, T_CTX(7)));
	T_CMPL(cq, T_CTX(7), RPMA_OP_FLUSH, NULL);
	T_NO_CMPL(cq, 100);

	t_close(&conn, true);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&a));
	T_OK(rpma_mr_remote_delete(&b));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("flush_nosupp", 12);
	return t_run(server, client);
}
