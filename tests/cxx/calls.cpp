/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * calls.cpp -- what rpma.hpp passes to librpma and what it gives back, over
 * the fake rdma-core: the data path, completions, events, descriptors,
 * configurations and errors
 */

#include <arpa/inet.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <rpma.hpp>

#include "fake_verbs.h"
#include "harness.hpp"

namespace
{

using namespace std::chrono_literals;

const char ADDR[] = "127.0.0.1";
const char PORT[] = "7204";

const std::uint64_t REMOTE_ADDR = 0x7f0000100000ull;
const std::uint64_t REMOTE_LEN = 4096;
const std::uint32_t REMOTE_RKEY = 0xabcd1234u;

void *ctx(unsigned n)
{
	return reinterpret_cast<void *>(static_cast<std::uintptr_t>(0xC0DE0000u + n));
}

std::vector<std::byte> mr_descriptor(std::uint8_t usage)
{
	std::vector<std::byte> desc(21);
	for (int i = 0; i < 8; i++) {
		desc[i] = static_cast<std::byte>(REMOTE_ADDR >> (8 * i));
		desc[8 + i] = static_cast<std::byte>(REMOTE_LEN >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		desc[16 + i] = static_cast<std::byte>(REMOTE_RKEY >> (8 * i));
	desc[20] = static_cast<std::byte>(usage);
	return desc;
}

ibv_wc wc_of(void *context, ibv_wc_opcode opcode, ibv_wc_status status)
{
	ibv_wc wc;
	std::memset(&wc, 0, sizeof(wc));
	wc.wr_id = reinterpret_cast<std::uintptr_t>(context);
	wc.opcode = opcode;
	wc.status = status;
	return wc;
}

/* an active connection on the fake and what a test needs around it */
struct fixture {
	char buf[256] = {};
	rpma::peer peer;
	rpma::mr_local mr;
	rpma::mr_remote remote;
	rpma::conn conn;
	rdma_cm_id *id = nullptr;

	bool open(const rpma::conn_cfg *cfg = nullptr)
	{
		auto p = rpma::peer::create(fake_verbs_context());
		if (!p)
			return false;
		peer = std::move(*p);
		auto m = rpma::mr_local::reg(peer, buf, sizeof(buf),
					     rpma::usage::write_src | rpma::usage::read_dst |
						 rpma::usage::send | rpma::usage::recv);
		if (!m)
			return false;
		mr = std::move(*m);
		auto r = rpma::mr_remote::from_descriptor(mr_descriptor(
		    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
		    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT));
		if (!r)
			return false;
		remote = std::move(*r);
		auto req = cfg ? rpma::conn_req::create(peer, ADDR, PORT, *cfg)
			       : rpma::conn_req::create(peer, ADDR, PORT);
		if (!req)
			return false;
		id = fake_verbs_last_id();
		auto c = req->connect();
		if (!c)
			return false;
		conn = std::move(*c);
		return id != nullptr && id->qp != nullptr;
	}

	/* members go in reverse order: conn, remote, mr, then peer */
};

/* ------------------------------------------------------------------ cases */

void write_forwards_its_arguments()
{
	fixture fx;
	CHECK(fx.open());
	rpma::result<void> r =
	    fx.conn.write(fx.remote, 64, fx.mr, 16, 32, rpma::flag::completion_always, ctx(1));
	CHECK(r);
	CHECK(fake_verbs_sends() == 1);
	const fake_send_record *s = fake_verbs_send(0);
	CHECK(s->wr.opcode == IBV_WR_RDMA_WRITE);
	CHECK(s->wr.wr_id == reinterpret_cast<std::uintptr_t>(ctx(1)));
	CHECK(s->wr.wr.rdma.remote_addr == REMOTE_ADDR + 64);
	CHECK(s->wr.wr.rdma.rkey == REMOTE_RKEY);
	CHECK(s->wr.send_flags & IBV_SEND_SIGNALED);
	CHECK(s->wr.num_sge == 1);
	CHECK(s->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 16));
	CHECK(s->sge[0].length == 32);

	/* unsignaled */
	CHECK(fx.conn.write(fx.remote, 0, fx.mr, 0, 8, rpma::flag::completion_on_error));
	CHECK(fake_verbs_sends() == 2);
	CHECK(!(fake_verbs_send(1)->wr.send_flags & IBV_SEND_SIGNALED));
}

void read_send_recv_forward_their_arguments()
{
	fixture fx;
	CHECK(fx.open());
	CHECK(fx.conn.read(fx.mr, 8, fx.remote, 128, 16, rpma::flag::completion_always, ctx(2)));
	CHECK(fake_verbs_sends() == 1);
	const fake_send_record *rd = fake_verbs_send(0);
	CHECK(rd->wr.opcode == IBV_WR_RDMA_READ);
	CHECK(rd->wr.wr.rdma.remote_addr == REMOTE_ADDR + 128);
	CHECK(rd->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 8));

	CHECK(fx.conn.send(fx.mr, 0, 8, rpma::flag::completion_always, ctx(3)));
	CHECK(fx.conn.send_with_imm(fx.mr, 0, 8, rpma::flag::completion_always, 0x1234u, ctx(4)));
	CHECK(fake_verbs_sends() == 3);
	CHECK(fake_verbs_send(1)->wr.opcode == IBV_WR_SEND);
	CHECK(fake_verbs_send(1)->wr.wr_id == reinterpret_cast<std::uintptr_t>(ctx(3)));
	CHECK(fake_verbs_send(2)->wr.opcode == IBV_WR_SEND_WITH_IMM);

	CHECK(fx.conn.write_with_imm(fx.remote, 0, fx.mr, 0, 8, rpma::flag::completion_always, 7u,
				     ctx(5)));
	CHECK(fake_verbs_send(3)->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM);

	CHECK(fx.conn.recv(fx.mr, 32, 64, ctx(6)));
	CHECK(fake_verbs_recvs() == 1);
	const fake_recv_record *rv = fake_verbs_recv(0);
	CHECK(rv->wr.wr_id == reinterpret_cast<std::uintptr_t>(ctx(6)));
	CHECK(rv->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 32));
	CHECK(rv->sge[0].length == 64);
}

void flush_and_atomic_write()
{
	fixture fx;
	CHECK(fx.open());
	unsigned before = fake_verbs_sends();
	CHECK(fx.conn.flush(fx.remote, 0, 64, rpma::flush_type::visibility,
			    rpma::flag::completion_always, ctx(7)));
	CHECK(fake_verbs_sends() > before);

	/* persistence needs the target's word for it */
	rpma::result<void> nosupp = fx.conn.flush(fx.remote, 0, 64, rpma::flush_type::persistent,
						  rpma::flag::completion_always, ctx(8));
	CHECK(nosupp.error() == rpma::errc::nosupp);
	CHECK(nosupp.error() == std::errc::not_supported);
	auto pcfg = rpma::peer_cfg::create();
	CHECK(pcfg && pcfg->set_direct_write_to_pmem(true));
	CHECK(fx.conn.apply_remote_peer_cfg(*pcfg));
	CHECK(fx.conn.flush(fx.remote, 0, 64, rpma::flush_type::persistent,
			    rpma::flag::completion_always, ctx(8)));

	before = fake_verbs_sends() + fake_verbs_calls(FAKE_POST_ATOMIC_WRITE);
	CHECK(fx.conn.atomic_write(fx.remote, 8, std::uint64_t{ 0x1122334455667788ull },
				   rpma::flag::completion_always, ctx(9)));
	CHECK(fake_verbs_sends() + fake_verbs_calls(FAKE_POST_ATOMIC_WRITE) == before + 1);
	const char eight[RPMA_ATOMIC_WRITE_ALIGNMENT] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	rpma::result<void> unaligned =
	    fx.conn.atomic_write(fx.remote, 3, eight, rpma::flag::completion_always, ctx(10));
	CHECK(unaligned.error() == rpma::errc::inval);
}

