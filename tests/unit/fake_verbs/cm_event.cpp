// SPDX-License-Identifier: BSD-3-Clause
/*
 * cm_event.cpp -- rdma_cm event channels, and the connection events a
 * test pushes and the library takes and acknowledges
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <unistd.h>

using namespace fake;

namespace fake
{

fake_event_channel *new_event_channel(bool internal)
{
	auto *ch = new fake_event_channel();
	ch->ch.fd = new_eventfd();
	ch->internal = internal;
	return ch;
}

void free_event_channel(fake_event_channel *ch)
{
	while (!ch->events.empty()) {
		fake_cm_event *ev = ch->events.front();
		ch->events.pop_front();
		free_cm_event(ev);
	}
	close(ch->ch.fd);
	delete ch;
}

/* An event never handed out: free it and the id it would have brought. */
void free_cm_event(fake_cm_event *ev)
{
	state &s = st();
	if (ev->new_id) {
		s.pending_ids.erase(ev->new_id);
		free_id(ev->new_id);
	}
	if (s.last_pushed == ev)
		s.last_pushed = nullptr;
	delete ev;
}

fake_event_channel *channel_of(rdma_event_channel *ch)
{
	return reinterpret_cast<fake_event_channel *>(ch);
}

} /* namespace fake */

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

rdma_event_channel *create_event_channel()
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_EVENT_CHANNEL); err != GO_ON)
		return fail_null<rdma_event_channel>(err);
	fake_event_channel *ch = new_event_channel(false);
	add_live(ch, kind::event_channel);
	return &ch->ch;
}

void destroy_event_channel(rdma_event_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	enter(FAKE_DESTROY_EVENT_CHANNEL);
	if (!is_live(channel, kind::event_channel, "rdma_destroy_event_channel"))
		return;
	fake_event_channel *ch = channel_of(channel);
	if (ch->ids)
		misuse("rdma_destroy_event_channel: %u rdma_cm_id(s) still use the channel",
		       ch->ids);
	for (auto &o : s.live) {
		if (o.second == kind::id && as<fake_id>(o.first)->channel == ch) {
			as<fake_id>(o.first)->channel = nullptr;
			as<fake_id>(o.first)->id.channel = nullptr;
		}
	}
	drop_live(ch);
	free_event_channel(ch);
}

int get_cm_event(rdma_event_channel *channel, rdma_cm_event **event)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_GET_CM_EVENT); err != GO_ON)
		return fail_minus1(err);
	if (!event || !is_live(channel, kind::event_channel, "rdma_get_cm_event"))
		return fail_minus1(EINVAL);
	fake_event_channel *ch = channel_of(channel);
	if (ch->events.empty())
		return fail_minus1(ENODATA);
	fake_cm_event *ev = ch->events.front();
	ch->events.pop_front();
	eventfd_consume(ch->ch.fd);
	if (ev->new_id) {
		s.pending_ids.erase(ev->new_id);
		ev->new_id->pending = false;
		add_live(ev->new_id, kind::id);
		ev->new_id = nullptr;
	}
	if (ev->id)
		ev->id->unacked++;
	if (s.last_pushed == ev)
		s.last_pushed = nullptr;
	add_live(ev, kind::cm_event);
	*event = &ev->ev;
	return 0;
}

int ack_cm_event(rdma_cm_event *event)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_ACK_CM_EVENT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(event, kind::cm_event, "rdma_ack_cm_event"))
		return fail_minus1(EINVAL);
	auto *ev = as<fake_cm_event>(event);
	if (ev->id && ev->id->unacked)
		ev->id->unacked--;
	drop_live(ev);
	/* the private data dies with the event: whoever kept a pointer sees garbage */
	memset(ev->pdata, 0xa5, sizeof(ev->pdata));
	delete ev;
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

void fake_verbs_push_cm_event(struct rdma_event_channel *channel, enum rdma_cm_event_type type,
			      struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	state &s = st();
	guard g(s.lock);
	/* a synchronous id's hidden channel is not in the live list */
	fake_event_channel *ch = nullptr;
	if (channel) {
		auto it = s.live.find(channel);
		if (it != s.live.end() && it->second == kind::event_channel) {
			ch = channel_of(channel);
		} else {
			for (auto &o : s.live)
				if (o.second == kind::id && as<fake_id>(o.first)->channel &&
				    &as<fake_id>(o.first)->channel->ch == channel)
					ch = as<fake_id>(o.first)->channel;
		}
	}
	if (!ch) {
		misuse("fake_verbs_push_cm_event: %p is not a live event channel", (void *)channel);
		return;
	}
	if (id && !is_live(id, kind::id, "fake_verbs_push_cm_event"))
		return;

	auto *ev = new fake_cm_event();
	ev->ev.event = type;
	ev->ev.status = 0;
	if (pdata && len) {
		memcpy(ev->pdata, pdata, len);
		ev->ev.param.conn.private_data = ev->pdata;
		ev->ev.param.conn.private_data_len = len;
	}
	ev->ev.param.conn.responder_resources = 16;
	ev->ev.param.conn.initiator_depth = 16;
	ev->ev.param.conn.flow_control = 1;
	ev->ev.param.conn.retry_count = 7;
	ev->ev.param.conn.rnr_retry_count = 7;

	fake_id *listener = nullptr;
	for (auto &o : s.live) {
		if (o.second == kind::id && as<fake_id>(o.first)->channel == ch &&
		    as<fake_id>(o.first)->listening)
			listener = as<fake_id>(o.first);
	}
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		ev->ev.listen_id = listener ? &listener->id : nullptr;
		/*
		 * A REQ names the client's queue pair; librdmacm gives 0 for an
		 * MPA request (iWARP), which names none.
		 */
		ev->ev.param.conn.qp_num = s.iwarp ? 0 : s.next_peer_qp_num++;
		if (!id) {
			fake_id *nid = new_id(ch, listener ? listener->id.context : nullptr);
			nid->pending = true;
			attach_device(&nid->id);
			nid->id.route.num_paths = 1;
			if (listener)
				nid->id.route.addr.src_storage =
				    listener->id.route.addr.src_storage;
			auto *peer =
			    reinterpret_cast<sockaddr_in *>(&nid->id.route.addr.dst_storage);
			peer->sin_family = AF_INET;
			peer->sin_addr.s_addr = htonl(0xc0a80102); /* 192.168.1.2 */
			peer->sin_port = htons(40000);
			s.pending_ids[nid] = true;
			ev->new_id = nid;
			s.last_id = &nid->id;
			id = &nid->id;
		}
	}
	ev->ev.id = id;
	ev->id = id ? as<fake_id>(id) : nullptr;
	if (type == RDMA_CM_EVENT_REJECTED)
		ev->ev.status = 28; /* IB_CM_REJ_CONSUMER_DEFINED */
	ch->events.push_back(ev);
	eventfd_signal(ch->ch.fd);
	s.last_pushed = ev;
}

struct rdma_cm_event *fake_verbs_last_pushed_cm_event(void)
{
	guard g(st().lock);
	return st().last_pushed ? &st().last_pushed->ev : nullptr;
}

unsigned fake_verbs_cm_events_queued(struct rdma_event_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	auto it = s.live.find(channel);
	if (it != s.live.end() && it->second == kind::event_channel)
		return (unsigned)channel_of(channel)->events.size();
	for (auto &o : s.live)
		if (o.second == kind::id && as<fake_id>(o.first)->channel &&
		    &as<fake_id>(o.first)->channel->ch == channel)
			return (unsigned)as<fake_id>(o.first)->channel->events.size();
	return 0;
}

} /* extern "C" */
