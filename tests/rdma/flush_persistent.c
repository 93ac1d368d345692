// SPDX-License-Identifier: BSD-3-Clause
/*
 * flush_persistent.c -- the server declares direct write to PMem in its peer
 * configuration, sends its descriptor with the region's; the client applies
 * it with rpma_conn_apply_remote_peer_cfg and RPMA_FLUSH_TYPE_PERSISTENT
 * then completes as RPMA_OP_FLUSH, with the data on the server
 */

#include "common.h"

#define SIZE 8192
#define OFF  512
#define LEN  2048

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	bool direct = true;
	T_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	T_EQ(direct, false);
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));

	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);
	t_pdata_add_peer_cfg(&pd, pcfg);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	t_await('F');
	T_BYTES(buf, OFF, 0);
	T_PATTERN(buf + OFF, LEN, 0, 11);
	T_BYTES(buf + OFF + LEN, SIZE - OFF - LEN, 0);
	t_signal('V');

	t_close(&conn, false);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_PTR_EQ(pcfg, NULL);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(LEN);
	t_fill(buf, LEN, 11);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, LEN, RPMA_MR_USAGE_WRITE_SRC);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t len = 0;
	const void *desc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	bool direct = false;
	T_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	T_EQ(direct, true);
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));

	int flush_type = 0;
	T_OK(rpma_mr_remote_get_flush_type(dst, &flush_type));
	T_ASSERT(flush_type & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);

	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_write(conn, dst, OFF, src, 0, LEN, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_WRITE, NULL);
	T_OK(rpma_flush(conn, dst, OFF, LEN, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_FLUSH, NULL);
	T_NO_CMPL(cq, 50);
	t_signal('F');
	t_await('V');

	t_close(&conn, true);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("flush_persistent", 11);
	return t_run(server, client);
}
