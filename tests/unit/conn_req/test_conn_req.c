/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conn_req.c -- rpma_conn_req_new, rpma_conn_req_delete,
 * rpma_conn_req_connect, rpma_conn_req_recv, rpma_conn_req_get_private_data,
 * rpma_conn_req_get_peer_addr, rpma_conn_req_get_local_addr,
 * rpma_conn_req_get_qp_num, rpma_conn_req_get_peer_qp_num, rpma_conn_req_reject
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <infiniband/ib.h>

#include "alloc_hooks.h"
#include "fake_extra.h"
#include "fixture.h"

static char buf[256];

/* rpma_conn_req_new */

static void new__null_peer(void **state)
{
	(void)state;
	struct rpma_conn_req *req = FX_POISON;
	FX_INVAL(rpma_conn_req_new(NULL, FX_ADDR, FX_PORT, NULL, &req));
	assert_ptr_equal(req, FX_POISON);
}

static void new__null_addr(void **state)
{
	(void)state;
	struct rpma_conn_req *req = FX_POISON;
	FX_INVAL(rpma_conn_req_new(fx_peer, NULL, FX_PORT, NULL, &req));
	assert_ptr_equal(req, FX_POISON);
}

static void new__null_port(void **state)
{
	(void)state;
	struct rpma_conn_req *req = FX_POISON;
	FX_INVAL(rpma_conn_req_new(fx_peer, FX_ADDR, NULL, NULL, &req));
	assert_ptr_equal(req, FX_POISON);
}

static void new__null_req_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, NULL, NULL));
}

static void new__success(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, NULL, &req), 0);
	assert_non_null(req);

	struct rdma_cm_id *id = fake_verbs_last_id();
	assert_non_null(id);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_ID), 1);
	assert_int_equal(fake_verbs_calls(FAKE_RESOLVE_ADDR), 1);
	assert_int_equal(fake_verbs_calls(FAKE_RESOLVE_ROUTE), 1);
	assert_int_equal(fake_verbs_calls(FAKE_FREEADDRINFO), fake_verbs_calls(FAKE_GETADDRINFO));
	assert_true(fake_verbs_calls(FAKE_GETADDRINFO) >= 1);
	/* the QP: the default configuration has one CQ for both queues */
	assert_non_null(id->qp);
	assert_non_null(id->qp->send_cq);
	assert_ptr_equal(id->qp->recv_cq, id->qp->send_cq);
	assert_null(id->qp->srq);
	assert_true(id->qp->send_cq->cqe >= 10);
	/* not connected yet */
	assert_int_equal(fake_verbs_calls(FAKE_CONNECT), 0);

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void new__cfg_sizes(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(31, 17, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &id);
	assert_ptr_not_equal(id->qp->send_cq, id->qp->recv_cq);
	assert_true(id->qp->send_cq->cqe >= 31);
	assert_true(id->qp->recv_cq->cqe >= 17);
	assert_non_null(id->qp->send_cq->channel);
	assert_non_null(id->qp->recv_cq->channel);
	assert_ptr_not_equal(id->qp->send_cq->channel, id->qp->recv_cq->channel);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_cfg_delete(&cfg);
}

static void new__shared_channel(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &id);
	assert_ptr_not_equal(id->qp->send_cq, id->qp->recv_cq);
	assert_non_null(id->qp->send_cq->channel);
	assert_ptr_equal(id->qp->send_cq->channel, id->qp->recv_cq->channel);
	/* both CQs are armed for the shared channel */
	assert_true(fake_verbs_cq_armed(id->qp->send_cq));
	assert_true(fake_verbs_cq_armed(id->qp->recv_cq));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_cfg_delete(&cfg);
}

static void new__cfg_is_not_kept(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 5, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &id);
	/* the request does not depend on the configuration object */
	fx_cfg_delete(&cfg);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	struct rpma_cq *rcq = NULL;
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_non_null(rcq);
	fx_conn_delete(&conn);
}

static void new__resolution(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	/* the address and port as given, resolved as a destination */
	assert_string_equal(fake_verbs_last_getaddrinfo_node(), FX_ADDR);
	assert_string_equal(fake_verbs_last_getaddrinfo_service(), FX_PORT);
	assert_int_equal(fake_verbs_last_getaddrinfo_flags() & RAI_PASSIVE, 0);
	/* with the default timeout */
	assert_int_equal(fake_verbs_last_timeout(FAKE_RESOLVE_ADDR), RPMA_DEFAULT_TIMEOUT_MS);
	assert_int_equal(fake_verbs_last_timeout(FAKE_RESOLVE_ROUTE), RPMA_DEFAULT_TIMEOUT_MS);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

static void new__cfg_timeout_and_queues(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 0, false);
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, 4321), 0);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, 33), 0);
	assert_int_equal(rpma_conn_cfg_set_rq_size(cfg, 44), 0);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(cfg, &id);
	assert_int_equal(fake_verbs_last_timeout(FAKE_RESOLVE_ADDR), 4321);
	assert_int_equal(fake_verbs_last_timeout(FAKE_RESOLVE_ROUTE), 4321);
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_non_null(attr);
	assert_int_equal(attr->qp_type, IBV_QPT_RC);
	assert_int_equal(attr->cap.max_send_wr, 33);
	assert_int_equal(attr->cap.max_recv_wr, 44);
	assert_null(attr->srq);
	/* every work request asks for its own completion */
	assert_int_equal(attr->sq_sig_all, 0);
	/* room for the inline 8-byte atomic write */
	assert_true(attr->cap.max_inline_data >= 8);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_cfg_delete(&cfg);
}

/*
 * The ACK timeout: the largest exponent e (4.096 us * 2^e a try) with the
 * first try and 6 retries within the connection's timeout, from 14 to 20.
 */
static const struct {
	int timeout_ms;
	int exponent;
} ack_timeouts[] = {
	{ RPMA_DEFAULT_TIMEOUT_MS, 15 }, /* 7 x 134 ms = 0.94 s */
	{ 100, 14 },			 /* the floor: 7 x 67 ms */
	{ 940, 15 },			 /* 7 x 134.2 ms = 939.5 ms: the edge */
	{ 939, 14 },
	{ 5000, 17 },	 /* 7 x 537 ms = 3.76 s */
	{ 60000, 20 },	 /* 7 x 4.3 s = 30 s: the ceiling */
	{ 3600000, 20 }, /* no higher */
};

