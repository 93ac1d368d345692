// SPDX-License-Identifier: BSD-3-Clause
/*
 * method_agreement.c -- the flush method both peers agree on, in every
 * combination of what the target offers (direct write to PMem or not,
 * GPSPM for the region or not, versioned or librpma 1.x descriptors) and
 * what the client's connection carries (GPSPM or not): the method
 * rpma_conn_get_flush_method() names is the one rpma_flush() uses (GPSPM
 * calls the target's persist function, read-after-write does not), the
 * data arrives, and where no method fits rpma_flush() says RPMA_E_NOSUPP
 */

#include "common.h"

#define SIZE 4096
#define LEN  256

enum {
	NONE = RPMA_FLUSH_METHOD_NONE,
	RAW = RPMA_FLUSH_METHOD_READ_AFTER_WRITE,
	GPSPM = RPMA_FLUSH_METHOD_GPSPM
};

static const struct agreement {
	const char *what;
	bool versioned;	   /* the target sends the versioned descriptors */
	bool direct_write; /* ...declaring direct write to PMem */
	bool region_gpspm; /* ...its region with a persist function */
	bool target_gpspm; /* ...its connection serving GPSPM */
	bool client_gpspm; /* the client's connection carries GPSPM */
	int persistent;	   /* the method expected for a persistent flush */
	int visibility;	   /* ...and for a visibility flush */
} cases[] = {
	{ "direct write beats GPSPM", true, true, true, true, true, RAW, RAW },
	{ "GPSPM without direct write", true, false, true, true, true, GPSPM, RAW },
	{ "GPSPM offered, client without it", true, false, true, true, false, NONE, RAW },
	{ "client without GPSPM, direct write", true, true, true, true, false, RAW, RAW },
	{ "region without a persist function", true, false, false, true, true, NONE, RAW },
	{ "connection not serving GPSPM", true, false, true, false, true, NONE, RAW },
	{ "librpma form, direct write", false, true, true, true, true, RAW, RAW },
	{ "librpma form, no direct write", false, false, true, true, true, NONE, RAW },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static struct rpma_conn_cfg *cfg_with(bool gpspm)
{
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, gpspm ? RPMA_GPSPM_POLLED : RPMA_GPSPM_DISABLED));
	return cfg;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist;
	unsigned char *region = t_pmem_map(SIZE, &persist);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, region, SIZE,
		     RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
			 RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct rpma_ep *ep = t_listen(peer);

	for (unsigned i = 0; i < NCASES; i++) {
		const struct agreement *c = &cases[i];
		T_OK(rpma_mr_set_persist_fn(mr, c->region_gpspm ? persist : NULL));
		struct rpma_peer_cfg *pcfg = NULL;
		T_OK(rpma_peer_cfg_new(&pcfg));
		T_OK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, c->direct_write));
		struct rpma_conn_cfg *cfg = cfg_with(c->target_gpspm);
		struct t_pdata pd = { .len = 0 };
		if (c->versioned) {
			/* as a target without native flush: the others are agreed on here */
			t_pdata_add_mr_versioned_methods(&pd, mr,
							 t_mr_methods(mr) & ~T_METHOD_NATIVE);
			t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
		} else {
			t_pdata_add_mr(&pd, mr);
			t_pdata_add_peer_cfg(&pd, pcfg);
		}
		const unsigned calls = t_persist_log.calls;
		struct rpma_conn *conn = t_accept(ep, cfg, &pd);
		t_serve_until(conn, 'D');
		T_PATTERN(region, LEN, 0, 60 + i);
		/* GPSPM and only GPSPM has the target's CPU persist */
		T_EQ(t_persist_log.calls - calls, c->persistent == GPSPM ? 1 : 0);
		t_signal('d');
		t_close(&conn, false);
		T_OK(rpma_conn_cfg_delete(&cfg));
		T_OK(rpma_peer_cfg_delete(&pcfg));
	}

	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void flush_as_agreed(struct rpma_conn *conn, struct rpma_mr_remote *dst,
			    enum rpma_flush_type type, int expected, void *ctx)
{
	enum rpma_flush_method method = RPMA_FLUSH_METHOD_NATIVE;
	const int ret = rpma_conn_get_flush_method(conn, dst, type, &method);
	T_EQ(method, expected);
	if (expected == NONE) {
		T_RET(ret, RPMA_E_NOSUPP);
		T_RET(rpma_flush(conn, dst, 0, LEN, type, RPMA_F_COMPLETION_ALWAYS, ctx),
		      RPMA_E_NOSUPP);
		return;
	}
	T_OK(ret);
	T_OK(rpma_flush(conn, dst, 0, LEN, type, RPMA_F_COMPLETION_ALWAYS, ctx));
	T_CMPL(t_cq(conn), ctx, RPMA_OP_FLUSH, NULL);
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(LEN);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, LEN, RPMA_MR_USAGE_WRITE_SRC);

	for (unsigned i = 0; i < NCASES; i++) {
		const struct agreement *c = &cases[i];
		t_log("case %u: %s", i, c->what);
		struct rpma_conn_cfg *cfg = cfg_with(c->client_gpspm);
		struct rpma_conn *conn = t_connect(peer, cfg, NULL);
		struct rpma_conn_private_data pd;
		t_conn_pdata(conn, &pd);
		struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
		size_t len = 0;
		const void *desc = t_pdata_item(&pd, 1, &len);
		struct rpma_peer_cfg *pcfg = NULL;
		T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
		T_OK(rpma_conn_apply_remote_peer_cfg(conn, pcfg));

		t_fill(buf, LEN, 60 + i);
		T_OK(rpma_write(conn, dst, 0, src, 0, LEN, RPMA_F_COMPLETION_ON_ERROR, NULL));
		flush_as_agreed(conn, dst, RPMA_FLUSH_TYPE_VISIBILITY, c->visibility, T_CTX(1));
		flush_as_agreed(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, c->persistent, T_CTX(2));
		T_NO_CMPL(t_cq(conn), 20);
		t_signal('D');
		t_await('d');

		t_close(&conn, true);
		T_OK(rpma_conn_cfg_delete(&cfg));
		T_OK(rpma_peer_cfg_delete(&pcfg));
		T_OK(rpma_mr_remote_delete(&dst));
	}
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("method_agreement", 39);
	return t_run(server, client);
}
