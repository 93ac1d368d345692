// SPDX-License-Identifier: BSD-3-Clause
/*
 * cq.cpp -- completion channels and CQs: their events, arming,
 * acknowledgements and the completions a test queues
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

using namespace fake;

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

ibv_comp_channel *create_comp_channel(ibv_context *ctx)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_COMP_CHANNEL); err != GO_ON)
		return fail_null<ibv_comp_channel>(err);
	if (!context_ok(ctx, "ibv_create_comp_channel"))
		return fail_null<ibv_comp_channel>(EINVAL);
	auto *ch = new fake_comp_channel();
	ch->ch.context = ctx;
	/*
	 * ibv_get_cq_event() on it never blocks: the fd says so, as an
	 * O_NONBLOCK one would; with blocking channels, as rdma-core's are by
	 * default, a read of an empty one is a misuse (it would hang)
	 */
	ch->ch.fd = new_eventfd(s.blocking_channels ? 0 : EFD_NONBLOCK);
	ch->ch.refcnt = 0;
	add_live(ch, kind::comp_channel);
	return &ch->ch;
}

int destroy_comp_channel(ibv_comp_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_COMP_CHANNEL); err != GO_ON)
		return fail_ret(err);
	if (!is_live(channel, kind::comp_channel, "ibv_destroy_comp_channel"))
		return fail_ret(EINVAL);
	auto *ch = as<fake_comp_channel>(channel);
	if (ch->cqs)
		return fail_ret(EBUSY);
	close(ch->ch.fd);
	drop_live(ch);
	delete ch;
	return 0;
}

ibv_cq *create_cq(ibv_context *ctx, int cqe, void *cq_context, ibv_comp_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_CQ); err != GO_ON)
		return fail_null<ibv_cq>(err);
	if (!context_ok(ctx, "ibv_create_cq"))
		return fail_null<ibv_cq>(EINVAL);
	if (channel && !is_live(channel, kind::comp_channel, "ibv_create_cq"))
		return fail_null<ibv_cq>(EINVAL);
	if (cqe < 1 || cqe > 4194303)
		return fail_null<ibv_cq>(EINVAL);
	auto *cq = new fake_cq();
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = s.next_handle++;
	cq->cq.cqe = cqe;
	pthread_mutex_init(&cq->cq.mutex, nullptr);
	pthread_cond_init(&cq->cq.cond, nullptr);
	cq->channel = as<fake_comp_channel>(channel);
	if (cq->channel) {
		cq->channel->cqs++;
		cq->channel->ch.refcnt++;
	}
	add_live(cq, kind::cq);
	return &cq->cq;
}

int destroy_cq(ibv_cq *cq)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_CQ); err != GO_ON)
		return fail_ret(err);
	if (!is_live(cq, kind::cq, "ibv_destroy_cq"))
		return fail_ret(EINVAL);
	auto *c = as<fake_cq>(cq);
	if (c->qps)
		return fail_ret(EBUSY);
	if (c->unacked) {
		/* ibv_destroy_cq waits for the acknowledgements forever */
		misuse("ibv_destroy_cq: %u completion event(s) were never acknowledged",
		       c->unacked);
		return fail_ret(EBUSY);
	}
	if (c->channel) {
		/* events of this CQ still queued on the channel disappear with it */
		auto &q = c->channel->events;
		for (auto it = q.begin(); it != q.end();) {
			if (*it == c) {
				it = q.erase(it);
				eventfd_consume(c->channel->ch.fd);
			} else {
				++it;
			}
		}
		c->channel->cqs--;
		c->channel->ch.refcnt--;
	}
	pthread_mutex_destroy(&c->cq.mutex);
	pthread_cond_destroy(&c->cq.cond);
	drop_live(c);
	delete c;
	return 0;
}

int req_notify_cq(ibv_cq *cq)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_REQ_NOTIFY_CQ); err != GO_ON)
		return fail_ret(err);
	if (!is_live(cq, kind::cq, "ibv_req_notify_cq"))
		return fail_ret(EINVAL);
	as<fake_cq>(cq)->armed = true;
	return 0;
}

int get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context)
{
	state &s = st();
	if (const int delay = s.cq_event_delay_ms.load())
		usleep(static_cast<useconds_t>(delay) * 1000);
	guard g(s.lock);
	if (int err = enter(FAKE_GET_CQ_EVENT); err != GO_ON)
		return fail_minus1(err);
	if (!cq || !cq_context || !is_live(channel, kind::comp_channel, "ibv_get_cq_event"))
		return fail_minus1(EINVAL);
	auto *ch = as<fake_comp_channel>(channel);
	if (ch->broken)
		return fail_minus1(EIO);
	if (ch->events.empty()) {
		/* as rdma-core's read: the fd's O_NONBLOCK, whoever set it, decides */
		const int fl = fcntl(ch->ch.fd, F_GETFL);
		if (fl >= 0 && !(fl & O_NONBLOCK))
			misuse("ibv_get_cq_event on a blocking channel with no event: it would "
			       "wait for the next one");
		return fail_minus1(EAGAIN);
	}
	fake_cq *c = ch->events.front();
	ch->events.pop_front();
	eventfd_consume(ch->ch.fd);
	c->unacked++;
	*cq = &c->cq;
	*cq_context = c->cq.cq_context;
	return 0;
}

