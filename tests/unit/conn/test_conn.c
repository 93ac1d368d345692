/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conn.c -- the connection object: events, private data, getters,
 * disconnect, delete and the shared completion channel
 */

#include <errno.h>
#include <string.h>

#include "fake_extra.h"
#include "fixture.h"

/* rpma_conn_get_event_fd */

static void get_event_fd__null_conn(void **state)
{
	(void)state;
	int fd = 12345;
	FX_INVAL(rpma_conn_get_event_fd(NULL, &fd));
	assert_int_equal(fd, 12345);
}

static void get_event_fd__null_fd(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_get_event_fd(conn, NULL));
	fx_conn_delete(&conn);
}

static void get_event_fd__success(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	int fd = -12345;
	FX_REFUSED(0, rpma_conn_get_event_fd(conn, &fd));
	assert_true(fd >= 0);
	/* readable exactly while an event of the connection waits */
	assert_false(fx_fd_readable(fd));
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	assert_true(fx_fd_readable(fd));
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_CLOSED);
	assert_false(fx_fd_readable(fd));
	fx_conn_delete(&conn);
}

/* rpma_conn_next_event */

static void next_event__null_conn(void **state)
{
	(void)state;
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	FX_INVAL(rpma_conn_next_event(NULL, &ev));
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
}

static void next_event__null_event(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	FX_INVAL(rpma_conn_next_event(conn, NULL));
	/* the event is still there */
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
	fx_conn_delete(&conn);
}

/* one cm event in, the expected result and connection event out */
static void expect_event(enum rdma_cm_event_type type, int ret, enum rpma_conn_event expected)
{
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	unsigned acks = fake_verbs_calls(FAKE_ACK_CM_EVENT);
	fake_verbs_push_cm_event(fx_conn_channel(id), type, id, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), ret);
	if (ret == 0)
		assert_int_equal(ev, expected);
	/* every event taken from the channel is acknowledged */
	assert_int_equal(fake_verbs_calls(FAKE_ACK_CM_EVENT), acks + 1);
	fx_conn_delete(&conn);
}

static void next_event__established(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_ESTABLISHED, 0, RPMA_CONN_ESTABLISHED);
}

static void next_event__addr_error(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_ADDR_ERROR, 0, RPMA_CONN_UNREACHABLE);
}

static void next_event__route_error(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_ROUTE_ERROR, 0, RPMA_CONN_UNREACHABLE);
}

static void next_event__unreachable(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_UNREACHABLE, 0, RPMA_CONN_UNREACHABLE);
}

static void next_event__connect_error(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_CONNECT_ERROR, 0, RPMA_CONN_LOST);
}

static void next_event__device_removal(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_DEVICE_REMOVAL, 0, RPMA_CONN_LOST);
}

static void next_event__disconnected(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_DISCONNECTED, 0, RPMA_CONN_CLOSED);
}

static void next_event__timewait_exit(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, RPMA_CONN_CLOSED);
}

static void next_event__rejected(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_REJECTED, 0, RPMA_CONN_REJECTED);
}

static void next_event__unknown_addr_resolved(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, RPMA_E_UNKNOWN, RPMA_CONN_UNDEFINED);
}

static void next_event__unknown_connect_response(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_CONNECT_RESPONSE, RPMA_E_UNKNOWN, RPMA_CONN_UNDEFINED);
}

static void next_event__unknown_multicast_join(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_MULTICAST_JOIN, RPMA_E_UNKNOWN, RPMA_CONN_UNDEFINED);
}

static void next_event__unknown_addr_change(void **state)
{
	(void)state;
	expect_event(RDMA_CM_EVENT_ADDR_CHANGE, RPMA_E_UNKNOWN, RPMA_CONN_UNDEFINED);
}

static void next_event__no_event(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, ENODATA);
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_NO_EVENT);
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
	fx_conn_delete(&conn);
}

static void next_event__get_fails(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	fake_verbs_fail(FAKE_GET_CM_EVENT, 1, EBADF);
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBADF);
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
	fx_conn_delete(&conn);
}

