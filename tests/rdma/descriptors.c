// SPDX-License-Identifier: BSD-3-Clause
/*
 * descriptors.c -- region and peer-configuration descriptors travel in
 * private data and decode to what the server registered: the 21-byte
 * librpma layout (address, length, rkey, usage; little-endian) comes first,
 * the bare 21 bytes (what a librpma 1.x peer sends) still decode and work,
 * reads and flushes alike, and malformed descriptors are RPMA_E_INVAL
 */

#include <string.h>

#include "common.h"

#define SIZE 12345
#define USAGE                                                                                      \
	(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |                            \
	 RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* the first 21 bytes of a region descriptor are librpma's */
static void check_layout(const unsigned char *desc, const void *addr, uint64_t len, int usage)
{
	T_EQ(le64(desc), (uintptr_t)addr);
	T_EQ(le64(desc + 8), len);
	T_EQ(desc[20], usage);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 35);
	struct rpma_mr_local *mr = t_mr_reg(peer, buf, SIZE, USAGE);
	size_t size = 0;
	T_OK(rpma_mr_get_descriptor_size(mr, &size));
	T_ASSERT(size >= 21);
	unsigned char desc[255];
	memset(desc, 0xcc, sizeof(desc));
	T_OK(rpma_mr_get_descriptor(mr, desc));
	T_EQ(desc[size], 0xcc);
	check_layout(desc, buf, SIZE, USAGE);

	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	T_OK(rpma_peer_cfg_get_descriptor_size(pcfg, &size));
	T_ASSERT(size >= 1);
	T_OK(rpma_peer_cfg_get_descriptor(pcfg, desc));
	T_EQ(desc[0], 1);

	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);
	t_pdata_add_peer_cfg(&pd, pcfg);
	/* a region descriptor, a peer configuration and the application's bytes */
	T_ASSERT(pd.len <= 56 - 8);

	/* the address, out of band, for the client to compare */
	uint64_t addr = (uintptr_t)buf;
	t_send_blob(&addr, sizeof(addr));

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	t_close(&conn, false);

	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *local = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_READ_DST);
	uint64_t server_addr = 0;
	t_recv_blob(&server_addr, sizeof(server_addr));

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	size_t len = 0;
	const unsigned char *desc = t_pdata_item(&pd, 0, &len);
	T_ASSERT(len >= 21);
	check_layout(desc, (void *)(uintptr_t)server_addr, SIZE, USAGE);

	struct rpma_mr_remote *full = NULL, *bare = NULL, *bad = NULL;
	T_OK(rpma_mr_remote_from_descriptor(desc, len, &full));
	size_t size = 0;
	T_OK(rpma_mr_remote_get_size(full, &size));
	T_EQ(size, SIZE);
	int flush_type = 0;
	T_OK(rpma_mr_remote_get_flush_type(full, &flush_type));
	T_EQ(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);

	/* librpma's 21 bytes alone */
	T_OK(rpma_mr_remote_from_descriptor(desc, 21, &bare));
	T_OK(rpma_mr_remote_get_size(bare, &size));
	T_EQ(size, SIZE);

	/* malformed */
	unsigned char copy[255];
	T_RET(rpma_mr_remote_from_descriptor(desc, 20, &bad), RPMA_E_INVAL);
	T_RET(rpma_mr_remote_from_descriptor(desc, 0, &bad), RPMA_E_INVAL);
	T_RET(rpma_mr_remote_from_descriptor(NULL, 21, &bad), RPMA_E_INVAL);
	memcpy(copy, desc, len);
	copy[20] = 0;
	T_RET(rpma_mr_remote_from_descriptor(copy, len, &bad), RPMA_E_INVAL);
	T_RET(rpma_mr_remote_from_descriptor(copy, 21, &bad), RPMA_E_INVAL);
	T_PTR_EQ(bad, NULL);

	/* both decoded descriptors reach the server's bytes */
	struct rpma_cq *cq = t_cq(conn);
	T_OK(rpma_read(conn, local, 0, full, 0, SIZE, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_CMPL(cq, T_CTX(1), RPMA_OP_READ, NULL);
	T_PATTERN(buf, SIZE, 0, 35);
	memset(buf, 0, SIZE);
	T_OK(rpma_read(conn, local, 100, bare, 200, 5000, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_CMPL(cq, T_CTX(2), RPMA_OP_READ, NULL);
	T_PATTERN(buf + 100, 5000, 200, 35);
	T_OK(rpma_mr_remote_get_flush_type(bare, &flush_type));
	T_EQ(flush_type, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_flush(conn, bare, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(3)));
	T_CMPL(cq, T_CTX(3), RPMA_OP_FLUSH, NULL);
	T_OK(rpma_flush(conn, full, 0, SIZE, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(4)));
	T_CMPL(cq, T_CTX(4), RPMA_OP_FLUSH, NULL);

	/* the peer configuration */
	const unsigned char *pdesc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	bool direct = false;
	T_OK(rpma_peer_cfg_from_descriptor(pdesc, len, &pcfg));
	T_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	T_EQ(direct, true);
	/* the server promised direct write to PMem: persistent flushes work */
	T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	T_OK(rpma_flush(conn, bare, 64, 64, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(5)));
	T_CMPL(cq, T_CTX(5), RPMA_OP_FLUSH, NULL);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	const unsigned char off = 0, on = 1;
	T_OK(rpma_peer_cfg_from_descriptor(&off, 1, &pcfg));
	T_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	T_EQ(direct, false);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_peer_cfg_from_descriptor(&on, 1, &pcfg));
	T_OK(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct));
	T_EQ(direct, true);
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_RET(rpma_peer_cfg_from_descriptor(&on, 0, &pcfg), RPMA_E_INVAL);

	/* the client's own region, described the same way */
	unsigned char mine[255];
	T_OK(rpma_mr_get_descriptor(local, mine));
	check_layout(mine, buf, SIZE, RPMA_MR_USAGE_READ_DST);

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&full));
	T_OK(rpma_mr_remote_delete(&bare));
	T_OK(rpma_mr_dereg(&local));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("descriptors", 30);
	return t_run(server, client);
}