static void new__ack_timeout_from_cfg(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ack_timeouts) / sizeof(ack_timeouts[0]); i++) {
		struct rpma_conn_cfg *cfg = NULL;
		if (ack_timeouts[i].timeout_ms != RPMA_DEFAULT_TIMEOUT_MS) {
			assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
			assert_int_equal(rpma_conn_cfg_set_timeout(cfg, ack_timeouts[i].timeout_ms),
					 0);
		}
		struct rpma_conn_req *req = fx_req_active(cfg, NULL);
		if (fake_verbs_last_ack_timeout() != ack_timeouts[i].exponent)
			fail_msg("timeout %d ms: ACK timeout %d, expected %d",
				 ack_timeouts[i].timeout_ms, fake_verbs_last_ack_timeout(),
				 ack_timeouts[i].exponent);
		assert_int_equal(rpma_conn_req_delete(&req), 0);
		if (cfg)
			assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	}
}

/* a kernel that does not take the ACK timeout: a warning, and the request is made */
static void new__ack_timeout_refused(void **state)
{
	(void)state;
	fake_verbs_fail(FAKE_SET_ACK_TIMEOUT, 1, ENOSYS);
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	assert_non_null(strstr(fx_log_last(), "RDMA_OPTION_ID_ACK_TIMEOUT"));
	assert_non_null(strstr(fx_log_last(), "errno 38"));
	assert_int_equal(fake_verbs_last_ack_timeout(), -1);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* the passive side takes the timeout of the configuration it is given */
static void new__ack_timeout_passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = NULL;
	assert_int_equal(rpma_conn_cfg_new(&cfg), 0);
	assert_int_equal(rpma_conn_cfg_set_timeout(cfg, 5000), 0);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, NULL, 0, NULL);
	assert_int_equal(fake_verbs_last_ack_timeout(), 17);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	assert_int_equal(fake_verbs_last_ack_timeout(), 15);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(rpma_conn_cfg_delete(&cfg), 0);
	fx_shutdown(&ep);
}

static void new__address_not_numeric(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = FX_POISON;
	/* the fake resolves numeric addresses only, like a host without DNS */
	assert_int_equal(rpma_conn_req_new(fx_peer, "no.such.host.invalid", FX_PORT, NULL, &req),
			 RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EADDRNOTAVAIL);
	assert_ptr_equal(req, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
}

struct new_arg {
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
};

static void new_prelude(void *arg)
{
	((struct new_arg *)arg)->req = FX_POISON;
}

static int new_run(void *arg)
{
	struct new_arg *a = arg;
	return rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, a->cfg, &a->req);
}

static void new_untouched(void *arg)
{
	assert_ptr_equal(((struct new_arg *)arg)->req, FX_POISON);
}

static void new_cleanup(void *arg, bool succeeded)
{
	if (succeeded)
		assert_int_equal(rpma_conn_req_delete(&((struct new_arg *)arg)->req), 0);
}

static const struct fx_ctor new_ctor = {
	.prelude = new_prelude,
	.run = new_run,
	.untouched = new_untouched,
	.cleanup = new_cleanup,
};

static void new__each_provider_failure(void **state)
{
	(void)state;
	struct new_arg arg = { 0 };
	/* address info, id, resolve address, resolve route, channel, CQ, QP */
	assert_true(fx_each_provider_failure(&new_ctor, &arg, EPROTO) >= 7);
}

static void new__each_provider_failure_rcq(void **state)
{
	(void)state;
	struct new_arg arg = { 0 };
	arg.cfg = fx_cfg(8, 8, false);
	assert_true(fx_each_provider_failure(&new_ctor, &arg, EPROTO) >= 9);
	fx_cfg_delete(&arg.cfg);
}

static void new__each_provider_failure_rcq_shared(void **state)
{
	(void)state;
	struct new_arg arg = { 0 };
	arg.cfg = fx_cfg(8, 8, true);
	assert_true(fx_each_provider_failure(&new_ctor, &arg, EPROTO) >= 8);
	fx_cfg_delete(&arg.cfg);
}

static void new__route_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = FX_POISON;
	fake_verbs_fail(FAKE_RESOLVE_ROUTE, 1, ETIMEDOUT);
	assert_int_equal(rpma_conn_req_new(fx_peer, FX_ADDR, FX_PORT, NULL, &req), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ETIMEDOUT);
	assert_ptr_equal(req, FX_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
}

/* rpma_conn_req_delete */

static void delete__null_req_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_conn_req_delete(NULL));
}

static void delete__null_req(void **state)
{
	(void)state;
	struct rpma_conn_req *req = NULL;
	FX_REFUSED(0, rpma_conn_req_delete(&req));
	assert_null(req);
}