void bad_arguments_post_nothing()
{
	fixture fx;
	CHECK(fx.open());
	/* flags 0 is refused for anything but a receive */
	CHECK(fx.conn.write(fx.remote, 0, fx.mr, 0, 8, rpma::flag{}).error() == rpma::errc::inval);
	/* past the end of the local region */
	CHECK(fx.conn.send(fx.mr, 250, 8, rpma::flag::completion_always).error() ==
	      rpma::errc::inval);
	/* an empty owner is a NULL object */
	rpma::mr_remote none;
	CHECK(fx.conn.write(none, 0, fx.mr, 0, 8, rpma::flag::completion_always).code() ==
	      RPMA_E_INVAL);
	rpma::conn no_conn;
	CHECK(no_conn.write(fx.remote, 0, fx.mr, 0, 8, rpma::flag::completion_always).code() ==
	      RPMA_E_INVAL);
	CHECK(fake_verbs_sends() == 0);
}

void completions_come_out_in_order()
{
	fixture fx;
	CHECK(fx.open());
	auto cq = fx.conn.get_cq();
	CHECK(cq && *cq);
	ibv_cq *icq = fx.id->qp->send_cq;

	auto empty = cq->get_completion();
	CHECK(!empty && empty.error() == rpma::errc::no_completion);

	ibv_wc wcs[] = {
		wc_of(ctx(1), IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS),
		wc_of(ctx(2), IBV_WC_SEND, IBV_WC_SUCCESS),
		wc_of(ctx(3), IBV_WC_RDMA_READ, IBV_WC_SUCCESS),
		wc_of(ctx(4), IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR),
	};
	for (const ibv_wc &wc : wcs)
		fake_verbs_push_wc(icq, &wc);

	auto first = cq->get_completion();
	CHECK(first);
	CHECK(first->op_context == ctx(1) && first->op == RPMA_OP_WRITE);
	CHECK(first->op_status == IBV_WC_SUCCESS);

	rpma_completion one;
	CHECK(cq->get_completion(one));
	CHECK(one.op_context == ctx(2) && one.op == RPMA_OP_SEND);

	rpma_completion many[8];
	auto got = cq->get_completions(many);
	CHECK(got && *got == 2);
	CHECK(many[0].op_context == ctx(3) && many[0].op == RPMA_OP_READ);
	CHECK(many[1].op_context == ctx(4) && many[1].op_status == IBV_WC_REM_ACCESS_ERR);

	auto none = cq->get_completions(many);
	CHECK(none && *none == 0);
	CHECK(cq->get_completion(one).error() == rpma::errc::no_completion);
}

