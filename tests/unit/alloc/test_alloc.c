/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_alloc.c -- every public function that allocates, with each of its
 * allocations failing in turn (fx_each_alloc_failure): it returns
 * RPMA_E_NOMEM, leaves its out-pointer untouched, leaves no rdma-core object
 * and no block of memory behind, rejects the client on the passive side,
 * consumes a request it was given, and everything involved stays deletable.
 * The passive-side calls go through every provider failure too, for the
 * same promise to the client. And the data path allocates nothing.
 *
 * To cover a new function: one SCENARIO line in ALLOC_SCENARIOS below (and
 * its name in PROVIDER_SCENARIOS when it may leave a client waiting).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_hooks.h"
#include "fixture.h"

/* What the scenarios' setup made (see enum with), deleted by their cleanup. */
static struct {
	struct rpma_conn_cfg *cfg;
	struct rpma_srq_cfg *srq_cfg;
	struct rpma_srq *srq;
	struct rpma_ep *ep;
	struct rdma_event_channel *evch;
	struct rpma_conn_req *req; /* what a connect consumes */
	struct rdma_cm_id *client; /* passive side: the id of the client's request */
} ctx;

/* what a scenario needs made before its call (bits) */
enum with {
	NOTHING = 0,
	RCQ = 1 << 0,		 /* a configuration with a receive CQ */
	SHARED_CHANNEL = 1 << 1, /* a configuration with one completion channel */
	SRQ = 1 << 2,		 /* a configuration with a shared RQ that has its own CQ */
	SRQ_CFG_NO_RCQ = 1 << 3, /* a shared RQ configuration without a receive CQ */
	ENDPOINT = 1 << 4,	 /* a listening endpoint */
	CLIENT_REQUEST = 1 << 5, /* a client's connection request on it */
	ACTIVE_REQ = 1 << 6,	 /* a request made by rpma_conn_req_new() */
	PASSIVE_REQ = 1 << 7,	 /* a request taken by rpma_ep_next_conn_req() */
};

/* the fields of the descriptor, one a line */
/* clang-format off */
static const uint8_t mr_descriptor[21] = {
	0x00, 0x10, 0x20, 0x00, 0x7f, 0x00, 0x00, 0x00, /* address */
	0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* length */
	0x51, 0x51, 0x00, 0x00,				/* rkey */
	RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST,
};
/* clang-format on */
static const uint8_t peer_cfg_descriptor[1] = { 1 };
static char client_pdata[] = "client";
static char server_pdata[] = "server";
static struct rpma_conn_private_data connect_pdata = { server_pdata, sizeof(server_pdata) };
static char region[4096];

static void with_setup(unsigned with)
{
	memset(&ctx, 0, sizeof(ctx));
	if (with & (RCQ | SHARED_CHANNEL | SRQ))
		ctx.cfg = fx_cfg(8, (with & RCQ) ? 8 : 0, (with & SHARED_CHANNEL) != 0);
	if (with & SRQ) {
		assert_int_equal(rpma_srq_new(fx_peer, NULL, &ctx.srq), 0);
		assert_int_equal(rpma_conn_cfg_set_srq(ctx.cfg, ctx.srq), 0);
	}
	if (with & SRQ_CFG_NO_RCQ) {
		assert_int_equal(rpma_srq_cfg_new(&ctx.srq_cfg), 0);
		assert_int_equal(rpma_srq_cfg_set_rcq_size(ctx.srq_cfg, 0), 0);
	}
	if (with & (ENDPOINT | CLIENT_REQUEST | PASSIVE_REQ))
		ctx.ep = fx_listen(&ctx.evch);
}

static void with_prelude(unsigned with)
{
	if (with & CLIENT_REQUEST) {
		fake_verbs_push_cm_event(ctx.evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL,
					 client_pdata, sizeof(client_pdata));
		ctx.client = fake_verbs_last_id();
	}
	if (with & ACTIVE_REQ)
		ctx.req = fx_req_active(ctx.cfg, NULL);
	if (with & PASSIVE_REQ)
		ctx.req = fx_req_passive(ctx.ep, ctx.evch, ctx.cfg, client_pdata,
					 sizeof(client_pdata), &ctx.client);
}

/*
 * After a failed call: a request given to it is consumed, and a client
 * whose request was taken from the endpoint was rejected, once, and its id
 * is gone.
 */
