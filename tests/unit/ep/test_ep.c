/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ep.c -- rpma_ep_listen, rpma_ep_shutdown, rpma_ep_get_fd,
 * rpma_ep_next_conn_req
 */

#include <errno.h>
#include <string.h>

#include "fixture.h"

/* rpma_ep_listen */

static void listen__null_peer(void **state)
{
	(void)state;
	struct rpma_ep *ep = FX_POISON;
	FX_INVAL(rpma_ep_listen(NULL, FX_ADDR, FX_PORT, &ep));
	assert_ptr_equal(ep, FX_POISON);
}

static void listen__null_addr(void **state)
{
	(void)state;
	struct rpma_ep *ep = FX_POISON;
	FX_INVAL(rpma_ep_listen(fx_peer, NULL, FX_PORT, &ep));
	assert_ptr_equal(ep, FX_POISON);
}

static void listen__null_port(void **state)
{
	(void)state;
	struct rpma_ep *ep = FX_POISON;
	FX_INVAL(rpma_ep_listen(fx_peer, FX_ADDR, NULL, &ep));
	assert_ptr_equal(ep, FX_POISON);
}

static void listen__null_ep_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, NULL));
}

static void listen__success(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_ep *ep = NULL;
	assert_int_equal(rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, &ep), 0);
	assert_non_null(ep);

	struct rdma_cm_id *id = fake_verbs_last_id();
	assert_non_null(id);
	assert_non_null(id->channel);
	assert_int_equal(fake_verbs_calls(FAKE_LISTEN), 1);
	assert_int_equal(fake_verbs_calls(FAKE_BIND_ADDR), 1);
	/* the address information is not kept */
	assert_int_equal(fake_verbs_calls(FAKE_FREEADDRINFO), fake_verbs_calls(FAKE_GETADDRINFO));
	/* nothing is accepted or connected by listening */
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CONNECT), 0);

	/* bound to the address and port given, listening */
	assert_string_equal(fake_verbs_last_getaddrinfo_node(), FX_ADDR);
	assert_string_equal(fake_verbs_last_getaddrinfo_service(), FX_PORT);
	assert_true(fake_verbs_last_getaddrinfo_flags() & RAI_PASSIVE);
	assert_true(fake_verbs_id_listening(id));

	fx_shutdown(&ep);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void listen__wildcard(void **state)
{
	(void)state;
	struct rpma_ep *ep = NULL;
	assert_int_equal(rpma_ep_listen(fx_peer, "0.0.0.0", FX_PORT, &ep), 0);
	struct rdma_event_channel *evch = fake_verbs_last_id()->channel;
	/* a request on any device still gets its queues */
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, NULL, NULL, 0, &id);
	assert_non_null(id->qp);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

struct listen_arg {
	struct rpma_ep *ep;
};

static void listen_prelude(void *arg)
{
	((struct listen_arg *)arg)->ep = FX_POISON;
}

static int listen_run(void *arg)
{
	return rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, &((struct listen_arg *)arg)->ep);
}

static void listen_untouched(void *arg)
{
	assert_ptr_equal(((struct listen_arg *)arg)->ep, FX_POISON);
}

static void listen_cleanup(void *arg, bool succeeded)
{
	if (succeeded)
		fx_shutdown(&((struct listen_arg *)arg)->ep);
}

static void listen__each_provider_failure(void **state)
{
	(void)state;
	struct listen_arg arg;
	const struct fx_ctor ctor = {
		.prelude = listen_prelude,
		.run = listen_run,
		.untouched = listen_untouched,
		.cleanup = listen_cleanup,
	};
	/* at least: event channel, id, address, bind, listen */
	assert_true(fx_each_provider_failure(&ctor, &arg, EPROTO) >= 5);
}

static void listen__listen_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_ep *ep = FX_POISON;
	fake_verbs_fail(FAKE_LISTEN, 1, EADDRINUSE);
	assert_int_equal(rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, &ep), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EADDRINUSE);
	assert_ptr_equal(ep, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
	/* a provider failure is logged */
	assert_true(fx_log_count(RPMA_LOG_LEVEL_ERROR) >= 1);
}

