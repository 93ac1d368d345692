// SPDX-License-Identifier: BSD-3-Clause
/*
 * cm_id.cpp -- rdma_cm ids: creating, migrating and destroying them,
 * addresses and routes, listening, connecting, accepting, rejecting and
 * disconnecting
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>

using namespace fake;

namespace fake
{

void free_id(fake_id *id)
{
	if (id->pending && id->channel && id->channel->ids)
		id->channel->ids--;
	if (id->sync && id->channel)
		free_event_channel(id->channel);
	delete id;
}

fake_id *new_id(fake_event_channel *ch, void *context)
{
	state &s = st();
	auto *id = new fake_id();
	id->id.channel = &ch->ch;
	id->id.context = context;
	id->id.ps = RDMA_PS_TCP;
	id->id.qp_type = IBV_QPT_RC;
	id->id.port_num = 0;
	id->channel = ch;
	ch->ids++;
	s.id_calls.erase(&id->id);
	return id;
}

void attach_device(rdma_cm_id *id)
{
	id->verbs = &fake_context;
	id->pd = &cm_pd.pd;
	id->port_num = 1;
}

} /* namespace fake */

namespace
{

/* Takes the events about id out of its channel's queue. */
void drop_queued_events(fake_id *id)
{
	fake_event_channel *ch = id->channel;
	if (!ch)
		return;
	for (auto it = ch->events.begin(); it != ch->events.end();) {
		if ((*it)->id == id) {
			fake_cm_event *ev = *it;
			it = ch->events.erase(it);
			eventfd_consume(ch->ch.fd);
			free_cm_event(ev);
		} else {
			++it;
		}
	}
}

void copy_sockaddr(sockaddr_storage *to, const sockaddr *from)
{
	memset(to, 0, sizeof(*to));
	if (!from)
		return;
	if (from->sa_family == AF_INET)
		memcpy(to, from, sizeof(sockaddr_in));
	else if (from->sa_family == AF_INET6)
		memcpy(to, from, sizeof(sockaddr_in6));
	else
		to->ss_family = from->sa_family;
}

bool is_wildcard(const sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return reinterpret_cast<const sockaddr_in *>(sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
		    &reinterpret_cast<const sockaddr_in6 *>(sa)->sin6_addr);
	return false;
}

bool sockaddr_ok(const sockaddr *sa)
{
	return sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
}

void count_id_call(rdma_cm_id *id, fake_call call)
{
	st().id_calls[id].calls[call]++;
}

void record_conn_pdata(const void *pdata, uint8_t len)
{
	state &s = st();
	s.conn_pdata_len = pdata ? len : 0;
	if (pdata && len)
		memcpy(s.conn_pdata, pdata, len);
	s.conn_pdata_set = true;
}

} /* namespace */

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

int create_id(rdma_event_channel *channel, rdma_cm_id **id, void *context)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CREATE_ID); err != GO_ON)
		return fail_minus1(err);
	if (!id)
		return fail_minus1(EINVAL);
	if (channel && !is_live(channel, kind::event_channel, "rdma_create_id"))
		return fail_minus1(EINVAL);
	fake_id *fid;
	if (channel) {
		fid = new_id(channel_of(channel), context);
	} else {
		fid = new_id(new_event_channel(true), context);
		fid->sync = true;
	}
	add_live(fid, kind::id);
	s.last_id = &fid->id;
	*id = &fid->id;
	return 0;
}

int destroy_id(rdma_cm_id *id)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DESTROY_ID); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_destroy_id"))
		return fail_minus1(EINVAL);
	auto *fid = as<fake_id>(id);
	if (id->qp)
		misuse("rdma_destroy_id: the id still has a QP (rdma_destroy_qp first)");
	if (fid->unacked) {
		/* rdma_destroy_id waits for the acknowledgements forever */
		misuse("rdma_destroy_id: %u event(s) of the id were never acknowledged",
		       fid->unacked);
	}
	/* events for an id being destroyed are dropped */
	if (fid->channel && !fid->sync)
		drop_queued_events(fid);
	if (fid->channel && fid->channel->ids)
		fid->channel->ids--;
	/* events already handed out keep pointing at the id: forget the link */
	for (auto &o : s.live) {
		if (o.second == kind::cm_event) {
			auto *ev = as<fake_cm_event>(o.first);
			if (ev->id == fid)
				ev->id = nullptr;
		}
	}
	if (s.last_id == id)
		s.last_id = nullptr;
	drop_live(fid);
	free_id(fid);
	return 0;
}

