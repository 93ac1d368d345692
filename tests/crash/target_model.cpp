// SPDX-License-Identifier: BSD-3-Clause
/*
 * target_model.cpp -- the crash model (see target_model.h)
 */

#include "target_model.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" {
#include "fixture.h"
#include "versioned.h"
}

namespace crash
{

static const uintptr_t CTX_BASE = 0x1000;
static const size_t LINE = 64;
static const size_t LOCAL_SIZE = 4u << 20;

const char *platform_name(platform p)
{
	switch (p) {
	case platform::adr_ddio_on:
		return "ADR/DDIO-on";
	case platform::adr_ddio_off:
		return "ADR/DDIO-off";
	case platform::eadr:
		return "eADR";
	case platform::dram:
		return "DRAM";
	}
	return "?";
}

const char *setup_name(setup s)
{
	switch (s) {
	case setup::legacy:
		return "legacy";
	case setup::gpspm:
		return "gpspm";
	case setup::full:
		return "full";
	case setup::native:
		return "native";
	}
	return "?";
}

const char *method_name(rpma_flush_method m)
{
	switch (m) {
	case RPMA_FLUSH_METHOD_NONE:
		return "none";
	case RPMA_FLUSH_METHOD_READ_AFTER_WRITE:
		return "read-after-write";
	case RPMA_FLUSH_METHOD_GPSPM:
		return "GPSPM";
	case RPMA_FLUSH_METHOD_NATIVE:
		return "native";
	}
	return "?";
}

breakage breakage_from_env(void)
{
	const char *b = getenv("RPMA_CRASH_BREAK");
	if (b == nullptr || *b == '\0')
		return breakage::none;
	if (strcmp(b, "persist") == 0)
		return breakage::persist_noop;
	if (strcmp(b, "flush") == 0)
		return breakage::flush_noop;
	if (strcmp(b, "ddio") == 0)
		return breakage::ddio_lie;
	fprintf(stderr, "RPMA_CRASH_BREAK=%s: not one of persist, flush, ddio\n", b);
	return breakage::none;
}

uint64_t prng::next()
{
	uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

unsigned prng::below(unsigned n)
{
	return n ? (unsigned)(next() % n) : 0;
}

bool prng::chance(unsigned percent)
{
	return below(100) < percent;
}

/* the persist functions the target registers: plain (a global) or with a context */
static sim *current;

static void persist_plain(const void *ptr, size_t len)
{
	current->persist_called(ptr, len);
}

static void persist_ctx(void *ctx, const void *ptr, size_t len)
{
	static_cast<sim *>(ctx)->persist_called(ptr, len);
}

static bool pmem_platform(platform p)
{
	return p != platform::dram;
}

static bool placement_persists(platform p)
{
	return p == platform::eadr || p == platform::adr_ddio_off;
}

sim::sim(const config &c) : cfg(c)
{
	rng.s = c.seed;
	current = this;
	const bool native = c.set == setup::native;
	if (native)
		fx_setup_native(nullptr);
	else
		fx_setup(nullptr);

	const size_t size = c.region_size;
	visible = static_cast<uint8_t *>(aligned_alloc(4096, (size + 4095) & ~(size_t)4095));
	initial.assign(size, 0);
	if (c.initial)
		memcpy(initial.data(), c.initial, size);
	memcpy(visible, initial.data(), size);
	dur = initial;
	shadow = initial;
	vis_ver.assign(size, 0);
	dur_ver.assign(size, 0);
	expect_ver.assign(size, 0);
	dirty.assign((size + LINE - 1) / LINE, false);

	/* the target: what its platform allows, declared as doc/persistence.md says */
	const bool pmem = pmem_platform(c.plat);
	const bool direct_write = placement_persists(c.plat) && c.set != setup::gpspm;
	const bool persist_fn = pmem && c.set != setup::legacy;
	bool target_gpspm = c.set == setup::gpspm || c.set == setup::full;
	bool initiator_gpspm = target_gpspm;
	int usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	if (!pmem && !c.dram_persistent_usage)
		usage &= ~RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	if (c.as_example) {
		/* replica.c: GPSPM only with a persist function; writer.c: always */
		target_gpspm = persist_fn;
		initiator_gpspm = true;
		usage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
		if (direct_write || persist_fn)
			usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
	}
	if (native && pmem)
		fake_verbs_set_pmem(visible, size);
	tmr = fx_mr(visible, size, usage);
	trkey = fx_mr_rkey(tmr);
	for (unsigned i = fake_verbs_reg_mrs(); i > 0; i--) {
		const fake_reg_mr_record *r = fake_verbs_reg_mr(i - 1);
		if (r->mr != nullptr && r->addr == visible) {
			tgranted_persistent = (r->access & FAKE_ACCESS_FLUSH_PERSISTENT) != 0;
			break;
		}
	}
	if (persist_fn) {
		if (c.seed & 1)
			assert_int_equal(rpma_mr_set_persist_ctx_fn(tmr, persist_ctx, this), 0);
		else
			assert_int_equal(rpma_mr_set_persist_fn(tmr, persist_plain), 0);
	}
	rpma_conn_cfg *tcfg = target_gpspm ? vd_gpspm_cfg(RPMA_GPSPM_POLLED, c.tdepth) : nullptr;
	rpma_conn_cfg *icfg = initiator_gpspm ? vd_gpspm_cfg(RPMA_GPSPM_POLLED, c.idepth) : nullptr;
	tconn = fx_conn_active(tcfg, &tid);
	conn = fx_conn_active(icfg, &iid);

	/* the target's versioned descriptors, as its private data would carry them */
	rpma_peer_cfg *pcfg = nullptr;
	assert_int_equal(rpma_peer_cfg_new(&pcfg), 0);
	assert_int_equal(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, direct_write), 0);
	size_t mr_size = 0, pcfg_size = 0;
	assert_int_equal(rpma_mr_get_versioned_descriptor_size(tmr, &mr_size), 0);
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor_size(pcfg, &pcfg_size), 0);
	std::vector<uint8_t> pdata(mr_size + pcfg_size);
	assert_int_equal(rpma_mr_get_versioned_descriptor(tmr, pdata.data()), 0);
	assert_int_equal(rpma_peer_cfg_get_versioned_descriptor(pcfg, tcfg, pdata.data() + mr_size),
			 0);
	assert_int_equal(rpma_peer_cfg_delete(&pcfg), 0);
	if (tcfg)
		fx_cfg_delete(&tcfg);
	if (icfg)
		fx_cfg_delete(&icfg);