static void delete__active(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_QP), 1);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void delete__passive_rejects(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);
	/* the CONNECT_REQUEST event is acknowledged, the incoming id destroyed */
	assert_int_equal(fake_verbs_calls(FAKE_ACK_CM_EVENT), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void delete__passive_reject_fails(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	fake_verbs_fail(FAKE_REJECT, 1, ECONNRESET);
	assert_int_equal(rpma_conn_req_delete(&req), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ECONNRESET);
	assert_null(req);
	/* a failed reject does not stop the clean-up */
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void delete__destroy_cq_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(NULL, &id);
	struct ibv_cq *icq = id->qp->send_cq;
	struct ibv_comp_channel *ich = icq->channel;
	fake_verbs_fail(FAKE_DESTROY_CQ, 1, EBUSY);
	assert_int_equal(rpma_conn_req_delete(&req), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);
	assert_null(req);
	/* the id is destroyed all the same; only the CQ (and the channel it holds) stay */
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_true(fake_verbs_live_objects() - base <= 2);
	assert_int_equal(fx_extra_cq_destroy(icq), 0);
	if (fake_verbs_live_objects() != base)
		assert_int_equal(fx_extra_comp_channel_destroy(ich), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
}

/* rpma_conn_req_connect */

static void connect__null_req_ptr(void **state)
{
	(void)state;
	struct rpma_conn *conn = FX_POISON;
	FX_INVAL(rpma_conn_req_connect(NULL, NULL, &conn));
	assert_ptr_equal(conn, FX_POISON);
}

static void connect__null_req(void **state)
{
	(void)state;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = FX_POISON;
	FX_INVAL(rpma_conn_req_connect(&req, NULL, &conn));
	assert_ptr_equal(conn, FX_POISON);
}

/*
 * An invalid argument next to a valid request: no connection is initiated,
 * and the request is consumed (librpma 1.x: "on failure *req_ptr is
 * consumed and set to NULL"), rejecting a passive one, with nothing leaked.
 */
static void connect_refused(const struct rpma_conn_private_data *pdata, bool with_conn_ptr)
{
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct rpma_conn *conn = FX_POISON;
	assert_int_equal(rpma_conn_req_connect(&req, pdata, with_conn_ptr ? &conn : NULL),
			 RPMA_E_INVAL);
	assert_ptr_equal(conn, FX_POISON);
	assert_int_equal(fake_verbs_calls(FAKE_CONNECT), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_EVENT_CHANNEL), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void connect__null_conn_ptr(void **state)
{
	(void)state;
	connect_refused(NULL, false);
}

static void connect__pdata_len_zero(void **state)
{
	(void)state;
	struct rpma_conn_private_data pdata = { buf, 0 };
	connect_refused(&pdata, true);
}

static void connect__pdata_ptr_null(void **state)
{
	(void)state;
	struct rpma_conn_private_data pdata = { NULL, 8 };
	connect_refused(&pdata, true);
}

static void connect__active(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(NULL, &id);
	char hello[] = "hello from the client";
	struct rpma_conn_private_data pdata = { hello, sizeof(hello) };
	struct rpma_conn *conn = NULL;

	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), 0);
	assert_null(req);
	assert_non_null(conn);
	assert_int_equal(fake_verbs_calls(FAKE_CONNECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);

	uint8_t len = 0;
	const void *sent = fake_verbs_last_conn_pdata(&len);
	assert_int_equal(len, sizeof(hello));
	assert_non_null(sent);
	assert_memory_equal(sent, hello, sizeof(hello));

	/* the connection has its own event channel */
	assert_non_null(id->channel);
	int fd = -1;
	assert_int_equal(rpma_conn_get_event_fd(conn, &fd), 0);
	assert_false(fx_fd_readable(fd));
	fake_verbs_push_cm_event(id->channel, RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	assert_true(fx_fd_readable(fd));
	uint32_t qp_num = 0;
	assert_int_equal(rpma_conn_get_qp_num(conn, &qp_num), 0);
	assert_int_equal(qp_num, id->qp->qp_num);

	fx_conn_delete(&conn);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void connect__active_no_pdata(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	uint8_t len = 0xff;
	(void)fake_verbs_last_conn_pdata(&len);
	assert_int_equal(len, 0);
	fx_conn_delete(&conn);
}

static void connect__passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, "req", 4, &id);
	char welcome[] = "welcome, client";
	struct rpma_conn_private_data pdata = { welcome, sizeof(welcome) };
	struct rpma_conn *conn = NULL;

	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), 0);
	assert_null(req);
	assert_non_null(conn);
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_CONNECT), 0);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
	/* the CONNECT_REQUEST event is acknowledged once accepted */
	assert_int_equal(fake_verbs_calls(FAKE_ACK_CM_EVENT), 1);

	uint8_t len = 0;
	const void *sent = fake_verbs_last_conn_pdata(&len);
	assert_int_equal(len, sizeof(welcome));
	assert_memory_equal(sent, welcome, sizeof(welcome));

	/* its events come on its own channel, not on the endpoint's */
	assert_non_null(id->channel);
	assert_ptr_not_equal(id->channel, evch);
	int fd = -1, ep_fd = -1;
	assert_int_equal(rpma_conn_get_event_fd(conn, &fd), 0);
	assert_int_equal(rpma_ep_get_fd(ep, &ep_fd), 0);
	assert_int_not_equal(fd, ep_fd);
	assert_false(fx_fd_readable(fd));
	fake_verbs_push_cm_event(id->channel, RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	assert_true(fx_fd_readable(fd));
	assert_false(fx_fd_readable(ep_fd));

	fx_conn_delete(&conn);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void connect__connect_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_CONNECT, 1, ECONNREFUSED);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ECONNREFUSED);
	assert_null(req);
	assert_ptr_equal(conn, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void connect__accept_fails(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_ACCEPT, 1, ECONNABORTED);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ECONNABORTED);
	assert_null(req);
	assert_ptr_equal(conn, FX_POISON);
	/* the client hears of it at once: rejected, on its id, once */
	assert_int_equal(fake_verbs_id_calls(id, FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_ACK_CM_EVENT), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void connect__accept_and_reject_fail(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_ACCEPT, 1, ECONNABORTED);
	fake_verbs_fail(FAKE_REJECT, 1, ENODEV);
	fx_log_reset();
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	/* the caller hears of the accept; both failures are logged */
	assert_int_equal(rpma_err_get_provider_error(), ECONNABORTED);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 2);
	assert_non_null(strstr(fx_log_last(), "rdma_reject"));
	assert_null(req);
	assert_ptr_equal(conn, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

/*
 * What connect and accept ask of rdma_cm: as librpma 1.x asked it, as many
 * reads in flight as the devices allow both ways (a flush is a read), flow
 * control, and 7 RNR retries, which means retrying until the receiver is
 * ready; but 6 transport retries, not 7, which soft RoCE takes for "retry
 * forever" (a peer gone without a word would never be noticed).
 */
static void expect_librpma_conn_param(const void *pdata, uint8_t len)
{
	const struct rdma_conn_param *p = fake_verbs_last_conn_param();
	assert_non_null(p);
	assert_int_equal(p->responder_resources, RDMA_MAX_RESP_RES);
	assert_int_equal(p->initiator_depth, RDMA_MAX_INIT_DEPTH);
	assert_int_equal(p->flow_control, 1);
	assert_int_equal(p->retry_count, 6);
	assert_int_equal(p->rnr_retry_count, 7);
	/* the QP's own number and SRQ use, not overridden */
	assert_int_equal(p->srq, 0);
	assert_int_equal(p->qp_num, 0);
	assert_int_equal(p->private_data_len, len);
	if (len == 0)
		assert_null(p->private_data);
	else
		assert_memory_equal(p->private_data, pdata, len);
}

static void connect__conn_param(void **state)
{
	(void)state;
	static char hello[] = "hello";
	struct rpma_conn_private_data pdata = { hello, sizeof(hello) };
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	for (int passive = 0; passive <= 1; passive++) {
		for (int with_pdata = 0; with_pdata <= 1; with_pdata++) {
			struct rpma_conn_req *req =
			    passive ? fx_req_passive(ep, evch, NULL, NULL, 0, NULL)
				    : fx_req_active(NULL, NULL);
			struct rpma_conn *conn = NULL;
			unsigned calls = fake_verbs_calls(passive ? FAKE_ACCEPT : FAKE_CONNECT);
			assert_int_equal(
			    rpma_conn_req_connect(&req, with_pdata ? &pdata : NULL, &conn), 0);
			assert_int_equal(fake_verbs_calls(passive ? FAKE_ACCEPT : FAKE_CONNECT),
					 calls + 1);
			expect_librpma_conn_param(with_pdata ? hello : NULL,
						  with_pdata ? sizeof(hello) : 0);
			fx_conn_delete(&conn);
		}
	}
	fx_shutdown(&ep);
}

/*
 * Moving the id to the connection's channel is the set-up's last step;
 * when it fails the id must still be on a live channel to carry the reject
 * (librdmacm writes it there), and nothing of the connection is left.
 */
static void connect__setup_fails_client_still_rejected(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_MIGRATE_ID, 1, ENOMEM);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_ptr_equal(conn, FX_POISON);
	if (fake_verbs_misuse() != 0)
		fail_msg("rdma-core misused: %s", fake_verbs_last_misuse());
	assert_int_equal(fake_verbs_id_calls(id, FAKE_REJECT), 1);
	assert_false(fake_verbs_id_live(id));
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void connect__connect_fails_no_reject(void **state)
{
	(void)state;
	/* an active side has nobody to reject */
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_CONNECT, 1, ETIMEDOUT);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
}

