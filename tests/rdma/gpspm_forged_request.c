// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpspm_forged_request.c -- bytes from the network are not trusted: a peer
 * that does not use the library's GPSPM sends hand-made requests to a GPSPM
 * target (short, of an unknown type, for a wrong rkey, for a range outside
 * the region) and gets one and the same answer for each, REFUSED, with the
 * target's persist function never called; a well-formed request then
 * still works, garbage without a GPSPM header gets no answer at all, and
 * the fourth refused request closes the connection
 */

#include "common.h"

#include <string.h>

#define SIZE 4096

/* the GPSPM wire format (doc/wire-format.md): a target answers only these */
enum { OK = 0, REFUSED = 2 };

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void request(unsigned char *m, uint8_t type, uint32_t seq, uint32_t rkey, uint64_t raddr,
		    uint64_t len)
{
	memset(m, 0, 32);
	m[0] = 0x47; /* "GP" */
	m[1] = 0x50;
	m[2] = 1;
	m[3] = type;
	put32(m + 4, 7); /* the slot: the client's business, echoed */
	put32(m + 8, seq);
	put32(m + 12, rkey);
	put64(m + 16, raddr);
	put64(m + 24, len);
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	rpma_persist_fn *persist;
	unsigned char *region = t_pmem_map(SIZE, &persist);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, region, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
	T_OK(rpma_mr_set_persist_fn(mr, persist));
	struct rpma_peer_cfg *pcfg = NULL;
	T_OK(rpma_peer_cfg_new(&pcfg));
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));
	T_OK(rpma_conn_cfg_set_gpspm(cfg, RPMA_GPSPM_POLLED));

	struct t_pdata pd = { .len = 0 };
	/* as a target without native flush sends it: GPSPM is tested here */
	t_pdata_add_mr_versioned_methods(&pd, mr, t_mr_methods(mr) & ~T_METHOD_NATIVE);
	t_pdata_add_peer_cfg_versioned(&pd, pcfg, cfg);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, cfg, &pd);

	t_serve_until(conn, 'B');
	/* every bad request was refused before anything was persisted */
	T_EQ(t_persist_log.calls, 0);
	t_signal('b');
	t_serve_until(conn, 'G');
	T_EQ(t_persist_log.calls, 1);
	T_EQ(t_persist_log.offset, 100);
	T_EQ(t_persist_log.len, 200);
	t_signal('g');

	/* the fourth refused request: the target's library closes the connection */
	t_serve_until(conn, 'C');
	T_EQ(t_persist_log.calls, 1);
	t_expect_event(conn, RPMA_CONN_CLOSED);
	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_cfg_delete(&pcfg));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

#define NMSG 16

static unsigned char *msgs;
static struct rpma_mr_local *msgs_mr;

/* sends the first len bytes of message i; returns the answer's status */
static int exchange(struct rpma_conn *conn, int i, size_t len, bool answered)
{
	struct rpma_cq *cq = t_cq(conn);
	unsigned char *answer = msgs + (NMSG + i) * 64;
	if (answered)
		T_OK(rpma_recv(conn, msgs_mr, (size_t)(NMSG + i) * 64, 64, T_CTX(100 + i)));
	T_OK(rpma_send(conn, msgs_mr, (size_t)i * 64, len, RPMA_F_COMPLETION_ALWAYS, T_CTX(i)));
	if (!answered) {
		T_CMPL(cq, T_CTX(i), RPMA_OP_SEND, NULL);
		return -1;
	}
	/* the answer can arrive before the send's own completion */
	t_expect_send_and_recv(cq, T_CTX(i), T_CTX(100 + i), 16);
	T_EQ(answer[0], 0x47);
	T_EQ(answer[3], 2); /* an answer */
	T_EQ(get32(answer + 4), 7);
	T_EQ(get32(answer + 8), get32(msgs + i * 64 + 8));
	return answer[12];
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	msgs = t_alloc(2 * NMSG * 64);
	msgs_mr = t_mr_reg(peer, msgs, 2 * NMSG * 64, RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);

	/* a plain connection: its sends reach the target's GPSPM receives */
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	size_t rsize = 0;
	T_OK(rpma_mr_remote_get_size(dst, &rsize));
	T_EQ(rsize, SIZE);
	/* the remote address and key, from the descriptor's first bytes */
	size_t dlen;
	const unsigned char *d = t_pdata_item(&pd, 0, &dlen);
	uint64_t raddr = 0;
	for (int b = 7; b >= 0; b--)
		raddr = raddr << 8 | d[b];
	const uint32_t rkey = get32(d + 16);

	int i = 0;
	/* too short to be a request */
	request(msgs + i * 64, 1, 11, rkey, raddr, 8);
	T_EQ(exchange(conn, i++, 20, true), REFUSED);
	/* an unknown type */
	request(msgs + i * 64, 9, 12, rkey, raddr, 8);
	T_EQ(exchange(conn, i++, 32, true), REFUSED);
	/* a key no region has: the same answer as a range outside the region, below */
	request(msgs + i * 64, 1, 13, rkey ^ 0x5a5a5a5a, raddr, 8);
	T_EQ(exchange(conn, i++, 32, true), REFUSED);
	/* no GPSPM header: no answer, only a line in the target's log */
	memset(msgs + i * 64, 0xee, 32);
	exchange(conn, i++, 32, false);
	t_signal('B');
	t_await('b');

	/* the target still serves a good one */
	request(msgs + i * 64, 1, 18, rkey, raddr + 100, 200);
	T_EQ(exchange(conn, i++, 32, true), OK);
	T_NO_CMPL(t_cq(conn), 50);
	t_signal('G');
	t_await('g');

	/* straddling the end: the fourth refusal, after which the target hangs up */
	request(msgs + i * 64, 1, 19, rkey, raddr + SIZE - 4, 8);
	T_EQ(exchange(conn, i++, 32, true), REFUSED);
	t_expect_event(conn, RPMA_CONN_CLOSED);
	t_signal('C');
	T_OK(rpma_conn_delete(&conn));
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&msgs_mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("gpspm_forged_request", 38);
	return t_run(server, client);
}