	/* the initiator applies them */
	assert_int_equal(rpma_mr_remote_from_descriptor(pdata.data(), mr_size, &dst), 0);
	vd_apply(conn, pdata.data() + mr_size, pcfg_size);
	assert_int_equal(rpma_conn_get_cq(conn, &cq), 0);
	assert_int_equal(rpma_conn_get_cq(tconn, &tcq), 0);
	(void)rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_PERSISTENT, &method_persistent);
	(void)rpma_conn_get_flush_method(conn, dst, RPMA_FLUSH_TYPE_VISIBILITY, &method_visibility);

	src = static_cast<uint8_t *>(aligned_alloc(4096, LOCAL_SIZE));
	memset(src, 0, LOCAL_SIZE);
	src_size = LOCAL_SIZE;
	src_mr = fx_mr(src, src_size, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST);

	qi.qp = iid->qp;
	qt.qp = tid->qp;
	qi.peer = &qt;
	qt.peer = &qi;
	qi.initiator = true;
	sync_records();
}

sim::~sim()
{
	assert_int_equal(rpma_mr_remote_delete(&dst), 0);
	fx_mr_dereg(&src_mr);
	fx_conn_delete(&conn);
	fx_conn_delete(&tconn);
	fx_mr_dereg(&tmr);
	fx_teardown(nullptr);
	free(src);
	free(visible);
	current = nullptr;
}

void sim::violation(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (violations == 0)
		first_violation = buf;
	if (violations < 3 && getenv("RPMA_CRASH_QUIET") == nullptr)
		fprintf(stderr, "# VIOLATION [%s, %s, seed %llu, step %lu]: %s\n",
			setup_name(cfg.set), platform_name(cfg.plat), (unsigned long long)cfg.seed,
			n.steps, buf);
	violations++;
}

void sim::finding(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (findings == 0)
		first_finding = buf;
	findings++;
	violation("%s", buf);
}

bool sim::carried_by_gpspm(const app_op &o) const
{
	const fake_send_record *r = fake_verbs_send(o.record);
	return r != nullptr && r->wr.opcode == IBV_WR_SEND;
}

/* memory */

bool sim::placement_durable() const
{
	return placement_persists(cfg.plat) && cfg.brk != breakage::ddio_lie;
}

bool sim::cpu_durable() const
{
	return cfg.plat == platform::eadr && cfg.brk != breakage::ddio_lie;
}

void sim::make_durable(size_t off, size_t len)
{
	if (cfg.plat == platform::dram)
		return;
	memcpy(&dur[off], visible + off, len);
	memcpy(&dur_ver[off], &vis_ver[off], len * sizeof(uint32_t));
}

void sim::place(size_t off, const uint8_t *bytes, size_t len, uint32_t ver, bool by_cpu)
{
	if (!by_cpu)
		memcpy(visible + off, bytes, len);
	memcpy(&shadow[off], visible + off, len);
	for (size_t b = off; b < off + len; b++)
		vis_ver[b] = ver;
	if (cfg.plat == platform::dram || len == 0)
		return;
	if (by_cpu ? cpu_durable() : placement_durable()) {
		memcpy(&dur[off], visible + off, len);
		memcpy(&dur_ver[off], &vis_ver[off], len * sizeof(uint32_t));
		return;
	}
	for (size_t l = off / LINE; l <= (off + len - 1) / LINE; l++)
		dirty[l] = true;
}

void sim::evict_one()
{
	std::vector<size_t> lines;
	for (size_t l = 0; l < dirty.size(); l++)
		if (dirty[l])
			lines.push_back(l);
	if (lines.empty())
		return;
	size_t l = lines[rng.below((unsigned)lines.size())];
	size_t off = l * LINE;
	size_t len = std::min(LINE, cfg.region_size - off);
	make_durable(off, len);
	dirty[l] = false;
}

uint8_t sim::byte_of(uint32_t v, size_t b) const
{
	if (v == 0)
		return initial[b];
	auto it = writes.find(v);
	if (it == writes.end() || b < it->second.first ||
	    b - it->second.first >= it->second.second.size())
		return (uint8_t)~initial[b];
	return it->second.second[b - it->second.first];
}