static void next_event__ack_fails(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	int base = fake_verbs_live_objects();
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	fake_verbs_fail(FAKE_ACK_CM_EVENT, 1, EINVAL);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EINVAL);
	assert_int_equal(ev, RPMA_CONN_UNDEFINED);
	/*
	 * The event stays with rdma_cm for good: deleting the connection
	 * works, though the fake then sees an id with an unacknowledged event.
	 */
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_null(conn);
	assert_true(fake_verbs_live_objects() - base <= 1);
	fx_discard();
}

static void next_event__in_order(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rdma_event_channel *ch = fx_conn_channel(id);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_DISCONNECTED, id, NULL, 0);
	fake_verbs_push_cm_event(ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, id, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_CLOSED);
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_CLOSED);
	fx_conn_delete(&conn);
}

static void next_event__established_stores_pdata(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	uint8_t accept_data[40];
	for (unsigned i = 0; i < sizeof(accept_data); i++)
		accept_data[i] = (uint8_t)(3 * i + 1);

	/* nothing before the connection is established */
	struct rpma_conn_private_data pdata = { FX_POISON, 99 };
	assert_int_equal(rpma_conn_get_private_data(conn, &pdata), 0);
	assert_int_equal(pdata.len, 0);

	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_ESTABLISHED, id, accept_data,
				 sizeof(accept_data));
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);

	/* a copy that outlives the acknowledged event */
	assert_int_equal(rpma_conn_get_private_data(conn, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(accept_data));
	assert_non_null(pdata.ptr);
	assert_memory_equal(pdata.ptr, accept_data, sizeof(accept_data));

	/* and later events do not replace it */
	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_DISCONNECTED, id, "x", 1);
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_CLOSED);
	assert_int_equal(rpma_conn_get_private_data(conn, &pdata), 0);
	assert_int_equal(pdata.len, sizeof(accept_data));
	assert_memory_equal(pdata.ptr, accept_data, sizeof(accept_data));
	fx_conn_delete(&conn);
}

/*
 * As librpma: the server's connection carries the client's private data of
 * the request, and an ESTABLISHED event without private data keeps it.
 */
static void next_event__passive_keeps_request_pdata(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	const char client_data[] = "client's descriptors";
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn =
	    fx_conn_passive(ep, evch, NULL, client_data, sizeof(client_data), &id);

	struct rpma_conn_private_data before = { NULL, 0 }, after = { NULL, 0 };
	assert_int_equal(rpma_conn_get_private_data(conn, &before), 0);
	bool before_ok = before.len == sizeof(client_data) &&
			 memcmp(before.ptr, client_data, sizeof(client_data)) == 0;

	fake_verbs_push_cm_event(fx_conn_channel(id), RDMA_CM_EVENT_ESTABLISHED, id, NULL, 0);
	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	assert_int_equal(rpma_conn_next_event(conn, &ev), 0);
	assert_int_equal(ev, RPMA_CONN_ESTABLISHED);
	assert_int_equal(rpma_conn_get_private_data(conn, &after), 0);
	bool after_ok = after.len == sizeof(client_data) &&
			memcmp(after.ptr, client_data, sizeof(client_data)) == 0;

	fx_conn_delete(&conn);
	fx_shutdown(&ep);
	assert_true(before_ok);
	assert_true(after_ok);
}

/* rpma_conn_get_private_data */

static void get_private_data__null_conn(void **state)
{
	(void)state;
	struct rpma_conn_private_data pdata = { FX_POISON, 77 };
	FX_INVAL(rpma_conn_get_private_data(NULL, &pdata));
	assert_ptr_equal(pdata.ptr, FX_POISON);
	assert_int_equal(pdata.len, 77);
}

static void get_private_data__null_pdata(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_get_private_data(conn, NULL));
	fx_conn_delete(&conn);
}

/* rpma_conn_apply_remote_peer_cfg */

static void apply_remote_peer_cfg__null_conn(void **state)
{
	(void)state;
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	FX_INVAL(rpma_conn_apply_remote_peer_cfg(NULL, pcfg));
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
}

