/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lifetime.cpp -- the owners of rpma.hpp over the fake rdma-core: every
 * object deleted exactly once, whatever path the program takes
 */

#include <csignal>
#include <cstring>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

#include <rpma.hpp>

#include "fake_verbs.h"
#include "harness.hpp"

using tracker::deletes;

namespace
{

const char ADDR[] = "127.0.0.1";
const char PORT[] = "7204";

rpma::result<rpma::peer> new_peer()
{
	return rpma::peer::create(fake_verbs_context());
}

/* a librpma 1.x region descriptor: 21 bytes, little-endian */
void mr_descriptor(std::byte (&desc)[21], std::uint64_t addr, std::uint64_t len, std::uint32_t rkey,
		   std::uint8_t usage)
{
	for (int i = 0; i < 8; i++) {
		desc[i] = static_cast<std::byte>(addr >> (8 * i));
		desc[8 + i] = static_cast<std::byte>(len >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		desc[16 + i] = static_cast<std::byte>(rkey >> (8 * i));
	desc[20] = static_cast<std::byte>(usage);
}

template <class T> T &moved(T &x)
{
	/* a self-move spelled so that the compiler does not flag it */
	return x;
}

/* ------------------------------------------------------------------ cases */

void scope_exit_deletes()
{
	{
		auto peer = new_peer();
		CHECK(peer);
		CHECK(peer->get() != nullptr);
		CHECK(tracker::live(tracker::K_PEER) == 1);
		CHECK(fake_verbs_live_objects() > 0);
		CHECK(deletes(tracker::K_PEER) == 0);
	}
	CHECK(deletes(tracker::K_PEER) == 1);
	CHECK(tracker::live() == 0);
	CHECK(fake_verbs_live_objects() == 0);
}

void empty_owners_delete_nothing()
{
	{
		rpma::peer peer;
		rpma::peer_cfg peer_cfg;
		rpma::mr_local mr_local;
		rpma::mr_remote mr_remote;
		rpma::conn_cfg conn_cfg;
		rpma::conn_req conn_req;
		rpma::conn conn;
		rpma::ep ep;
		rpma::srq srq;
		rpma::srq_cfg srq_cfg;
		CHECK(!peer && !peer_cfg && !mr_local && !mr_remote && !conn_cfg && !conn_req &&
		      !conn && !ep && !srq && !srq_cfg);
		CHECK(peer.get() == nullptr && conn.get() == nullptr);
		CHECK(peer.reset() && conn.reset() && ep.reset() && mr_local.reset());
		CHECK(peer.release() == nullptr);
	}
	for (int k = 0; k < tracker::K_COUNT; k++) {
		EXPECT(deletes(static_cast<tracker::kind>(k)) == 0);
		EXPECT(tracker::null_deletes(static_cast<tracker::kind>(k)) == 0);
	}
}

void move_construct_transfers()
{
	{
		auto a = new_peer();
		CHECK(a);
		rpma_peer *raw = a->get();
		rpma::peer b(std::move(*a));
		CHECK(!*a && a->get() == nullptr);
		CHECK(b.get() == raw);
		rpma::peer c = std::move(b);
		CHECK(!b && c.get() == raw);
		CHECK(deletes(tracker::K_PEER) == 0);
	}
	CHECK(deletes(tracker::K_PEER) == 1);
}

void move_assign_deletes_the_old_object()
{
	auto a = new_peer();
	auto b = new_peer();
	CHECK(a && b);
	rpma_peer *old_a = a->get();
	rpma_peer *raw_b = b->get();

	*a = std::move(*b);
	CHECK(deletes(tracker::K_PEER) == 1);
	CHECK(tracker::last_deleted() == old_a);
	CHECK(!tracker::is_live(old_a));
	CHECK(a->get() == raw_b && tracker::is_live(raw_b));
	CHECK(!*b);

	/* assigning an empty owner deletes too */
	*a = rpma::peer();
	CHECK(deletes(tracker::K_PEER) == 2);
	CHECK(tracker::last_deleted() == raw_b && !*a);
}

void self_move_assign_keeps_the_object()
{
	auto a = new_peer();
	CHECK(a);
	rpma_peer *raw = a->get();
	*a = std::move(moved(*a));
	CHECK(a->get() == raw);
	CHECK(deletes(tracker::K_PEER) == 0);
	CHECK(tracker::is_live(raw));
}

void release_hands_the_object_over()
{
	rpma_peer *raw = nullptr;
	{
		auto a = new_peer();
		CHECK(a);
		rpma_peer *held = a->get();
		raw = a->release();
		CHECK(raw == held && !*a);
	}
	CHECK(deletes(tracker::K_PEER) == 0);
	CHECK(tracker::is_live(raw));
	/* now the caller's to delete */
	CHECK(rpma_peer_delete(&raw) == 0);
	CHECK(raw == nullptr);
}

void adopting_a_raw_pointer()
{
	rpma_conn_cfg *raw = nullptr;
	CHECK(rpma_conn_cfg_new(&raw) == 0);
	{
		rpma::conn_cfg cfg(raw);
		CHECK(cfg.get() == raw);
		CHECK(cfg.set_timeout(std::chrono::milliseconds(77)));
		CHECK(cfg.get_timeout().value_or(std::chrono::milliseconds(0)).count() == 77);
	}
	CHECK(deletes(tracker::K_CONN_CFG) == 1);
	CHECK(tracker::last_deleted() == raw);
}

void reset_deletes_now()
{
	auto cfg = rpma::peer_cfg::create();
	CHECK(cfg);
	const void *raw = cfg->get();
	rpma::result<void> r = cfg->reset();
	CHECK(r && !r.error());
	CHECK(!*cfg);
	CHECK(deletes(tracker::K_PEER_CFG) == 1 && tracker::last_deleted() == raw);
	CHECK(cfg->reset());
	CHECK(deletes(tracker::K_PEER_CFG) == 1);
}

/*
 * rpma_peer_delete releases the peer even when its protection domain is still
 * busy (as librpma 1.x did): the owner is empty afterwards, and says why.
 */
void failed_delete_gives_up_the_object()
{
	char buf[64];
	auto peer = new_peer();
	CHECK(peer);
	rpma_peer *raw = peer->get();
	auto mr = rpma::mr_local::reg(*peer, buf, sizeof(buf), rpma::usage::write_src);
	CHECK(mr);

	rpma::result<void> r = peer->reset();
	CHECK(!r);
	CHECK(r.code() == RPMA_E_PROVIDER);
	CHECK(r.error() == rpma::errc::provider);
	CHECK(std::strcmp(r.error().category().name(), "rpma") == 0);
	CHECK(r.error().message() == rpma_err_2str(RPMA_E_PROVIDER));
	CHECK(rpma::provider_error() == std::errc::device_or_resource_busy);
	CHECK(!*peer && !tracker::is_live(raw));
	CHECK(deletes(tracker::K_PEER) == 1);

	CHECK(mr->reset());
	CHECK(deletes(tracker::K_MR_LOCAL) == 1);
	/* the domain rdma-core refused to release stays with it */
	CHECK(fake_verbs_live_objects() == 1);
	fake_verbs_reset();
}

/* rpma_conn_req_connect consumes the request even when it fails */
void failed_connect_consumes_the_request()
{
	auto peer = new_peer();
	CHECK(peer);
	{
		auto req = rpma::conn_req::create(*peer, ADDR, PORT);
		CHECK(req);
		const void *raw = req->get();
		fake_verbs_fail(FAKE_CONNECT, 1, ECONNREFUSED);
		auto conn = req->connect();
		CHECK(!conn);
		CHECK(conn.error() == rpma::errc::provider);
		CHECK(rpma::provider_error() == std::errc::connection_refused);
		CHECK(!*req);
		CHECK(!tracker::is_live(raw));
	}
	CHECK(deletes(tracker::K_CONN_REQ) == 0);
	CHECK(deletes(tracker::K_CONN) == 0);
	CHECK(tracker::live(tracker::K_CONN) == 0);
}

void connect_turns_the_request_into_a_connection()
{
	auto peer = new_peer();
	CHECK(peer);
	{
		auto req = rpma::conn_req::create(*peer, ADDR, PORT);
		CHECK(req);
		auto conn = req->connect();
		CHECK(conn);
		CHECK(!*req);
		CHECK(tracker::live(tracker::K_CONN) == 1 &&
		      tracker::live(tracker::K_CONN_REQ) == 0);
		rpma::conn moved_conn = std::move(*conn);
		CHECK(!*conn && moved_conn);
	}
	CHECK(deletes(tracker::K_CONN_REQ) == 0);
	CHECK(deletes(tracker::K_CONN) == 1);
}

/*
 * An owner that goes with its connection still up disconnects it first,
 * so that the peer hears of it; one whose connection is already closed
 * only deletes it.
 */
void dropped_connection_is_disconnected()
{
	auto peer = new_peer();
	CHECK(peer);
	{
		auto req = rpma::conn_req::create(*peer, ADDR, PORT);
		CHECK(req);
		auto conn = req->connect();
		CHECK(conn);
		CHECK(fake_verbs_calls(FAKE_DISCONNECT) == 0);
	}
	CHECK(deletes(tracker::K_CONN) == 1);
	CHECK(fake_verbs_calls(FAKE_DISCONNECT) == 1);

	{
		auto req = rpma::conn_req::create(*peer, ADDR, PORT);
		CHECK(req);
		rdma_cm_id *id = fake_verbs_last_id();
		auto conn = req->connect();
		CHECK(conn && id != nullptr);
		CHECK(conn->disconnect());
		fake_verbs_push_cm_event(id->channel, RDMA_CM_EVENT_DISCONNECTED, id, nullptr, 0);
		auto ev = conn->next_event();
		CHECK(ev && *ev == RPMA_CONN_CLOSED);
		CHECK(fake_verbs_calls(FAKE_DISCONNECT) == 2);
		/* reset() deletes the same way, and says how that went */
		CHECK(conn->reset());
		CHECK(!*conn);
	}
	CHECK(deletes(tracker::K_CONN) == 2);
	CHECK(fake_verbs_calls(FAKE_DISCONNECT) == 2);
}

/* refused by the wrapper before the library: nothing consumed */
void oversized_private_data_consumes_nothing()
{
	auto peer = new_peer();
	CHECK(peer);
	{
		auto req = rpma::conn_req::create(*peer, ADDR, PORT);
		CHECK(req);
		const void *raw = req->get();
		/* 300 bytes: as a uint8_t length it would read as 44 */
		std::byte big[300] = {};
		auto conn = req->connect(big);
		CHECK(!conn && conn.error() == rpma::errc::inval);
		CHECK(req->get() == raw && tracker::is_live(raw));
		CHECK(fake_verbs_calls(FAKE_CONNECT) == 0);
	}
	CHECK(deletes(tracker::K_CONN_REQ) == 1);
}

/* an incoming request deleted by its owner is rejected */
void dropped_incoming_request_is_rejected()
{
	auto peer = new_peer();
	CHECK(peer);
	auto ep = rpma::ep::listen(*peer, ADDR, PORT);
	CHECK(ep);
	rdma_cm_id *listener = fake_verbs_last_id();
	CHECK(listener != nullptr && listener->channel != nullptr);

	const char hello[] = "hello";
	fake_verbs_push_cm_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, hello,
				 sizeof(hello));
	{
		auto req = ep->next_conn_req();
		CHECK(req);
		auto pdata = req->get_private_data();
		CHECK(pdata && pdata->size() >= sizeof(hello));
		CHECK(std::memcmp(pdata->data(), hello, sizeof(hello)) == 0);
		CHECK(fake_verbs_calls(FAKE_REJECT) == 0);
	}
	CHECK(deletes(tracker::K_CONN_REQ) == 1);
	CHECK(fake_verbs_calls(FAKE_REJECT) == 1);
	CHECK(ep->reset());
	CHECK(deletes(tracker::K_EP) == 1);
}

void accept_sends_private_data()
{
	auto peer = new_peer();
	CHECK(peer);
	auto ep = rpma::ep::listen(*peer, ADDR, PORT);
	CHECK(ep);
	rdma_cm_id *listener = fake_verbs_last_id();
	CHECK(listener != nullptr);
	fake_verbs_push_cm_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, nullptr,
				 0);
	auto req = ep->next_conn_req();
	CHECK(req);

	const unsigned char reply[] = { 1, 2, 3, 4, 5 };
	auto conn = req->connect(rpma::as_bytes(rpma::span<const unsigned char>(reply)));
	CHECK(conn);
	CHECK(fake_verbs_calls(FAKE_ACCEPT) == 1);
	std::uint8_t len = 0;
	const void *sent = fake_verbs_last_conn_pdata(&len);
	CHECK(len == sizeof(reply) && sent != nullptr);
	CHECK(std::memcmp(sent, reply, sizeof(reply)) == 0);
}

/*
 * A server set up step by step that gives up at step `stop`, returning
 * the error like a real program would; whatever it created by then must
 * go, in the right order (regions and connections before the peer).
 */
rpma::result<void> server_until(int stop, char *buf, std::size_t size)
{
	auto peer = rpma::peer::create(fake_verbs_context());
	if (!peer)
		return peer.error();
	if (stop == 0)
		return rpma::errc::again;

	auto pcfg = rpma::peer_cfg::create();
	if (!pcfg || !pcfg->set_direct_write_to_pmem(true))
		return rpma::errc::unknown;
	if (stop == 1)
		return rpma::errc::again;

	auto mr = rpma::mr_local::reg(*peer, buf, size,
				      rpma::usage::write_dst | rpma::usage::flush_type_persistent);
	if (!mr)
		return mr.error();
	if (stop == 2)
		return rpma::errc::again;

	auto cfg = rpma::conn_cfg::create();
	if (!cfg || !cfg->set_cq_size(4))
		return rpma::errc::unknown;
	auto ep = rpma::ep::listen(*peer, ADDR, PORT);
	if (!ep)
		return ep.error();
	if (stop == 3)
		return rpma::errc::again;

	rdma_cm_id *listener = fake_verbs_last_id();
	fake_verbs_push_cm_event(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, nullptr, nullptr,
				 0);
	auto req = ep->next_conn_req(*cfg);
	if (!req)
		return req.error();
	if (stop == 4)
		return rpma::errc::again;

	auto conn = req->connect();
	if (!conn)
		return conn.error();
	if (stop == 5)
		return rpma::errc::again;
	return rpma::result<void>();
}

void early_returns_unwind_everything()
{
	char buf[128];
	for (int stop = 0; stop <= 6; stop++) {
		fake_verbs_reset();
		tracker::reset();
		rpma::result<void> r = server_until(stop, buf, sizeof(buf));
		if (stop < 6)
			EXPECT(r.error() == rpma::errc::again);
		else
			EXPECT(r);
		EXPECT(tracker::live() == 0);
		EXPECT(tracker::violations() == 0);
		EXPECT(fake_verbs_live_objects() == 0);
		EXPECT(fake_verbs_misuse() == 0);
		if (harness::failures() != 0) {
			std::printf("# stopped at step %d\n", stop);
			return;
		}
	}
}

/* a provider failure in the middle: the error comes out, nothing stays */
void provider_failures_unwind_everything()
{
	char buf[128];
	const fake_call calls[] = { FAKE_ALLOC_PD, FAKE_REG_MR, FAKE_LISTEN, FAKE_CREATE_QP_EX,
				    FAKE_ACCEPT };
	for (fake_call call : calls) {
		fake_verbs_reset();
		tracker::reset();
		fake_verbs_fail(call, 1, ENOMEM);
		rpma::result<void> r = server_until(6, buf, sizeof(buf));
		EXPECT(!r);
		EXPECT(r.error() == rpma::errc::provider);
		EXPECT(rpma::provider_error() == std::errc::not_enough_memory);
		EXPECT(tracker::live() == 0);
		EXPECT(tracker::violations() == 0);
		EXPECT(fake_verbs_live_objects() == 0);
		EXPECT(fake_verbs_misuse() == 0);
		if (harness::failures() != 0) {
			std::printf("# failing call %d\n", static_cast<int>(call));
			return;
		}
	}
}

void failed_constructors_give_no_owner()
{
	fake_verbs_fail(FAKE_ALLOC_PD, 1, EACCES);
	auto peer = new_peer();
	CHECK(!peer && peer.code() == RPMA_E_PROVIDER);
	CHECK(rpma::provider_error() == std::errc::permission_denied);
	CHECK(tracker::live() == 0 && fake_verbs_live_objects() == 0);

	auto good = new_peer();
	CHECK(good);
	/* refused by argument checks: nothing reaches rdma-core */
	auto mr = rpma::mr_local::reg(*good, nullptr, 64, rpma::usage::read_src);
	CHECK(!mr && mr.error() == rpma::errc::inval);
	CHECK(mr.error() == std::errc::invalid_argument);
	std::byte short_desc[3] = {};
	auto remote = rpma::mr_remote::from_descriptor(short_desc);
	CHECK(!remote && remote.error() == rpma::errc::inval);
	auto no_pcfg = rpma::peer_cfg::from_descriptor(rpma::span<const std::byte>());
	CHECK(!no_pcfg && no_pcfg.error() == rpma::errc::inval);
	CHECK(tracker::live() == 1);
}

/* one of each: created through the wrapper, deleted by it exactly once */
void every_owner_deletes_its_object()
{
	char buf[64];
	{
		auto peer = new_peer();
		CHECK(peer);
		auto pcfg = rpma::peer_cfg::create();
		auto ccfg = rpma::conn_cfg::create();
		auto scfg = rpma::srq_cfg::create();
		CHECK(pcfg && ccfg && scfg);
		std::byte desc[21];
		mr_descriptor(desc, 0x1000, 4096, 0x1234, RPMA_MR_USAGE_WRITE_DST);
		auto remote = rpma::mr_remote::from_descriptor(desc);
		CHECK(remote);
		CHECK(remote->get_size().value_or(0) == 4096);
		auto mr = rpma::mr_local::reg(*peer, rpma::as_writable_bytes(rpma::span<char>(buf)),
					      rpma::usage::read_src);
		CHECK(mr);
		auto srq = rpma::srq::create(*peer, *scfg);
		CHECK(srq);
		auto ep = rpma::ep::listen(*peer, ADDR, PORT);
		CHECK(ep);
		auto req = rpma::conn_req::create(*peer, ADDR, PORT);
		CHECK(req);
		auto req2 = rpma::conn_req::create(*peer, ADDR, PORT, *ccfg);
		CHECK(req2);
		auto conn = req2->connect();
		CHECK(conn);
		for (int k = 0; k < tracker::K_COUNT; k++)
			CHECK(tracker::live(static_cast<tracker::kind>(k)) == 1);
	}
	for (int k = 0; k < tracker::K_COUNT; k++) {
		if (k == tracker::K_CONN_REQ)
			continue;
		EXPECT(deletes(static_cast<tracker::kind>(k)) == 1);
	}
	/* two requests: one deleted, one consumed by connect */
	EXPECT(deletes(tracker::K_CONN_REQ) == 1);
}

void results_move_their_owner()
{
	{
		auto a = new_peer();
		CHECK(a);
		rpma_peer *raw = a->get();
		rpma::result<rpma::peer> b = std::move(a);
		CHECK(b && b->get() == raw);
		rpma::peer owner = std::move(b).value();
		CHECK(owner.get() == raw);
		CHECK(deletes(tracker::K_PEER) == 0);

		/* assigning over a result holding an owner deletes what it held */
		rpma::result<rpma::peer> c = new_peer();
		CHECK(c);
		rpma_peer *raw_c = c->get();
		c = rpma::errc::nomem;
		CHECK(!c && deletes(tracker::K_PEER) == 1 && tracker::last_deleted() == raw_c);

		rpma::result<rpma::peer> failed = rpma::errc::again;
		rpma::result<rpma::peer> moved_failure = std::move(failed);
		CHECK(!moved_failure && moved_failure.error() == rpma::errc::again);
	}
	CHECK(deletes(tracker::K_PEER) == 2);
}

/* without exceptions, value() of a failure ends the program, saying why */
void value_of_a_failure_aborts()
{
	int pipe_fds[2];
	CHECK(pipe(pipe_fds) == 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* no core file from the expected abort */
		std::signal(SIGABRT, SIG_DFL);
		close(pipe_fds[0]);
		if (dup2(pipe_fds[1], STDERR_FILENO) < 0)
			_exit(4);
		rpma::result<int> r = rpma::errc::nomem;
		int v = r.value();
		_exit(v == 0 ? 2 : 3);
	}
	close(pipe_fds[1]);
	char said[256] = {};
	std::size_t len = 0;
	ssize_t n;
	while (len < sizeof(said) - 1 &&
	       (n = read(pipe_fds[0], said + len, sizeof(said) - 1 - len)) > 0)
		len += static_cast<std::size_t>(n);
	close(pipe_fds[0]);
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	CHECK(std::strstr(said, "rpma::result::value()") != nullptr);
	CHECK(std::strstr(said, "RPMA_E_NOMEM") != nullptr);
	CHECK(std::strstr(said, rpma_err_2str(RPMA_E_NOMEM)) != nullptr);
}

/* a value taken from a temporary result is moved out, not referenced */
void values_leave_temporary_results()
{
	{
		const rpma::peer &held = *new_peer();
		CHECK(held && tracker::is_live(held.get()));
		CHECK(deletes(tracker::K_PEER) == 0);
		rpma::peer taken = new_peer().value();
		CHECK(taken && tracker::live(tracker::K_PEER) == 2);
	}
	CHECK(deletes(tracker::K_PEER) == 2);
}

} /* namespace */