/* the target's CPU stored the 8 bytes of GPSPM atomic writes: which ones */
void sim::sync_cpu_stores()
{
	const size_t size = cfg.region_size;
	for (size_t c = 0; c < size; c += LINE) {
		size_t len = std::min(LINE, size - c);
		if (memcmp(visible + c, &shadow[c], len) == 0)
			continue;
		for (size_t b = c; b < c + len; b++) {
			if (visible[b] == shadow[b])
				continue;
			cpu_store *found = nullptr;
			for (cpu_store &s : cpu)
				if (!s.stored && b >= s.off && b < s.off + 8) {
					found = &s;
					break;
				}
			if (found == nullptr) {
				violation("the target's memory changed at %zu without a write or a "
					  "GPSPM atomic write",
					  b);
				shadow[b] = visible[b];
				continue;
			}
			found->stored = true;
			if (memcmp(visible + found->off, found->bytes, 8) != 0)
				violation(
				    "the target stored other bytes than the atomic write's at "
				    "%zu",
				    found->off);
			place(found->off, nullptr, 8, found->version, true);
			/* the cache may write the line back at once */
			if (cfg.plat != platform::dram && !cpu_durable() && rng.chance(30)) {
				make_durable(found->off, 8);
			}
		}
	}
	while (!cpu.empty() && cpu.front().stored)
		cpu.pop_front();
}

void sim::persist_called(const void *ptr, size_t len)
{
	const uint8_t *p = static_cast<const uint8_t *>(ptr);
	if (p < visible || p + len > visible + cfg.region_size || p + len < p) {
		violation("the persist function was called outside the region");
		return;
	}
	sync_cpu_stores();
	crash_point("persist function entered");
	if (cfg.brk != breakage::persist_noop)
		make_durable((size_t)(p - visible), len);
	crash_point("persist function returned");
}

/* the network and the target device */

bool sim::remote_range(uint64_t addr, uint64_t len, uint32_t rkey, size_t *off, const char *what)
{
	const uint64_t base = (uint64_t)(uintptr_t)visible;
	if (rkey != trkey || addr < base || addr - base > cfg.region_size ||
	    len > cfg.region_size - (addr - base)) {
		violation("%s outside the target's region (rkey %x, address %llx, %llu bytes)",
			  what, rkey, (unsigned long long)addr, (unsigned long long)len);
		return false;
	}
	*off = (size_t)(addr - base);
	return true;
}

static size_t record_bytes(const fake_send_record &r, uint8_t *out, size_t max)
{
	size_t len = 0;
	for (int i = 0; i < r.wr.num_sge && i < 4; i++)
		len += r.sge[i].length;
	if (len > max)
		len = max;
	if (r.wr.send_flags & IBV_SEND_INLINE) {
		memcpy(out, r.inline_data, std::min(len, sizeof(r.inline_data)));
		return std::min(len, sizeof(r.inline_data));
	}
	size_t at = 0;
	for (int i = 0; i < r.wr.num_sge && i < 4 && at < len; i++) {
		size_t n = std::min<size_t>(r.sge[i].length, len - at);
		memcpy(out + at, (const void *)(uintptr_t)r.sge[i].addr, n);
		at += n;
	}
	return at;
}

void sim::sync_records()
{
	for (unsigned n_sends = fake_verbs_sends(); seen_sends < n_sends; seen_sends++) {
		const fake_send_record *r = fake_verbs_send(seen_sends);
		qpm *q = r->qp == qi.qp ? &qi : r->qp == qt.qp ? &qt : nullptr;
		if (q == nullptr)
			continue;
		wr w;
		w.rec = *r;
		w.rec.wr.sg_list = nullptr;
		w.index = seen_sends;
		w.state = wr::posted;
		/* the target answers a GPSPM atomic write once it stored it */
		if (q == &qt && r->wr.opcode == IBV_WR_SEND) {
			uint8_t m[64];
			size_t len = record_bytes(*r, m, sizeof(m));
			if (len >= 16 && m[0] == 0x47 && m[1] == 0x50 && m[3] == 2) {
				uint32_t slot = (uint32_t)vd_get_le(m + 4, 4);
				uint32_t seq = (uint32_t)vd_get_le(m + 8, 4);
				for (cpu_store &s : cpu)
					if (!s.stored && s.slot == slot && s.seq == seq) {
						sync_cpu_stores();
						if (s.stored)
							break;
						if (m[12] != 0 ||
						    memcmp(visible + s.off, s.bytes, 8) != 0) {
							violation("the target answered an atomic "
								  "write (status %u) without "
								  "storing it",
								  m[12]);
							s.stored = true;
							break;
						}
						s.stored = true;
						place(s.off, nullptr, 8, s.version, true);
						break;
					}
			}
		}
		q->sq.push_back(w);
	}
	for (unsigned n_recvs = fake_verbs_recvs(); seen_recvs < n_recvs; seen_recvs++) {
		const fake_recv_record *r = fake_verbs_recv(seen_recvs);
		qpm *q = r->qp == qi.qp ? &qi : r->qp == qt.qp ? &qt : nullptr;
		if (q == nullptr)
			continue;
		q->rq.push_back({ r->wr.wr_id, r->wr.num_sge ? r->sge[0].addr : 0,
				  r->wr.num_sge ? r->sge[0].length : 0 });
	}
}