static void apply_remote_peer_cfg__null_pcfg(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_apply_remote_peer_cfg(conn, NULL));
	fx_conn_delete(&conn);
}

static void apply_remote_peer_cfg__success(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	struct rpma_peer_cfg *pcfg = NULL;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), 0);
	FX_REFUSED(0, rpma_conn_apply_remote_peer_cfg(conn, pcfg));
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
	fx_conn_delete(&conn);
}

/* rpma_conn_get_qp_num */

static void get_qp_num__null_conn(void **state)
{
	(void)state;
	uint32_t qp_num = 0xabcdef;
	FX_INVAL(rpma_conn_get_qp_num(NULL, &qp_num));
	assert_int_equal(qp_num, 0xabcdef);
}

static void get_qp_num__null_qp_num(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_get_qp_num(conn, NULL));
	fx_conn_delete(&conn);
}

static void get_qp_num__success(void **state)
{
	(void)state;
	struct rdma_cm_id *id1 = NULL, *id2 = NULL;
	struct rpma_conn *conn1 = fx_conn_active(NULL, &id1);
	struct rpma_conn *conn2 = fx_conn_active(NULL, &id2);
	uint32_t n1 = 0, n2 = 0;
	assert_int_equal(rpma_conn_get_qp_num(conn1, &n1), 0);
	assert_int_equal(rpma_conn_get_qp_num(conn2, &n2), 0);
	assert_int_equal(n1, id1->qp->qp_num);
	assert_int_equal(n2, id2->qp->qp_num);
	fx_conn_delete(&conn2);
	fx_conn_delete(&conn1);
}

/* rpma_conn_get_cq, rpma_conn_get_rcq */

static void get_cq__null_conn(void **state)
{
	(void)state;
	struct rpma_cq *cq = FX_POISON;
	FX_INVAL(rpma_conn_get_cq(NULL, &cq));
	assert_ptr_equal(cq, FX_POISON);
}

static void get_cq__null_cq_ptr(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_get_cq(conn, NULL));
	fx_conn_delete(&conn);
}

static void get_cq__success(void **state)
{
	(void)state;
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct rpma_cq *cq = NULL;
	FX_REFUSED(0, rpma_conn_get_cq(conn, &cq));
	assert_non_null(cq);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(cq, &fd), 0);
	assert_int_equal(fd, id->qp->send_cq->channel->fd);
	/* the main CQ is the one that sends complete on */
	struct ibv_wc wc = fx_wc(42, IBV_WC_SEND, IBV_WC_SUCCESS);
	fake_verbs_push_wc(id->qp->send_cq, &wc);
	struct ibv_wc got;
	assert_int_equal(rpma_cq_get_wc(cq, 1, &got, NULL), 0);
	assert_int_equal(got.wr_id, 42);
	fx_conn_delete(&conn);
}

static void get_rcq__null_conn(void **state)
{
	(void)state;
	struct rpma_cq *rcq = FX_POISON;
	FX_INVAL(rpma_conn_get_rcq(NULL, &rcq));
	assert_ptr_equal(rcq, FX_POISON);
}

static void get_rcq__null_rcq_ptr(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	FX_INVAL(rpma_conn_get_rcq(conn, NULL));
	fx_conn_delete(&conn);
}

static void get_rcq__none(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	struct rpma_cq *rcq = FX_POISON;
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_null(rcq);
	fx_conn_delete(&conn);
}

static void get_rcq__present(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 6, false);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_non_null(rcq);
	assert_ptr_not_equal(cq, rcq);
	int fd = -1;
	assert_int_equal(rpma_cq_get_fd(rcq, &fd), 0);
	assert_int_equal(fd, id->qp->recv_cq->channel->fd);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

/* rpma_conn_disconnect */

static void disconnect__null_conn(void **state)
{
	(void)state;
	FX_INVAL(rpma_conn_disconnect(NULL));
}

static void disconnect__success(void **state)
{
	(void)state;
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	assert_int_equal(rpma_conn_disconnect(conn), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DISCONNECT), 1);
	fx_conn_delete(&conn);
}