static void with_failed(unsigned with)
{
	if (with & (ACTIVE_REQ | PASSIVE_REQ))
		assert_null(ctx.req);
	if (ctx.client != NULL && fake_verbs_cm_events_queued(ctx.evch) == 0) {
		if (fake_verbs_id_calls(ctx.client, FAKE_REJECT) != 1)
			fail_msg("the client's request was rejected %u time(s), not once",
				 fake_verbs_id_calls(ctx.client, FAKE_REJECT));
		assert_false(fake_verbs_id_live(ctx.client));
	}
}

static void with_cleanup(void)
{
	/* a client's request still queued (rdma_get_cm_event failed): take it, reject it */
	if (ctx.evch != NULL && fake_verbs_cm_events_queued(ctx.evch) != 0) {
		struct rpma_conn_req *req = NULL;
		assert_int_equal(rpma_ep_next_conn_req(ctx.ep, NULL, &req), 0);
		assert_int_equal(rpma_conn_req_delete(&req), 0);
	}
	if (ctx.req != NULL)
		assert_int_equal(rpma_conn_req_delete(&ctx.req), 0);
	if (ctx.ep != NULL)
		fx_shutdown(&ctx.ep);
	if (ctx.cfg != NULL)
		fx_cfg_delete(&ctx.cfg);
	if (ctx.srq != NULL)
		assert_int_equal(rpma_srq_delete(&ctx.srq), 0);
	if (ctx.srq_cfg != NULL)
		assert_int_equal(rpma_srq_cfg_delete(&ctx.srq_cfg), 0);
	memset(&ctx, 0, sizeof(ctx));
}

/*
 * SCENARIO(name, with, type, call, delete): `call` makes a `type *` through
 * `out`, with what `with` asks for made before (ctx); `delete` frees it.
 */
#define ALLOC_SCENARIOS(SCENARIO)                                                                  \
	SCENARIO(peer_new, NOTHING, struct rpma_peer, rpma_peer_new(fake_verbs_context(), out),    \
		 rpma_peer_delete)                                                                 \
	SCENARIO(peer_cfg_new, NOTHING, struct rpma_peer_cfg, rpma_peer_cfg_new(out),              \
		 rpma_peer_cfg_delete)                                                             \
	SCENARIO(                                                                                  \
	    peer_cfg_from_descriptor, NOTHING, struct rpma_peer_cfg,                               \
	    rpma_peer_cfg_from_descriptor(peer_cfg_descriptor, sizeof(peer_cfg_descriptor), out),  \
	    rpma_peer_cfg_delete)                                                                  \
	SCENARIO(mr_reg, NOTHING, struct rpma_mr_local,                                            \
		 rpma_mr_reg(fx_peer, region, sizeof(region),                                      \
			     RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |                    \
				 RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,                              \
			     out),                                                                 \
		 rpma_mr_dereg)                                                                    \
	SCENARIO(mr_remote_from_descriptor, NOTHING, struct rpma_mr_remote,                        \
		 rpma_mr_remote_from_descriptor(mr_descriptor, sizeof(mr_descriptor), out),        \
		 rpma_mr_remote_delete)                                                            \
	SCENARIO(conn_cfg_new, NOTHING, struct rpma_conn_cfg, rpma_conn_cfg_new(out),              \
		 rpma_conn_cfg_delete)                                                             \
	SCENARIO(srq_cfg_new, NOTHING, struct rpma_srq_cfg, rpma_srq_cfg_new(out),                 \
		 rpma_srq_cfg_delete)                                                              \
	SCENARIO(srq_new, NOTHING, struct rpma_srq, rpma_srq_new(fx_peer, NULL, out),              \
		 rpma_srq_delete)                                                                  \
	SCENARIO(srq_new_no_rcq, SRQ_CFG_NO_RCQ, struct rpma_srq,                                  \
		 rpma_srq_new(fx_peer, ctx.srq_cfg, out), rpma_srq_delete)                         \
	SCENARIO(ep_listen, NOTHING, struct rpma_ep,                                               \
		 rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, out), rpma_ep_shutdown)                 \
	SCENARIO(ep_next_conn_req, CLIENT_REQUEST, struct rpma_conn_req,                           \
		 rpma_ep_next_conn_req(ctx.ep, NULL, out), rpma_conn_req_delete)                   \
	SCENARIO(ep_next_conn_req_rcq, CLIENT_REQUEST | RCQ, struct rpma_conn_req,                 \
		 rpma_ep_next_conn_req(ctx.ep, ctx.cfg, out), rpma_conn_req_delete)                \
	SCENARIO(ep_next_conn_req_shared, CLIENT_REQUEST | RCQ | SHARED_CHANNEL,                   \
		 struct rpma_conn_req, rpma_ep_next_conn_req(ctx.ep, ctx.cfg, out),                \
		 rpma_conn_req_delete)                                                             \
	SCENARIO(ep_next_conn_req_srq, CLIENT_REQUEST | SRQ, struct rpma_conn_req,                 \
		 rpma_ep_next_conn_req(ctx.ep, ctx.cfg, out), rpma_conn_req_delete)                \
	SCENARIO(conn_req_new, NOTHING, struct rpma_conn_req,                                      \
		 rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, NULL, out), rpma_conn_req_delete)    \
	SCENARIO(conn_req_new_rcq, RCQ, struct rpma_conn_req,                                      \
		 rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, ctx.cfg, out), rpma_conn_req_delete) \
	SCENARIO(conn_req_new_shared, RCQ | SHARED_CHANNEL, struct rpma_conn_req,                  \
		 rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, ctx.cfg, out), rpma_conn_req_delete) \
	SCENARIO(conn_req_connect_active, ACTIVE_REQ, struct rpma_conn,                            \
		 rpma_conn_req_connect(&ctx.req, &connect_pdata, out), rpma_conn_delete)           \
	SCENARIO(conn_req_connect_active_rcq, ACTIVE_REQ | RCQ | SHARED_CHANNEL, struct rpma_conn, \
		 rpma_conn_req_connect(&ctx.req, &connect_pdata, out), rpma_conn_delete)           \
	SCENARIO(conn_req_connect_passive, PASSIVE_REQ, struct rpma_conn,                          \
		 rpma_conn_req_connect(&ctx.req, &connect_pdata, out), rpma_conn_delete)           \
	SCENARIO(conn_req_connect_passive_rcq, PASSIVE_REQ | RCQ, struct rpma_conn,                \
		 rpma_conn_req_connect(&ctx.req, &connect_pdata, out), rpma_conn_delete)

