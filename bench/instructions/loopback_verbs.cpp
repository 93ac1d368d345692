/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * loopback_verbs.cpp -- a provider of the library's verbs boundary
 * (src/verbs/verbs.hpp) that moves bytes between two queue pairs of one
 * process, for counting the library's own instructions
 *
 * Every work request is executed during its post, as soft RoCE does over
 * loopback: a write or a read copies its bytes, a send lands in the peer's
 * next posted receive, and a signaled request's completion is in its CQ
 * when the post returns. Connections pair an active id with the passive
 * id a listener hands out, in the same process. Nothing here is counted:
 * count.py keeps the functions of src/ only, and this replaces
 * src/verbs/verbs.cpp.
 */

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <vector>

#include "loopback.h"
#include "verbs/verbs.hpp"

namespace
{

constexpr int RING = 8192;

struct lb_cq {
	ibv_cq cq;
	ibv_wc ring[RING];
	unsigned head, count;
	bool armed;
	unsigned events; /* events written to the channel, not yet read */
};

struct lb_recv {
	uint64_t wr_id;
	ibv_sge sge;
};

struct lb_qp {
	ibv_qp qp;
	lb_cq *send_cq;
	lb_cq *recv_cq;
	ibv_srq *srq;
	lb_qp *peer;
	std::deque<lb_recv> *recvs;
};

struct lb_srq {
	ibv_srq srq;
	std::deque<lb_recv> recvs;
};

struct lb_channel {
	rdma_event_channel channel;
	std::deque<rdma_cm_event *> *events;
};

ibv_device lb_device;
ibv_context lb_context;
uint32_t next_key = 1;
uint32_t next_qp_num = 100;
rdma_cm_id *listener;
uint8_t lb_native;
std::vector<lb_cq *> all_cqs;
unsigned rearms;

lb_cq *cq_of(ibv_cq *cq)
{
	return reinterpret_cast<lb_cq *>(cq);
}

lb_qp *qp_of(ibv_qp *qp)
{
	return reinterpret_cast<lb_qp *>(qp);
}

void signal_fd(int fd)
{
	const uint64_t one = 1;
	if (write(fd, &one, sizeof(one)) != sizeof(one))
		abort();
}

void push_wc(lb_cq *cq, const ibv_wc &wc)
{
	if (cq->count == RING)
		abort(); /* the bench takes its completions: never this many */
	cq->ring[(cq->head + cq->count) % RING] = wc;
	cq->count++;
	if (cq->armed && cq->cq.channel) {
		cq->armed = false;
		cq->events++;
		signal_fd(cq->cq.channel->fd);
	}
}

void push_cm_event(rdma_cm_id *id, rdma_cm_event_type type, rdma_cm_id *listen_id,
		   const void *pdata, uint8_t pdata_len)
{
	auto *ev = static_cast<rdma_cm_event *>(calloc(1, sizeof(rdma_cm_event)));
	ev->id = id;
	ev->listen_id = listen_id;
	ev->event = type;
	if (pdata_len) {
		void *copy = malloc(pdata_len);
		memcpy(copy, pdata, pdata_len);
		ev->param.conn.private_data = copy;
		ev->param.conn.private_data_len = pdata_len;
	}
	auto *ch = reinterpret_cast<lb_channel *>(id->channel);
	ch->events->push_back(ev);
	signal_fd(ch->channel.fd);
}

void *at(uint64_t addr)
{
	return reinterpret_cast<void *>(static_cast<uintptr_t>(addr));
}

/* Takes the peer's next receive: the bytes of a send (or none) and its completion. */
void deliver(lb_qp *to, const ibv_send_wr &wr, bool with_imm, ibv_wc_opcode opcode)
{
	std::deque<lb_recv> *recvs =
	    to->srq ? &reinterpret_cast<lb_srq *>(to->srq)->recvs : to->recvs;
	if (recvs->empty())
		abort(); /* a receiver not ready: the bench posts its receives first */
	const lb_recv r = recvs->front();
	recvs->pop_front();
	uint32_t len = 0;
	if (opcode == IBV_WC_RECV) {
		for (int i = 0; i < wr.num_sge; i++) {
			memcpy(static_cast<char *>(at(r.sge.addr)) + len, at(wr.sg_list[i].addr),
			       wr.sg_list[i].length);
			len += wr.sg_list[i].length;
		}
	}
	ibv_wc wc{};
	wc.wr_id = r.wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = opcode;
	wc.byte_len = len;
	wc.qp_num = to->qp.qp_num;
	if (with_imm) {
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = wr.imm_data;
	}
	push_wc(to->recv_cq, wc);
}

/* Posted receives, in the order a send takes them. */
void queue_recvs(std::deque<lb_recv> *recvs, const ibv_recv_wr *wr)
{
	for (; wr; wr = wr->next) {
		lb_recv r{ wr->wr_id, {} };
		if (wr->num_sge)
			r.sge = wr->sg_list[0];
		recvs->push_back(r);
	}
}

void execute(lb_qp *qp, const ibv_send_wr &wr, bool native_flush)
{
	ibv_wc_opcode opcode = IBV_WC_RDMA_WRITE;
	if (native_flush) {
		opcode = IBV_WC_RDMA_READ; /* the library tells a flush by its wr_id */
	} else {
		switch (wr.opcode) {
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM: {
			size_t off = 0;
			for (int i = 0; i < wr.num_sge; i++) {
				memcpy(static_cast<char *>(at(wr.wr.rdma.remote_addr)) + off,
				       at(wr.sg_list[i].addr), wr.sg_list[i].length);
				off += wr.sg_list[i].length;
			}
			if (wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
				deliver(qp->peer, wr, true, IBV_WC_RECV_RDMA_WITH_IMM);
			break;
		}
		case IBV_WR_RDMA_READ:
			if (wr.num_sge)
				memcpy(at(wr.sg_list[0].addr), at(wr.wr.rdma.remote_addr),
				       wr.sg_list[0].length);
			opcode = IBV_WC_RDMA_READ;
			break;
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
			deliver(qp->peer, wr, wr.opcode == IBV_WR_SEND_WITH_IMM, IBV_WC_RECV);
			opcode = IBV_WC_SEND;
			break;
		default:
			abort();
		}
	}
	if (!(wr.send_flags & IBV_SEND_SIGNALED))
		return;
	ibv_wc wc{};
	wc.wr_id = wr.wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.opcode = opcode;
	wc.qp_num = qp->qp.qp_num;
	push_wc(qp->send_cq, wc);
}

} /* namespace */

extern "C" ibv_context *loopback_context(void)
{
	strcpy(lb_device.name, "loopback");
	lb_device.transport_type = IBV_TRANSPORT_IB;
	lb_context.device = &lb_device;
	return &lb_context;
}

extern "C" unsigned loopback_rearms(void)
{
	return rearms;
}

extern "C" void loopback_set_native(int flush_persistent, int atomic_write)
{
	lb_native = static_cast<uint8_t>((flush_persistent ? rpma::verbs::NATIVE_FLUSH_PERSISTENT |
								 rpma::verbs::NATIVE_FLUSH_GLOBAL
							   : 0) |
					 (atomic_write ? rpma::verbs::NATIVE_ATOMIC_WRITE : 0));
}

namespace rpma::verbs
{

int query_device_ex(ibv_context *, ibv_device_attr_ex *attr)
{
	*attr = ibv_device_attr_ex{};
	attr->orig_attr.max_qp_wr = 16384;
	attr->orig_attr.max_cqe = 65536;
	attr->orig_attr.max_qp_rd_atom = 16;
	return 0;
}

uint8_t native_ops(const ibv_device_attr_ex &)
{
	return lb_native;
}

uint64_t native_send_ops(uint8_t)
{
	return 0;
}

ibv_pd *alloc_pd(ibv_context *ctx)
{
	auto *pd = static_cast<ibv_pd *>(calloc(1, sizeof(ibv_pd)));
	pd->context = ctx;
	return pd;
}

int dealloc_pd(ibv_pd *pd)
{
	free(pd);
	return 0;
}

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, int)
{
	auto *mr = static_cast<ibv_mr *>(calloc(1, sizeof(ibv_mr)));
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = mr->rkey = next_key++;
	return mr;
}

int native_flush_access(uint8_t)
{
	return 0;
}

int dereg_mr(ibv_mr *mr)
{
	free(mr);
	return 0;
}

int advise_mr(ibv_pd *, ibv_advise_mr_advice, uint32_t, ibv_sge *, uint32_t)
{
	return 0;
}

ibv_comp_channel *create_comp_channel(ibv_context *ctx)
{
	auto *ch = static_cast<ibv_comp_channel *>(calloc(1, sizeof(ibv_comp_channel)));
	ch->context = ctx;
	ch->fd = eventfd(0, EFD_CLOEXEC);
	return ch;
}

int destroy_comp_channel(ibv_comp_channel *channel)
{
	close(channel->fd);
	free(channel);
	return 0;
}

ibv_cq *create_cq(ibv_context *ctx, int, void *cq_context, ibv_comp_channel *channel)
{
	auto *cq = static_cast<lb_cq *>(calloc(1, sizeof(lb_cq)));
	cq->cq.context = ctx;
	cq->cq.cq_context = cq_context;
	cq->cq.channel = channel;
	all_cqs.push_back(cq);
	return &cq->cq;
}

int destroy_cq(ibv_cq *cq)
{
	for (auto it = all_cqs.begin(); it != all_cqs.end(); ++it) {
		if (*it == cq_of(cq)) {
			all_cqs.erase(it);
			break;
		}
	}
	free(cq_of(cq));
	return 0;
}

int req_notify_cq(ibv_cq *cq)
{
	rearms++;
	lb_cq *c = cq_of(cq);
	/* a completion already there raises its event at once, as a device does */
	if (c->count && cq->channel) {
		c->events++;
		signal_fd(cq->channel->fd);
		return 0;
	}
	c->armed = true;
	return 0;
}

int get_cq_event(ibv_comp_channel *channel, ibv_cq **cq, void **cq_context)
{
	for (lb_cq *c : all_cqs) {
		if (c->cq.channel != channel || c->events == 0)
			continue;
		uint64_t value;
		if (read(channel->fd, &value, sizeof(value)) != sizeof(value))
			return -1;
		c->events--;
		/* the eventfd counts the events of every CQ on the channel */
		if (value > 1) {
			const uint64_t rest = value - 1;
			if (write(channel->fd, &rest, sizeof(rest)) != sizeof(rest))
				abort();
		}
		*cq = &c->cq;
		*cq_context = c->cq.cq_context;
		return 0;
	}
	errno = EAGAIN;
	return -1;
}

void ack_cq_events(ibv_cq *, unsigned int)
{
}

int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc)
{
	lb_cq *c = cq_of(cq);
	int n = 0;
	while (n < num_entries && c->count) {
		wc[n++] = c->ring[c->head];
		c->head = (c->head + 1) % RING;
		c->count--;
	}
	return n;
}