int main()
{
	static const harness::test_case cases[] = {
		TEST_CASE(scope_exit_deletes),
		TEST_CASE(empty_owners_delete_nothing),
		TEST_CASE(move_construct_transfers),
		TEST_CASE(move_assign_deletes_the_old_object),
		TEST_CASE(self_move_assign_keeps_the_object),
		TEST_CASE(release_hands_the_object_over),
		TEST_CASE(adopting_a_raw_pointer),
		TEST_CASE(reset_deletes_now),
		TEST_CASE(failed_delete_gives_up_the_object),
		TEST_CASE(failed_connect_consumes_the_request),
		TEST_CASE(connect_turns_the_request_into_a_connection),
		TEST_CASE(dropped_connection_is_disconnected),
		TEST_CASE(oversized_private_data_consumes_nothing),
		TEST_CASE(dropped_incoming_request_is_rejected),
		TEST_CASE(accept_sends_private_data),
		TEST_CASE(early_returns_unwind_everything),
		TEST_CASE(provider_failures_unwind_everything),
		TEST_CASE(failed_constructors_give_no_owner),
		TEST_CASE(every_owner_deletes_its_object),
		TEST_CASE(results_move_their_owner),
		TEST_CASE(value_of_a_failure_aborts),
		TEST_CASE(values_leave_temporary_results),
	};
	return harness::run(cases, sizeof(cases) / sizeof(cases[0]));
}
