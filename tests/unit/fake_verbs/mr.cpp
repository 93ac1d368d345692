// SPDX-License-Identifier: BSD-3-Clause
/*
 * mr.cpp -- memory registration: ibv_reg_mr, ibv_dereg_mr, ibv_advise_mr
 *
 * Part of the fake rdma-core of the unit tests (fake_verbs.h, internal.hpp).
 */

#include "internal.hpp"

#include <cstring>

using namespace fake;

/*
 * The fake rdma-core
 */

namespace rpma::verbs
{

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, int access)
{
	state &s = st();
	guard g(s.lock);
	fake_reg_mr_record rec{};
	rec.pd = pd;
	rec.addr = addr;
	rec.length = length;
	rec.access = access;
	s.reg_mrs.push_back(rec);

	if (int err = enter(FAKE_REG_MR); err != GO_ON)
		return fail_null<ibv_mr>(err);
	if (!pd_ok(pd, "ibv_reg_mr"))
		return fail_null<ibv_mr>(EINVAL);
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return fail_null<ibv_mr>(EINVAL);
	if ((access & IBV_ACCESS_ON_DEMAND) && !s.odp)
		return fail_null<ibv_mr>(EOPNOTSUPP);
	if ((access & (FAKE_ACCESS_FLUSH_GLOBAL | FAKE_ACCESS_FLUSH_PERSISTENT)) && !s.flush)
		return fail_null<ibv_mr>(EOPNOTSUPP);
	if (access & FAKE_ACCESS_FLUSH_PERSISTENT) {
		/* rxe: every page must be persistent memory */
		const auto *p = static_cast<const uint8_t *>(addr);
		if (s.pmem == nullptr || p < s.pmem || length > s.pmem_len ||
		    static_cast<size_t>(p - s.pmem) > s.pmem_len - length)
			return fail_null<ibv_mr>(EINVAL);
	}
	if (length == 0)
		return fail_null<ibv_mr>(EINVAL);
	if (!addr && !(access & IBV_ACCESS_ON_DEMAND))
		return fail_null<ibv_mr>(EFAULT);

	auto *mr = new fake_mr();
	uint32_t n = s.next_key++;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.handle = s.next_handle++;
	mr->mr.lkey = 0x00a10000u | n;
	mr->mr.rkey = 0x1b2c0000u | (n << 8) | 0x3du;
	mr->access = access;
	pd_get(pd_of(pd));
	add_live(mr, kind::mr);

	fake_reg_mr_record &r = s.reg_mrs.back();
	r.mr = &mr->mr;
	r.lkey = mr->mr.lkey;
	r.rkey = mr->mr.rkey;
	return &mr->mr;
}

int dereg_mr(ibv_mr *mr)
{
	state &s = st();
	guard g(s.lock);
	if (int err = enter(FAKE_DEREG_MR); err != GO_ON)
		return fail_ret(err);
	if (!is_live(mr, kind::mr, "ibv_dereg_mr"))
		return fail_ret(EINVAL);
	pd_put(pd_of(mr->pd));
	drop_live(mr);
	delete as<fake_mr>(mr);
	return 0;
}

int advise_mr(ibv_pd *pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge *sg_list,
	      uint32_t num_sge)
{
	state &s = st();
	guard g(s.lock);
	fake_advise_record rec{};
	rec.pd = pd;
	rec.advice = advice;
	rec.flags = flags;
	rec.num_sge = num_sge;
	for (uint32_t i = 0; sg_list && i < num_sge && i < 4; ++i)
		rec.sge[i] = sg_list[i];
	s.advises.push_back(rec);

	if (int err = enter(FAKE_ADVISE_MR); err != GO_ON)
		return fail_ret(err);
	if (!pd_ok(pd, "ibv_advise_mr"))
		return fail_ret(EINVAL);
	if (!s.odp)
		return fail_ret(EOPNOTSUPP);
	if (advice > IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT ||
	    (flags & ~IBV_ADVISE_MR_FLAG_FLUSH) || !sg_list || num_sge == 0)
		return fail_ret(EINVAL);
	for (uint32_t i = 0; i < num_sge; ++i) {
		const ibv_sge &sge = sg_list[i];
		fake_mr *found = nullptr;
		for (auto &o : s.live) {
			if (o.second != kind::mr)
				continue;
			fake_mr *m = as<fake_mr>(o.first);
			if (m->mr.lkey == sge.lkey && m->mr.pd == pd)
				found = m;
		}
		if (!found)
			return fail_ret(EINVAL);
		if (!(found->access & IBV_ACCESS_ON_DEMAND))
			return fail_ret(ENOENT);
		uint64_t start = (uint64_t)(uintptr_t)found->mr.addr;
		uint64_t end = start + found->mr.length;
		if (sge.addr < start || sge.addr > end || sge.length > end - sge.addr)
			return fail_ret(EINVAL);
	}
	return 0;
}

} /* namespace rpma::verbs */

/*
 * The control interface
 */

extern "C" {

void fake_verbs_set_pmem(const void *addr, size_t len)
{
	guard g(st().lock);
	st().pmem = static_cast<const uint8_t *>(addr);
	st().pmem_len = len;
}

unsigned fake_verbs_reg_mrs(void)
{
	guard g(st().lock);
	return (unsigned)st().reg_mrs.size();
}

const struct fake_reg_mr_record *fake_verbs_reg_mr(unsigned index)
{
	guard g(st().lock);
	return index < st().reg_mrs.size() ? &st().reg_mrs[index] : nullptr;
}

unsigned fake_verbs_advises(void)
{
	guard g(st().lock);
	return (unsigned)st().advises.size();
}

const struct fake_advise_record *fake_verbs_advise(unsigned index)
{
	guard g(st().lock);
	return index < st().advises.size() ? &st().advises[index] : nullptr;
}

} /* extern "C" */
