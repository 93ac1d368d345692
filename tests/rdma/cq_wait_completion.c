// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq_wait_completion.c -- rpma_cq_wait_completion sleeps until a completion
 * arrives and returns it, returns one already queued at once, and returns
 * RPMA_E_NO_COMPLETION when the timeout passes (or at once with timeout 0)
 */

#include "common.h"

#define SIZE 4096

static void server(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV);
	struct t_pdata pd = { .len = 0 };
	t_pdata_add_mr(&pd, mr);

	struct rpma_ep *ep = t_listen(peer);
	struct rpma_conn *conn = t_accept(ep, NULL, &pd);
	struct rpma_cq *cq = t_cq(conn);

	T_OK(rpma_recv(conn, mr, 2048, 64, T_CTX(10)));
	T_OK(rpma_recv(conn, mr, 2048 + 64, 64, T_CTX(11)));
	t_signal('R');

	/* the client sends after a pause: this call has to sleep, unbounded */
	long long start = t_now_ms();
	struct rpma_completion c;
	t_waiting("rpma_cq_wait_completion(-1)");
	T_OK(rpma_cq_wait_completion(cq, &c, -1));
	long long took = t_now_ms() - start;
	T_EQ(c.op_status, IBV_WC_SUCCESS);
	T_PTR_EQ(c.op_context, T_CTX(10));
	T_EQ(c.op, RPMA_OP_RECV);
	T_EQ(c.byte_len, 16);
	T_PATTERN(buf + 2048, 16, 0, 26);
	if (took < 300)
		T_FAIL("the completion came after %lld ms, before the client sent", took);

	t_signal('N');
	t_waiting("rpma_cq_wait_completion(T_WAIT_MS)");
	T_OK(rpma_cq_wait_completion(cq, &c, T_WAIT_MS));
	T_PTR_EQ(c.op_context, T_CTX(11));
	T_EQ(c.op, RPMA_OP_RECV);
	T_EQ(c.byte_len, 9);

	t_close(&conn, false);
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_ep_shutdown(&ep));
	T_OK(rpma_peer_delete(&peer));
}

static void client(void)
{
	struct rpma_peer *peer = t_peer_new();
	unsigned char *buf = t_alloc(SIZE);
	t_fill(buf, SIZE, 26);
	struct rpma_mr_local *mr =
	    t_mr_reg(peer, buf, SIZE, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND);

	struct rpma_conn *conn = t_connect(peer, NULL, NULL);
	struct rpma_conn_private_data pd;
	t_conn_pdata(conn, &pd);
	struct rpma_mr_remote *dst = t_pdata_mr(&pd, 0);
	struct rpma_cq *cq = t_cq(conn);
	struct rpma_completion c;

	T_RET(rpma_cq_wait_completion(NULL, &c, 0), RPMA_E_INVAL);
	T_RET(rpma_cq_wait_completion(cq, NULL, 0), RPMA_E_INVAL);

	/* the timeout passes */
	long long start = t_now_ms();
	T_RET(rpma_cq_wait_completion(cq, &c, 300), RPMA_E_NO_COMPLETION);
	long long took = t_now_ms() - start;
	t_log("a 300 ms timeout took %lld ms", took);
	T_ASSERT(took >= 290 && took < 5000);
	start = t_now_ms();
	T_RET(rpma_cq_wait_completion(cq, &c, 0), RPMA_E_NO_COMPLETION);
	T_ASSERT(t_now_ms() - start < 1000);

	/* one completion, waited for */
	T_OK(rpma_write(conn, dst, 0, mr, 0, 128, RPMA_F_COMPLETION_ALWAYS, T_CTX(1)));
	T_OK(rpma_cq_wait_completion(cq, &c, T_WAIT_MS));
	T_EQ(c.op_status, IBV_WC_SUCCESS);
	T_PTR_EQ(c.op_context, T_CTX(1));
	T_EQ(c.op, RPMA_OP_WRITE);

	/* two: the second is already queued when the first returns */
	T_OK(rpma_write(conn, dst, 128, mr, 128, 128, RPMA_F_COMPLETION_ALWAYS, T_CTX(2)));
	T_OK(rpma_write(conn, dst, 256, mr, 256, 128, RPMA_F_COMPLETION_ALWAYS, T_CTX(3)));
	t_sleep_ms(100);
	T_OK(rpma_cq_wait_completion(cq, &c, T_WAIT_MS));
	T_PTR_EQ(c.op_context, T_CTX(2));
	start = t_now_ms();
	T_OK(rpma_cq_wait_completion(cq, &c, T_WAIT_MS));
	T_PTR_EQ(c.op_context, T_CTX(3));
	T_EQ(c.op, RPMA_OP_WRITE);
	T_ASSERT(t_now_ms() - start < 1000);
	T_RET(rpma_cq_wait_completion(cq, &c, 200), RPMA_E_NO_COMPLETION);

	/* the server is asleep in rpma_cq_wait_completion */
	t_await('R');
	t_sleep_ms(500);
	T_OK(rpma_send(conn, mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, T_CTX(4)));
	T_OK(rpma_cq_wait_completion(cq, &c, T_WAIT_MS));
	T_PTR_EQ(c.op_context, T_CTX(4));
	T_EQ(c.op, RPMA_OP_SEND);
	t_await('N');
	T_OK(rpma_send(conn, mr, 0, 9, RPMA_F_COMPLETION_ALWAYS, T_CTX(5)));
	T_OK(rpma_cq_wait_completion(cq, &c, T_WAIT_MS));
	T_PTR_EQ(c.op_context, T_CTX(5));

	t_close(&conn, true);
	T_OK(rpma_mr_remote_delete(&dst));
	T_OK(rpma_mr_dereg(&mr));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("cq_wait_completion", 23);
	return t_run(server, client);
}