bool sim::can_execute(const qpm &q, size_t *at)
{
	for (size_t i = 0; i < q.sq.size(); i++) {
		const wr &w = q.sq[i];
		if (w.state != wr::posted)
			continue;
		if (w.rec.wr.send_flags & IBV_SEND_FENCE)
			for (size_t j = 0; j < i; j++)
				if (q.sq[j].state == wr::started)
					return false;
		if (w.rec.wr.opcode == IBV_WR_SEND && q.peer->rq.empty())
			return false; /* receiver not ready: retried */
		*at = i;
		return true;
	}
	return false;
}

void sim::execute(qpm &q, size_t at)
{
	wr &w = q.sq[at];
	const fake_send_record &r = w.rec;
	const uint32_t ver = w.index + 1;
	w.state = wr::executed;
	switch ((int)r.wr.opcode) {
	case IBV_WR_RDMA_WRITE:
	case FAKE_WR_ATOMIC_WRITE: {
		if (!q.initiator) {
			violation("the target's library posted an RDMA write");
			return;
		}
		static uint8_t bytes[1u << 16];
		size_t len = r.native_atomic_write ? 8 : record_bytes(r, bytes, sizeof(bytes));
		if (r.native_atomic_write)
			memcpy(bytes, r.inline_data, 8);
		size_t off;
		if (!remote_range(r.wr.wr.rdma.remote_addr, len, r.wr.wr.rdma.rkey, &off,
				  "an RDMA write"))
			return;
		auto it = writes.find(ver);
		if (it == writes.end() || it->second.first != off ||
		    it->second.second.size() != len ||
		    memcmp(it->second.second.data(), bytes, len) != 0)
			violation("an RDMA write of %zu bytes at %zu is not what the application "
				  "wrote there",
				  len, off);
		place(off, bytes, len, ver, false);
		return;
	}
	case IBV_WR_RDMA_READ:
	case FAKE_WR_FLUSH: {
		size_t off;
		uint64_t len = r.wr.opcode == IBV_WR_RDMA_READ ? r.sge[0].length : r.flush_len;
		if (r.flush_whole_region) {
			if (r.wr.wr.rdma.rkey != trkey)
				violation("a FLUSH of another region");
		} else if (!remote_range(r.wr.wr.rdma.remote_addr, len, r.wr.wr.rdma.rkey, &off,
					 "an RDMA read or FLUSH")) {
			return;
		}
		w.state = wr::started;
		return;
	}
	case IBV_WR_SEND: {
		uint8_t m[64];
		size_t len = record_bytes(r, m, sizeof(m));
		rq_entry d = q.peer->rq.front();
		q.peer->rq.pop_front();
		if (len > d.len) {
			violation("a send of %zu bytes into a receive of %u", len, d.len);
			len = d.len;
		}
		memcpy((void *)(uintptr_t)d.addr, m, len);
		ibv_wc wc;
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = d.wr_id;
		wc.opcode = IBV_WC_RECV;
		wc.status = IBV_WC_SUCCESS;
		wc.byte_len = (uint32_t)len;
		wc.qp_num = q.peer->qp->qp_num;
		wc.src_qp = q.qp->qp_num;
		fake_verbs_push_wc(q.peer->qp->recv_cq, &wc);
		/* a GPSPM atomic write: the target's CPU is to store it */
		if (q.initiator && len >= 32 && m[0] == 0x47 && m[1] == 0x50 && m[3] == 3) {
			cpu_store s;
			uint64_t addr = vd_get_le(m + 16, 8);
			size_t off = 0;
			if (!remote_range(addr, 8, (uint32_t)vd_get_le(m + 12, 4), &off,
					  "a GPSPM atomic write"))
				return;
			s.off = off;
			memcpy(s.bytes, m + 24, 8);
			s.version = ver;
			s.slot = (uint32_t)vd_get_le(m + 4, 4);
			s.seq = (uint32_t)vd_get_le(m + 8, 4);
			s.stored = false;
			cpu.push_back(s);
		}
		return;
	}
	default:
		violation("a work request with opcode %d", (int)r.wr.opcode);
		return;
	}
}

void sim::finish(qpm &q, size_t at)
{
	wr &w = q.sq[at];
	const fake_send_record &r = w.rec;
	w.state = wr::executed;
	if (r.wr.opcode == IBV_WR_RDMA_READ) {
		size_t off = (size_t)(r.wr.wr.rdma.remote_addr - (uint64_t)(uintptr_t)visible);
		size_t len = r.sge[0].length;
		sync_cpu_stores();
		memcpy((void *)(uintptr_t)r.sge[0].addr, visible + off, len);
		w.seen.assign(vis_ver.begin() + off, vis_ver.begin() + off + len);
		read_seen[w.index] = w.seen;
		return;
	}
	/* FLUSH */
	if (r.native_flush != FAKE_FLUSH_PERSISTENT)
		return;
	if (!tgranted_persistent) {
		violation("a native FLUSH to persistence of a region the device did not grant it");
		return;
	}
	if (cfg.brk == breakage::flush_noop)
		return;
	sync_cpu_stores();
	if (r.flush_whole_region)
		make_durable(0, cfg.region_size);
	else
		make_durable((size_t)(r.wr.wr.rdma.remote_addr - (uint64_t)(uintptr_t)visible),
			     r.flush_len);
}