static void connect__pdata_too_long(void **state)
{
	(void)state;
	/* rdma_connect carries at most 56 bytes: the provider refuses more */
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	static char big[57];
	struct rpma_conn_private_data pdata = { big, sizeof(big) };
	struct rpma_conn *conn = FX_POISON;
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EINVAL);
	assert_null(req);
	assert_ptr_equal(conn, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void connect__passive_pdata_196(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	static char big[196];
	memset(big, 0x3c, sizeof(big));
	struct rpma_conn_private_data pdata = { big, sizeof(big) };
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, &pdata, &conn), 0);
	uint8_t len = 0;
	const void *sent = fake_verbs_last_conn_pdata(&len);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(sent, big, sizeof(big));
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

static void connect__reject_only_on_its_id(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id1 = NULL, *id2 = NULL;
	struct rpma_conn_req *req1 = fx_req_passive(ep, evch, NULL, NULL, 0, &id1);
	struct rpma_conn_req *req2 = fx_req_passive(ep, evch, NULL, NULL, 0, &id2);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req1, NULL, &conn), 0);
	assert_int_equal(fake_verbs_id_calls(id1, FAKE_ACCEPT), 1);
	assert_int_equal(fake_verbs_id_calls(id2, FAKE_ACCEPT), 0);
	assert_int_equal(rpma_conn_req_delete(&req2), 0);
	assert_int_equal(fake_verbs_id_calls(id1, FAKE_REJECT), 0);
	assert_false(fake_verbs_id_live(id2));
	assert_true(fake_verbs_id_live(id1));
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

struct connect_arg {
	bool passive;
	struct rpma_conn_cfg *cfg;
	struct rpma_ep *ep;
	struct rdma_event_channel *evch;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
};

static void connect_setup(void *arg)
{
	struct connect_arg *a = arg;
	if (a->passive)
		a->ep = fx_listen(&a->evch);
}

static void connect_prelude(void *arg)
{
	struct connect_arg *a = arg;
	a->conn = FX_POISON;
	if (a->passive)
		a->req = fx_req_passive(a->ep, a->evch, a->cfg, "pd", 2, NULL);
	else
		a->req = fx_req_active(a->cfg, NULL);
}

static int connect_run(void *arg)
{
	struct connect_arg *a = arg;
	static char pd[] = "private";
	struct rpma_conn_private_data pdata = { pd, sizeof(pd) };
	int ret = rpma_conn_req_connect(&a->req, &pdata, &a->conn);
	/* consumed whatever happened */
	assert_null(a->req);
	return ret;
}

static void connect_untouched(void *arg)
{
	assert_ptr_equal(((struct connect_arg *)arg)->conn, FX_POISON);
}

static void connect_cleanup(void *arg, bool succeeded)
{
	struct connect_arg *a = arg;
	if (succeeded)
		fx_conn_delete(&a->conn);
	if (a->passive)
		fx_shutdown(&a->ep);
}

static const struct fx_ctor connect_ctor = {
	.setup = connect_setup,
	.prelude = connect_prelude,
	.run = connect_run,
	.untouched = connect_untouched,
	.cleanup = connect_cleanup,
};

static void connect__each_provider_failure_active(void **state)
{
	(void)state;
	struct connect_arg arg = { 0 };
	/* at least: event channel, migration, connect */
	assert_true(fx_each_provider_failure(&connect_ctor, &arg, EPROTO) >= 3);
}

static void connect__each_provider_failure_passive(void **state)
{
	(void)state;
	struct connect_arg arg = { 0 };
	arg.passive = true;
	/* at least: accept, event channel, migration */
	assert_true(fx_each_provider_failure(&connect_ctor, &arg, EPROTO) >= 3);
}

static void connect__each_provider_failure_active_rcq(void **state)
{
	(void)state;
	struct connect_arg arg = { 0 };
	arg.cfg = fx_cfg(4, 4, true);
	assert_true(fx_each_provider_failure(&connect_ctor, &arg, EPROTO) >= 3);
	fx_cfg_delete(&arg.cfg);
}

/* rpma_conn_req_recv */

static void recv__null_req(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	FX_INVAL(rpma_conn_req_recv(NULL, mr, 0, 8, buf));
	assert_int_equal(fake_verbs_recvs(), 0);
	fx_mr_dereg(&mr);
}

static void recv__null_dst_with_len(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	FX_INVAL(rpma_conn_req_recv(req, NULL, 0, 8, buf));
	assert_int_equal(fake_verbs_recvs(), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* librpma 1.x: a receive before the connection needs a region, even for 0 bytes */
static void recv__null_dst_zero_length(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	FX_INVAL(rpma_conn_req_recv(req, NULL, 0, 0, buf));
	assert_int_equal(fake_verbs_recvs(), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

static void recv__beyond_region(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, 64, RPMA_MR_USAGE_RECV);
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	FX_INVAL(rpma_conn_req_recv(req, mr, 60, 8, buf));
	FX_INVAL(rpma_conn_req_recv(req, mr, 65, 0, buf));
	FX_INVAL(rpma_conn_req_recv(req, mr, SIZE_MAX, 2, buf));
	assert_int_equal(fake_verbs_recvs(), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_mr_dereg(&mr);
}

static void recv__active(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(NULL, &id);
	int ctx = 0;
	assert_int_equal(rpma_conn_req_recv(req, mr, 16, 32, &ctx), 0);
	assert_int_equal(fake_verbs_recvs(), 1);
	const struct fake_recv_record *r = fake_verbs_recv(0);
	assert_ptr_equal(r->qp, id->qp);
	assert_null(r->srq);
	assert_int_equal(r->wr.wr_id, (uintptr_t)&ctx);
	assert_int_equal(r->wr.num_sge, 1);
	assert_int_equal(r->sge[0].addr, (uintptr_t)buf + 16);
	assert_int_equal(r->sge[0].length, 32);
	assert_int_equal(fake_verbs_sends(), 0);
	/* the receive stays posted when the request becomes a connection */
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_int_equal(fake_verbs_recvs(), 1);
	fx_conn_delete(&conn);
	fx_mr_dereg(&mr);
}

static void recv__passive(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, sizeof(buf), buf + 1), 0);
	assert_int_equal(fake_verbs_recvs(), 1);
	const struct fake_recv_record *r = fake_verbs_recv(0);
	assert_ptr_equal(r->qp, id->qp);
	assert_int_equal(r->wr.wr_id, (uintptr_t)(buf + 1));
	assert_int_equal(r->sge[0].addr, (uintptr_t)buf);
	assert_int_equal(r->sge[0].length, sizeof(buf));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
	fx_mr_dereg(&mr);
}

static void recv__same_lkey_as_conn_recv(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	struct rpma_mr_local *other = fx_mr(buf + 128, 64, RPMA_MR_USAGE_RECV);
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, 8, NULL), 0);
	assert_int_equal(rpma_conn_req_recv(req, other, 0, 8, NULL), 0);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_int_equal(rpma_recv(conn, mr, 8, 8, NULL), 0);
	assert_int_equal(fake_verbs_recvs(), 3);
	/* the key of the region, whichever object posts */
	assert_int_equal(fake_verbs_recv(0)->sge[0].lkey, fx_lkey_of(buf, sizeof(buf)));
	assert_int_equal(fake_verbs_recv(1)->sge[0].lkey, fx_lkey_of(buf + 128, 64));
	assert_int_equal(fake_verbs_recv(2)->sge[0].lkey, fx_lkey_of(buf, sizeof(buf)));
	fx_conn_delete(&conn);
	fx_mr_dereg(&other);
	fx_mr_dereg(&mr);
}