void wait_completion_and_get_wc()
{
	fixture fx;
	CHECK(fx.open());
	auto cq = fx.conn.get_cq();
	CHECK(cq);
	ibv_cq *icq = fx.id->qp->send_cq;

	/* nothing comes: the time runs out */
	auto timed_out = cq->wait_completion(std::chrono::milliseconds(0));
	CHECK(!timed_out && timed_out.error() == rpma::errc::no_completion);
	/* a time already past is no time, not the C call's "no limit" */
	rpma_completion none;
	CHECK(cq->wait_completion(none, -5ms).error() == rpma::errc::no_completion);

	ibv_wc wc = wc_of(ctx(5), IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
	fake_verbs_push_wc(icq, &wc);
	fake_verbs_push_cq_event(icq->channel, icq);
	auto waited = cq->wait_completion(std::chrono::seconds(1));
	CHECK(waited && waited->op_context == ctx(5));

	/* without a timeout: no limit, and the completion that is there */
	ibv_wc again = wc_of(ctx(8), IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	fake_verbs_push_wc(icq, &again);
	auto unlimited = cq->wait_completion();
	CHECK(unlimited && unlimited->op_context == ctx(8) && unlimited->op == RPMA_OP_READ);
	fake_verbs_push_wc(icq, &wc);
	CHECK(cq->wait_completion(none, rpma::no_timeout) && none.op_context == ctx(5));

	ibv_wc two[] = { wc_of(ctx(6), IBV_WC_SEND, IBV_WC_SUCCESS),
			 wc_of(ctx(7), IBV_WC_SEND, IBV_WC_SUCCESS) };
	fake_verbs_push_wc(icq, &two[0]);
	fake_verbs_push_wc(icq, &two[1]);
	ibv_wc out[4];
	auto n = cq->get_wc(out);
	CHECK(n && *n == 2);
	CHECK(out[0].wr_id == reinterpret_cast<std::uintptr_t>(ctx(6)));
	CHECK(out[1].wr_id == reinterpret_cast<std::uintptr_t>(ctx(7)));
	CHECK(cq->get_wc(out).error() == rpma::errc::no_completion);

	auto fd = cq->get_fd();
	CHECK(fd && *fd >= 0);
}

void receive_cq_views()
{
	{
		fixture fx;
		CHECK(fx.open());
		auto rcq = fx.conn.get_rcq();
		/* no separate receive CQ: an empty view, not a failure */
		CHECK(rcq && !*rcq && rcq->get() == nullptr);
		CHECK(rcq->get_completion().error() == rpma::errc::inval);
	}
	auto cfg = rpma::conn_cfg::create();
	CHECK(cfg && cfg->set_rcq_size(8));
	fixture fx;
	CHECK(fx.open(&cfg.value()));
	auto rcq = fx.conn.get_rcq();
	auto cq = fx.conn.get_cq();
	CHECK(rcq && *rcq && cq && rcq->get() != cq->get());
}

void shared_channel_wait()
{
	auto cfg = rpma::conn_cfg::create();
	CHECK(cfg && cfg->set_rcq_size(8) && cfg->set_compl_channel(true));
	fixture fx;
	CHECK(fx.open(&cfg.value()));
	auto cq = fx.conn.get_cq();
	auto rcq = fx.conn.get_rcq();
	CHECK(cq && rcq && *rcq);
	ibv_cq *recv_cq = fx.id->qp->recv_cq;
	CHECK(recv_cq != nullptr && recv_cq->channel != nullptr);

	auto fd = fx.conn.get_compl_fd();
	CHECK(fd && *fd >= 0);
	/* one channel for both: waiting on a CQ alone is refused */
	CHECK(cq->wait().error() == rpma::errc::shared_channel);

	fake_verbs_push_cq_event(recv_cq->channel, recv_cq);
	auto woken = fx.conn.wait();
	CHECK(woken);
	CHECK(woken->is_rcq && woken->queue.get() == rcq->get());
}

void events_and_private_data()
{
	fixture fx;
	CHECK(fx.open());
	auto none = fx.conn.next_event();
	CHECK(!none && none.error() == rpma::errc::no_event);

	const unsigned char pdata[] = { 9, 8, 7, 6 };
	fake_verbs_push_cm_event(fx.id->channel, RDMA_CM_EVENT_ESTABLISHED, fx.id, pdata,
				 sizeof(pdata));
	auto ev = fx.conn.next_event();
	CHECK(ev && *ev == RPMA_CONN_ESTABLISHED);
	auto got = fx.conn.get_private_data();
	CHECK(got && got->size() == sizeof(pdata));
	CHECK(std::memcmp(got->data(), pdata, sizeof(pdata)) == 0);

	CHECK(fx.conn.disconnect());
	fake_verbs_push_cm_event(fx.id->channel, RDMA_CM_EVENT_DISCONNECTED, fx.id, nullptr, 0);
	ev = fx.conn.next_event();
	CHECK(ev && *ev == RPMA_CONN_CLOSED);
	CHECK(std::string(rpma::utils_conn_event_2str(*ev)) ==
	      rpma_utils_conn_event_2str(RPMA_CONN_CLOSED));

	auto qp = fx.conn.get_qp_num();
	CHECK(qp && *qp == fx.id->qp->qp_num);
	auto fd = fx.conn.get_event_fd();
	CHECK(fd && *fd >= 0);
	CHECK(fx.conn.get_compl_fd().error() == rpma::errc::not_shared_chnl);
}

/* is_up() answers from the events, and leaves them to next_event() */
void is_up_follows_the_events()
{
	fixture fx;
	CHECK(fx.open());
	auto up = fx.conn.is_up();
	CHECK(up.has_value() && *up);

	fake_verbs_push_cm_event(fx.id->channel, RDMA_CM_EVENT_ESTABLISHED, fx.id, nullptr, 0);
	up = fx.conn.is_up();
	CHECK(up.has_value() && *up);
	CHECK(!fake_verbs_qp_in_error(fx.id->qp));

	fake_verbs_push_cm_event(fx.id->channel, RDMA_CM_EVENT_DISCONNECTED, fx.id, nullptr, 0);
	up = fx.conn.is_up();
	CHECK(up.has_value() && !*up);
	/* what is still posted completes, flushed */
	CHECK(fake_verbs_qp_in_error(fx.id->qp));

	/* the events it took come out in order, and the connection stays down */
	auto ev = fx.conn.next_event();
	CHECK(ev && *ev == RPMA_CONN_ESTABLISHED);
	ev = fx.conn.next_event();
	CHECK(ev && *ev == RPMA_CONN_CLOSED);
	CHECK(fx.conn.next_event().error() == rpma::errc::no_event);
	CHECK(!fx.conn.is_up().value_or(true));

	rpma::conn no_conn;
	CHECK(no_conn.is_up().error() == rpma::errc::inval);
	/* no GPSPM on the connection: nothing to wait for; none: refused */
	CHECK(fx.conn.wait_flush_room(std::chrono::milliseconds(0)));
	CHECK(fx.conn.wait_flush_room());
	CHECK(no_conn.wait_flush_room(std::chrono::seconds(1)).error() == rpma::errc::inval);
}

void descriptors_round_trip()
{
	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);
	char buf[512];
	auto mr = rpma::mr_local::reg(*peer, buf, sizeof(buf),
				      rpma::usage::write_dst | rpma::usage::flush_type_persistent);
	CHECK(mr);
	CHECK(mr->get_ptr().value_or(nullptr) == buf);
	CHECK(mr->get_size().value_or(0) == sizeof(buf));

	auto size = mr->get_descriptor_size();
	CHECK(size && *size >= 21);
	std::vector<std::byte> too_small(*size - 1);
	CHECK(mr->get_descriptor(too_small).error() == rpma::errc::inval);
	std::vector<std::byte> desc(*size + 8);
	auto written = mr->get_descriptor(desc);
	CHECK(written && *written == *size);
	/* the usage bits went to the library as they are: the descriptor carries them */
	CHECK(desc[20] ==
	      std::byte{ RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT });

	auto remote =
	    rpma::mr_remote::from_descriptor(rpma::span<const std::byte>(desc).first(*size));
	CHECK(remote);
	CHECK(remote->get_size().value_or(0) == sizeof(buf));
	auto flush_type = remote->get_flush_type();
	CHECK(flush_type && *flush_type == rpma::usage::flush_type_persistent);
	CHECK(rpma::has(*flush_type, rpma::usage::flush_type_persistent));

	auto pcfg = rpma::peer_cfg::create();
	CHECK(pcfg);
	CHECK(pcfg->get_direct_write_to_pmem().value_or(true) == false);
	CHECK(pcfg->set_direct_write_to_pmem(true));
	auto pcfg_size = pcfg->get_descriptor_size();
	CHECK(pcfg_size && *pcfg_size >= 1);
	std::byte pdesc[64];
	auto pwritten = pcfg->get_descriptor(pdesc);
	CHECK(pwritten && *pwritten == *pcfg_size);
	CHECK(pcfg->get_descriptor(rpma::span<std::byte>()).error() == rpma::errc::inval);
	auto decoded =
	    rpma::peer_cfg::from_descriptor(rpma::span<const std::byte>(pdesc, *pwritten));
	CHECK(decoded && decoded->get_direct_write_to_pmem().value_or(false));
}

void configurations_round_trip()
{
	auto cfg = rpma::conn_cfg::create();
	CHECK(cfg);
	CHECK(cfg->get_timeout().value_or(0ms) == rpma::default_timeout);
	CHECK(cfg->get_timeout().value_or(0ms).count() == RPMA_DEFAULT_TIMEOUT_MS);
	CHECK(cfg->set_timeout(250ms) && cfg->get_timeout().value_or(0ms) == 250ms);
	/* coarser units convert; the library sees milliseconds */
	CHECK(cfg->set_timeout(std::chrono::seconds(3)));
	int timeout_ms = 0;
	CHECK(rpma_conn_cfg_get_timeout(cfg->get(), &timeout_ms) == 0 && timeout_ms == 3000);
	/* a negative time is refused, a huge one is the longest the library takes */
	CHECK(cfg->set_timeout(-1ms).error() == rpma::errc::inval);
	CHECK(cfg->get_timeout().value_or(0ms) == 3s);
	CHECK(cfg->set_timeout(std::chrono::hours(24 * 365)));
	CHECK(cfg->get_timeout().value_or(0ms).count() == INT_MAX);
	CHECK(cfg->set_cq_size(11) && cfg->get_cq_size().value_or(0) == 11);
	CHECK(cfg->set_rcq_size(12) && cfg->get_rcq_size().value_or(0) == 12);
	CHECK(cfg->set_sq_size(13) && cfg->get_sq_size().value_or(0) == 13);
	CHECK(cfg->set_rq_size(14) && cfg->get_rq_size().value_or(0) == 14);
	CHECK(cfg->get_compl_channel().value_or(true) == false);
	CHECK(cfg->set_compl_channel(true) && cfg->get_compl_channel().value_or(false));
	CHECK(cfg->get_srq().value_or(reinterpret_cast<rpma_srq *>(1)) == nullptr);

	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);
	auto scfg = rpma::srq_cfg::create();
	CHECK(scfg);
	CHECK(scfg->set_rq_size(50) && scfg->get_rq_size().value_or(0) == 50);
	CHECK(scfg->set_rcq_size(60) && scfg->get_rcq_size().value_or(0) == 60);
	auto srq = rpma::srq::create(*peer, *scfg);
	CHECK(srq);
	CHECK(cfg->set_srq(*srq));
	CHECK(cfg->get_srq().value_or(nullptr) == srq->get());
	auto rcq = srq->get_rcq();
	CHECK(rcq && *rcq);
	char buf[64];
	auto mr = rpma::mr_local::reg(*peer, buf, sizeof(buf), rpma::usage::recv);
	CHECK(mr);
	CHECK(srq->recv(*mr, 0, sizeof(buf), ctx(11)));
	CHECK(fake_verbs_recvs() == 1 && fake_verbs_recv(0)->srq != nullptr);
	CHECK(cfg->clear_srq() && cfg->get_srq().value_or(srq->get()) == nullptr);

	/* a NULL object where one is required */
	rpma::conn_cfg none;
	CHECK(none.set_timeout(1ms).error() == rpma::errc::inval);
	CHECK(none.get_cq_size().error() == rpma::errc::inval);
}

