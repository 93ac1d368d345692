/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_private_data.c -- what the library keeps of the private data of
 * connection events, over the fake rdma-core of the unit tests
 *
 * A client's CONNECT_REQUEST and a server's ESTABLISHED carry up to 255
 * bytes chosen by the peer. Whatever they are, the library copies exactly
 * those bytes before the event goes back to librdmacm (which frees it: a
 * pointer kept into it is a use after free), hands them out unchanged from
 * the request and the connection (passive side: the client's request data;
 * active side: the server's answer), decodes descriptors from them without
 * reading past them, and leaves no rdma-core object behind.
 */

#include <string.h>

#include <librpma.h>

#include "fake_verbs.h"
#include "fuzz.h"

#define ADDR "127.0.0.1"
#define PORT "7204"

static struct rpma_peer *peer;
static struct rpma_ep *ep;
static struct rdma_event_channel *ep_channel;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	return 0;
}

/*
 * Each input starts from a fresh fake: what the fake records of the calls
 * made would otherwise grow from input to input, and libFuzzer would take
 * it for a leak to look for after every input (slowly).
 */
static void start(void)
{
	fake_verbs_reset();
	REQUIRE(rpma_peer_new(fake_verbs_context(), &peer) == 0);
	REQUIRE(rpma_ep_listen(peer, ADDR, PORT, &ep) == 0);
	ep_channel = fake_verbs_last_id()->channel;
}

static void finish(void)
{
	REQUIRE(rpma_ep_shutdown(&ep) == 0);
	REQUIRE(rpma_peer_delete(&peer) == 0);
	REQUIRE(fake_verbs_live_objects() == 0);
	REQUIRE(fake_verbs_misuse() == 0);
}

/* the stored bytes are the given ones, no more, no fewer */
static void require_same(const struct rpma_conn_private_data *pd, const uint8_t *bytes, uint8_t len)
{
	REQUIRE(pd->len == len);
	if (len == 0) {
		REQUIRE(pd->ptr == NULL);
		return;
	}
	REQUIRE(pd->ptr != NULL);
	REQUIRE(memcmp(pd->ptr, bytes, len) == 0);
}

/* the stored bytes, decoded as the descriptors an application looks for */
static void decode(const struct rpma_conn_private_data *pd)
{
	if (pd->len == 0)
		return;
	struct rpma_mr_remote *mr = NULL;
	if (rpma_mr_remote_from_descriptor(pd->ptr, pd->len, &mr) == 0)
		REQUIRE(rpma_mr_remote_delete(&mr) == 0);
	struct rpma_peer_cfg *pcfg = NULL;
	if (rpma_peer_cfg_from_descriptor(pd->ptr, pd->len, &pcfg) == 0)
		REQUIRE(rpma_peer_cfg_delete(&pcfg) == 0);
}

/* server side: the client's request carries the bytes */
static void passive(const uint8_t *bytes, uint8_t len)
{
	fake_verbs_push_cm_event(ep_channel, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, bytes, len);
	struct rpma_conn_req *req = NULL;
	REQUIRE(rpma_ep_next_conn_req(ep, NULL, &req) == 0);
	struct rpma_conn_private_data pd;
	REQUIRE(rpma_conn_req_get_private_data(req, &pd) == 0);
	require_same(&pd, bytes, len);
	decode(&pd);

	struct rpma_conn *conn = NULL;
	REQUIRE(rpma_conn_req_connect(&req, NULL, &conn) == 0);
	REQUIRE(rpma_conn_get_private_data(conn, &pd) == 0);
	require_same(&pd, bytes, len);
	decode(&pd);
	REQUIRE(rpma_conn_delete(&conn) == 0);
}

/* client side: the server's answer carries the bytes */
static void active(const uint8_t *bytes, uint8_t len)
{
	struct rpma_conn_req *req = NULL;
	REQUIRE(rpma_conn_req_new(peer, ADDR, PORT, NULL, &req) == 0);
	struct rdma_cm_id *id = fake_verbs_last_id();
	struct rpma_conn *conn = NULL;
	REQUIRE(rpma_conn_req_connect(&req, NULL, &conn) == 0);
	fake_verbs_push_cm_event(id->channel, RDMA_CM_EVENT_ESTABLISHED, id, bytes, len);
	enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
	REQUIRE(rpma_conn_next_event(conn, &event) == 0);
	REQUIRE(event == RPMA_CONN_ESTABLISHED);
	struct rpma_conn_private_data pd;
	REQUIRE(rpma_conn_get_private_data(conn, &pd) == 0);
	require_same(&pd, bytes, len);
	decode(&pd);
	REQUIRE(rpma_conn_delete(&conn) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* rdma_cm carries at most 255 bytes (the length is a uint8_t) */
	const uint8_t len = size > 255 ? 255 : (uint8_t)size;
	uint8_t *bytes = fuzz_copy(data, len);
	start();
	passive(bytes, len);
	active(bytes, len);
	finish();
	free(bytes);
	return 0;
}