static void recv__post_fails(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	fake_verbs_fail(FAKE_POST_RECV, 1, ENOMEM);
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, 8, NULL), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	/* the request is intact */
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, 8, NULL), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_mr_dereg(&mr);
}

/* rpma_conn_req_get_private_data */

static void get_private_data__null_req(void **state)
{
	(void)state;
	struct rpma_conn_private_data pdata = { FX_POISON, 77 };
	FX_INVAL(rpma_conn_req_get_private_data(NULL, &pdata));
	assert_ptr_equal(pdata.ptr, FX_POISON);
	assert_int_equal(pdata.len, 77);
}

static void get_private_data__null_pdata(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	FX_INVAL(rpma_conn_req_get_private_data(req, NULL));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

static void get_private_data__passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	uint8_t sent[56];
	for (unsigned i = 0; i < sizeof(sent); i++)
		sent[i] = (uint8_t)(0xa0 + i);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, sent, sizeof(sent), NULL);
	struct rpma_conn_private_data pdata = { NULL, 0 };
	assert_int_equal(rpma_conn_req_get_private_data(req, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(sent));
	assert_non_null(pdata.ptr);
	assert_memory_equal(pdata.ptr, sent, sizeof(sent));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

static void get_private_data__passive_none(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	struct rpma_conn_private_data pdata = { FX_POISON, 77 };
	assert_int_equal(rpma_conn_req_get_private_data(req, &pdata), 0);
	assert_int_equal(pdata.len, 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

static void get_private_data__active(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct rpma_conn_private_data pdata = { FX_POISON, 77 };
	assert_int_equal(rpma_conn_req_get_private_data(req, &pdata), 0);
	assert_int_equal(pdata.len, 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* the getters of a request's extensions, through one shape: out is what each writes */
struct getter {
	const char *out_name; /* the output argument, as a refusal names it */
	int (*call)(const struct rpma_conn_req *req, void *out);
};

static int call_get_peer_addr(const struct rpma_conn_req *req, void *out)
{
	return rpma_conn_req_get_peer_addr(req, out);
}

static int call_get_local_addr(const struct rpma_conn_req *req, void *out)
{
	return rpma_conn_req_get_local_addr(req, out);
}

static int call_get_qp_num(const struct rpma_conn_req *req, void *out)
{
	return rpma_conn_req_get_qp_num(req, out);
}

static int call_get_peer_qp_num(const struct rpma_conn_req *req, void *out)
{
	return rpma_conn_req_get_peer_qp_num(req, out);
}

static const struct getter getters[] = {
	{ "addr", call_get_peer_addr },
	{ "addr", call_get_local_addr },
	{ "qp_num", call_get_qp_num },
	{ "qp_num", call_get_peer_qp_num },
};

/*
 * Each getter refuses a NULL request, writing nothing, and a NULL output,
 * each with one error logged that names the argument
 */
static void getters__refuse_null(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(getters) / sizeof(getters[0]); i++) {
		struct sockaddr_storage out, before;
		memset(&out, 0xa5, sizeof(out));
		before = out;
		fx_log_reset();
		FX_INVAL(getters[i].call(NULL, &out));
		assert_memory_equal(&out, &before, sizeof(out));
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 1);
		assert_non_null(strstr(fx_log_last(), "req"));

		struct rpma_conn_req *req = fx_req_active(NULL, NULL);
		fx_log_reset();
		FX_INVAL(getters[i].call(req, NULL));
		assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 1);
		assert_non_null(strstr(fx_log_last(), getters[i].out_name));
		assert_int_equal(rpma_conn_req_delete(&req), 0);
	}
}

/* rpma_conn_req_get_peer_addr */

/* whether the bytes of addr from offset to its end are all zero */
static bool zero_from(const struct sockaddr_storage *addr, size_t offset)
{
	const unsigned char *p = (const unsigned char *)addr;
	for (size_t i = offset; i < sizeof(*addr); i++)
		if (p[i] != 0)
			return false;
	return true;
}

/*
 * The passive side: the client's IPv4 address, the sockaddr_in exactly, and
 * nothing of what lies behind it in the cm_id; no allocation, no call into
 * rdma-core.
 */
static void get_peer_addr__passive_ipv4(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	/* what rdma_cm wrote, and bytes behind the address that are not part of it */
	memset(&id->route.addr.dst_storage, 0x5a, sizeof(id->route.addr.dst_storage));
	struct sockaddr_in *sin = &id->route.addr.dst_sin;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(40123);
	assert_int_equal(inet_pton(AF_INET, "192.168.7.21", &sin->sin_addr), 1);
	struct sockaddr_in expected = *sin;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	struct fx_calls calls;
	fx_calls_snap(&calls);
	ut_alloc_count();
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &addr), 0);
	assert_int_equal(ut_alloc_disarm(), 0);
	fx_assert_no_calls(&calls);

	assert_int_equal(addr.ss_family, AF_INET);
	assert_memory_equal(&addr, &expected, sizeof(expected));
	assert_true(zero_from(&addr, sizeof(struct sockaddr_in)));
	const struct sockaddr_in *got = (const struct sockaddr_in *)&addr;
	assert_int_equal(ntohs(got->sin_port), 40123);
	assert_int_equal(ntohl(got->sin_addr.s_addr), 0xc0a80715);

	/* the request is untouched: it still accepts the client */
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

/* the passive side: the client's IPv6 address, the sockaddr_in6 exactly */
static void get_peer_addr__passive_ipv6(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	memset(&id->route.addr.dst_storage, 0x5a, sizeof(id->route.addr.dst_storage));
	struct sockaddr_in6 *sin6 = &id->route.addr.dst_sin6;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(7204);
	sin6->sin6_flowinfo = htonl(0x12345);
	sin6->sin6_scope_id = 3;
	assert_int_equal(inet_pton(AF_INET6, "fd00:1:2::42", &sin6->sin6_addr), 1);
	struct sockaddr_in6 expected = *sin6;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_INET6);
	assert_memory_equal(&addr, &expected, sizeof(expected));
	assert_true(zero_from(&addr, sizeof(struct sockaddr_in6)));

	/* a copy: changing it changes nothing in the request */
	memset(&addr, 0, sizeof(addr));
	assert_memory_equal(&id->route.addr.dst_sin6, &expected, sizeof(expected));

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

/* AF_IB: the whole sockaddr_ib, which fits in a sockaddr_storage */
static void get_peer_addr__ib(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	memset(&id->route.addr.dst_storage, 0x5a, sizeof(id->route.addr.dst_storage));
	struct sockaddr_ib *sib = (struct sockaddr_ib *)&id->route.addr.dst_storage;
	sib->sib_family = AF_IB;
	sib->sib_pkey = htons(0xffff);
	sib->sib_sid = 0x0106000000001234ULL;
	struct sockaddr_ib expected = *sib;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_IB);
	assert_memory_equal(&addr, &expected, sizeof(expected));
	assert_true(zero_from(&addr, sizeof(struct sockaddr_ib)));

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

/* a family of unknown layout: the family alone, nothing else copied */
static void get_peer_addr__unknown_family(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	memset(&id->route.addr.dst_storage, 0x5a, sizeof(id->route.addr.dst_storage));
	id->route.addr.dst_addr.sa_family = AF_UNSPEC;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_UNSPEC);
	assert_true(zero_from(&addr, 0));

	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

/* the active side: the address it connects to, as resolved */
static void get_peer_addr__active(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_INET);
	const struct sockaddr_in *got = (const struct sockaddr_in *)&addr;
	struct in_addr want;
	assert_int_equal(inet_pton(AF_INET, FX_ADDR, &want), 1);
	assert_int_equal(got->sin_addr.s_addr, want.s_addr);
	assert_int_equal(ntohs(got->sin_port), atoi(FX_PORT));
	assert_true(zero_from(&addr, sizeof(struct sockaddr_in)));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

static void get_peer_addr__active_ipv6(void **state)
{
	(void)state;
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_conn_req_new(fx_peer, "fd00::7", "4711", NULL, &req), 0);
	struct sockaddr_storage addr;
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_INET6);
	const struct sockaddr_in6 *got = (const struct sockaddr_in6 *)&addr;
	struct in6_addr want;
	assert_int_equal(inet_pton(AF_INET6, "fd00::7", &want), 1);
	assert_memory_equal(&got->sin6_addr, &want, sizeof(want));
	assert_int_equal(ntohs(got->sin6_port), 4711);
	assert_true(zero_from(&addr, sizeof(struct sockaddr_in6)));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* rpma_conn_req_get_local_addr */

