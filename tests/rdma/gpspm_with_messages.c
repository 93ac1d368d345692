// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_with_messages.c -- GPSPM and the application's own messages: the
 * receive queue of a GPSPM connection is the library's, so a GPSPM
 * connection refuses the application's sends and receives (and a
 * configuration with a receive CQ or an SRQ) at once, with a clear error;
 * the application's messages go over a second, plain connection of the
 * same peers, which works side by side with the GPSPM one
 */

#include "common.h"

#define SIZE 4096
#define MSG  64

static struct rpma_conn_cfg *gpspm_cfg(void)
{
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));
	return cfg;
}

/* the refusals a GPSPM connection makes, on either side */
static void refuses_messages(struct rpma_conn *conn, struct rpma_mr_local *msgs)
{
	T_RET(rpma_recv(conn, msgs, 0, MSG, NULL), RPMA_E_INVAL);
	T_RET(rpma_send(conn, msgs, 0, MSG, RPMA_F_COMPLETION_ALWAYS, NULL), RPMA_E_INVAL);
	T_RET(rpma_send_with_imm(conn, msgs, 0, MSG, RPMA_F_COMPLETION_ALWAYS, 1, NULL),
	      RPMA_E_INVAL);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist;
	unsigned char *region = t_pmem_map(SIZE, &persist);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, region, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_mr_set_persist_fn(mr, persist));
	unsigned char *msgs = t_alloc(2 * MSG);
	struct rpma_mr_local *msgs_mr =
	    t_mr_reg(peer, msgs, 2 * MSG, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = gpspm_cfg();
	struct t_pdata pd = { .len = 0 };
	/* as a target without native flush sends it: GPSPM is tested here */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);

	/* the GPSPM connection first, then the messages' */
	struct rpma_conn_req *req = t_next_req(ep, cfg);
	T_RET(rpma_conn_req_recv(req, msgs_mr, 0, MSG, NULL), RPMA_E_INVAL);
	struct rpma_conn *gconn = t_accept_req(&req, &pd);
	refuses_messages(gconn, msgs_mr);
	struct rpma_conn_req *mreq = t_next_req(ep, NULL);
	T_OK(rpma_conn_req_recv(mreq, msgs_mr, 0, MSG, T_CTX(1)));
	struct t_pdata none = { .len = 0 };
	struct rpma_conn *mconn = t_accept_req(&mreq, &none);

	/* a message arrives while the other connection's flushes are served */
	struct rpma_completion cmpl;
	T_CMPL(t_cq(mconn), T_CTX(1), RPMA_OP_RECV, &cmpl);
	T_EQ(cmpl.byte_len, MSG);
	T_PATTERN(msgs, MSG, 0, 21);
	t_serve_until(gconn, 'F');
	T_EQ(t_persist_log.calls, 1);
	T_PATTERN(region, SIZE, 0, 22);
	t_signal('V');

	t_close(&mconn, false);
	t_close(&gconn, false);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&msgs_mr));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 22);
	struct rpma_mr_local *src = t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC);
	unsigned char *msgs = t_alloc(2 * MSG);
	t_fill(msgs, MSG, 21);
	struct rpma_mr_local *msgs_mr =
	    t_mr_reg(peer, msgs, 2 * MSG, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);

	/* GPSPM cannot share the receive queue with a receive CQ or an SRQ */
	struct rpma_conn_cfg *bad = gpspm_cfg();
	T_OK(rpma_conn_cfg_set_rcq_size(bad, 4));
	t_wait_listener();
	struct rpma_conn_req *req = NULL;
	T_RET(rpma_conn_req_new(peer, t_env.addr, t_env.port, bad, &req), RPMA_E_INVAL);
	T_PTR_EQ(req, NULL);
	T_OK(rpma_conn_cfg_delete(&bad));

	struct rpma_conn_cfg *cfg = gpspm_cfg();
	struct rpma_conn *gconn = t_connect(peer, cfg, NULL);
	refuses_messages(gconn, msgs_mr);
	struct rpma_conn *mconn = t_connect(peer, NULL, NULL);

	struct rpma_conn_private_data pd;
	t_conn_pdata(gconn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t len = 0;
	const void *desc = t_pdata_item(&pd, 1, &len);
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_from_descriptor(desc, len, &pcfg));
	T_OK(rpma_conn_apply_remote_peer_cfg(gconn, pcfg));

	T_OK(rpma_write(gconn, dst, 0, src, 0, SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL));
	T_OK(rpma_flush(gconn, dst, 0, SIZE, RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS,
			T_CTX(2)));
	T_OK(rpma_send(mconn, msgs_mr, 0, MSG, RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
	T_CMPL(t_cq(mconn), T_CTX(3), RPMA_OP_SEND, NULL);
	T_CMPL(t_cq(gconn), T_CTX(2), RPMA_OP_FLUSH, NULL);
	t_signal('F');
	t_await('V');

	t_close(&mconn, true);
	t_close(&gconn, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&msgs_mr));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("gpspm_with_messages", 40);
	return t_run(server, client);
}