void ack_cq_events(ibv_cq *cq, unsigned int nevents)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_ACK_CQ_EVENTS);
	if (!is_live(cq, kind::cq, "ibv_ack_cq_events"))
		return;
	auto *c = as<fake_cq>(cq);
	if (nevents > c->unacked) {
		misuse("ibv_ack_cq_events: %u event(s) acknowledged, only %u taken", nevents,
		       c->unacked);
		c->unacked = 0;
	} else {
		c->unacked -= nevents;
	}
	c->acks += nevents;
}

int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_POLL_CQ); err != GO_ON) {
		errno = err;
		return err ? -err : -1;
	}
	if (!is_live(cq, kind::cq, "ibv_poll_cq")) {
		errno = EINVAL;
		return -EINVAL;
	}
	if (num_entries < 0 || (num_entries > 0 && !wc)) {
		misuse("ibv_poll_cq: num_entries %d with wc %p", num_entries, (void *)wc);
		errno = EINVAL;
		return -EINVAL;
	}
	auto *c = as<fake_cq>(cq);
	int n = 0;
	while (n < num_entries && !c->wcs.empty()) {
		wc[n++] = c->wcs.front();
		c->wcs.pop_front();
	}
	return n;
}

const char *wc_status_str(ibv_wc_status status)
{
	/* the fake's own names: the test output says which status it was */
	switch (status) {
	case IBV_WC_SUCCESS:
		return "success";
	case IBV_WC_WR_FLUSH_ERR:
		return "flushed";
	case IBV_WC_REM_ACCESS_ERR:
		return "remote access error";
	default:
		return "an error status";
	}
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

void fake_verbs_set_cq_event_delay(int ms)
{
	st().cq_event_delay_ms = ms;
}

void fake_verbs_set_blocking_channels(bool blocking)
{
	guard g(st().lock);
	st().blocking_channels = blocking;
}

void fake_verbs_push_wc(struct ibv_cq *cq, const struct ibv_wc *wc)
{
	guard g(st().lock);
	if (!wc || !is_live(cq, kind::cq, "fake_verbs_push_wc"))
		return;
	as<fake_cq>(cq)->wcs.push_back(*wc);
}

void fake_verbs_push_cq_event(struct ibv_comp_channel *channel, struct ibv_cq *cq)
{
	guard g(st().lock);
	if (!is_live(channel, kind::comp_channel, "fake_verbs_push_cq_event") ||
	    !is_live(cq, kind::cq, "fake_verbs_push_cq_event"))
		return;
	auto *ch = as<fake_comp_channel>(channel);
	auto *c = as<fake_cq>(cq);
	if (c->channel != ch)
		misuse("fake_verbs_push_cq_event: the CQ does not use this channel");
	c->armed = false;
	ch->events.push_back(c);
	eventfd_signal(ch->ch.fd);
}

void fake_verbs_break_comp_channel(struct ibv_comp_channel *channel)
{
	guard g(st().lock);
	if (!is_live(channel, kind::comp_channel, "fake_verbs_break_comp_channel"))
		return;
	auto *ch = as<fake_comp_channel>(channel);
	ch->broken = true;
	/* readable from now on, as the channel of a removed device is */
	eventfd_signal(ch->ch.fd);
}

unsigned fake_verbs_cq_acks(struct ibv_cq *cq)
{
	guard g(st().lock);
	auto it = st().live.find(cq);
	if (it == st().live.end() || it->second != kind::cq)
		return 0;
	return as<fake_cq>(cq)->acks;
}

bool fake_verbs_cq_armed(struct ibv_cq *cq)
{
	guard g(st().lock);
	auto it = st().live.find(cq);
	if (it == st().live.end() || it->second != kind::cq)
		return false;
	return as<fake_cq>(cq)->armed;
}

unsigned fake_verbs_cq_events_queued(struct ibv_comp_channel *channel)
{
	guard g(st().lock);
	auto it = st().live.find(channel);
	if (it == st().live.end() || it->second != kind::comp_channel)
		return 0;
	return (unsigned)as<fake_comp_channel>(channel)->events.size();
}

unsigned fake_verbs_wcs_queued(struct ibv_cq *cq)
{
	guard g(st().lock);
	auto it = st().live.find(cq);
	if (it == st().live.end() || it->second != kind::cq)
		return 0;
	return (unsigned)as<fake_cq>(cq)->wcs.size();
}

} /* extern "C" */
