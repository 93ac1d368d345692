// SPDX-License-Identifier: BSD-3-Clause
/*
 * post.cpp -- posting: sends, receives, receives on a shared queue, native
 * atomic writes and flushes, each recorded as it was posted
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

using namespace fake;

namespace fake
{

bool negative_post_errors;
/* fake_verbs_fail_send_at: the chain element the next post_send fails at */
int send_fail_index = -1;
int send_fail_err;
void (*before_post_send)(void *arg);
void *before_post_send_arg;

} /* namespace fake */

namespace
{

/* a failure of ibv_post_*, as negative_post_errors says */
int post_fail_ret(int err)
{
	if (negative_post_errors && err) {
		errno = EPERM; /* whatever errno held: the library must not trust it */
		return -err;
	}
	return fail_ret(err);
}

} /* namespace */

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr)
{
	state &s = st();
	void (*before)(void *) = nullptr;
	void *before_arg = nullptr;
	{
		guard g(s.lock);
		std::swap(before, before_post_send);
		before_arg = before_post_send_arg;
	}
	if (before)
		before(before_arg);
	guard g(s.lock);
	if (bad_wr)
		*bad_wr = nullptr;
	if (int err = enter(FAKE_POST_SEND); err != GO_ON) {
		if (bad_wr)
			*bad_wr = wr;
		return post_fail_ret(err);
	}
	if (!wr || !bad_wr || !is_live(qp, kind::qp, "ibv_post_send")) {
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	auto *q = as<fake_qp>(qp);
	const int fail_at = send_fail_index;
	send_fail_index = -1;
	int index = 0;
	for (ibv_send_wr *w = wr; w; w = w->next, index++) {
		if (index == fail_at) {
			/* the elements before it are posted, as a provider does */
			*bad_wr = w;
			return post_fail_ret(send_fail_err);
		}
		if (w->num_sge < 0 || (w->num_sge > 0 && !w->sg_list) ||
		    (uint32_t)w->num_sge >
			(q->attr.cap.max_send_sge ? q->attr.cap.max_send_sge : 1)) {
			*bad_wr = w;
			return fail_ret(EINVAL);
		}
		fake_send_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.wr = *w;
		rec.wr.next = nullptr;
		rec.qp = qp;
		rec.posted_from = w;
		for (int i = 0; i < w->num_sge && i < 4; ++i)
			rec.sge[i] = w->sg_list[i];
		rec.wr.sg_list = w->num_sge > 0 ? rec.sge : nullptr;
		if (w->send_flags & IBV_SEND_INLINE) {
			size_t total = 0;
			for (int i = 0; i < w->num_sge; ++i)
				total += w->sg_list[i].length;
			if (total > q->attr.cap.max_inline_data) {
				*bad_wr = w;
				return fail_ret(ENOMEM);
			}
			size_t off = 0;
			for (int i = 0; i < w->num_sge && off < sizeof(rec.inline_data); ++i) {
				size_t n = w->sg_list[i].length;
				if (n > sizeof(rec.inline_data) - off)
					n = sizeof(rec.inline_data) - off;
				if (n)
					memcpy(rec.inline_data + off,
					       (const void *)(uintptr_t)w->sg_list[i].addr, n);
				off += n;
			}
		}
		s.sends.push_back(rec);
		fake_send_record &kept = s.sends.back();
		kept.wr.sg_list = w->num_sge > 0 ? kept.sge : nullptr;
	}
	return 0;
}

static int post_recv_common(fake_call call, ibv_qp *qp, ibv_srq *srq, ibv_recv_wr *wr,
			    ibv_recv_wr **bad_wr)
{
	state &s = st();
	if (bad_wr)
		*bad_wr = nullptr;
	if (int err = enter(call); err != GO_ON) {
		if (bad_wr)
			*bad_wr = wr;
		return post_fail_ret(err);
	}
	const char *name = qp ? "ibv_post_recv" : "ibv_post_srq_recv";
	bool ok = qp ? is_live(qp, kind::qp, name) : is_live(srq, kind::srq, name);
	if (!wr || !bad_wr || !ok) {
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	uint32_t max_sge;
	if (qp) {
		auto *q = as<fake_qp>(qp);
		if (q->srq) {
			*bad_wr = wr;
			return fail_ret(EINVAL);
		}
		max_sge = q->attr.cap.max_recv_sge ? q->attr.cap.max_recv_sge : 1;
	} else {
		max_sge = as<fake_srq>(srq)->attr.attr.max_sge;
	}
	for (ibv_recv_wr *w = wr; w; w = w->next) {
		if (w->num_sge < 0 || (w->num_sge > 0 && !w->sg_list) ||
		    (uint32_t)w->num_sge > max_sge) {
			*bad_wr = w;
			return fail_ret(EINVAL);
		}
		fake_recv_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.wr = *w;
		rec.wr.next = nullptr;
		for (int i = 0; i < w->num_sge && i < 4; ++i)
			rec.sge[i] = w->sg_list[i];
		rec.wr.sg_list = w->num_sge > 0 ? rec.sge : nullptr;
		rec.qp = qp;
		rec.srq = srq;
		s.recvs.push_back(rec);
		fake_recv_record &kept = s.recvs.back();
		kept.wr.sg_list = w->num_sge > 0 ? kept.sge : nullptr;
	}
	return 0;
}

int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	guard g(st().lock);
	if (!qp) {
		misuse("ibv_post_recv: NULL qp");
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	return post_recv_common(FAKE_POST_RECV, qp, nullptr, wr, bad_wr);
}

int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	guard g(st().lock);
	if (!srq) {
		misuse("ibv_post_srq_recv: NULL srq");
		if (bad_wr)
			*bad_wr = wr;
		return fail_ret(EINVAL);
	}
	return post_recv_common(FAKE_POST_SRQ_RECV, nullptr, srq, wr, bad_wr);
}

int post_atomic_write(ibv_qp *qp, uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
		      uint64_t remote_addr, const void *src8)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_POST_ATOMIC_WRITE); err != GO_ON)
		return fail_ret(err);
	if (!src8 || !is_live(qp, kind::qp, "ibv_wr_atomic_write"))
		return fail_ret(EINVAL);
	if (!as<fake_qp>(qp)->atomic_write) {
		misuse(
		    "ibv_wr_atomic_write: the QP was not created with IBV_QP_EX_WITH_ATOMIC_WRITE");
		return fail_ret(EINVAL);
	}
	fake_send_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.wr.wr_id = wr_id;
	rec.wr.opcode = static_cast<ibv_wr_opcode>(FAKE_WR_ATOMIC_WRITE);
	rec.wr.send_flags = send_flags;
	rec.wr.wr.rdma.remote_addr = remote_addr;
	rec.wr.wr.rdma.rkey = rkey;
	rec.wr.num_sge = 0;
	rec.wr.sg_list = nullptr;
	memcpy(rec.inline_data, src8, 8);
	rec.qp = qp;
	rec.native_atomic_write = true;
	s.sends.push_back(rec);
	return 0;
}

