// SPDX-License-Identifier: BSD-3-Clause
/*
 * atomic_write_order.c -- a remote log committed by rpma_atomic_write of its
 * tail: the client writes a record, flushes it for visibility and then
 * writes the new tail with rpma_atomic_write, RECORDS times; the target
 * watches its tail all along and, whenever it moves, checks every record
 * below it. A tail seen before the records it covers fails the test.
 *
 * The path is checked too, through the completion the librpma 1.x way
 * (rpma_cq_get_wc): where both devices have the IBTA 1.5 RDMA ATOMIC WRITE
 * (rxe on Linux 6.2 and later: the Debian 13 flavor) and the target says so
 * in its versioned region descriptor, the tail goes by it and completes as
 * IBV_WC_ATOMIC_WRITE; elsewhere by the library's fenced 8-byte write,
 * completing as IBV_WC_RDMA_WRITE.
 */

#include <string.h>

#include "common.h"

#define RECORDS	   1000
#define RECORD_LEN 248
/* the tail first, on a cache line of its own, then the records */
#define RECORDS_OFF 64
#define SIZE	    (RECORDS_OFF + RECORDS * RECORD_LEN)

static size_t record_off(unsigned i)
{
	return RECORDS_OFF + (size_t)i * RECORD_LEN;
}

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *log = t_alloc(SIZE);
	struct rpma_mr_local *mr = t_mr_reg(
	    peer, log, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr_versioned(&pd, mr);
	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);

	/* the NIC writes the tail: read it as memory another agent changes */
	const uint64_t *tail = (const uint64_t *)log;
	uint64_t checked = 0;
	unsigned moves = 0;
	long long deadline = t_now_ms() + T_WAIT_MS;
	t_waiting("the log's tail to reach the last record");
	while (checked < RECORDS) {
		const uint64_t now = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
		if (now == checked) {
			if (t_now_ms() > deadline)
				T_FAIL("the tail stopped at %llu of %u records",
				       (unsigned long long)checked, RECORDS);
			continue;
		}
		if (now < checked || now > RECORDS)
			T_FAIL("the tail went from %llu to %llu", (unsigned long long)checked,
			       (unsigned long long)now);
		/* every record the tail now covers must be there, whole */
		for (uint64_t i = checked; i < now; i++) {
			long bad = t_check_pattern(log + record_off((unsigned)i), RECORD_LEN, 0,
						   (unsigned)i + 1);
			if (bad >= 0)
				T_FAIL("the tail says %llu records, but byte %ld of record %llu "
				       "is not there yet",
				       (unsigned long long)now, bad, (unsigned long long)i);
		}
		checked = now;
		moves++;
		deadline = t_now_ms() + T_WAIT_MS;
	}
	t_log("the tail moved %u times, never ahead of its records", moves);
	t_signal('T');

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	const bool native = t_native_atomic_write();
	t_log("the tail goes by %s", native ? "RDMA ATOMIC WRITE" : "a fenced 8-byte write");
	struct rpma_peer *peer = t_peer_new();
	unsigned char *records = t_alloc((size_t)RECORDS * RECORD_LEN);
	uint64_t *tails = t_alloc(RECORDS * sizeof(uint64_t));
	struct rpma_mr_local *src =
	    t_mr_reg(peer, records, (size_t)RECORDS * RECORD_LEN, RPMA_MR_USAGE_WRITE_SRC);
	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);

	int expected_opcode = IBV_WC_RDMA_WRITE;
#ifdef NATIVE_ATOMIC_WRITE_VERBS
	if (native)
		expected_opcode = IBV_WC_ATOMIC_WRITE;
#endif
	for (unsigned i = 0; i < RECORDS; i++) {
		unsigned char *record = records + (size_t)i * RECORD_LEN;
		t_fill(record, RECORD_LEN, i + 1);
		T_OK(rpma_write(conn, dst, record_off(i), src, (size_t)i * RECORD_LEN, RECORD_LEN,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		T_OK(rpma_flush(conn, dst, record_off(i), RECORD_LEN, RPMA_FLUSH_TYPE_VISIBILITY,
				RPMA_F_COMPLETION_ON_ERROR, NULL));
		tails[i] = i + 1;
		T_OK(rpma_atomic_write(conn, dst, 0, (const char *)&tails[i],
				       RPMA_F_COMPLETION_ALWAYS, T_CTX(i + 1)));
		/* the tail's completion, as librpma 1.x programs take it */
		struct ibv_wc wc;
		int got = 0;
		const long long deadline = t_now_ms() + T_WAIT_MS;
		int ret;
		while ((ret = rpma_cq_get_wc(cq, 1, &wc, &got)) == RPMA_E_NO_COMPLETION) {
			if (t_now_ms() > deadline)
				T_FAIL("no completion of the tail of record %u", i);
		}
		T_OK(ret);
		T_EQ(got, 1);
		if (wc.status != IBV_WC_SUCCESS)
			T_FAIL("the tail of record %u: %s", i, ibv_wc_status_str(wc.status));
		T_PTR_EQ(wc.wr_id, (uintptr_t)T_CTX(i + 1));
		if ((int)wc.opcode != expected_opcode)
			T_FAIL("the tail completed as opcode %d, expected %d (%s)", (int)wc.opcode,
			       expected_opcode, native ? "RDMA ATOMIC WRITE" : "the fenced write");
	}
	t_await('T');

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&src));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("atomic_write_order", 50);
	return t_run(server, client);
}
