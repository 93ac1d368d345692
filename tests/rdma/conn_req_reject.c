// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_req_reject.c -- a server answers a request with rpma_conn_req_reject:
 * the client sees RPMA_CONN_REJECTED with the server's bytes, and the server
 * never made a queue pair for it, not even one left in INIT (the kernel's
 * own list of QPs, `rdma resource show qp`, read while the request is held
 * and after the answer); a second request, answered with no data, likewise. The first
 * request's two ends, as rpma_conn_req_get_local_addr and
 * rpma_conn_req_get_peer_addr give them on each side, are the same
 * addresses crossed over, and the client's queue pair number, as
 * rpma_conn_req_get_qp_num gives it to the client, is the one
 * rpma_conn_req_get_peer_qp_num gives the server (RoCE; iWARP's request
 * names none: RPMA_E_NOSUPP): what a handshake binds its proof to. Asking
 * the server's held request for its own number fails and makes no QP.
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* the most a reject carries on RoCE; iWARP delivers exactly what was sent */
#define ROCE_REJECT_LEN 148
#define ANSWER_LEN	40
#define HELLO_LEN	24

struct qp_census {
	int total;     /* QPs of this process that the kernel lists */
	int connected; /* of them, in a state past INIT (RTR, RTS, SQD, SQE, ERR) */
	bool any;      /* whether the kernel listed any QP at all */
};

/*
 * Reads the kernel's resource tracking: one line per QP, with its state
 * and the pid of the process that made it. A state other than RESET
 * (siw's, before it connects) or INIT (rxe's) means the QP was connected
 * (RTR and RTS) or was, once (ERR).
 */
static struct qp_census qp_census(void)
{
	struct qp_census c = { 0, 0, false };
	/* -d: without it iproute2 6.1 lists no QP of siw's */
	FILE *f = popen("rdma -d resource show qp 2>/dev/null", "r");
	if (f == NULL)
		t_skip("cannot run rdma(8) to list the kernel's QPs");
	const long me = (long)getpid();
	bool any = false;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "lqpn ") == NULL)
			continue;
		any = true;
		const char *pid = strstr(line, " pid ");
		if (pid == NULL || strtol(pid + 5, NULL, 10) != me)
			continue;
		c.total++;
		const char *state = strstr(line, " state ");
		if (state == NULL)
			t_fail(__FILE__, __LINE__, "a QP without a state: %s", line);
		state += 7;
		if (strncmp(state, "INIT ", 5) != 0 && strncmp(state, "RESET ", 6) != 0) {
			t_log("connected: %s", line);
			c.connected++;
		}
	}
	pclose(f);
	c.any = any;
	return c;
}

/* a's IP address as 16 bytes (IPv4 as ::ffff:a.b.c.d); fails for another family */
static void ip16(const struct sockaddr_storage *a, unsigned char out[16])
{
	if (a->ss_family == AF_INET) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
	} else {
		T_EQ(a->ss_family, AF_INET6);
		memcpy(out, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
	}
}

/* what attempt() sends the server: its request's two ends and queue pair */
struct client_ends {
	struct sockaddr_storage local, peer;
	uint32_t qp_num;
};

/*
 * The server's ends of a request against the client's (sent by attempt()):
 * its own address is the one the client connects to, and the client's
 * address is the client's own; neither is a wildcard. The client's queue
 * pair number is the one the request named, where the transport names it.
 */