static void disconnect__fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	fake_verbs_fail(FAKE_DISCONNECT, 1, ENOTCONN);
	assert_int_equal(rpma_conn_disconnect(conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), ENOTCONN);
	fx_conn_delete(&conn);
	assert_int_equal(fake_verbs_live_objects(), base);
}

/* rpma_conn_delete */

static void delete__null_conn_ptr(void **state)
{
	(void)state;
	FX_INVAL(rpma_conn_delete(NULL));
}

static void delete__null_conn(void **state)
{
	(void)state;
	struct rpma_conn *conn = NULL;
	FX_REFUSED(0, rpma_conn_delete(&conn));
	assert_null(conn);
}

static void delete__active(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_null(conn);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_QP), 1);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void delete__passive(void **state)
{
	(void)state;
	struct rdma_event_channel *evch = NULL;
	struct rpma_ep *ep = fx_listen(&evch);
	int base = fake_verbs_live_objects();
	struct rpma_conn *conn = fx_conn_passive(ep, evch, NULL, "abc", 3, NULL);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_null(conn);
	assert_int_equal(fake_verbs_live_objects(), base);
	fx_shutdown(&ep);
}

static void delete__with_rcq_shared(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	int cfg_live = fake_verbs_live_objects();
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_CQ), 2);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_COMP_CHANNEL), 1);
	assert_int_equal(fake_verbs_live_objects(), cfg_live);
	fx_cfg_delete(&cfg);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void delete__with_rcq(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	assert_int_equal(rpma_conn_delete(&conn), 0);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_CQ), 2);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_COMP_CHANNEL), 2);
	fx_cfg_delete(&cfg);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void delete__destroy_cq_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(NULL, &id);
	struct ibv_cq *icq = id->qp->send_cq;
	struct ibv_comp_channel *ich = icq->channel;
	fake_verbs_fail(FAKE_DESTROY_CQ, 1, EBUSY);
	assert_int_equal(rpma_conn_delete(&conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);
	assert_null(conn);
	/* the rest is released all the same: only the CQ (and the channel it holds) stay */
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_ID), 1);
	assert_true(fake_verbs_live_objects() - base <= 2);
	assert_int_equal(fx_extra_cq_destroy(icq), 0);
	if (fake_verbs_live_objects() != base)
		assert_int_equal(fx_extra_comp_channel_destroy(ich), 0);
	assert_int_equal(fake_verbs_live_objects(), base);
}

static void delete__destroy_id_fails(void **state)
{
	(void)state;
	int base = fake_verbs_live_objects();
	struct rpma_conn *conn = fx_conn_active(NULL, NULL);
	fake_verbs_fail(FAKE_DESTROY_ID, 1, EBUSY);
	assert_int_equal(rpma_conn_delete(&conn), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EBUSY);
	assert_null(conn);
	assert_int_equal(fake_verbs_calls(FAKE_DESTROY_CQ), 1);
	assert_true(fake_verbs_live_objects() - base <= 2);
	fx_discard();
}

/* rpma_conn_get_compl_fd */

static void get_compl_fd__null_conn(void **state)
{
	(void)state;
	int fd = 12345;
	FX_INVAL(rpma_conn_get_compl_fd(NULL, &fd));
	assert_int_equal(fd, 12345);
}