void sim::complete_head(qpm &q)
{
	wr &w = q.sq.front();
	const fake_send_record &r = w.rec;
	const ibv_qp_init_attr_ex *attr = fake_verbs_qp_init_attr(q.qp);
	bool signaled = (r.wr.send_flags & IBV_SEND_SIGNALED) || (attr && attr->sq_sig_all);
	if (signaled) {
		ibv_wc wc;
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = r.wr.wr_id;
		wc.status = IBV_WC_SUCCESS;
		wc.qp_num = q.qp->qp_num;
		switch ((int)r.wr.opcode) {
		case IBV_WR_RDMA_WRITE:
			wc.opcode = IBV_WC_RDMA_WRITE;
			break;
		case FAKE_WR_ATOMIC_WRITE:
			wc.opcode = (ibv_wc_opcode)FAKE_WC_ATOMIC_WRITE;
			break;
		case IBV_WR_RDMA_READ:
			wc.opcode = IBV_WC_RDMA_READ;
			wc.byte_len = r.sge[0].length;
			break;
		case FAKE_WR_FLUSH:
			wc.opcode = (ibv_wc_opcode)FAKE_WC_FLUSH;
			break;
		default:
			wc.opcode = IBV_WC_SEND;
			break;
		}
		fake_verbs_push_wc(q.qp->send_cq, &wc);
	}
	q.sq.pop_front();
}

void sim::target_poll()
{
	rpma_completion c;
	int ret = rpma_cq_get_completion(tcq, &c);
	if (ret == 0)
		violation("the target's application was handed a completion (op %d)", (int)c.op);
	else if (ret != RPMA_E_NO_COMPLETION)
		violation("the target's poll failed: %d", ret);
	sync_cpu_stores();
	sync_records();
}

bool sim::net_step()
{
	sync_records();
	enum { EXEC_I, FINISH_I, COMPLETE_I, EXEC_T, FINISH_T, COMPLETE_T, TPOLL, EVICT, NACT };
	unsigned weight[NACT] = {};
	size_t exec_at[2] = {};
	qpm *qs[2] = { &qi, &qt };
	for (int k = 0; k < 2; k++) {
		qpm &q = *qs[k];
		if (can_execute(q, &exec_at[k]))
			weight[k * 3 + 0] = 6;
		for (const wr &w : q.sq)
			if (w.state == wr::started) {
				weight[k * 3 + 1] = 3;
				break;
			}
		if (!q.sq.empty() && q.sq.front().state == wr::executed)
			weight[k * 3 + 2] = 4;
	}
	if (fake_verbs_wcs_queued(qt.qp->send_cq) + fake_verbs_wcs_queued(qt.qp->recv_cq) > 0)
		weight[TPOLL] = 4;
	for (bool d : dirty)
		if (d) {
			weight[EVICT] = 1;
			break;
		}
	unsigned total = 0;
	for (unsigned w : weight)
		total += w;
	if (total == 0)
		return false;
	unsigned pick = rng.below(total);
	int a = 0;
	while (pick >= weight[a])
		pick -= weight[a++];
	if (getenv("RPMA_CRASH_TRACE")) {
		static const char *names[] = { "exec I",   "finish I",	 "complete I",	"exec T",
					       "finish T", "complete T", "target poll", "evict" };
		const qpm *q = a < 6 ? qs[a / 3] : nullptr;
		int idx = -1, opc = -1;
		if (q && a % 3 == 0) {
			idx = (int)q->sq[exec_at[a / 3]].index;
			opc = q->sq[exec_at[a / 3]].rec.wr.opcode;
		} else if (q && a % 3 == 2) {
			idx = (int)q->sq.front().index;
			opc = q->sq.front().rec.wr.opcode;
		}
		fprintf(stderr, "# step %lu: %s wr %d opcode %d\n", n.steps, names[a], idx, opc);
	}
	switch (a) {
	case EXEC_I:
	case EXEC_T:
		execute(*qs[a / 3], exec_at[a / 3]);
		break;
	case FINISH_I:
	case FINISH_T: {
		qpm &q = *qs[a / 3];
		std::vector<size_t> started;
		for (size_t i = 0; i < q.sq.size(); i++)
			if (q.sq[i].state == wr::started)
				started.push_back(i);
		finish(q, started[rng.below((unsigned)started.size())]);
		break;
	}
	case COMPLETE_I:
	case COMPLETE_T:
		complete_head(*qs[a / 3]);
		break;
	case TPOLL:
		target_poll();
		break;
	case EVICT:
		evict_one();
		break;
	}
	n.steps++;
	crash_point("network or target step");
	return true;
}

bool sim::quiet()
{
	sync_records();
	return qi.sq.empty() && qt.sq.empty() && expect.empty() &&
	       fake_verbs_wcs_queued(qi.qp->send_cq) == 0 &&
	       fake_verbs_wcs_queued(qi.qp->recv_cq) == 0 &&
	       fake_verbs_wcs_queued(qt.qp->send_cq) == 0 &&
	       fake_verbs_wcs_queued(qt.qp->recv_cq) == 0 && cpu.empty();
}

/* the application's side */