const char *wc_status_str(ibv_wc_status)
{
	return "status";
}

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *)
{
	auto *srq = new lb_srq{};
	srq->srq.context = pd->context;
	srq->srq.pd = pd;
	return &srq->srq;
}

int destroy_srq(ibv_srq *srq)
{
	delete reinterpret_cast<lb_srq *>(srq);
	return 0;
}

int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **)
{
	for (; wr; wr = wr->next)
		execute(qp_of(qp), *wr, false);
	return 0;
}

int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **)
{
	queue_recvs(qp_of(qp)->recvs, wr);
	return 0;
}

int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **)
{
	queue_recvs(&reinterpret_cast<lb_srq *>(srq)->recvs, wr);
	return 0;
}

int post_atomic_write(ibv_qp *qp, uint64_t wr_id, unsigned int send_flags, uint32_t,
		      uint64_t remote_addr, const void *src8)
{
	memcpy(at(remote_addr), src8, 8);
	if (send_flags & IBV_SEND_SIGNALED) {
		ibv_wc wc{};
		wc.wr_id = wr_id;
		wc.opcode = IBV_WC_RDMA_WRITE;
		wc.qp_num = qp->qp_num;
		push_wc(qp_of(qp)->send_cq, wc);
	}
	return 0;
}

int post_send_ex(ibv_qp *qp, ibv_send_wr *wr, const native_flush_wr *flush)
{
	for (int i = 0; wr; wr = wr->next, i++)
		execute(qp_of(qp), *wr, flush[i].placement != 0);
	return 0;
}