void persist_nothing(const void *, std::size_t)
{
}

int persist_ctx_calls;
void persist_nothing_ctx(void *ctx, const void *, std::size_t)
{
	++*static_cast<int *>(ctx);
}

void versioned_descriptors_and_gpspm_cfg()
{
	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);
	char buf[512];
	auto mr = rpma::mr_local::reg(*peer, buf, sizeof(buf),
				      rpma::usage::write_dst | rpma::usage::flush_type_persistent);
	CHECK(mr);
	auto size = mr->get_versioned_descriptor_size();
	CHECK(size && *size == 25);
	std::vector<std::byte> too_small(*size - 1);
	CHECK(mr->get_versioned_descriptor(too_small).error() == rpma::errc::inval);
	std::byte desc[32];
	auto written = mr->get_versioned_descriptor(desc);
	CHECK(written && *written == *size);
	/* the librpma 1.x descriptor, then the trailer: magic, version, methods */
	std::byte legacy[21];
	CHECK(mr->get_descriptor(legacy));
	CHECK(std::memcmp(desc, legacy, sizeof(legacy)) == 0);
	CHECK(desc[21] == std::byte{ 0xD7 } && desc[22] == std::byte{ 1 });
	CHECK(desc[23] == std::byte{ 0x01 }); /* read-after-write */

	/* the persist function reaches the library: the region offers GPSPM, until withdrawn */
	CHECK(mr->set_persist_fn(persist_nothing));
	CHECK(mr->get_versioned_descriptor(desc) && desc[23] == std::byte{ 0x03 });
	CHECK(mr->set_persist_fn(nullptr));
	CHECK(mr->get_versioned_descriptor(desc) && desc[23] == std::byte{ 0x01 });
	/* with a context, the same offer */
	CHECK(mr->set_persist_fn(persist_nothing_ctx, &persist_ctx_calls));
	CHECK(mr->get_versioned_descriptor(desc) && desc[23] == std::byte{ 0x03 });
	CHECK(mr->set_persist_fn(static_cast<rpma_persist_ctx_fn *>(nullptr), nullptr));
	CHECK(mr->get_versioned_descriptor(desc) && desc[23] == std::byte{ 0x01 });
	CHECK(persist_ctx_calls == 0);
	auto plain = rpma::mr_local::reg(*peer, buf, sizeof(buf), rpma::usage::write_dst);
	CHECK(plain);
	CHECK(plain->set_persist_fn(persist_nothing).error() == rpma::errc::inval);

	auto cfg = rpma::conn_cfg::create();
	CHECK(cfg);
	CHECK(cfg->get_gpspm().value_or(rpma::gpspm_mode::thread) == rpma::gpspm_mode::disabled);
	CHECK(cfg->set_gpspm(rpma::gpspm_mode::polled));
	CHECK(cfg->get_gpspm().value_or(rpma::gpspm_mode::disabled) == rpma::gpspm_mode::polled);
	CHECK(cfg->set_gpspm(rpma::gpspm_mode::thread));
	rpma_gpspm_mode c_mode = RPMA_GPSPM_DISABLED;
	CHECK(rpma_conn_cfg_get_gpspm(cfg->get(), &c_mode) == 0 && c_mode == RPMA_GPSPM_THREAD);
	CHECK(cfg->set_gpspm(static_cast<rpma::gpspm_mode>(7)).error() == rpma::errc::inval);
	CHECK(cfg->get_gpspm().value_or(rpma::gpspm_mode::disabled) == rpma::gpspm_mode::thread);
	using std::chrono::microseconds;
	CHECK(cfg->get_gpspm_spin().value_or(microseconds(0)) ==
	      microseconds(RPMA_DEFAULT_GPSPM_SPIN_US));
	CHECK(cfg->set_gpspm_spin(microseconds(0)));
	CHECK(cfg->get_gpspm_spin().value_or(microseconds(1)) == microseconds(0));
	CHECK(cfg->set_gpspm_spin(microseconds(250)));
	uint32_t c_spin = 0;
	CHECK(rpma_conn_cfg_get_gpspm_spin(cfg->get(), &c_spin) == 0 && c_spin == 250);
	/* beyond what a uint32_t holds, and negative: refused, not wrapped */
	CHECK(cfg->set_gpspm_spin(microseconds(RPMA_GPSPM_SPIN_US_MAX + 1)).error() ==
	      rpma::errc::inval);
	CHECK(cfg->set_gpspm_spin(microseconds(0x100000000LL + 5)).error() == rpma::errc::inval);
	CHECK(cfg->set_gpspm_spin(microseconds(-1)).error() == rpma::errc::inval);
	CHECK(cfg->get_gpspm_spin().value_or(microseconds(0)) == microseconds(250));
	CHECK(cfg->set_rq_size(20));

	auto pcfg = rpma::peer_cfg::create();
	CHECK(pcfg && pcfg->set_direct_write_to_pmem(true));
	auto psize = pcfg->get_versioned_descriptor_size();
	CHECK(psize && *psize == 6);
	std::byte pdesc[8];
	/* the default configuration serves no GPSPM */
	auto pwritten = pcfg->get_versioned_descriptor(pdesc);
	CHECK(pwritten && *pwritten == *psize);
	CHECK(pdesc[0] == std::byte{ 1 } && pdesc[1] == std::byte{ 0xD7 });
	CHECK(pdesc[3] == std::byte{ 0 } && pdesc[4] == std::byte{ 0 });
	/* cfg's does, 20 requests at a time */
	pwritten = pcfg->get_versioned_descriptor(*cfg, pdesc);
	CHECK(pwritten && *pwritten == *psize);
	CHECK(pdesc[0] == std::byte{ 1 } && pdesc[3] == std::byte{ 1 } &&
	      pdesc[4] == std::byte{ 20 });
	CHECK(pcfg->get_versioned_descriptor(*cfg, rpma::span<std::byte>(pdesc, 5)).error() ==
	      rpma::errc::inval);
	CHECK(pcfg->get_versioned_descriptor(rpma::span<std::byte>()).error() == rpma::errc::inval);
	auto decoded = rpma::peer_cfg::from_descriptor(rpma::span<const std::byte>(pdesc, 6));
	CHECK(decoded && decoded->get_direct_write_to_pmem().value_or(false));
}