int migrate_id(rdma_cm_id *id, rdma_event_channel *channel)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_MIGRATE_ID); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_migrate_id"))
		return fail_minus1(EINVAL);
	if (channel && !is_live(channel, kind::event_channel, "rdma_migrate_id"))
		return fail_minus1(EINVAL);
	auto *fid = as<fake_id>(id);
	if (fid->unacked)
		misuse("rdma_migrate_id: %u event(s) of the id were never acknowledged (it would "
		       "wait forever)",
		       fid->unacked);
	fake_event_channel *from = fid->channel;
	fake_event_channel *to = channel ? channel_of(channel) : new_event_channel(true);

	/* the id's queued events move along */
	if (from) {
		for (auto it = from->events.begin(); it != from->events.end();) {
			if ((*it)->id == fid) {
				to->events.push_back(*it);
				eventfd_signal(to->ch.fd);
				eventfd_consume(from->ch.fd);
				it = from->events.erase(it);
			} else {
				++it;
			}
		}
		if (from->ids)
			from->ids--;
		if (fid->sync)
			free_event_channel(from);
	}
	fid->channel = to;
	fid->sync = !channel;
	fid->id.channel = &to->ch;
	to->ids++;
	return 0;
}

int bind_addr(rdma_cm_id *id, sockaddr *addr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_BIND_ADDR); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_bind_addr") || !sockaddr_ok(addr))
		return fail_minus1(EINVAL);
	copy_sockaddr(&id->route.addr.src_storage, addr);
	if (!is_wildcard(addr))
		attach_device(id);
	return 0;
}

int resolve_addr(rdma_cm_id *id, sockaddr *src_addr, sockaddr *dst_addr, int timeout_ms)
{
	state &s = st();
	guard g(s.lock);
	s.timeout_resolve_addr = timeout_ms;
	if (int err = enter(FAKE_RESOLVE_ADDR); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_resolve_addr") || !sockaddr_ok(dst_addr) ||
	    (src_addr && !sockaddr_ok(src_addr)))
		return fail_minus1(EINVAL);
	if (src_addr)
		copy_sockaddr(&id->route.addr.src_storage, src_addr);
	else if (id->route.addr.src_addr.sa_family == 0)
		id->route.addr.src_addr.sa_family = dst_addr->sa_family;
	copy_sockaddr(&id->route.addr.dst_storage, dst_addr);
	attach_device(id);
	return 0;
}

int resolve_route(rdma_cm_id *id, int timeout_ms)
{
	state &s = st();
	guard g(s.lock);
	s.timeout_resolve_route = timeout_ms;
	if (int err = enter(FAKE_RESOLVE_ROUTE); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_resolve_route"))
		return fail_minus1(EINVAL);
	if (!id->verbs)
		return fail_minus1(EINVAL);
	id->route.num_paths = 1;
	return 0;
}

int set_ack_timeout(rdma_cm_id *id, uint8_t exponent)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_SET_ACK_TIMEOUT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_set_option"))
		return fail_minus1(EINVAL);
	if (exponent > 31)
		return fail_minus1(EINVAL);
	s.ack_timeout = exponent;
	return 0;
}