static void get_compl_fd__null_fd(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	FX_INVAL(rpma_conn_get_compl_fd(conn, NULL));
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void get_compl_fd__not_shared(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	int fd = 12345;
	FX_REFUSED(RPMA_E_NOT_SHARED_CHNL, rpma_conn_get_compl_fd(conn, &fd));
	assert_int_equal(fd, 12345);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void get_compl_fd__shared(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	int fd = -12345;
	FX_REFUSED(0, rpma_conn_get_compl_fd(conn, &fd));
	assert_int_equal(fd, id->qp->send_cq->channel->fd);
	assert_int_equal(fd, id->qp->recv_cq->channel->fd);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

/* rpma_conn_wait */

static void wait__null_conn(void **state)
{
	(void)state;
	struct rpma_cq *cq = FX_POISON;
	bool is_rcq = true;
	FX_INVAL(rpma_conn_wait(NULL, 0, &cq, &is_rcq));
	assert_ptr_equal(cq, FX_POISON);
	assert_true(is_rcq);
}

static void wait__null_cq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	bool is_rcq = true;
	FX_INVAL(rpma_conn_wait(conn, 0, NULL, &is_rcq));
	assert_true(is_rcq);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__not_shared(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, false);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	struct rpma_cq *cq = FX_POISON;
	FX_REFUSED(RPMA_E_NOT_SHARED_CHNL, rpma_conn_wait(conn, 0, &cq, NULL));
	/* on every failure but RPMA_E_INVAL, *cq is NULL: no stale CQ to drain */
	assert_null(cq);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__main_cq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct ibv_cq *ibv_cq = id->qp->send_cq;
	unsigned notify = fake_verbs_calls(FAKE_REQ_NOTIFY_CQ);
	fake_verbs_push_cq_event(ibv_cq->channel, ibv_cq);

	struct rpma_cq *cq = NULL, *main_cq = NULL;
	bool is_rcq = true;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, &is_rcq), 0);
	assert_int_equal(rpma_conn_get_cq(conn, &main_cq), 0);
	assert_ptr_equal(cq, main_cq);
	assert_false(is_rcq);
	assert_int_equal(fake_verbs_cq_acks(ibv_cq), 1);
	assert_int_equal(fake_verbs_cq_acks(id->qp->recv_cq), 0);
	assert_true(fake_verbs_cq_armed(ibv_cq));
	assert_int_equal(fake_verbs_calls(FAKE_REQ_NOTIFY_CQ), notify + 1);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__rcq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct ibv_cq *ibv_rcq = id->qp->recv_cq;
	fake_verbs_push_cq_event(ibv_rcq->channel, ibv_rcq);

	struct rpma_cq *cq = NULL, *rcq = NULL;
	bool is_rcq = false;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, &is_rcq), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_ptr_equal(cq, rcq);
	assert_true(is_rcq);
	assert_int_equal(fake_verbs_cq_acks(ibv_rcq), 1);
	assert_int_equal(fake_verbs_cq_acks(id->qp->send_cq), 0);
	assert_true(fake_verbs_cq_armed(ibv_rcq));
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__is_rcq_optional(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct ibv_cq *ibv_rcq = id->qp->recv_cq;
	fake_verbs_push_cq_event(ibv_rcq->channel, ibv_rcq);
	struct rpma_cq *cq = NULL, *rcq = NULL;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, NULL), 0);
	assert_int_equal(rpma_conn_get_rcq(conn, &rcq), 0);
	assert_ptr_equal(cq, rcq);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__shared_without_rcq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 0, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct ibv_cq *ibv_cq = id->qp->send_cq;
	fake_verbs_push_cq_event(ibv_cq->channel, ibv_cq);
	struct rpma_cq *cq = NULL, *main_cq = NULL;
	bool is_rcq = true;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, &is_rcq), 0);
	assert_int_equal(rpma_conn_get_cq(conn, &main_cq), 0);
	assert_ptr_equal(cq, main_cq);
	assert_false(is_rcq);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__unknown_cq(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	struct ibv_comp_channel *channel = id->qp->send_cq->channel;
	/* a CQ on the connection's channel that the connection did not make */
	struct ibv_cq *stranger = fx_extra_cq(channel);
	assert_non_null(stranger);
	fake_verbs_push_cq_event(channel, stranger);

	struct rpma_cq *cq = FX_POISON;
	bool is_rcq = true;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, &is_rcq), RPMA_E_UNKNOWN);
	assert_null(cq);
	assert_true(is_rcq);
	assert_int_equal(fake_verbs_cq_events_queued(channel), 0);
	assert_int_equal(fake_verbs_cq_acks(id->qp->send_cq), 0);
	assert_int_equal(fake_verbs_cq_acks(id->qp->recv_cq), 0);

	if (fake_verbs_cq_acks(stranger) == 0)
		fx_extra_cq_ack(stranger, 1);
	assert_int_equal(fx_extra_cq_destroy(stranger), 0);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__no_event(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rpma_conn *conn = fx_conn_active(cfg, NULL);
	struct rpma_cq *cq = FX_POISON;
	fake_verbs_fail(FAKE_GET_CQ_EVENT, 1, EAGAIN);
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, NULL), RPMA_E_NO_COMPLETION);
	assert_null(cq);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