/* what the target offers decides the method, and the method what a flush posts */
void flush_method_agreement()
{
	auto cfg = rpma::conn_cfg::create();
	CHECK(cfg && cfg->set_gpspm(rpma::gpspm_mode::polled) && cfg->set_rq_size(8));
	fixture fx;
	CHECK(fx.open(&cfg.value()));

	/* the target: a region offering read-after-write and GPSPM, 4 requests at a time */
	char target_buf[256];
	auto target_mr =
	    rpma::mr_local::reg(fx.peer, target_buf, sizeof(target_buf),
				rpma::usage::write_dst | rpma::usage::flush_type_visibility |
				    rpma::usage::flush_type_persistent);
	CHECK(target_mr && target_mr->set_persist_fn(persist_nothing));
	std::byte desc[25];
	CHECK(target_mr->get_versioned_descriptor(desc));
	auto dst = rpma::mr_remote::from_descriptor(desc);
	CHECK(dst);
	auto target_cfg = rpma::conn_cfg::create();
	CHECK(target_cfg && target_cfg->set_gpspm(rpma::gpspm_mode::thread) &&
	      target_cfg->set_rq_size(4));
	auto target_pcfg = rpma::peer_cfg::create();
	CHECK(target_pcfg);
	std::byte pdesc[6];
	CHECK(target_pcfg->get_versioned_descriptor(*target_cfg, pdesc));

	/* nothing applied yet: no persistence */
	auto none = fx.conn.get_flush_method(*dst, rpma::flush_type::persistent);
	CHECK(!none && none.error() == rpma::errc::nosupp);
	CHECK(fx.conn.get_flush_method(*dst, rpma::flush_type::visibility)
		  .value_or(rpma::flush_method::none) == rpma::flush_method::read_after_write);

	auto offer = rpma::peer_cfg::from_descriptor(pdesc);
	CHECK(offer && fx.conn.apply_remote_peer_cfg(*offer));
	CHECK(fx.conn.get_flush_method(*dst, rpma::flush_type::persistent)
		  .value_or(rpma::flush_method::none) == rpma::flush_method::gpspm);

	/* a GPSPM flush is a 32-byte request; the target takes 4 at a time */
	for (unsigned i = 0; i < 4; i++) {
		unsigned before = fake_verbs_sends();
		CHECK(fx.conn.flush(*dst, 0, 64, rpma::flush_type::persistent,
				    rpma::flag::completion_always, ctx(20 + i)));
		CHECK(fake_verbs_sends() == before + 1);
		const fake_send_record *s = fake_verbs_send(before);
		CHECK(s->wr.opcode == IBV_WR_SEND && s->sge[0].length == 32);
	}
	auto again = fx.conn.flush(*dst, 0, 64, rpma::flush_type::persistent,
				   rpma::flag::completion_always, ctx(24));
	CHECK(again.error() == rpma::errc::again);
	CHECK(again.error() == std::errc::resource_unavailable_try_again);

	/* a target whose writes land in the persistent domain: read-after-write */
	CHECK(target_pcfg->set_direct_write_to_pmem(true));
	CHECK(target_pcfg->get_versioned_descriptor(*target_cfg, pdesc));
	auto direct = rpma::peer_cfg::from_descriptor(pdesc);
	CHECK(direct && fx.conn.apply_remote_peer_cfg(*direct));
	CHECK(fx.conn.get_flush_method(*dst, rpma::flush_type::persistent)
		  .value_or(rpma::flush_method::none) == rpma::flush_method::read_after_write);
	unsigned before = fake_verbs_sends();
	CHECK(fx.conn.flush(*dst, 0, 64, rpma::flush_type::persistent,
			    rpma::flag::completion_always, ctx(25)));
	CHECK(fake_verbs_send(before)->wr.opcode == IBV_WR_RDMA_READ);

	/* the values are the C ones */
	static_assert(static_cast<int>(rpma::flush_method::gpspm) == RPMA_FLUSH_METHOD_GPSPM,
		      "flush_method");
	static_assert(static_cast<int>(rpma::gpspm_mode::thread) == RPMA_GPSPM_THREAD,
		      "gpspm_mode");
	rpma::conn no_conn;
	CHECK(no_conn.get_flush_method(*dst, rpma::flush_type::visibility).error() ==
	      rpma::errc::inval);
}

/* a flush's completion, as the CQ gives it for the send_index-th work request posted */
bool flush_completes_as(fixture &fx, unsigned send_index, void *expected_ctx)
{
	ibv_wc wc = wc_of(nullptr, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
	wc.wr_id = fake_verbs_send(send_index)->wr.wr_id;
	wc.qp_num = fx.id->qp->qp_num;
	fake_verbs_push_wc(fx.id->qp->send_cq, &wc);
	auto cq = fx.conn.get_cq();
	if (!cq)
		return false;
	auto cmpl = cq->get_completion();
	return cmpl && cmpl->op == RPMA_OP_FLUSH && cmpl->op_context == expected_ctx;
}

/* every kind of element, built from the arguments of the conn calls, in one chain */
void post_batch_posts_one_chain()
{
	fixture fx;
	CHECK(fx.open());
	rpma_batch_op ops[] = {
		rpma::batch::write(fx.remote, 64, fx.mr, 16, 32, rpma::flag::completion_on_error,
				   ctx(1)),
		rpma::batch::write_with_imm(fx.remote, 96, fx.mr, 0, 8,
					    rpma::flag::completion_always, 0x01020304u, ctx(2)),
		rpma::batch::read(fx.mr, 128, fx.remote, 256, 16, rpma::flag::completion_always,
				  ctx(3)),
		rpma::batch::flush(fx.remote, 64, 64, rpma::flush_type::visibility,
				   rpma::flag::completion_always, ctx(4)),
		rpma::batch::send(fx.mr, 0, 8, rpma::flag::completion_always, ctx(5)),
		rpma::batch::send_with_imm(fx.mr, 8, 8, rpma::flag::completion_on_error, 7u,
					   ctx(6)),
	};

	/* the elements say what the C page says they take */
	CHECK(ops[0].op == RPMA_OP_WRITE && ops[0].flags == RPMA_F_COMPLETION_ON_ERROR);
	CHECK(ops[0].local == fx.mr.get() && ops[0].local_offset == 16);
	CHECK(ops[0].remote == fx.remote.get() && ops[0].remote_offset == 64);
	CHECK(ops[0].len == 32 && !ops[0].with_imm && ops[0].op_context == ctx(1));
	CHECK(ops[1].op == RPMA_OP_WRITE && ops[1].with_imm && ops[1].imm == 0x01020304u);
	CHECK(ops[2].op == RPMA_OP_READ && ops[2].local == fx.mr.get() &&
	      ops[2].local_offset == 128 && ops[2].remote_offset == 256 && !ops[2].with_imm);
	CHECK(ops[3].op == RPMA_OP_FLUSH && ops[3].local == nullptr &&
	      ops[3].remote == fx.remote.get() && ops[3].remote_offset == 64 && ops[3].len == 64 &&
	      ops[3].flush_type == RPMA_FLUSH_TYPE_VISIBILITY && !ops[3].with_imm);
	CHECK(ops[4].op == RPMA_OP_SEND && ops[4].remote == nullptr && !ops[4].with_imm);
	CHECK(ops[5].op == RPMA_OP_SEND && ops[5].with_imm && ops[5].imm == 7u &&
	      ops[5].local_offset == 8);

	rpma::batch_result r = fx.conn.post_batch(ops);
	CHECK(r && r.has_value() && r.code() == 0 && !r.error());
	CHECK(r.failed() == -1);
	/* one doorbell for the six */
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 1);
	CHECK(fake_verbs_sends() == 6);

	const fake_send_record *w = fake_verbs_send(0);
	CHECK(w->wr.opcode == IBV_WR_RDMA_WRITE);
	CHECK(w->wr.wr_id == reinterpret_cast<std::uintptr_t>(ctx(1)));
	CHECK(w->wr.wr.rdma.remote_addr == REMOTE_ADDR + 64 && w->wr.wr.rdma.rkey == REMOTE_RKEY);
	CHECK(w->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 16));
	CHECK(w->sge[0].length == 32);
	CHECK(!(w->wr.send_flags & IBV_SEND_SIGNALED));

	const fake_send_record *wi = fake_verbs_send(1);
	CHECK(wi->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM);
	CHECK(wi->wr.imm_data == htonl(0x01020304u));
	CHECK(wi->wr.send_flags & IBV_SEND_SIGNALED);

	const fake_send_record *rd = fake_verbs_send(2);
	CHECK(rd->wr.opcode == IBV_WR_RDMA_READ);
	CHECK(rd->wr.wr_id == reinterpret_cast<std::uintptr_t>(ctx(3)));
	CHECK(rd->wr.wr.rdma.remote_addr == REMOTE_ADDR + 256);
	CHECK(rd->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 128));

	/* the flush reads from the flushed range, behind the writes */
	const fake_send_record *fl = fake_verbs_send(3);
	CHECK(fl->wr.opcode == IBV_WR_RDMA_READ);
	CHECK(fl->wr.wr.rdma.remote_addr == REMOTE_ADDR + 64);
	CHECK(fl->wr.send_flags & IBV_SEND_SIGNALED);

	CHECK(fake_verbs_send(4)->wr.opcode == IBV_WR_SEND);
	CHECK(fake_verbs_send(4)->wr.wr_id == reinterpret_cast<std::uintptr_t>(ctx(5)));
	const fake_send_record *si = fake_verbs_send(5);
	CHECK(si->wr.opcode == IBV_WR_SEND_WITH_IMM && si->wr.imm_data == htonl(7u));
	CHECK(si->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 8));
	CHECK(!(si->wr.send_flags & IBV_SEND_SIGNALED));

	/* the flush completes as itself, with its own context */
	CHECK(flush_completes_as(fx, 3, ctx(4)));
}