int listen(rdma_cm_id *id, int backlog)
{
	state &s = st();
	guard g(s.lock);
	s.backlog = backlog;
	if (int err = enter(FAKE_LISTEN); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_listen"))
		return fail_minus1(EINVAL);
	if (id->route.addr.src_addr.sa_family == 0)
		return fail_minus1(EINVAL); /* not bound */
	as<fake_id>(id)->listening = true;
	count_id_call(id, FAKE_LISTEN);
	return 0;
}

static void record_conn_param(const rdma_conn_param *param)
{
	state &s = st();
	if (!param) {
		record_conn_pdata(nullptr, 0);
		memset(&s.conn_param, 0, sizeof(s.conn_param));
		s.conn_param_set = false;
		return;
	}
	record_conn_pdata(param->private_data, param->private_data_len);
	s.conn_param = *param;
	s.conn_param.private_data = s.conn_pdata_len ? s.conn_pdata : nullptr;
	s.conn_param_set = true;
}

/*
 * rdma_connect, rdma_accept, rdma_reject and rdma_disconnect write their
 * command to the id's event channel: one destroyed under the id is a use
 * after free in librdmacm, and the peer never hears the command.
 */
static bool has_channel(rdma_cm_id *id, const char *call)
{
	if (as<fake_id>(id)->channel == nullptr) {
		misuse("%s: the event channel of the id was destroyed", call);
		return false;
	}
	return true;
}

int connect(rdma_cm_id *id, rdma_conn_param *param)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_CONNECT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_connect"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_connect"))
		return fail_minus1(EBADF);
	if (!id->verbs || id->route.num_paths == 0) {
		misuse("rdma_connect: the route of the id was not resolved");
		return fail_minus1(EINVAL);
	}
	if (param && param->private_data_len > 56)
		return fail_minus1(EINVAL);
	record_conn_param(param);
	count_id_call(id, FAKE_CONNECT);
	return 0;
}

int accept(rdma_cm_id *id, rdma_conn_param *param)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_ACCEPT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_accept"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_accept"))
		return fail_minus1(EBADF);
	if (param && param->private_data_len > 196)
		return fail_minus1(EINVAL);
	record_conn_param(param);
	count_id_call(id, FAKE_ACCEPT);
	return 0;
}

int reject(rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_REJECT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_reject"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_reject"))
		return fail_minus1(EBADF);
	if (private_data && private_data_len > 148)
		return fail_minus1(EINVAL);
	record_conn_pdata(private_data, private_data_len);
	count_id_call(id, FAKE_REJECT);
	return 0;
}

int disconnect(rdma_cm_id *id)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DISCONNECT); err != GO_ON)
		return fail_minus1(err);
	if (!is_live(id, kind::id, "rdma_disconnect"))
		return fail_minus1(EINVAL);
	if (!has_channel(id, "rdma_disconnect"))
		return fail_minus1(EBADF);
	count_id_call(id, FAKE_DISCONNECT);
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

const void *fake_verbs_last_conn_pdata(uint8_t *len)
{
	state &s = st();
	guard g(s.lock);
	if (len)
		*len = s.conn_pdata_len;
	return s.conn_pdata_set && s.conn_pdata_len ? s.conn_pdata : nullptr;
}

struct rdma_cm_id *fake_verbs_last_id(void)
{
	guard g(st().lock);
	return st().last_id;
}

const struct rdma_conn_param *fake_verbs_last_conn_param(void)
{
	guard g(st().lock);
	return st().conn_param_set ? &st().conn_param : nullptr;
}

int fake_verbs_last_timeout(enum fake_call call)
{
	guard g(st().lock);
	if (call == FAKE_RESOLVE_ADDR)
		return st().timeout_resolve_addr;
	if (call == FAKE_RESOLVE_ROUTE)
		return st().timeout_resolve_route;
	return -1;
}

int fake_verbs_last_ack_timeout(void)
{
	guard g(st().lock);
	return st().ack_timeout;
}

int fake_verbs_last_backlog(void)
{
	guard g(st().lock);
	return st().backlog;
}

bool fake_verbs_id_live(struct rdma_cm_id *id)
{
	guard g(st().lock);
	auto it = st().live.find(id);
	return it != st().live.end() && it->second == kind::id;
}

bool fake_verbs_id_listening(struct rdma_cm_id *id)
{
	guard g(st().lock);
	if (!fake_verbs_id_live(id))
		return false;
	return as<fake_id>(id)->listening;
}

unsigned fake_verbs_id_calls(struct rdma_cm_id *id, enum fake_call call)
{
	guard g(st().lock);
	if ((unsigned)call >= FAKE_CALL_MAX)
		return 0;
	auto it = st().id_calls.find(id);
	return it == st().id_calls.end() ? 0 : it->second.calls[call];
}

} /* extern "C" */