uint8_t *sim::take_local(size_t len)
{
	size_t at = (src_used + 63) & ~(size_t)63;
	if (at + len > src_size)
		at = 0; /* long done: a sequence uses far less */
	src_used = at + len;
	return src + at;
}

size_t sim::new_op(app_op o)
{
	ops.push_back(o);
	size_t id = ops.size() - 1;
	if (getenv("RPMA_CRASH_TRACE"))
		fprintf(
		    stderr,
		    "# step %lu: op %zu posted: kind %d type %d signaled %d [%zu, +%zu) wr %u\n",
		    n.steps, id, (int)o.k, (int)o.type, o.signaled, o.off, o.len, o.record);
	if (o.signaled)
		expect.push_back(id);
	n.ops++;
	return id;
}

static const void *ctx_of(size_t id)
{
	return (const void *)(CTX_BASE + id);
}

void sim::check_send_records(unsigned before, unsigned count, const char *what)
{
	unsigned now = fake_verbs_sends();
	if (now != before + count) {
		violation("%s posted %u work requests, not %u", what, now - before, count);
		return;
	}
	for (unsigned i = before; i < now; i++)
		if (fake_verbs_send(i)->qp != qi.qp)
			violation("%s posted on another queue pair", what);
}

int sim::write(size_t off, const uint8_t *data, size_t len, bool signaled)
{
	uint8_t *local = take_local(len);
	memcpy(local, data, len);
	unsigned before = fake_verbs_sends();
	int ret = rpma_write(conn, dst, off, src_mr, (size_t)(local - src), len,
			     signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
			     ctx_of(ops.size()));
	if (ret) {
		violation("rpma_write failed: %d", ret);
		return ret;
	}
	check_send_records(before, 1, "rpma_write");
	uint32_t ver = before + 1;
	writes[ver] = { off, std::vector<uint8_t>(data, data + len) };
	for (size_t b = off; b < off + len; b++)
		expect_ver[b] = ver;
	app_op o{ app_op::write, signaled, RPMA_FLUSH_TYPE_VISIBILITY, off, len, before, {},
		  false,	 nullptr };
	new_op(o);
	return 0;
}

int sim::flush(size_t off, size_t len, rpma_flush_type type, bool signaled)
{
	unsigned before = fake_verbs_sends();
	int ret = rpma_flush(conn, dst, off, len, type,
			     signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
			     ctx_of(ops.size()));
	const rpma_flush_method m =
	    type == RPMA_FLUSH_TYPE_PERSISTENT ? method_persistent : method_visibility;
	if (ret == RPMA_E_AGAIN) {
		n.again++;
		check_send_records(before, 0, "rpma_flush refused with RPMA_E_AGAIN");
		if (m != RPMA_FLUSH_METHOD_GPSPM)
			violation("RPMA_E_AGAIN from a flush by %s", method_name(m));
		return ret;
	}
	if (ret == RPMA_E_NOSUPP) {
		n.nosupp++;
		check_send_records(before, 0, "rpma_flush refused with RPMA_E_NOSUPP");
		if (m != RPMA_FLUSH_METHOD_NONE)
			violation("rpma_flush refused (RPMA_E_NOSUPP) although the method is %s",
				  method_name(m));
		return ret;
	}
	if (ret) {
		violation("rpma_flush failed: %d", ret);
		return ret;
	}
	if (type == RPMA_FLUSH_TYPE_PERSISTENT && cfg.plat == platform::dram)
		violation("(3) rpma_flush(PERSISTENT) accepted on DRAM");
	if (m == RPMA_FLUSH_METHOD_NONE)
		violation("rpma_flush accepted with no method");
	check_send_records(before, 1, "rpma_flush");
	app_op o{ app_op::flush, signaled, type, off, len, before, {}, false, nullptr };
	o.need.assign(expect_ver.begin() + off, expect_ver.begin() + off + len);
	new_op(o);
	return 0;
}

int sim::atomic_write(size_t off, const uint8_t value[8], bool signaled)
{
	unsigned before = fake_verbs_sends();
	int ret = rpma_atomic_write(
	    conn, dst, off, (const char *)value,
	    signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR, ctx_of(ops.size()));
	if (ret == RPMA_E_AGAIN) {
		n.again++;
		check_send_records(before, 0, "rpma_atomic_write refused with RPMA_E_AGAIN");
		return ret;
	}
	if (ret) {
		violation("rpma_atomic_write failed: %d", ret);
		return ret;
	}
	check_send_records(before, 1, "rpma_atomic_write");
	uint32_t ver = before + 1;
	writes[ver] = { off, std::vector<uint8_t>(value, value + 8) };
	for (size_t b = off; b < off + 8; b++)
		expect_ver[b] = ver;
	app_op o{ app_op::atomic, signaled, RPMA_FLUSH_TYPE_VISIBILITY, off, 8, before, {},
		  false,	  nullptr };
	new_op(o);
	return 0;
}

int sim::read(size_t off, size_t len, bool signaled)
{
	uint8_t *local = take_local(len);
	unsigned before = fake_verbs_sends();
	int ret = rpma_read(conn, src_mr, (size_t)(local - src), dst, off, len,
			    signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
			    ctx_of(ops.size()));
	if (ret) {
		violation("rpma_read failed: %d", ret);
		return ret;
	}
	check_send_records(before, 1, "rpma_read");
	app_op o{ app_op::read, signaled, RPMA_FLUSH_TYPE_VISIBILITY, off, len, before, {},
		  false,	local };
	o.need.assign(expect_ver.begin() + off, expect_ver.begin() + off + len);
	new_op(o);
	return 0;
}