static void listen__address_unknown(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_ep *ep = FX_POISON;
	fake_verbs_fail(FAKE_GETADDRINFO, 1, EADDRNOTAVAIL);
	assert_int_equal(rpma_ep_listen(fx_peer, FX_ADDR, FX_PORT, &ep), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EADDRNOTAVAIL);
	assert_ptr_equal(ep, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
	assert_int_equal(fake_verbs_calls(FAKE_LISTEN), 0);
}

static void listen__two_endpoints(void **state)
{
	(void)state;
	struct rdma_event_channel *ch1 = NULL, *ch2 = NULL;
	struct rpma_ep *ep1 = fx_listen(&ch1);
	struct rpma_ep *ep2 = fx_listen(&ch2);
	assert_ptr_not_equal(ep1, ep2);
	assert_ptr_not_equal(ch1, ch2);
	int fd1 = -1, fd2 = -1;
	assert_int_equal(rpma_ep_get_fd(ep1, &fd1), 0);
	assert_int_equal(rpma_ep_get_fd(ep2, &fd2), 0);
	assert_int_equal(fd1, ch1->fd);
	assert_int_equal(fd2, ch2->fd);
	fx_shutdown(&ep1);
	fx_shutdown(&ep2);
}

/* rpma_ep_shutdown */

static void shutdown__null_ep_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_ep_shutdown(NULL));
}

static void shutdown__null_ep(void **state)
{
	(void)state;
	struct rpma_ep *ep = NULL;
	FX_REFUSED(0, rpma_ep_shutdown(&ep));
	assert_null(ep);
}

static void shutdown__success(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_ep *ep = fx_listen(NULL);
	assert_int_equal(rpma_ep_shutdown(&ep), 0);
	assert_null(ep);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_EVENT_CHANNEL), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void shutdown__destroy_id_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_ep *ep = fx_listen(NULL);
	fake_verbs_fail(FAKE_DESTROY_ID, 1, EBUSY);
	assert_int_equal(rpma_ep_shutdown(&ep), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);

	/*
	 * As librpma 1.x's code did: the endpoint is released and *ep_ptr set
	 * to NULL even on failure. The id rdma-core refused to destroy stays
	 * with it, and so does its channel (librdmacm forbids destroying a
	 * channel that still has an id).
	 */
	assert_null(ep);
	assert_int_equal(fake_verbs_misuse(), 0);
	assert_int_equal(fake_verbs_live_objects(), base + 2);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_EVENT_CHANNEL), 0);
	fx_discard();
}

static void shutdown__leaves_connections(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, NULL, NULL, 0, &id);
	fx_shutdown(&ep);

	/* the connection lives on after its endpoint */
	uint32_t qp_num = 0;
	assert_int_equal(rpma_conn_get_qp_num(conn, &qp_num), 0);
	assert_int_equal(qp_num, id->qp->qp_num);
	assert_int_equal(rpma_conn_disconnect(conn), 0);
	fx_conn_delete(&conn);
}

/* rpma_ep_get_fd */

static void get_fd__null_ep(void **state)
{
	(void)state;
	int fd = 12345;
	FX_INVAL(rpma_ep_get_fd(NULL, &fd));
	assert_int_equal(fd, 12345);
}

static void get_fd__null_fd(void **state)
{
	(void)state;
	struct rpma_ep *ep = fx_listen(NULL);
	FX_INVAL(rpma_ep_get_fd(ep, NULL));
	fx_shutdown(&ep);
}

static void get_fd__success(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int fd = -12345;
	FX_REFUSED(0, rpma_ep_get_fd(ep, &fd));
	assert_int_equal(fd, evch->fd);
	fx_shutdown(&ep);
}

/* rpma_ep_next_conn_req */

static void next_conn_req__null_ep(void **state)
{
	(void)state;
	struct rpma_conn_req *req = FX_POISON;
	FX_INVAL(rpma_ep_next_conn_req(NULL, NULL, &req));
	assert_ptr_equal(req, FX_POISON);
}