/*
 * The passive side: the address the request came in at, not the client's;
 * the sockaddr_in exactly, no allocation, no call into rdma-core, and the
 * request still accepts the client.
 */
static void get_local_addr__passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	memset(&id->route.addr.src_storage, 0x5a, sizeof(id->route.addr.src_storage));
	struct sockaddr_in *sin = &id->route.addr.src_sin;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(7204);
	assert_int_equal(inet_pton(AF_INET, "192.168.7.1", &sin->sin_addr), 1);
	struct sockaddr_in expected = *sin;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	struct fx_calls calls;
	fx_calls_snap(&calls);
	ut_alloc_count();
	assert_int_equal(rpma_conn_req_get_local_addr(req, &addr), 0);
	assert_int_equal(ut_alloc_disarm(), 0);
	fx_assert_no_calls(&calls);

	assert_int_equal(addr.ss_family, AF_INET);
	assert_memory_equal(&addr, &expected, sizeof(expected));
	assert_true(zero_from(&addr, sizeof(struct sockaddr_in)));

	/* the other end is still the client's */
	struct sockaddr_storage peer;
	assert_int_equal(rpma_conn_req_get_peer_addr(req, &peer), 0);
	assert_memory_not_equal(&peer, &addr, sizeof(struct sockaddr_in));

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

/* the active side: the IPv6 source the route was resolved from, exactly */
static void get_local_addr__active_ipv6(void **state)
{
	(void)state;
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_conn_req_new(fx_peer, "fd00::7", "4711", NULL, &req), 0);
	struct rdma_cm_id *id = fake_verbs_last_id();
	memset(&id->route.addr.src_storage, 0x5a, sizeof(id->route.addr.src_storage));
	struct sockaddr_in6 *sin6 = &id->route.addr.src_sin6;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(51234);
	sin6->sin6_scope_id = 2;
	assert_int_equal(inet_pton(AF_INET6, "fd00::5", &sin6->sin6_addr), 1);
	struct sockaddr_in6 expected = *sin6;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	assert_int_equal(rpma_conn_req_get_local_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_INET6);
	assert_memory_equal(&addr, &expected, sizeof(expected));
	assert_true(zero_from(&addr, sizeof(struct sockaddr_in6)));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* a family of unknown layout: the family alone, as for the peer's */
static void get_local_addr__unknown_family(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(NULL, &id);
	memset(&id->route.addr.src_storage, 0x5a, sizeof(id->route.addr.src_storage));
	id->route.addr.src_addr.sa_family = AF_UNSPEC;

	struct sockaddr_storage addr;
	memset(&addr, 0xa5, sizeof(addr));
	assert_int_equal(rpma_conn_req_get_local_addr(req, &addr), 0);
	assert_int_equal(addr.ss_family, AF_UNSPEC);
	assert_true(zero_from(&addr, 0));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* rpma_conn_req_get_qp_num */

/* what no call may write on failure */
#define QP_NUM_POISON 0x5eed5eedu

/*
 * The active side: the QP rpma_conn_req_new made, read in place (no
 * allocation, no call into rdma-core); the connection keeps it.
 */
static void get_qp_num__active(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_active(NULL, &id);
	uint32_t qp_num = QP_NUM_POISON;
	struct fx_calls calls;
	fx_calls_snap(&calls);
	ut_alloc_count();
	assert_int_equal(rpma_conn_req_get_qp_num(req, &qp_num), 0);
	assert_int_equal(ut_alloc_disarm(), 0);
	fx_assert_no_calls(&calls);
	assert_int_equal(qp_num, id->qp->qp_num);

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	uint32_t conn_qp_num = 0;
	assert_int_equal(rpma_conn_get_qp_num(conn, &conn_qp_num), 0);
	assert_int_equal(conn_qp_num, qp_num);
	fx_conn_delete(&conn);
}

/*
 * The passive side before the application consents: no queue pair, and
 * asking for its number makes none; the request still accepts the client.
 */
static void get_qp_num__passive_before_consent(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	uint32_t qp_num = QP_NUM_POISON;
	fx_log_reset();
	FX_INVAL(rpma_conn_req_get_qp_num(req, &qp_num));
	assert_int_equal(qp_num, QP_NUM_POISON);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 1);
	assert_non_null(strstr(fx_log_last(), "queue pair"));
	assert_null(id->qp);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_CQ), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 1);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