int sim::batch(const batch_elem *e, int count)
{
	rpma_batch_op b[RPMA_BATCH_MAX];
	uint8_t *local[RPMA_BATCH_MAX];
	memset(b, 0, sizeof(b));
	for (int i = 0; i < count; i++) {
		b[i].flags = e[i].signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
		b[i].op_context = ctx_of(ops.size() + (size_t)i);
		b[i].remote = dst;
		b[i].remote_offset = e[i].off;
		b[i].len = e[i].len;
		local[i] = nullptr;
		switch (e[i].k) {
		case app_op::write:
			b[i].op = RPMA_OP_WRITE;
			local[i] = take_local(e[i].len);
			memcpy(local[i], e[i].data, e[i].len);
			b[i].local = src_mr;
			b[i].local_offset = (size_t)(local[i] - src);
			break;
		case app_op::read:
			b[i].op = RPMA_OP_READ;
			local[i] = take_local(e[i].len);
			b[i].local = src_mr;
			b[i].local_offset = (size_t)(local[i] - src);
			break;
		default:
			b[i].op = RPMA_OP_FLUSH;
			b[i].flush_type = e[i].type;
			break;
		}
	}
	unsigned before = fake_verbs_sends();
	int failed = -2;
	int ret = rpma_post_batch(conn, b, count, &failed);
	if (ret == RPMA_E_AGAIN || ret == RPMA_E_NOSUPP) {
		check_send_records(before, 0, "a refused rpma_post_batch");
		if (failed < 0 || failed >= count || e[failed].k != app_op::flush)
			violation("rpma_post_batch refused (%d) naming element %d", ret, failed);
		if (ret == RPMA_E_AGAIN)
			n.again++;
		else
			n.nosupp++;
		return ret;
	}
	if (ret) {
		violation("rpma_post_batch failed: %d (element %d)", ret, failed);
		return ret;
	}
	check_send_records(before, (unsigned)count, "rpma_post_batch");
	for (int i = 0; i < count; i++) {
		unsigned rec = before + (unsigned)i;
		app_op o{ e[i].k, e[i].signaled, e[i].type, e[i].off, e[i].len, rec,
			  {},	  false,	 local[i] };
		if (e[i].k == app_op::write) {
			uint32_t ver = rec + 1;
			writes[ver] = { e[i].off,
					std::vector<uint8_t>(e[i].data, e[i].data + e[i].len) };
			for (size_t x = e[i].off; x < e[i].off + e[i].len; x++)
				expect_ver[x] = ver;
		} else {
			if (e[i].k == app_op::flush && e[i].type == RPMA_FLUSH_TYPE_PERSISTENT &&
			    cfg.plat == platform::dram)
				violation("(3) a batched flush(PERSISTENT) accepted on DRAM");
			o.need.assign(expect_ver.begin() + e[i].off,
				      expect_ver.begin() + e[i].off + e[i].len);
		}
		new_op(o);
	}
	return 0;
}

/* completions */

void sim::check_claim(const app_op &o, const char *where)
{
	for (size_t i = 0; i < o.len; i++) {
		size_t b = o.off + i;
		if (dur_ver[b] < o.need[i]) {
			violation("(a) %s: a persistent flush of [%zu, +%zu) completed, but byte "
				  "%zu is durable as of version %u, written before it: %u",
				  where, o.off, o.len, b, dur_ver[b], o.need[i]);
			return;
		}
		if (dur[b] != byte_of(dur_ver[b], b)) {
			violation("(a) %s: durable byte %zu is not what version %u wrote", where, b,
				  dur_ver[b]);
			return;
		}
	}
}

void sim::check_read(const app_op &o, bool by_gpspm)
{
	auto it = read_seen.find(o.record);
	if (it == read_seen.end()) {
		if (by_gpspm)
			finding("(b) a read of [%zu, +%zu) had not finished when a GPSPM "
				"operation posted after it completed",
				o.off, o.len);
		else
			violation("a read completed before the device read anything");
		return;
	}
	for (size_t i = 0; i < o.len; i++) {
		uint32_t v = it->second[i];
		if (v < o.need[i]) {
			violation("a read of [%zu, +%zu) returned byte %zu as of version %u, older "
				  "than %u written before it",
				  o.off, o.len, o.off + i, v, o.need[i]);
			return;
		}
		if (o.local[i] != byte_of(v, o.off + i)) {
			violation("a read returned byte %zu other than version %u's", o.off + i, v);
			return;
		}
	}
	read_seen.erase(it);
}

void sim::finished_through(size_t id, bool by_gpspm)
{
	sync_cpu_stores();
	for (; implied <= id; implied++) {
		app_op &o = ops[implied];
		const bool earlier = by_gpspm && implied < id;
		o.finished = true;
		if (o.k == app_op::flush && o.type == RPMA_FLUSH_TYPE_PERSISTENT) {
			claims.push_back(implied);
			n.claims++;
			check_claim(o, "when taken");
		} else if (o.k == app_op::flush) {
			for (size_t i = 0; i < o.len; i++)
				if (vis_ver[o.off + i] < o.need[i]) {
					if (earlier)
						finding("(b) a visibility flush of [%zu, +%zu) "
							"had not finished when a GPSPM operation "
							"posted after it completed",
							o.off, o.len);
					else
						violation("a visibility flush of [%zu, +%zu) "
							  "completed, but byte %zu is not visible "
							  "yet",
							  o.off, o.len, o.off + i);
					break;
				}
		} else if (o.k == app_op::read) {
			check_read(o, earlier);
		}
	}
}

