/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm_watch.cpp -- the watch over a GPSPM target gone silent: a probe of
 * the connection when the answers awaited do not come (gpspm.hpp says why;
 * what becomes of the probe's completion is gpspm.cpp's)
 */

#include <cstring>

#include "clock.hpp"
#include "err.hpp"
#include "gpspm.hpp"
#include "post.hpp"
#include "verbs/verbs.hpp"

namespace rpma
{

void gpspm_watch(gpspm_engine *g)
{
	/* a probe on its way says what there is to say; a failed queue pair said it */
	if (g->probe_posted || g->broken.load(std::memory_order_relaxed))
		return;
	const long long now = monotonic_ms();
	if (g->silent_since_ms == 0 || g->silent_answers_in != g->answers_in) {
		g->silent_since_ms = now;
		g->silent_answers_in = g->answers_in;
		return;
	}
	if (now - g->silent_since_ms < g->probe_after_ms)
		return;
	/*
	 * A zero-length write asks for no memory of the target's (InfiniBand
	 * C9-88: neither address nor key is checked), and lands nothing.
	 * Signaled, so that its success is seen too: the target is there.
	 */
	ibv_send_wr wr;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = g->probe_wr_id();
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	ibv_send_wr *bad_wr;
	const int ret = verbs::post_send(g->qp, &wr, &bad_wr);
	if (ret) {
		/* the next empty poll tries again; a failed queue pair fails the flushes anyway */
		(void)RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_send (a GPSPM probe)");
		return;
	}
	RPMA_LOG_NOTICE("no GPSPM answer for %lld ms: probing the connection",
			now - g->silent_since_ms);
	g->probe_posted = true;
}

int gpspm_watch_while_waiting(gpspm_engine *g)
{
	if (g == nullptr || g->in_flight.load(std::memory_order_acquire) == 0)
		return -1;
	gpspm_take_begin(g);
	int next = -1;
	if (gpspm_awaits_answers(g)) {
		gpspm_watch(g);
		/* half the time, so that a probe goes out at most that late */
		next = static_cast<int>(g->probe_after_ms / 2) + 1;
	}
	gpspm_take_end(g);
	return next;
}

} /* namespace rpma */