/* a receive posted before accepting is consent: the request's QP from then on */
static void get_qp_num__passive_after_recv(void **state)
{
	(void)state;
	struct rpma_mr_local *mr = fx_mr(buf, sizeof(buf), RPMA_MR_USAGE_RECV);
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	assert_int_equal(rpma_conn_req_recv(req, mr, 0, sizeof(buf), NULL), 0);
	assert_non_null(id->qp);
	uint32_t qp_num = QP_NUM_POISON;
	struct fx_calls calls;
	fx_calls_snap(&calls);
	assert_int_equal(rpma_conn_req_get_qp_num(req, &qp_num), 0);
	fx_assert_no_calls(&calls);
	assert_int_equal(qp_num, id->qp->qp_num);
	assert_ptr_equal(fake_verbs_recv(0)->qp, id->qp);
	/* the number the client's request named is another */
	uint32_t peer = 0;
	assert_int_equal(rpma_conn_req_get_peer_qp_num(req, &peer), 0);
	assert_int_not_equal(peer, qp_num);

	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	uint32_t conn_qp_num = 0;
	assert_int_equal(rpma_conn_get_qp_num(conn, &conn_qp_num), 0);
	assert_int_equal(conn_qp_num, qp_num);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
	fx_mr_dereg(&mr);
}

static void persist_nothing(const void *ptr, size_t len)
{
	(void)ptr;
	(void)len;
}

/* offering a region for GPSPM is consent too */
static void get_qp_num__passive_after_gpspm_offer(void **state)
{
	(void)state;
	static char area[256] __attribute__((aligned(64)));
	struct rpma_mr_local *mr = fx_mr(area, sizeof(area), RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	assert_int_equal(rpma_mr_set_persist_fn(mr, persist_nothing), 0);
	struct rpma_conn_cfg *cfg = fx_cfg(16, 0, false);
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED), 0);
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, NULL, 0, &id);
	uint32_t qp_num = QP_NUM_POISON;
	FX_INVAL(rpma_conn_req_get_qp_num(req, &qp_num));
	assert_int_equal(rpma_conn_req_gpspm_offer(req, mr), 0);
	assert_non_null(id->qp);
	assert_int_equal(rpma_conn_req_get_qp_num(req, &qp_num), 0);
	assert_int_equal(qp_num, id->qp->qp_num);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
	fx_mr_dereg(&mr);
}

/* rpma_conn_req_get_peer_qp_num */

/* a client's request whose connect-request event carried qp_num */
static struct rpma_conn_req *req_naming_qp(struct rpma_ep *ep, struct rdma_event_channel *evch,
					   uint32_t qp_num, struct rdma_cm_id **id)
{
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, NULL, 0);
	struct rdma_cm_event *event = fake_verbs_last_pushed_cm_event();
	assert_non_null(event);
	event->param.conn.qp_num = qp_num;
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	assert_non_null(req);
	if (id != NULL)
		*id = fake_verbs_last_id();
	return req;
}

/*
 * The passive side: the number the client's request carried, kept after
 * its event was acknowledged, read with no allocation, no call into
 * rdma-core and no queue pair made; each request its own.
 */
static void get_peer_qp_num__passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = req_naming_qp(ep, evch, 0xabcdef, &id);
	struct rpma_conn_req *other = req_naming_qp(ep, evch, 0x000001, NULL);
	assert_int_equal(fake_verbs_calls(FAKE_ACK_CM_EVENT), 2);

	uint32_t qp_num = QP_NUM_POISON;
	struct fx_calls calls;
	fx_calls_snap(&calls);
	ut_alloc_count();
	assert_int_equal(rpma_conn_req_get_peer_qp_num(req, &qp_num), 0);
	assert_int_equal(ut_alloc_disarm(), 0);
	fx_assert_no_calls(&calls);
	assert_int_equal(qp_num, 0xabcdef);
	assert_null(id->qp);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);
	assert_int_equal(rpma_conn_req_get_peer_qp_num(other, &qp_num), 0);
	assert_int_equal(qp_num, 0x000001);

	/* the request still accepts the client */
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	fx_conn_delete(&conn);
	assert_int_equal(rpma_conn_req_delete(&other), 0);
	fx_shutdown(&ep);
}

/* the number the fake's REQ names by default: what the event carried, whatever it is */
static void get_peer_qp_num__as_carried(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, NULL, 0);
	uint32_t carried = fake_verbs_last_pushed_cm_event()->param.conn.qp_num;
	assert_int_not_equal(carried, 0);
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	uint32_t qp_num = QP_NUM_POISON;
	assert_int_equal(rpma_conn_req_get_peer_qp_num(req, &qp_num), 0);
	assert_int_equal(qp_num, carried);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

/* a request that carried 0 names no queue pair: RPMA_E_NOSUPP, logged as info only */
static void get_peer_qp_num__none(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_req *req = req_naming_qp(ep, evch, 0, NULL);
	enum rpma_log_level was;
	assert_int_equal(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &was), 0);
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO), 0);
	uint32_t qp_num = QP_NUM_POISON;
	fx_log_reset();
	FX_REFUSED(RPMA_E_NOSUPP, rpma_conn_req_get_peer_qp_num(req, &qp_num));
	assert_int_equal(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, was), 0);
	assert_int_equal(qp_num, QP_NUM_POISON);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 0);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_INFO), 1);
	assert_non_null(strstr(fx_log_last(), "queue pair"));

	/* the request is untouched: it still accepts the client */
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

/* iWARP's connection manager carries no number: RPMA_E_NOSUPP */
static void get_peer_qp_num__iwarp(void **state)
{
	(void)state;
	assert_int_equal(rpma_peer_delete(&fx_peer), 0);
	fake_verbs_set_iwarp(true);
	assert_int_equal(rpma_peer_new(fake_verbs_context(), &fx_peer), 0);
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	uint32_t qp_num = QP_NUM_POISON;
	FX_REFUSED(RPMA_E_NOSUPP, rpma_conn_req_get_peer_qp_num(req, &qp_num));
	assert_int_equal(qp_num, QP_NUM_POISON);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

/* an outgoing request learns its peer's queue pair only once connected */
static void get_peer_qp_num__active(void **state)
{
	(void)state;
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	uint32_t qp_num = QP_NUM_POISON;
	fx_log_reset();
	FX_INVAL(rpma_conn_req_get_peer_qp_num(req, &qp_num));
	assert_int_equal(qp_num, QP_NUM_POISON);
	assert_int_equal(fx_log_count(RPMA_LOG_LEVEL_ERROR), 1);
	assert_non_null(strstr(fx_log_last(), "connected"));
	assert_int_equal(rpma_conn_req_delete(&req), 0);
}

/* rpma_conn_req_reject */

static void reject__null_req_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_conn_req_reject(NULL, NULL));
}