int post_send_ex(ibv_qp *qp, ibv_send_wr *wr, const native_flush_wr *flush)
{
	state &s = st();
	guard g(s.lock);
	const int fail_at = send_fail_index;
	send_fail_index = -1;
	if (int err = enter(FAKE_POST_SEND_EX); err != GO_ON)
		return fail_ret(err);
	if (!wr || !flush || !is_live(qp, kind::qp, "ibv_wr_start"))
		return fail_ret(EINVAL);
	auto *q = as<fake_qp>(qp);
	if (!q->flush && !q->atomic_write) {
		misuse("ibv_wr_start: the QP was not created with send_ops_flags");
		return fail_ret(EINVAL);
	}
	/* nothing is posted unless ibv_wr_complete succeeds: built aside first */
	std::vector<fake_send_record> built;
	int index = 0;
	for (ibv_send_wr *w = wr; w; w = w->next, index++) {
		if (index == fail_at)
			return fail_ret(send_fail_err);
		fake_send_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.qp = qp;
		rec.wr.wr_id = w->wr_id;
		rec.wr.send_flags = w->send_flags;
		rec.posted_ex = true;
		const native_flush_wr &f = flush[index];
		if (f.placement) {
			if (!q->flush) {
				misuse("ibv_wr_flush: the QP was not created with "
				       "IBV_QP_EX_WITH_FLUSH");
				return fail_ret(EINVAL);
			}
			if (f.placement != NATIVE_FLUSH_GLOBAL &&
			    f.placement != NATIVE_FLUSH_PERSISTENT) {
				misuse(
				    "ibv_wr_flush: placement %u is neither global nor persistent",
				    f.placement);
				return fail_ret(EINVAL);
			}
			rec.wr.opcode = static_cast<ibv_wr_opcode>(FAKE_WR_FLUSH);
			rec.wr.wr.rdma = w->wr.rdma;
			rec.native_flush = f.placement;
			rec.flush_len = f.len;
			rec.flush_whole_region = f.whole_region;
			built.push_back(rec);
			continue;
		}
		switch (w->opcode) {
		case IBV_WR_RDMA_READ:
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
			break;
		default:
			misuse("ibv_wr_*: opcode %d has no builder the library uses", w->opcode);
			return fail_ret(EINVAL);
		}
		if (w->num_sge < 0 || w->num_sge > 1 || (w->num_sge > 0 && !w->sg_list))
			return fail_ret(EINVAL);
		rec.wr.opcode = w->opcode;
		rec.wr.imm_data = w->imm_data;
		rec.wr.wr.rdma = w->wr.rdma;
		rec.wr.num_sge = w->num_sge;
		if (w->num_sge)
			rec.sge[0] = w->sg_list[0];
		if ((w->send_flags & IBV_SEND_INLINE) && w->num_sge) {
			if (w->sg_list[0].length > q->attr.cap.max_inline_data)
				return fail_ret(ENOMEM);
			memcpy(rec.inline_data, (const void *)(uintptr_t)w->sg_list[0].addr,
			       std::min<size_t>(w->sg_list[0].length, sizeof(rec.inline_data)));
		}
		built.push_back(rec);
	}
	for (const fake_send_record &rec : built) {
		s.sends.push_back(rec);
		fake_send_record &kept = s.sends.back();
		kept.wr.sg_list = kept.wr.num_sge > 0 ? kept.sge : nullptr;
	}
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

void fake_verbs_fail_send_at(int index, int err)
{
	guard g(st().lock);
	send_fail_index = index;
	send_fail_err = err;
}

void fake_verbs_before_next_post_send(void (*fn)(void *arg), void *arg)
{
	guard g(st().lock);
	before_post_send = fn;
	before_post_send_arg = arg;
}

void fake_verbs_set_negative_post_errors(bool negative)
{
	guard g(st().lock);
	negative_post_errors = negative;
}

unsigned fake_verbs_sends(void)
{
	guard g(st().lock);
	return (unsigned)st().sends.size();
}

const struct fake_send_record *fake_verbs_send(unsigned index)
{
	guard g(st().lock);
	return index < st().sends.size() ? &st().sends[index] : nullptr;
}

unsigned fake_verbs_recvs(void)
{
	guard g(st().lock);
	return (unsigned)st().recvs.size();
}

const struct fake_recv_record *fake_verbs_recv(unsigned index)
{
	guard g(st().lock);
	return index < st().recvs.size() ? &st().recvs[index] : nullptr;
}

} /* extern "C" */