/* arrays, containers, a braced list: each is one chain; the result is a result<void> */
void post_batch_takes_any_sequence()
{
	fixture fx;
	CHECK(fx.open());

	/* the persistent write of the man page, as a braced list */
	auto pcfg = rpma::peer_cfg::create();
	CHECK(pcfg && pcfg->set_direct_write_to_pmem(true));
	CHECK(fx.conn.apply_remote_peer_cfg(*pcfg));
	rpma::batch_result listed = fx.conn.post_batch(
	    { rpma::batch::write(fx.remote, 0, fx.mr, 0, 64, rpma::flag::completion_on_error),
	      rpma::batch::flush(fx.remote, 0, 64, rpma::flush_type::persistent,
				 rpma::flag::completion_always, ctx(1)) });
	CHECK(listed && listed.failed() == -1);
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 1 && fake_verbs_sends() == 2);
	CHECK(flush_completes_as(fx, 1, ctx(1)));

	std::vector<rpma_batch_op> vec;
	for (unsigned i = 0; i < 3; i++)
		vec.push_back(rpma::batch::write(fx.remote, 8 * i, fx.mr, 8 * i, 8,
						 rpma::flag::completion_on_error));
	CHECK(fx.conn.post_batch(vec));
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 2 && fake_verbs_sends() == 5);

	const std::array<rpma_batch_op, 2> arr = {
		rpma::batch::send(fx.mr, 0, 4, rpma::flag::completion_always),
		rpma::batch::send(fx.mr, 4, 4, rpma::flag::completion_always),
	};
	/* a pointer and a size: the first element only */
	CHECK(fx.conn.post_batch({ arr.data(), 1 }));
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 3 && fake_verbs_sends() == 6);
	CHECK(fx.conn.post_batch(arr));
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 4 && fake_verbs_sends() == 8);

	/* a failure passes on as any result's */
	auto forward = [&]() -> rpma::result<void> {
		return fx.conn.post_batch(rpma::span<const rpma_batch_op>());
	};
	CHECK(forward().error() == rpma::errc::inval);
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 4);
}

/* a write template: checked once, each post one chain; its failures are results */
void write_template_posts_one_chain()
{
	fixture fx;
	CHECK(fx.open());
	auto t =
	    rpma::write_template::create(fx.conn, fx.remote, fx.mr, rpma::flush_type::visibility);
	CHECK(t);
	const rpma_write_range writes[] = { { 64, 16, 32 }, { 256, 0, 8 } };
	CHECK(t->post(writes, rpma::flag::completion_always, ctx(7)));
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 1 && fake_verbs_sends() == 3);
	const fake_send_record *w = fake_verbs_send(0);
	CHECK(w->wr.opcode == IBV_WR_RDMA_WRITE && !(w->wr.send_flags & IBV_SEND_SIGNALED));
	CHECK(w->wr.wr.rdma.remote_addr == REMOTE_ADDR + 64 && w->wr.wr.rdma.rkey == REMOTE_RKEY);
	CHECK(w->sge[0].addr == reinterpret_cast<std::uintptr_t>(fx.buf + 16));
	CHECK(fake_verbs_send(1)->wr.wr.rdma.remote_addr == REMOTE_ADDR + 256);
	CHECK(fake_verbs_send(2)->wr.opcode == IBV_WR_RDMA_READ);
	CHECK(flush_completes_as(fx, 2, ctx(7)));

	/* a braced list; a range past the region is refused, nothing posted */
	CHECK(t->post({ { 0, 0, 8 } }, rpma::flag::completion_always, ctx(8)));
	CHECK(flush_completes_as(fx, 4, ctx(8)));
	CHECK(t->post({ { 1 << 30, 0, 8 } }, rpma::flag::completion_always).error() ==
	      rpma::errc::inval);
	CHECK(
	    t->post(rpma::span<const rpma_write_range>(), rpma::flag::completion_always).error() ==
	    rpma::errc::inval);
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 2);
}