static void reject__null_req(void **state)
{
	(void)state;
	struct rpma_conn_req *req = NULL;
	FX_INVAL(rpma_conn_req_reject(&req, NULL));
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
}

static void reject__active_is_kept(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_active(NULL, NULL);
	struct rpma_conn_req *kept = req;
	FX_INVAL(rpma_conn_req_reject(&req, NULL));
	/* nothing was sent and the request can still be used */
	assert_ptr_equal(req, kept);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void reject__empty_pdata_is_kept(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	struct rpma_conn_req *kept = req;
	struct rpma_conn_private_data no_len = { buf, 0 };
	struct rpma_conn_private_data no_ptr = { NULL, 4 };
	FX_INVAL(rpma_conn_req_reject(&req, &no_len));
	FX_INVAL(rpma_conn_req_reject(&req, &no_ptr));
	assert_ptr_equal(req, kept);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

/*
 * The answer travels in the reject; the request's QP is never handed to
 * rdma_accept (which would connect it), and everything is released.
 */
static void reject__carries_pdata(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, "hello", 6, &id);
	static const char answer[] = "a challenge";
	struct rpma_conn_private_data pdata = { (void *)answer, sizeof(answer) };
	assert_int_equal(rpma_conn_req_reject(&req, &pdata), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_id_calls(id, FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);
	uint8_t len = 0;
	const void *sent = fake_verbs_last_conn_pdata(&len);
	assert_non_null(sent);
	assert_int_equal(len, sizeof(answer));
	assert_memory_equal(sent, answer, sizeof(answer));
	/* the refused peer never had a queue pair made for it */
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_QP), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void reject__no_pdata(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	assert_int_equal(rpma_conn_req_reject(&req, NULL), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_null(fake_verbs_last_conn_pdata(NULL));
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

/* a GPSPM request's queues and serving thread go with it */
static void reject__gpspm_thread(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_cfg *cfg = fx_cfg(16, 0, false);
	assert_int_equal(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD), 0);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, NULL, 0, NULL);
	struct rpma_conn_private_data pdata = { buf, 16 };
	assert_int_equal(rpma_conn_req_reject(&req, &pdata), 0);
	assert_null(req);
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
}

/* a failed reject is reported, and the request is released all the same */
static void reject__reject_fails(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	struct rpma_conn_private_data pdata = { buf, 200 };
	fake_verbs_fail(FAKE_REJECT, 1, EINVAL);
	assert_int_equal(rpma_conn_req_reject(&req, &pdata), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EINVAL);
	assert_non_null(strstr(fx_log_last(), "rdma_reject"));
	assert_null(req);
	/* one reject only: the failed one is not followed by an empty one */
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void reject__destroy_fails(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	fake_verbs_fail(FAKE_DESTROY_ID, 1, EBUSY);
	assert_int_equal(rpma_conn_req_reject(&req, NULL), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);
	assert_null(req);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	fx_discard();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(new__null_peer),
		T(new__null_addr),
		T(new__null_port),
		T(new__null_req_ptr),
		T(new__success),
		T(new__cfg_sizes),
		T(new__shared_channel),
		T(new__cfg_is_not_kept),
		T(new__resolution),
		T(new__cfg_timeout_and_queues),
		T(new__ack_timeout_from_cfg),
		T(new__ack_timeout_refused),
		T(new__ack_timeout_passive),
		T(new__address_not_numeric),
		T(new__each_provider_failure),
		T(new__each_provider_failure_rcq),
		T(new__each_provider_failure_rcq_shared),
		T(new__route_fails),
		T(delete__null_req_ptr),
		T(delete__null_req),
		T(delete__active),
		T(delete__passive_rejects),
		T(delete__passive_reject_fails),
		T(delete__destroy_cq_fails),
		T(connect__null_req_ptr),
		T(connect__null_req),
		T(connect__null_conn_ptr),
		T(connect__pdata_len_zero),
		T(connect__pdata_ptr_null),
		T(connect__active),
		T(connect__active_no_pdata),
		T(connect__passive),
		T(connect__connect_fails),
		T(connect__accept_fails),
		T(connect__accept_and_reject_fail),
		T(connect__connect_fails_no_reject),
		T(connect__conn_param),
		T(connect__setup_fails_client_still_rejected),
		T(connect__pdata_too_long),
		T(connect__passive_pdata_196),
		T(connect__reject_only_on_its_id),
		T(connect__each_provider_failure_active),
		T(connect__each_provider_failure_passive),
		T(connect__each_provider_failure_active_rcq),
		T(recv__null_req),
		T(recv__null_dst_with_len),
		T(recv__null_dst_zero_length),
		T(recv__beyond_region),
		T(recv__active),
		T(recv__passive),
		T(recv__same_lkey_as_conn_recv),
		T(recv__post_fails),
		T(get_private_data__null_req),
		T(get_private_data__null_pdata),
		T(get_private_data__passive),
		T(get_private_data__passive_none),
		T(get_private_data__active),
		T(getters__refuse_null),
		T(get_peer_addr__passive_ipv4),
		T(get_peer_addr__passive_ipv6),
		T(get_peer_addr__ib),
		T(get_peer_addr__unknown_family),
		T(get_peer_addr__active),
		T(get_peer_addr__active_ipv6),
		T(get_local_addr__passive),
		T(get_local_addr__active_ipv6),
		T(get_local_addr__unknown_family),
		T(get_qp_num__active),
		T(get_qp_num__passive_before_consent),
		T(get_qp_num__passive_after_recv),
		T(get_qp_num__passive_after_gpspm_offer),
		T(get_peer_qp_num__passive),
		T(get_peer_qp_num__as_carried),
		T(get_peer_qp_num__none),
		T(get_peer_qp_num__iwarp),
		T(get_peer_qp_num__active),
		T(reject__null_req_ptr),
		T(reject__null_req),
		T(reject__active_is_kept),
		T(reject__empty_pdata_is_kept),
		T(reject__carries_pdata),
		T(reject__no_pdata),
		T(reject__gpspm_thread),
		T(reject__reject_fails),
		T(reject__destroy_fails),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("conn_req", tests, NULL, NULL);
}