static void wait__rearm_fails(void **state)
{
	(void)state;
	struct rpma_conn_cfg *cfg = fx_cfg(10, 10, true);
	struct rdma_cm_id *id = NULL;
	struct rpma_conn *conn = fx_conn_active(cfg, &id);
	fake_verbs_push_cq_event(id->qp->send_cq->channel, id->qp->send_cq);
	fake_verbs_fail(FAKE_REQ_NOTIFY_CQ, 1, EIO);
	struct rpma_cq *cq = FX_POISON;
	assert_int_equal(rpma_conn_wait(conn, 0, &cq, NULL), RPMA_E_PROVIDER);
	assert_int_equal(rpma_err_get_provider_error(), EIO);
	/* as librpma 1.x: no CQ is handed out when it could not be re-armed */
	assert_null(cq);
	/* the event was acknowledged all the same */
	assert_int_equal(fake_verbs_cq_acks(id->qp->send_cq), 1);
	fx_conn_delete(&conn);
	fx_cfg_delete(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, fx_setup, fx_teardown)
		T(get_event_fd__null_conn),
		T(get_event_fd__null_fd),
		T(get_event_fd__success),
		T(next_event__null_conn),
		T(next_event__null_event),
		T(next_event__established),
		T(next_event__addr_error),
		T(next_event__route_error),
		T(next_event__unreachable),
		T(next_event__connect_error),
		T(next_event__device_removal),
		T(next_event__disconnected),
		T(next_event__timewait_exit),
		T(next_event__rejected),
		T(next_event__unknown_addr_resolved),
		T(next_event__unknown_connect_response),
		T(next_event__unknown_multicast_join),
		T(next_event__unknown_addr_change),
		T(next_event__no_event),
		T(next_event__get_fails),
		T(next_event__ack_fails),
		T(next_event__in_order),
		T(next_event__established_stores_pdata),
		T(next_event__passive_keeps_request_pdata),
		T(get_private_data__null_conn),
		T(get_private_data__null_pdata),
		T(apply_remote_peer_cfg__null_conn),
		T(apply_remote_peer_cfg__null_pcfg),
		T(apply_remote_peer_cfg__success),
		T(get_qp_num__null_conn),
		T(get_qp_num__null_qp_num),
		T(get_qp_num__success),
		T(get_cq__null_conn),
		T(get_cq__null_cq_ptr),
		T(get_cq__success),
		T(get_rcq__null_conn),
		T(get_rcq__null_rcq_ptr),
		T(get_rcq__none),
		T(get_rcq__present),
		T(disconnect__null_conn),
		T(disconnect__success),
		T(disconnect__fails),
		T(delete__null_conn_ptr),
		T(delete__null_conn),
		T(delete__active),
		T(delete__passive),
		T(delete__with_rcq_shared),
		T(delete__with_rcq),
		T(delete__destroy_cq_fails),
		T(delete__destroy_id_fails),
		T(get_compl_fd__null_conn),
		T(get_compl_fd__null_fd),
		T(get_compl_fd__not_shared),
		T(get_compl_fd__shared),
		T(wait__null_conn),
		T(wait__null_cq),
		T(wait__not_shared),
		T(wait__main_cq),
		T(wait__rcq),
		T(wait__is_rcq_optional),
		T(wait__shared_without_rcq),
		T(wait__unknown_cq),
		T(wait__no_event),
		T(wait__rearm_fails),
#undef T
	};
	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests_name("conn", tests, NULL, NULL);
}