/* a refused element: nothing posted, and the result names it */
void post_batch_names_the_refused_element()
{
	fixture fx;
	CHECK(fx.open());
	rpma_batch_op ops[] = {
		rpma::batch::write(fx.remote, 0, fx.mr, 0, 8, rpma::flag::completion_on_error),
		rpma::batch::flush(fx.remote, 0, 8, rpma::flush_type::visibility,
				   rpma::flag::completion_always, ctx(1)),
		/* past the end of the remote region */
		rpma::batch::write(fx.remote, REMOTE_LEN - 4, fx.mr, 0, 8,
				   rpma::flag::completion_on_error),
		rpma::batch::flush(fx.remote, 0, 8, rpma::flush_type::visibility,
				   rpma::flag::completion_always, ctx(2)),
	};
	rpma::batch_result r = fx.conn.post_batch(ops);
	CHECK(!r && r.error() == rpma::errc::inval && r.code() == RPMA_E_INVAL);
	CHECK(r.failed() == 2);

	/* no method for a persistent flush until the target declares one */
	ops[1] = rpma::batch::flush(fx.remote, 0, 8, rpma::flush_type::persistent,
				    rpma::flag::completion_always);
	r = fx.conn.post_batch(ops);
	CHECK(r.error() == rpma::errc::nosupp && r.error() == std::errc::not_supported);
	CHECK(r.failed() == 1);

	/* flags 0, and a send with a remote region */
	rpma_batch_op bad = rpma::batch::send(fx.mr, 0, 8, rpma::flag{});
	r = fx.conn.post_batch({ ops[0], bad });
	CHECK(r.error() == rpma::errc::inval && r.failed() == 1);
	bad = rpma::batch::send(fx.mr, 0, 8, rpma::flag::completion_always);
	bad.remote = fx.remote.get();
	r = fx.conn.post_batch({ bad });
	CHECK(r.error() == rpma::errc::inval && r.failed() == 0);

	/* the call as a whole: no element to blame */
	r = fx.conn.post_batch(rpma::span<const rpma_batch_op>());
	CHECK(r.error() == rpma::errc::inval && r.failed() == -1);
	std::vector<rpma_batch_op> too_many(RPMA_BATCH_MAX + 1, ops[0]);
	r = fx.conn.post_batch(too_many);
	CHECK(r.error() == rpma::errc::inval && r.failed() == -1);
	rpma::conn no_conn;
	r = no_conn.post_batch(ops);
	CHECK(r.error() == rpma::errc::inval && r.failed() == -1);

	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 0);

	/* the most the library takes at once */
	std::vector<rpma_batch_op> full(RPMA_BATCH_MAX, ops[0]);
	CHECK(fx.conn.post_batch(full));
	CHECK(fake_verbs_calls(FAKE_POST_SEND) == 1 && fake_verbs_sends() == RPMA_BATCH_MAX);
}

/* the provider stops mid-chain: the result says where, and the rest can go later */
void post_batch_provider_failure_mid_chain()
{
	fixture fx;
	CHECK(fx.open());
	const rpma_batch_op ops[] = {
		rpma::batch::write(fx.remote, 0, fx.mr, 0, 64, rpma::flag::completion_on_error),
		rpma::batch::flush(fx.remote, 0, 64, rpma::flush_type::visibility,
				   rpma::flag::completion_always, ctx(1)),
		rpma::batch::write(fx.remote, 64, fx.mr, 64, 64, rpma::flag::completion_on_error),
		rpma::batch::flush(fx.remote, 64, 64, rpma::flush_type::visibility,
				   rpma::flag::completion_always, ctx(2)),
	};
	fake_verbs_fail_send_at(2, ENOSPC);
	rpma::batch_result r = fx.conn.post_batch(ops);
	CHECK(!r && r.error() == rpma::errc::provider);
	CHECK(r.failed() == 2);
	CHECK(rpma::provider_error() == std::errc::no_space_on_device);
	CHECK(fake_verbs_sends() == 2);

	/* the elements not posted hold nothing: they go out on their own */
	rpma::span<const rpma_batch_op> rest =
	    rpma::span<const rpma_batch_op>(ops).subspan(static_cast<std::size_t>(r.failed()));
	rpma::batch_result again = fx.conn.post_batch(rest);
	CHECK(again && again.failed() == -1);
	CHECK(fake_verbs_sends() == 4);
	CHECK(fake_verbs_send(2)->wr.wr.rdma.remote_addr == REMOTE_ADDR + 64);
	CHECK(flush_completes_as(fx, 1, ctx(1)));
	CHECK(flush_completes_as(fx, 3, ctx(2)));
}

void log_and_utils()
{
	auto old = rpma::log_get_threshold(RPMA_LOG_THRESHOLD);
	CHECK(old);
	CHECK(rpma::log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG));
	CHECK(rpma::log_get_threshold(RPMA_LOG_THRESHOLD).value_or(RPMA_LOG_DISABLED) ==
	      RPMA_LOG_LEVEL_DEBUG);
	CHECK(rpma::log_set_threshold(RPMA_LOG_THRESHOLD, *old));
	CHECK(rpma::log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_DEBUG).error() ==
	      rpma::errc::inval);

	auto odp = rpma::utils_ibv_context_is_odp_capable(fake_verbs_context());
	/* a result<bool> succeeds with has_value() and answers with *odp */
	CHECK(odp.has_value() && *odp == false);
	fake_verbs_set_odp(true);
	CHECK(rpma::utils_ibv_context_is_odp_capable(fake_verbs_context()).value_or(false));
	CHECK(rpma::utils_ibv_context_is_odp_capable(nullptr).error() == rpma::errc::inval);
}

void error_codes_speak_rpma()
{
	const rpma::errc all[] = { rpma::errc::unknown,	       rpma::errc::nosupp,
				   rpma::errc::provider,       rpma::errc::nomem,
				   rpma::errc::inval,	       rpma::errc::no_completion,
				   rpma::errc::no_event,       rpma::errc::again,
				   rpma::errc::shared_channel, rpma::errc::not_shared_chnl };
	for (rpma::errc e : all) {
		std::error_code ec = e;
		int code = static_cast<int>(e);
		EXPECT(ec.value() == code);
		EXPECT(&ec.category() == &rpma::category());
		EXPECT(std::strcmp(ec.category().name(), "rpma") == 0);
		EXPECT(ec.message() == rpma_err_2str(code));
		EXPECT(rpma::errc_name(code) != nullptr &&
		       std::strncmp(rpma::errc_name(code), "RPMA_E_", 7) == 0);
		EXPECT(rpma::result<void>::from_code(code).error() == e);
	}
	EXPECT(std::error_code(rpma::errc::again) == std::errc::resource_unavailable_try_again);
	EXPECT(std::error_code(rpma::errc::inval) != rpma::errc::nomem);
	EXPECT(!rpma::result<void>::from_code(0).error());
}