/*
 * The scenarios that may leave a client waiting for an answer, and how
 * many provider calls each makes at least: taking a request, the event
 * (its queues wait for connect); connecting it, a completion channel, a
 * CQ, the QP and the accept.
 */
#define PROVIDER_SCENARIOS(SCENARIO)                                                               \
	SCENARIO(ep_next_conn_req, 1)                                                              \
	SCENARIO(ep_next_conn_req_rcq, 1)                                                          \
	SCENARIO(ep_next_conn_req_shared, 1)                                                       \
	SCENARIO(ep_next_conn_req_srq, 1)                                                          \
	SCENARIO(conn_req_connect_passive, 4)                                                      \
	SCENARIO(conn_req_connect_passive_rcq, 5)

/* a scenario as an fx_ctor, and its allocation-failure test */
#define DEFINE_SCENARIO(name, with, type, call, delete)                                            \
	static type *name##_out;                                                                   \
	static void name##_setup(void *arg)                                                        \
	{                                                                                          \
		(void)arg;                                                                         \
		with_setup(with);                                                                  \
	}                                                                                          \
	static void name##_prelude(void *arg)                                                      \
	{                                                                                          \
		(void)arg;                                                                         \
		name##_out = FX_POISON;                                                            \
		with_prelude(with);                                                                \
	}                                                                                          \
	static int name##_run(void *arg)                                                           \
	{                                                                                          \
		(void)arg;                                                                         \
		type **out = &name##_out;                                                          \
		return call;                                                                       \
	}                                                                                          \
	static void name##_untouched(void *arg)                                                    \
	{                                                                                          \
		(void)arg;                                                                         \
		assert_ptr_equal(name##_out, FX_POISON);                                           \
		with_failed(with);                                                                 \
	}                                                                                          \
	static void name##_cleanup(void *arg, bool succeeded)                                      \
	{                                                                                          \
		(void)arg;                                                                         \
		if (succeeded) {                                                                   \
			assert_int_equal(delete (&name##_out), 0);                                 \
			assert_null(name##_out);                                                   \
		}                                                                                  \
		with_cleanup();                                                                    \
	}                                                                                          \
	static const struct fx_ctor name##_ctor = {                                                \
		.setup = name##_setup,                                                             \
		.prelude = name##_prelude,                                                         \
		.run = name##_run,                                                                 \
		.untouched = name##_untouched,                                                     \
		.cleanup = name##_cleanup,                                                         \
	};                                                                                         \
	static void name(void **state)                                                             \
	{                                                                                          \
		(void)state;                                                                       \
		unsigned n = fx_each_alloc_failure(&name##_ctor, NULL);                            \
		print_message("# %s: %u allocation(s) failed in turn\n", #name, n);                \
	}

ALLOC_SCENARIOS(DEFINE_SCENARIO)

#define DEFINE_PROVIDER_SCENARIO(name, at_least)                                                   \
	static void name##__provider(void **state)                                                 \
	{                                                                                          \
		(void)state;                                                                       \
		assert_true(fx_each_provider_failure(&name##_ctor, NULL, EPROTO) >= (at_least));   \
	}

PROVIDER_SCENARIOS(DEFINE_PROVIDER_SCENARIO)

/*
 * The data path allocates nothing: every posting, polling and waiting call,
 * each one successful, with the hooks counting.
 */
static void data_path__allocates_nothing(void **state)
{
	(void)state;
	struct rpma_srq *srq = NULL;
	assert_int_equal(rpma_srq_new(fx_peer, NULL, &srq), 0);
	struct rpma_conn_cfg *cfg = fx_cfg(8, 8, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &id);
	struct rpma_mr_local *mr = fx_mr(region, sizeof(region),
					 RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
					     RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
	struct rpma_mr_remote *rmr = fx_mr_remote(0x7f0000200000ULL, 4096, 0x5151U,
						  RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
						      RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
						      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	const char word[8] = "8 bytes";
	const int f = RPMA_F_COMPLETION_ALWAYS;

	ut_alloc_count();
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, 64, NULL), 0);
	ut_alloc_disarm();
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	struct rpma_cq *cq = NULL, *rcq = NULL, *fired = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	struct ibv_cq *icq = id->qp->send_cq;
	struct ibv_cq *ircq = id->qp->recv_cq;
	unsigned attempts = 0;

	ut_alloc_count();
	assert_int_equal(rpma_conn_apply_remote_peer_cfg(conn, pcfg), 0);
	assert_int_equal(rpma_read(conn, mr, 0, rmr, 0, 64, f, (void *)1), 0);
	assert_int_equal(rpma_write(conn, rmr, 0, mr, 0, 64, f, (void *)2), 0);
	assert_int_equal(rpma_write_with_imm(conn, rmr, 0, mr, 0, 64, f, 7, (void *)3), 0);
	assert_int_equal(rpma_atomic_write(conn, rmr, 8, word, f, (void *)4), 0);
	assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY, f, (void *)5), 0);
	assert_int_equal(rpma_flush(conn, rmr, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT, f, (void *)6), 0);
	assert_int_equal(rpma_send(conn, mr, 0, 64, f, (void *)7), 0);
	assert_int_equal(rpma_send_with_imm(conn, mr, 0, 64, f, 9, (void *)8), 0);
	assert_int_equal(rpma_recv(conn, mr, 0, 64, (void *)9), 0);
	assert_int_equal(rpma_srq_recv(srq, mr, 0, 64, (void *)10), 0);
	attempts += ut_alloc_disarm();
	assert_int_equal(fake_verbs_sends(), 8);

	/* completions of the first four posts, taken every way there is */
	for (unsigned i = 0; i < 4; i++) {
		struct ibv_wc wc =
		    fx_wc(fake_verbs_send(i)->wr.wr_id,
			  i == 0 ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
		fake_verbs_push_wc(icq, &wc);
	}
	struct ibv_wc rwc = fx_wc(9, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_verbs_push_wc(ircq, &rwc);
	fake_verbs_push_wc(ircq, &rwc);
	fake_verbs_push_cq_event(icq->channel, icq);
	fake_verbs_push_cq_event(ircq->channel, ircq);
	/* the shared RQ's CQ has a channel of its own: waited on directly */
	struct rpma_cq *srq_rcq = NULL;
	assert_int_equal(rpma_srq_get_rcq(srq, &srq_rcq), 0);
	struct rpma_conn_cfg *srq_cfg = fx_cfg(8, 0, false);
	assert_int_equal(rpma_conn_cfg_set_srq(srq_cfg, srq), 0);
	struct rdma_cm_id *srq_id = NULL;
	struct rpma_conn *srq_conn = fx_conn_active(srq_cfg, &srq_id);
	struct ibv_cq *isrq_rcq = srq_id->qp->recv_cq;
	struct ibv_wc swc = fx_wc(10, IBV_WC_RECV, IBV_WC_SUCCESS);
	fake_verbs_push_wc(isrq_rcq, &swc);
	fake_verbs_push_wc(isrq_rcq, &swc);
	fake_verbs_push_cq_event(isrq_rcq->channel, isrq_rcq);

	ut_alloc_count();
	struct rpma_completion c[2];
	bool is_rcq = false;
	assert_int_equal(rpma_conn_wait(conn, 0, &fired, &is_rcq), 0);
	assert_ptr_equal(fired, cq);
	assert_int_equal(rpma_cq_get_completion(cq, &c[0]), 0);
	assert_int_equal(rpma_cq_get_completions(cq, c, 2), 2);
	struct ibv_wc got;
	int n = 0;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &got, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rpma_conn_wait(conn, 0, &fired, &is_rcq), 0);
	assert_true(is_rcq);
	assert_int_equal(rpma_cq_get_completion(rcq, &c[0]), 0);
	assert_int_equal(rpma_cq_get_completion(rcq, &c[0]), 0);
	assert_int_equal(rpma_cq_get_completion(cq, &c[0]), RPMA_E_NO_COMPLETION);
	assert_int_equal(rpma_cq_wait(srq_rcq), 0);
	assert_int_equal(rpma_cq_get_completion(srq_rcq, &c[0]), 0);
	assert_int_equal(rpma_cq_wait_completion(srq_rcq, &c[0], 0), 0);
	assert_int_equal(rpma_cq_wait_completion(srq_rcq, &c[0], 0), RPMA_E_NO_COMPLETION);
	attempts += ut_alloc_disarm();

	if (attempts != 0)
		fail_msg("the data path allocated %u time(s)", attempts);

	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
	fx_mr_remote_delete(&rmr);
	fx_mr_dereg(&mr);
	fx_conn_delete(&conn);
	fx_conn_delete(&srq_conn);
	fx_cfg_delete(&cfg);
	fx_cfg_delete(&srq_cfg);
	assert_int_equal(rpma_srq_delete(&srq), 0);
}

/* The hooks see the library's allocations, and only those. */
static void hooks__see_the_library(void **state)
{
	(void)state;
	unsigned long live = ut_alloc_live();
	unsigned long attempts = ut_alloc_attempts();
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(ut_alloc_attempts(), attempts + 1);
	assert_int_equal(ut_alloc_live(), live + 1);
	fx_cfg_delete(&cfg);
	assert_int_equal(ut_alloc_live(), live);

	/* the fake's and the test's own allocations are not the library's */
	void *mine = malloc(64);
	assert_non_null(mine);
	struct rpma_ep *ep = fx_listen(NULL);
	assert_int_equal(ut_alloc_attempts(), attempts + 2);
	fx_shutdown(&ep);
	free(mine);
	assert_int_equal(ut_alloc_live(), live);

	/* armed to fail the first: only the first fails */
	ut_alloc_fail_nth(1);
	assert_int_equal(rpma_conn_cfg_new(&cfg), RPMA_E_NOMEM);
	assert_true(ut_alloc_failed());
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(ut_alloc_disarm(), 2);
	fx_cfg_delete(&cfg);
}

int main(void)
{
	/* the commas are in the macros: one group a line */
	/* clang-format off */
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown),
#define T_SCENARIO(name, ...) T(name)
#define T_PROVIDER(name, ...) T(name##__provider)
	const struct CMUnitTest tests[] = {
		T(hooks__see_the_library)
		ALLOC_SCENARIOS(T_SCENARIO)
		PROVIDER_SCENARIOS(T_PROVIDER)
		T(data_path__allocates_nothing)
	};
#undef T
	/* clang-format on */
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