static void next_conn_req__null_req_ptr(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, NULL, 0);
	FX_INVAL(rpma_ep_next_conn_req(ep, NULL, NULL));

	/* the pending request was not consumed */
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

static void next_conn_req__success(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();

	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, NULL, 0);
	struct rdma_cm_id *id = fake_verbs_last_id();
	struct rpma_conn_req *req = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), 0);
	assert_non_null(req);
	assert_int_equal(fake_verbs_calls(FAKE_GET_CM_EVENT), 1);
	/* nothing answered yet, nothing made for a request not yet consented to */
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 0);
	assert_null(id->qp);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_CQ), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);

	/* connected: the QP belongs to the incoming id, with the main CQ for both queues */
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_non_null(id->qp);
	assert_non_null(id->qp->send_cq);
	assert_ptr_equal(id->qp->recv_cq, id->qp->send_cq);
	assert_null(id->qp->srq);

	fx_conn_delete(&conn);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void next_conn_req__cfg_sizes(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = fx_cfg(37, 23, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, cfg, NULL, 0, &id);

	assert_ptr_not_equal(id->qp->recv_cq, id->qp->send_cq);
	assert_true(id->qp->send_cq->cqe >= 37);
	assert_true(id->qp->recv_cq->cqe >= 23);
	/* separate channels unless asked for a shared one */
	assert_non_null(id->qp->send_cq->channel);
	assert_non_null(id->qp->recv_cq->channel);
	assert_ptr_not_equal(id->qp->send_cq->channel, id->qp->recv_cq->channel);

	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
}

static void next_conn_req__cfg_queues(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = fx_cfg(10, 0, false);
	assert_int_equal(rpma_conn_cfg_set_sq_size(cfg, 21), 0);
	assert_int_equal(rpma_conn_cfg_set_rq_size(cfg, 22), 0);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, cfg, NULL, 0, &id);
	const struct ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(id->qp);
	assert_non_null(attr);
	assert_int_equal(attr->cap.max_send_wr, 21);
	assert_int_equal(attr->cap.max_recv_wr, 22);
	assert_int_equal(attr->qp_type, IBV_QPT_RC);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
}

static void next_conn_req__shared_channel(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_passive(ep, evch, cfg, NULL, 0, &id);

	assert_ptr_not_equal(id->qp->recv_cq, id->qp->send_cq);
	assert_non_null(id->qp->send_cq->channel);
	assert_ptr_equal(id->qp->send_cq->channel, id->qp->recv_cq->channel);

	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
	fx_shutdown(&ep);
}

static void next_conn_req__no_event(void **state)
{
	(void)state;
	struct rpma_ep *ep = fx_listen(NULL);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = FX_POISON;
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, ENODATA);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_NO_EVENT);
	assert_ptr_equal(req, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void next_conn_req__get_cm_event_fails(void **state)
{
	(void)state;
	struct rpma_ep *ep = fx_listen(NULL);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = FX_POISON;
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, EBADF);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBADF);
	assert_ptr_equal(req, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void next_conn_req__not_a_request(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rdma_cm_id *listen_id = fake_verbs_last_id();
	int base = fake_verbs_live_objects();

	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_DEVICE_REMOVAL, listen_id, NULL, 0);
	struct rpma_conn_req *req = FX_POISON;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req), RPMA_E_INVAL);
	assert_ptr_equal(req, FX_POISON);
	/* the event was consumed and acknowledged */
	assert_int_equal(fake_verbs_calls(FAKE_ACK_CM_EVENT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void next_conn_req__reject_fails_too(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, NULL);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_CREATE_QP_EX, 1, ENOMEM);
	fake_verbs_fail(FAKE_REJECT, 1, ECONNRESET);
	fx_log_reset();
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	/* the caller hears of the QP; the reject is logged */
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_non_null(strstr(fx_log_last(), "rdma_reject"));
	assert_null(req);
	assert_ptr_equal(conn, FX_POISON);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

/*
 * A request's configuration is read when the request is taken: what the
 * application changes in it later, or its deletion, does not reach the
 * queues the request gets at connect
 */
static void next_conn_req__keeps_its_cfg(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	struct rpma_conn_cfg *cfg = fx_cfg(37, 23, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, NULL, 0, &id);
	assert_int_equal(rpma_conn_cfg_set_cq_size(cfg, 3), 0);
	assert_int_equal(rpma_conn_cfg_set_rcq_size(cfg, 0), 0);
	fx_cfg_delete(&cfg);
	struct rpma_conn *conn = NULL;
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), 0);
	assert_ptr_not_equal(id->qp->recv_cq, id->qp->send_cq);
	assert_true(id->qp->send_cq->cqe >= 37);
	assert_true(id->qp->recv_cq->cqe >= 23);
	fx_conn_delete(&conn);
	fx_shutdown(&ep);
}

