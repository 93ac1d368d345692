// SPDX-License-Identifier: BSD-3-Clause
/*
 * conn_timeout.c -- rpma_conn_cfg_set_timeout(3): how long rpma_conn_req_new
 * may take to resolve the peer's address and route. The peer here is an
 * address that nobody answers for (RPMA_TEST_SILENT_ADDR: the VM routes it
 * to a link that asks by ARP and hears nothing): resolution can only time
 * out, and it must fail with RPMA_E_PROVIDER and ETIMEDOUT after the
 * configured time, not before and not much later, under two timeouts, and
 * leave the out-pointer alone and the peer usable.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static void client(void)
{
	const char *silent = getenv("RPMA_TEST_SILENT_ADDR");
	if (silent == NULL || *silent == '\0')
		t_skip("RPMA_TEST_SILENT_ADDR is not set: no address known to stay silent");
	struct rpma_peer *peer = t_peer_new();
	struct rpma_conn_cfg *cfg = NULL;
	T_OK(rpma_conn_cfg_new(&cfg));

	static const int timeouts_ms[] = { 300, 1500 };
	for (unsigned i = 0; i < sizeof(timeouts_ms) / sizeof(timeouts_ms[0]); i++) {
		const int timeout = timeouts_ms[i];
		T_OK(rpma_conn_cfg_set_timeout(cfg, timeout));
		struct rpma_conn_req *req = (struct rpma_conn_req *)(uintptr_t)0x5eed;
		long long start = t_now_ms();
		T_RET(rpma_conn_req_new(peer, silent, t_env.port, cfg, &req), RPMA_E_PROVIDER);
		long long took = t_now_ms() - start;
		int err = rpma_err_get_provider_error();
		t_log("timeout %d ms: failed after %lld ms, provider error %d (%s)", timeout, took,
		      err, strerror(err));
		T_PTR_EQ(req, (uintptr_t)0x5eed);
		T_EQ(err, ETIMEDOUT);
		if (took < timeout - 50)
			T_FAIL("gave up after %lld ms, before the %d ms it was given", took,
			       timeout);
		if (took > timeout + 2000)
			T_FAIL("gave up after %lld ms, long after the %d ms it was given", took,
			       timeout);
	}

	/* the peer is none the worse: a request to the real address works */
	struct rpma_conn_req *req = NULL;
	T_OK(rpma_conn_req_new(peer, t_env.addr, t_env.port, cfg, &req));
	T_OK(rpma_conn_req_delete(&req));

	T_OK(rpma_conn_cfg_delete(&cfg));
	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("reliability_conn_timeout", 205);
	return t_run(NULL, client);
}