void sim::taken(const void *ctx, int op, bool as_wc, int wc_opcode, int status)
{
	n.completions++;
	uintptr_t c = (uintptr_t)ctx;
	if (c < CTX_BASE || c - CTX_BASE >= ops.size()) {
		violation("(d) a completion with an op_context the application never gave: %p",
			  ctx);
		return;
	}
	size_t id = c - CTX_BASE;
	const app_op &o = ops[id];
	if (getenv("RPMA_CRASH_TRACE"))
		fprintf(stderr, "# step %lu: op %zu completed (%s %d) status %d\n", n.steps, id,
			as_wc ? "wc" : "op", as_wc ? wc_opcode : op, status);
	if (!o.signaled)
		violation("(d) a completion of an unsignaled operation that succeeded (op %zu)",
			  id);
	if (expect.empty() || expect.front() != id) {
		bool pending = false;
		for (auto it = expect.begin(); it != expect.end(); ++it)
			if (*it == id) {
				expect.erase(it);
				pending = true;
				break;
			}
		if (pending && carried_by_gpspm(o))
			finding("(b) op %zu (carried by GPSPM) completed before op %zu, posted "
				"earlier",
				id, expect.front());
		else if (pending)
			violation("(b) op %zu completed before op %zu, posted earlier", id,
				  expect.front());
		else
			violation("(d) op %zu completed twice", id);
	} else {
		expect.pop_front();
	}
	if (status != IBV_WC_SUCCESS)
		violation("op %zu completed with status %d", id, status);
	bool right;
	if (!as_wc) {
		switch (o.k) {
		case app_op::flush:
			right = op == RPMA_OP_FLUSH;
			break;
		case app_op::read:
			right = op == RPMA_OP_READ;
			break;
		default:
			right = op == RPMA_OP_WRITE;
			break;
		}
	} else {
		switch (o.k) {
		case app_op::flush:
		case app_op::read:
			right = wc_opcode == IBV_WC_RDMA_READ;
			break;
		default:
			right = wc_opcode == IBV_WC_RDMA_WRITE || wc_opcode == FAKE_WC_ATOMIC_WRITE;
			break;
		}
	}
	if (!right)
		violation("(d) op %zu (kind %d) completed as %s %d", id, (int)o.k,
			  as_wc ? "opcode" : "op", as_wc ? wc_opcode : op);
	if (id >= implied)
		finished_through(id, carried_by_gpspm(o));
	if (on_completion)
		on_completion(id);
}

int sim::poll()
{
	int got = 0;
	const unsigned how = rng.below(method_persistent == RPMA_FLUSH_METHOD_GPSPM ? 4 : 3);
	if (how == 0) {
		rpma_completion c;
		int ret = rpma_cq_get_completion(cq, &c);
		if (ret == 0) {
			taken(c.op_context, c.op, false, 0, c.op_status);
			got = 1;
		} else if (ret != RPMA_E_NO_COMPLETION) {
			violation("rpma_cq_get_completion: %d", ret);
		}
	} else if (how == 1) {
		rpma_completion c[4];
		int ret = rpma_cq_get_completions(cq, c, 1 + (int)rng.below(4));
		if (ret < 0 && ret != RPMA_E_NO_COMPLETION)
			violation("rpma_cq_get_completions: %d", ret);
		for (int i = 0; i < ret; i++)
			taken(c[i].op_context, c[i].op, false, 0, c[i].op_status);
		got = ret > 0 ? ret : 0;
	} else if (how == 2) {
		ibv_wc wc[4];
		int k = 1 + (int)rng.below(4);
		int n_got = 0;
		int ret = rpma_cq_get_wc(cq, k, wc, &n_got);
		if (ret == 0) {
			for (int i = 0; i < n_got; i++)
				taken((const void *)(uintptr_t)wc[i].wr_id, 0, true, wc[i].opcode,
				      wc[i].status);
			got = n_got;
		} else if (ret != RPMA_E_NO_COMPLETION) {
			violation("rpma_cq_get_wc: %d", ret);
		}
	} else {
		int ret = rpma_conn_wait_flush_room(conn, 0);
		/* RPMA_E_AGAIN: held completions to take first, which the other steps do */
		if (ret != 0 && ret != RPMA_E_NO_COMPLETION && ret != RPMA_E_AGAIN)
			violation("rpma_conn_wait_flush_room: %d", ret);
	}
	sync_records();
	n.steps++;
	crash_point("initiator polled");
	return got;
}

void sim::crash_point(const char *where)
{
	n.crash_points++;
	for (size_t id : claims)
		check_claim(ops[id], where);
	if (cfg.plat == platform::dram &&
	    (!claims.empty() || memcmp(dur.data(), initial.data(), dur.size()) != 0))
		violation("(3) %s: something claimed durable on DRAM", where);
	if (extra_check)
		extra_check(*this);
}

} /* namespace crash */