rdma_event_channel *create_event_channel()
{
	auto *ch = new lb_channel{};
	ch->channel.fd = eventfd(0, EFD_CLOEXEC);
	ch->events = new std::deque<rdma_cm_event *>;
	return &ch->channel;
}

void destroy_event_channel(rdma_event_channel *channel)
{
	auto *ch = reinterpret_cast<lb_channel *>(channel);
	close(ch->channel.fd);
	delete ch->events;
	delete ch;
}

int create_id(rdma_event_channel *channel, rdma_cm_id **id, void *context)
{
	auto *i = static_cast<rdma_cm_id *>(calloc(1, sizeof(rdma_cm_id)));
	i->channel = channel;
	i->context = context;
	i->ps = RDMA_PS_TCP;
	*id = i;
	return 0;
}

int destroy_id(rdma_cm_id *id)
{
	if (id == listener)
		listener = nullptr;
	free(id);
	return 0;
}

int migrate_id(rdma_cm_id *id, rdma_event_channel *channel)
{
	id->channel = channel;
	return 0;
}

int getaddrinfo(const char *, const char *, const rdma_addrinfo *hints, rdma_addrinfo **res)
{
	auto *info = static_cast<rdma_addrinfo *>(calloc(1, sizeof(rdma_addrinfo)));
	auto *sin = static_cast<sockaddr_in *>(calloc(2, sizeof(sockaddr_in)));
	sin[0].sin_family = sin[1].sin_family = AF_INET;
	sin[0].sin_addr.s_addr = sin[1].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	info->ai_flags = hints ? hints->ai_flags : 0;
	info->ai_family = AF_INET;
	info->ai_port_space = RDMA_PS_TCP;
	info->ai_src_addr = reinterpret_cast<sockaddr *>(&sin[0]);
	info->ai_dst_addr = reinterpret_cast<sockaddr *>(&sin[1]);
	info->ai_src_len = info->ai_dst_len = sizeof(sockaddr_in);
	*res = info;
	return 0;
}