/* get_peer_addr(), get_local_addr(): copies of either end's address, on either side */
void conn_req_peer_addr()
{
	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);

	/* outgoing: the address it connects to */
	auto out = rpma::conn_req::create(*peer, ADDR, PORT);
	CHECK(out);
	auto to = out->get_peer_addr();
	CHECK(to && to->ss_family == AF_INET);
	sockaddr_in sin;
	std::memcpy(&sin, &*to, sizeof(sin));
	CHECK(sin.sin_addr.s_addr == htonl(INADDR_LOOPBACK) && ntohs(sin.sin_port) == 7204);
	/* and its own: the source the route was resolved from */
	rdma_cm_id *out_id = fake_verbs_last_id();
	CHECK(out_id != nullptr);
	sockaddr_in &src = out_id->route.addr.src_sin;
	src = {};
	src.sin_family = AF_INET;
	src.sin_port = htons(41000);
	CHECK(inet_pton(AF_INET, "192.0.2.5", &src.sin_addr) == 1);
	auto mine = out->get_local_addr();
	CHECK(mine && mine->ss_family == AF_INET);
	CHECK(std::memcmp(&*mine, &src, sizeof(src)) == 0);

	/* incoming: the requester's */
	auto ep = rpma::ep::listen(*peer, ADDR, PORT);
	CHECK(ep);
	rdma_cm_id *listener = fake_verbs_last_id();
	CHECK(listener != nullptr && listener->channel != nullptr);
	fake_verbs_push_cm_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, nullptr,
				 0);
	rdma_cm_id *client = fake_verbs_last_id();
	CHECK(client != nullptr && client != listener);
	sockaddr_in6 &sin6 = client->route.addr.dst_sin6;
	sin6 = {};
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(50000);
	CHECK(inet_pton(AF_INET6, "fd00::99", &sin6.sin6_addr) == 1);
	auto in = ep->next_conn_req();
	CHECK(in);
	auto from = in->get_peer_addr();
	CHECK(from && from->ss_family == AF_INET6);
	CHECK(std::memcmp(&*from, &sin6, sizeof(sin6)) == 0);
	/* and the address it came in at, not the requester's */
	auto at = in->get_local_addr();
	CHECK(at && std::memcmp(&*at, &client->route.addr.src_storage, sizeof(*at)) == 0);
	CHECK(at->ss_family != AF_INET6);

	rpma::conn_req none;
	CHECK(none.get_peer_addr().error() == rpma::errc::inval);
	CHECK(none.get_local_addr().error() == rpma::errc::inval);
}

/*
 * get_qp_num(), get_peer_qp_num(): an outgoing request's own QP; the QP an
 * incoming one announced, errc::nosupp when it announced none
 */
void conn_req_qp_num()
{
	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);

	auto out = rpma::conn_req::create(*peer, ADDR, PORT);
	CHECK(out);
	rdma_cm_id *out_id = fake_verbs_last_id();
	CHECK(out_id != nullptr && out_id->qp != nullptr);
	auto mine = out->get_qp_num();
	CHECK(mine && *mine == out_id->qp->qp_num);
	CHECK(out->get_peer_qp_num().error() == rpma::errc::inval);

	auto ep = rpma::ep::listen(*peer, ADDR, PORT);
	CHECK(ep);
	rdma_cm_id *listener = fake_verbs_last_id();
	CHECK(listener != nullptr && listener->channel != nullptr);
	for (std::uint32_t announced : { 0x4242u, 0u }) {
		fake_verbs_push_cm_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr,
					 nullptr, 0);
		fake_verbs_last_pushed_cm_event()->param.conn.qp_num = announced;
		auto in = ep->next_conn_req();
		CHECK(in);
		auto theirs = in->get_peer_qp_num();
		if (announced)
			CHECK(theirs && *theirs == announced);
		else
			CHECK(theirs.error() == rpma::errc::nosupp);
		/* no queue pair before consent, and asking makes none */
		CHECK(in->get_qp_num().error() == rpma::errc::inval);
		CHECK(fake_verbs_last_id()->qp == nullptr);
	}

	rpma::conn_req none;
	CHECK(none.get_qp_num().error() == rpma::errc::inval);
	CHECK(none.get_peer_qp_num().error() == rpma::errc::inval);
}

/* reject(): the reject carries the bytes, the request is consumed, nothing is accepted */
void conn_req_reject()
{
	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);
	auto ep = rpma::ep::listen(*peer, ADDR, PORT);
	CHECK(ep);
	rdma_cm_id *listener = fake_verbs_last_id();
	CHECK(listener != nullptr && listener->channel != nullptr);
	fake_verbs_push_cm_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, nullptr,
				 0);
	auto in = ep->next_conn_req();
	CHECK(in);
	const std::byte answer[3] = { std::byte{ 'n' }, std::byte{ 'o' }, std::byte{ 0 } };
	CHECK(in->reject(rpma::span<const std::byte>(answer, sizeof(answer))));
	CHECK(!*in);
	std::uint8_t len = 0;
	const void *sent = fake_verbs_last_conn_pdata(&len);
	CHECK(sent != nullptr && len == sizeof(answer) && std::memcmp(sent, answer, len) == 0);
	CHECK(fake_verbs_calls(FAKE_REJECT) == 1 && fake_verbs_calls(FAKE_ACCEPT) == 0);

	/* an outgoing request has nobody to answer, and stays */
	auto out = rpma::conn_req::create(*peer, ADDR, PORT);
	CHECK(out);
	CHECK(out->reject().error() == rpma::errc::inval);
	CHECK(*out);
}

/* gpspm_offer(): a region offered to the GPSPM of one request, refused where there is none */
void conn_req_gpspm_offer()
{
	auto peer = rpma::peer::create(fake_verbs_context());
	CHECK(peer);
	alignas(64) static std::byte area[4096];
	auto mr = rpma::mr_local::reg(*peer, area, sizeof(area),
				      rpma::usage::write_dst | rpma::usage::flush_type_persistent);
	CHECK(mr);
	auto cfg = rpma::conn_cfg::create();
	CHECK(cfg && cfg->set_gpspm(rpma::gpspm_mode::polled));
	auto req = rpma::conn_req::create(*peer, ADDR, PORT, *cfg);
	CHECK(req);
	/* a region without a persist function offers no GPSPM */
	CHECK(req->gpspm_offer(*mr).error() == rpma::errc::inval);
	CHECK(mr->set_persist_fn([](const void *, std::size_t) {}));
	CHECK(req->gpspm_offer(*mr));
	/* a request without GPSPM has nothing to offer it to */
	auto plain = rpma::conn_req::create(*peer, ADDR, PORT);
	CHECK(plain);
	CHECK(plain->gpspm_offer(*mr).error() == rpma::errc::inval);
}

} /* namespace */

int main()
{
	static const harness::test_case cases[] = {
		TEST_CASE(write_forwards_its_arguments),
		TEST_CASE(read_send_recv_forward_their_arguments),
		TEST_CASE(flush_and_atomic_write),
		TEST_CASE(bad_arguments_post_nothing),
		TEST_CASE(completions_come_out_in_order),
		TEST_CASE(wait_completion_and_get_wc),
		TEST_CASE(receive_cq_views),
		TEST_CASE(shared_channel_wait),
		TEST_CASE(events_and_private_data),
		TEST_CASE(is_up_follows_the_events),
		TEST_CASE(conn_req_peer_addr),
		TEST_CASE(conn_req_qp_num),
		TEST_CASE(conn_req_reject),
		TEST_CASE(conn_req_gpspm_offer),
		TEST_CASE(descriptors_round_trip),
		TEST_CASE(configurations_round_trip),
		TEST_CASE(versioned_descriptors_and_gpspm_cfg),
		TEST_CASE(flush_method_agreement),
		TEST_CASE(post_batch_posts_one_chain),
		TEST_CASE(post_batch_takes_any_sequence),
		TEST_CASE(post_batch_names_the_refused_element),
		TEST_CASE(write_template_posts_one_chain),
		TEST_CASE(post_batch_provider_failure_mid_chain),
		TEST_CASE(log_and_utils),
		TEST_CASE(error_codes_speak_rpma),
	};
	return harness::run(cases, sizeof(cases) / sizeof(cases[0]));
}