static void check_ends(const struct rpma_conn_req *req)
{
	struct client_ends client;
	struct sockaddr_storage local, peer;
	static const unsigned char any4[16] = { [10] = 0xff, [11] = 0xff }, any6[16] = { 0 };
	unsigned char a[16], b[16];
	char text[INET6_ADDRSTRLEN];

	t_recv_blob(&client, sizeof(client));
	T_OK(rpma_conn_req_get_local_addr(req, &local));
	T_OK(rpma_conn_req_get_peer_addr(req, &peer));
	ip16(&local, a);
	ip16(&client.peer, b);
	inet_ntop(AF_INET6, a, text, sizeof(text));
	t_log("the server's own end: %s", text);
	T_ASSERT(memcmp(a, b, 16) == 0);
	T_ASSERT(memcmp(a, any4, 16) != 0 && memcmp(a, any6, 16) != 0);
	ip16(&peer, a);
	ip16(&client.local, b);
	inet_ntop(AF_INET6, a, text, sizeof(text));
	t_log("the client's end: %s", text);
	T_ASSERT(memcmp(a, b, 16) == 0);
	T_ASSERT(memcmp(a, any4, 16) != 0 && memcmp(a, any6, 16) != 0);

	uint32_t qp_num = 0;
	if (t_is_siw()) {
		T_EQ(rpma_conn_req_get_peer_qp_num(req, &qp_num), RPMA_E_NOSUPP);
	} else {
		T_OK(rpma_conn_req_get_peer_qp_num(req, &qp_num));
		t_log("the client's queue pair: %u, named %u in its request", client.qp_num,
		      qp_num);
		T_EQ(qp_num, client.qp_num);
	}
	/* the request holds no queue pair of the server's, and asking makes none */
	T_EQ(rpma_conn_req_get_qp_num(req, &qp_num), RPMA_E_INVAL);
}

static void refuse(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg, bool with_answer)
{
	struct rpma_conn_req *req = t_next_req(ep, cfg);
	if (with_answer)
		check_ends(req);
	struct qp_census held = qp_census();
	/* the client's QP exists now; the server made none for a request it holds */
	if (!held.any)
		t_skip("rdma(8) lists no QP: iproute2's rdma tool is missing");
	T_EQ(held.total, 0);

	unsigned char answer[ANSWER_LEN];
	t_fill(answer, sizeof(answer), 77);
	struct rpma_conn_private_data pd = { answer, sizeof(answer) };
	T_OK(rpma_conn_req_reject(&req, with_answer ? &pd : NULL));
	T_PTR_EQ(req, NULL);
	/* the library sent its own copy */
	memset(answer, 0, sizeof(answer));

	/* the client heard the answer; the request's QP is gone, never connected */
	t_await('R');
	struct qp_census after = qp_census();
	T_EQ(after.total, 0);
	T_EQ(after.connected, 0);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	struct rpma_ep *ep = t_listen(peer);

	/* a GPSPM request is refused as well, with no serving thread ever started */
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_THREAD));
	refuse(ep, cfg, true);
	T_OK(rpma_conn_cfg_delete(&cfg));
	refuse(ep, NULL, false);

	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void attempt(struct rpma_peer *peer, bool with_answer)
{
	struct rpma_conn_req *req = t_client_req(peer, NULL);
	if (with_answer) {
		/* this side's ends and queue pair, for the server to compare with its own */
		struct client_ends ends;
		memset(&ends, 0, sizeof(ends));
		T_OK(rpma_conn_req_get_local_addr(req, &ends.local));
		T_OK(rpma_conn_req_get_peer_addr(req, &ends.peer));
		T_OK(rpma_conn_req_get_qp_num(req, &ends.qp_num));
		T_ASSERT(ends.qp_num != 0);
		t_send_blob(&ends, sizeof(ends));
	}
	unsigned char hello[HELLO_LEN];
	t_fill(hello, sizeof(hello), 7);
	struct rpma_conn_private_data out = { hello, sizeof(hello) };
	struct rpma_conn *conn = NULL;
	T_OK(rpma_conn_req_connect(&req, &out, &conn));
	t_expect_event(conn, RPMA_CONN_REJECTED);

	struct rpma_conn_private_data pd = { NULL, 0 };
	T_OK(rpma_conn_get_private_data(conn, &pd));
	t_log("private data of the reject: %u bytes", pd.len);
	if (with_answer) {
		T_ASSERT(pd.ptr != NULL);
		T_EQ(pd.len, t_is_siw() ? ANSWER_LEN : ROCE_REJECT_LEN);
		T_PATTERN(pd.ptr, ANSWER_LEN, 0, 77);
	} else if (t_is_siw()) {
		T_EQ(pd.len, 0);
	} else {
		/* RoCE's REJ has its 148 bytes whatever was sent: zeros */
		T_EQ(pd.len, ROCE_REJECT_LEN);
		for (unsigned i = 0; i < pd.len; i++)
			T_EQ(((const unsigned char *)pd.ptr)[i], 0);
	}
	T_OK(rpma_conn_delete(&conn));
	t_signal('R');
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	attempt(peer, true);
	attempt(peer, false);
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("conn_req_reject", 53);
	return t_run(server, client);
}
