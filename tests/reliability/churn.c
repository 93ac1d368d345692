// SPDX-License-Identifier: BSD-3-Clause
/*
 * churn.c -- 1000 connections, one after the other, against one server:
 * each is established with the client's private data (its number), checked
 * by the server, and closed. After a warm-up, both processes must hold as
 * many descriptors at the end as before, and their heap and resident memory
 * must stay flat: a connection, or anything rdma-core made for it, left
 * behind once per cycle shows as a thousand.
 */

#include <string.h>

#include "common.h"
#include "usage.h"

#define CYCLES 1000
#define WARMUP 20
/* a thousand leaks of even a small object exceed these */
#define MAX_HEAP_GROWTH	   (16 * 1024)
#define MAX_RSS_GROWTH_KIB 1024

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_ep *ep = t_listen(peer);
	struct t_usage start;
	long long t0 = 0;

	for (unsigned i = 0; i < CYCLES; i++) {
		if (i == WARMUP) {
			t_usage_now(&start);
			t0 = t_now_ms();
		}
		struct rpma_conn_req *req = t_next_req(ep, NULL);
		struct rpma_conn_private_data pd = { NULL, 0 };
		T_OK(rpma_conn_req_get_private_data(req, &pd));
		size_t len = 0;
		const unsigned char *item = t_pdata_item(&pd, 0, &len);
		T_EQ(len, 2);
		T_EQ(item[0] | item[1] << 8, i);
		struct rpma_conn *conn = t_accept_req(&req, NULL);
		t_close(&conn, false);
	}
	t_log("%u cycles in %lld ms", CYCLES - WARMUP, t_now_ms() - t0);
	t_usage_flat(&start, MAX_HEAP_GROWTH, MAX_RSS_GROWTH_KIB, "server");

	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct t_usage start;

	for (unsigned i = 0; i < CYCLES; i++) {
		if (i == WARMUP)
			t_usage_now(&start);
		struct t_pdata out = { .len = 0 };
		unsigned char n[2] = { (unsigned char)i, (unsigned char)(i >> 8) };
		t_pdata_add(&out, n, sizeof(n));
		struct rpma_conn *conn = t_connect(peer, NULL, &out);
		t_close(&conn, true);
	}
	t_usage_flat(&start, MAX_HEAP_GROWTH, MAX_RSS_GROWTH_KIB, "client");

	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("reliability_churn", 200);
	t_set_deadline(110);
	return t_run(server, client);
}