/* nothing of a request's queues is made until it is connected, whatever cfg asks for */
static void next_conn_req__makes_nothing(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn_cfg *cfg = fx_cfg(12, 9, true);
	const int with_cfg = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, cfg, "hello", 6, &id);
	assert_null(id->qp);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_COMP_CHANNEL), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_CQ), 0);
	assert_int_equal(fake_verbs_calls(FAKE_CREATE_QP_EX), 0);
	/* the request's own id is all it holds */
	assert_int_equal(fake_verbs_live_objects(), with_cfg + 1);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_QP), 0);
	fx_cfg_delete(&cfg);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void next_conn_req__requests_in_order(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	const char first[] = "first", second[] = "second";

	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, first, sizeof(first));
	struct rdma_cm_id *id1 = fake_verbs_last_id();
	fake_verbs_push_cm_event(evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, second, sizeof(second));
	struct rdma_cm_id *id2 = fake_verbs_last_id();
	assert_ptr_not_equal(id1, id2);

	struct rpma_conn_req *req1 = NULL, *req2 = NULL;
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req1), 0);
	assert_int_equal(rpma_ep_next_conn_req(ep, NULL, &req2), 0);
	assert_ptr_not_equal(req1, req2);
	assert_null(id1->qp);
	assert_null(id2->qp);

	struct rpma_conn_private_data pd1, pd2;
	assert_int_equal(rpma_conn_req_get_private_data(req1, &pd1), 0);
	assert_int_equal(rpma_conn_req_get_private_data(req2, &pd2), 0);
	assert_int_equal(pd1.len, sizeof(first));
	assert_int_equal(pd2.len, sizeof(second));
	assert_memory_equal(pd1.ptr, first, sizeof(first));
	assert_memory_equal(pd2.ptr, second, sizeof(second));

	assert_int_equal(rpma_conn_req_delete(&req2), 0);
	assert_int_equal(rpma_conn_req_delete(&req1), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

struct next_arg {
	struct rpma_ep *ep;
	struct rdma_event_channel *evch;
	struct rpma_conn_cfg *cfg;
	struct rpma_conn_req *req;
};

static void next_setup(void *arg)
{
	struct next_arg *a = arg;
	a->ep = fx_listen(&a->evch);
}

static void next_prelude(void *arg)
{
	struct next_arg *a = arg;
	static const char pdata[] = "hello";
	a->req = FX_POISON;
	fake_verbs_push_cm_event(a->evch, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, pdata,
				 sizeof(pdata));
}

static int next_run(void *arg)
{
	struct next_arg *a = arg;
	return rpma_ep_next_conn_req(a->ep, a->cfg, &a->req);
}

static void next_untouched(void *arg)
{
	assert_ptr_equal(((struct next_arg *)arg)->req, FX_POISON);
}

static void next_cleanup(void *arg, bool succeeded)
{
	struct next_arg *a = arg;
	if (succeeded)
		assert_int_equal(rpma_conn_req_delete(&a->req), 0);
	/* a request still queued (rdma_get_cm_event failed): take it and reject it */
	if (fake_verbs_cm_events_queued(a->evch) != 0) {
		struct rpma_conn_req *req = NULL;
		assert_int_equal(rpma_ep_next_conn_req(a->ep, NULL, &req), 0);
		assert_int_equal(rpma_conn_req_delete(&req), 0);
	}
	fx_shutdown(&a->ep);
}

static void next_conn_req__each_provider_failure(void **state)
{
	(void)state;
	struct next_arg arg = { 0 };
	const struct fx_ctor ctor = {
		.setup = next_setup,
		.prelude = next_prelude,
		.run = next_run,
		.untouched = next_untouched,
		.cleanup = next_cleanup,
	};
	/* the event; the queues wait for connect */
	assert_true(fx_each_provider_failure(&ctor, &arg, EPROTO) >= 1);
}

static void next_conn_req__each_provider_failure_rcq_shared(void **state)
{
	(void)state;
	struct next_arg arg = { 0 };
	arg.cfg = fx_cfg(12, 9, true);
	const struct fx_ctor ctor = {
		.setup = next_setup,
		.prelude = next_prelude,
		.run = next_run,
		.untouched = next_untouched,
		.cleanup = next_cleanup,
	};
	/* the event alone, whatever cfg asks for */
	assert_true(fx_each_provider_failure(&ctor, &arg, EPROTO) >= 1);
	fx_cfg_delete(&arg.cfg);
}

static void next_conn_req__each_provider_failure_rcq(void **state)
{
	(void)state;
	struct next_arg arg = { 0 };
	arg.cfg = fx_cfg(12, 9, false);
	const struct fx_ctor ctor = {
		.setup = next_setup,
		.prelude = next_prelude,
		.run = next_run,
		.untouched = next_untouched,
		.cleanup = next_cleanup,
	};
	/* the event alone, whatever cfg asks for */
	assert_true(fx_each_provider_failure(&ctor, &arg, EPROTO) >= 1);
	fx_cfg_delete(&arg.cfg);
}

static void next_conn_req__create_qp_fails_rejects(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *client = NULL;
	struct rpma_conn_req *req = fx_req_passive(ep, evch, NULL, NULL, 0, &client);
	struct rpma_conn *conn = FX_POISON;
	fake_verbs_fail(FAKE_CREATE_QP_EX, 1, ENOMEM);
	assert_int_equal(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOMEM);
	assert_ptr_equal(conn, FX_POISON);
	/* the client is told at once, on its own id */
	assert_int_equal(fake_verbs_id_calls(client, FAKE_REJECT), 1);
	assert_int_equal(fake_verbs_calls(FAKE_REJECT), 1);
	assert_false(fake_verbs_id_live(client));
	assert_int_equal(fake_verbs_calls(FAKE_ACCEPT), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
	/* the endpoint still works */
	struct rdma_cm_id *id = NULL;
	req = fx_req_passive(ep, evch, NULL, NULL, 0, &id);
	assert_int_equal(rpma_conn_req_delete(&req), 0);
	fx_shutdown(&ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(listen__null_peer),
		T(listen__null_addr),
		T(listen__null_port),
		T(listen__null_ep_ptr),
		T(listen__success),
		T(listen__wildcard),
		T(listen__each_provider_failure),
		T(listen__listen_fails),
		T(listen__address_unknown),
		T(listen__two_endpoints),
		T(shutdown__null_ep_ptr),
		T(shutdown__null_ep),
		T(shutdown__success),
		T(shutdown__destroy_id_fails),
		T(shutdown__leaves_connections),
		T(get_fd__null_ep),
		T(get_fd__null_fd),
		T(get_fd__success),
		T(next_conn_req__null_ep),
		T(next_conn_req__null_req_ptr),
		T(next_conn_req__success),
		T(next_conn_req__cfg_sizes),
		T(next_conn_req__cfg_queues),
		T(next_conn_req__shared_channel),
		T(next_conn_req__no_event),
		T(next_conn_req__get_cm_event_fails),
		T(next_conn_req__not_a_request),
		T(next_conn_req__requests_in_order),
		T(next_conn_req__reject_fails_too),
		T(next_conn_req__keeps_its_cfg),
		T(next_conn_req__makes_nothing),
		T(next_conn_req__each_provider_failure),
		T(next_conn_req__each_provider_failure_rcq_shared),
		T(next_conn_req__each_provider_failure_rcq),
		T(next_conn_req__create_qp_fails_rejects),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("ep", tests, NULL, NULL);
}