void freeaddrinfo(rdma_addrinfo *res)
{
	free(res->ai_src_addr);
	free(res);
}

int bind_addr(rdma_cm_id *id, sockaddr *)
{
	id->verbs = &lb_context;
	return 0;
}

int resolve_addr(rdma_cm_id *id, sockaddr *, sockaddr *dst_addr, int)
{
	id->verbs = &lb_context;
	memcpy(&id->route.addr.dst_storage, dst_addr, sizeof(sockaddr_in));
	return 0;
}

int resolve_route(rdma_cm_id *, int)
{
	return 0;
}

int set_ack_timeout(rdma_cm_id *, uint8_t)
{
	return 0;
}

int listen(rdma_cm_id *id, int)
{
	listener = id;
	return 0;
}

int get_cm_event(rdma_event_channel *channel, rdma_cm_event **event)
{
	auto *ch = reinterpret_cast<lb_channel *>(channel);
	if (ch->events->empty()) {
		errno = EAGAIN;
		return -1;
	}
	uint64_t value;
	if (read(ch->channel.fd, &value, sizeof(value)) != sizeof(value))
		abort();
	/* the eventfd counts the events: what was read beyond this one goes back */
	if (value > 1) {
		const uint64_t rest = value - 1;
		if (write(ch->channel.fd, &rest, sizeof(rest)) != sizeof(rest))
			abort();
	}
	*event = ch->events->front();
	ch->events->pop_front();
	return 0;
}

int ack_cm_event(rdma_cm_event *event)
{
	free(const_cast<void *>(event->param.conn.private_data));
	free(event);
	return 0;
}

int create_qp_ex(rdma_cm_id *id, ibv_qp_init_attr_ex *attr)
{
	auto *qp = new lb_qp{};
	qp->qp.context = id->verbs ? id->verbs : &lb_context;
	qp->qp.qp_num = next_qp_num++;
	qp->qp.qp_type = IBV_QPT_RC;
	qp->qp.state = IBV_QPS_RTS;
	qp->send_cq = cq_of(attr->send_cq);
	qp->recv_cq = cq_of(attr->recv_cq);
	qp->srq = attr->srq;
	qp->recvs = new std::deque<lb_recv>;
	id->qp = &qp->qp;
	return 0;
}

void destroy_qp(rdma_cm_id *id)
{
	lb_qp *qp = qp_of(id->qp);
	if (qp == nullptr)
		return;
	if (qp->peer)
		qp->peer->peer = nullptr;
	delete qp->recvs;
	delete qp;
	id->qp = nullptr;
}

int modify_qp_to_error(ibv_qp *qp)
{
	qp->state = IBV_QPS_ERR;
	return 0;
}

int connect(rdma_cm_id *id, rdma_conn_param *param)
{
	if (listener == nullptr) {
		errno = ECONNREFUSED;
		return -1;
	}
	rdma_cm_id *passive = nullptr;
	create_id(listener->channel, &passive, nullptr);
	passive->verbs = &lb_context;
	/* the pair: context points to the other side until it is accepted */
	passive->context = id;
	push_cm_event(passive, RDMA_CM_EVENT_CONNECT_REQUEST, listener, param->private_data,
		      param->private_data_len);
	return 0;
}

int accept(rdma_cm_id *id, rdma_conn_param *param)
{
	auto *active = static_cast<rdma_cm_id *>(id->context);
	id->context = nullptr;
	lb_qp *a = qp_of(active->qp);
	lb_qp *p = qp_of(id->qp);
	a->peer = p;
	p->peer = a;
	push_cm_event(active, RDMA_CM_EVENT_ESTABLISHED, nullptr, param->private_data,
		      param->private_data_len);
	push_cm_event(id, RDMA_CM_EVENT_ESTABLISHED, nullptr, nullptr, 0);
	return 0;
}

int reject(rdma_cm_id *id, const void *, uint8_t)
{
	auto *active = static_cast<rdma_cm_id *>(id->context);
	if (active)
		push_cm_event(active, RDMA_CM_EVENT_REJECTED, nullptr, nullptr, 0);
	return 0;
}

int disconnect(rdma_cm_id *id)
{
	push_cm_event(id, RDMA_CM_EVENT_DISCONNECTED, nullptr, nullptr, 0);
	return 0;
}

} /* namespace rpma::verbs */
