// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_unreachable.c -- nobody listens on the port, and the attempt fails
 * quickly: on RoCE the peer's connection manager rejects the unknown
 * service, so the connection ends with RPMA_CONN_REJECTED; on iWARP the TCP
 * connection is refused at once, so rpma_conn_req_connect itself fails with
 * RPMA_E_PROVIDER and ECONNREFUSED
 */

#include <errno.h>

#include "common.h"

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();

	struct rpma_conn_req *req = NULL;
	T_OK(rpma_conn_req_new(peer, t_env.addr, t_env.port, NULL, &req));
	struct rpma_conn *conn = NULL;
	long long start = t_now_ms();
	if (t_is_siw()) {
		T_RET(rpma_conn_req_connect(&req, NULL, &conn), RPMA_E_PROVIDER);
		T_EQ(rpma_err_get_provider_error(), ECONNREFUSED);
		/* the request is consumed all the same */
		T_PTR_EQ(req, NULL);
		T_PTR_EQ(conn, NULL);
		T_ASSERT(t_now_ms() - start < 15000);
		T_OK(rpma_peer_delete(&peer));
		return;
	}
	T_OK(rpma_conn_req_connect(&req, NULL, &conn));
	T_PTR_EQ(req, NULL);

	enum rpma_conn_event ev = RPMA_CONN_UNDEFINED;
	T_OK(rpma_conn_next_event(conn, &ev));
	long long took = t_now_ms() - start;
	t_log("event %s after %lld ms", rpma_utils_conn_event_2str(ev), took);
	T_EQ(ev, RPMA_CONN_REJECTED);
	T_ASSERT(took < 15000);

	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("conn_unreachable", 4);
	return t_run(NULL, client);
}
