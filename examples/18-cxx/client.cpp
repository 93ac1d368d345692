/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * client.cpp -- 18-cxx: write and flush, with rpma.hpp
 *
 * usage: client <addr> <port> [message]
 *
 * What 04-write-flush's client does, written with the C++ layer: it
 * connects, takes the server's region descriptor and peer configuration
 * from the private data of the connection, writes a message into the
 * region, flushes it -- to persistence when the server offers it, to
 * visibility otherwise -- and waits for the flush's completion, polled
 * with rpma_cq_get_completion through rpma::cq.
 */

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include <rpma.hpp>

namespace
{

constexpr std::size_t BUF_SIZE = 4096;

/* prints what failed; true when r holds a value */
template <class T> bool check(const rpma::result<T> &r, const char *what)
{
	if (r.has_value())
		return true;
	std::fprintf(stderr, "%s: %s\n", what, r.error().message().c_str());
	if (r.error() == rpma::errc::provider)
		std::fprintf(stderr, "  caused by: %s\n", rpma::provider_error().message().c_str());
	return false;
}

/*
 * The index-th item of the server's private data (items of one length
 * byte and that many bytes); an empty span when it is not there. The
 * bytes come from the network: every length is checked.
 */
rpma::span<const std::byte> item(rpma::span<const std::byte> pdata, int index)
{
	std::size_t at = 0;
	for (int i = 0; at < pdata.size(); i++) {
		std::size_t len = static_cast<std::size_t>(pdata[at]);
		if (at + 1 + len > pdata.size())
			break;
		if (i == index)
			return pdata.subspan(at + 1, len);
		at += 1 + len;
	}
	return rpma::span<const std::byte>();
}

const char *op_name(rpma_op op)
{
	switch (op) {
	case RPMA_OP_READ:
		return "read";
	case RPMA_OP_WRITE:
		return "write";
	case RPMA_OP_FLUSH:
		return "flush";
	case RPMA_OP_SEND:
		return "send";
	case RPMA_OP_RECV:
		return "recv";
	case RPMA_OP_RECV_RDMA_WITH_IMM:
		return "recv (write with immediate)";
	}
	return "?";
}

/* the next completion: poll, and sleep on the CQ's channel while it is empty */
bool next_completion(const rpma::cq &cq, rpma_completion &cmpl)
{
	for (;;) {
		rpma::result<void> got = cq.get_completion(cmpl);
		if (got)
			return true;
		if (got.error() != rpma::errc::no_completion)
			return check(got, "rpma::cq::get_completion");
		if (!check(cq.wait(), "rpma::cq::wait"))
			return false;
	}
}

int run(const char *addr, const char *port, const char *message, char *buf)
{
	auto dev = rpma::utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	if (!check(dev, "rpma::utils_get_ibv_context"))
		return 1;
	auto peer = rpma::peer::create(*dev);
	if (!check(peer, "rpma::peer::create"))
		return 1;

	std::size_t len = std::strlen(message) + 1;
	if (len > BUF_SIZE)
		len = BUF_SIZE;
	std::memcpy(buf, message, len);
	buf[len - 1] = '\0';
	auto src = rpma::mr_local::reg(*peer, buf, BUF_SIZE, rpma::usage::write_src);
	if (!check(src, "rpma::mr_local::reg"))
		return 1;

	auto req = rpma::conn_req::create(*peer, addr, port);
	if (!check(req, "rpma::conn_req::create"))
		return 1;
	/* connecting consumes the request */
	auto conn = req->connect();
	if (!check(conn, "rpma::conn_req::connect"))
		return 1;
	auto event = conn->next_event();
	if (!check(event, "rpma::conn::next_event"))
		return 1;
	if (*event != RPMA_CONN_ESTABLISHED) {
		std::fprintf(stderr, "unexpected event: %s\n", rpma::utils_conn_event_2str(*event));
		return 1;
	}

	/* what the server sent: its region, then its peer configuration */
	auto pdata = conn->get_private_data();
	if (!check(pdata, "rpma::conn::get_private_data"))
		return 1;
	auto dst = rpma::mr_remote::from_descriptor(item(*pdata, 0));
	if (!check(dst, "rpma::mr_remote::from_descriptor"))
		return 1;
	auto remote_cfg = rpma::peer_cfg::from_descriptor(item(*pdata, 1));
	if (!check(remote_cfg, "rpma::peer_cfg::from_descriptor"))
		return 1;
	/* without it a persistent flush is not supported */
	if (!check(conn->apply_remote_peer_cfg(*remote_cfg), "rpma::conn::apply_remote_peer_cfg"))
		return 1;

	auto dst_size = dst->get_size();
	if (!check(dst_size, "rpma::mr_remote::get_size"))
		return 1;
	if (*dst_size < len) {
		std::fprintf(stderr, "the server's region is too small (%zu bytes)\n", *dst_size);
		return 1;
	}

	/* as deep as the server allows: persistence needs both of these */
	auto direct_write = remote_cfg->get_direct_write_to_pmem();
	auto flush_types = dst->get_flush_type();
	if (!check(direct_write, "rpma::peer_cfg::get_direct_write_to_pmem") ||
	    !check(flush_types, "rpma::mr_remote::get_flush_type"))
		return 1;
	rpma::flush_type type =
	    *direct_write && rpma::has(*flush_types, rpma::usage::flush_type_persistent)
		? rpma::flush_type::persistent
		: rpma::flush_type::visibility;
	std::printf("client: the server offers %s\n",
		    type == rpma::flush_type::persistent ? "persistence" : "visibility only");

	static const char flush_ctx[] = "flush";
	/* the write completes only on error: the flush after it says it all */
	if (!check(conn->write(*dst, 0, *src, 0, len, rpma::flag::completion_on_error, nullptr),
		   "rpma::conn::write"))
		return 1;
	if (!check(conn->flush(*dst, 0, len, type, rpma::flag::completion_always, flush_ctx),
		   "rpma::conn::flush"))
		return 1;

	auto cq = conn->get_cq();
	if (!check(cq, "rpma::conn::get_cq"))
		return 1;
	rpma_completion cmpl;
	if (!next_completion(*cq, cmpl))
		return 1;
	std::printf("client: completion: op %s, status %s, op_context %s\n", op_name(cmpl.op),
		    ibv_wc_status_str(cmpl.op_status),
		    cmpl.op_context == flush_ctx ? "flush_ctx" : "unexpected");
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op_context != flush_ctx) {
		std::fprintf(stderr, "the write or the flush failed\n");
		return 1;
	}
	std::printf("client: wrote and flushed to %s %zu bytes: \"%s\"\n",
		    type == rpma::flush_type::persistent ? "persistence" : "visibility", len, buf);

	if (!check(conn->disconnect(), "rpma::conn::disconnect"))
		return 1;
	event = conn->next_event();
	if (!check(event, "rpma::conn::next_event"))
		return 1;
	if (*event != RPMA_CONN_CLOSED)
		std::fprintf(stderr, "unexpected event: %s\n", rpma::utils_conn_event_2str(*event));
	return 0;
}

} /* namespace */

int main(int argc, char *argv[])
{
	if (argc < 3 || argc > 4) {
		std::fprintf(stderr, "usage: %s <addr> <port> [message]\n", argv[0]);
		return 2;
	}
	const char *message = argc > 3 ? argv[3] : "Hello from the C++ client!";

	void *buf = nullptr;
	if (posix_memalign(&buf, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), BUF_SIZE)) {
		std::fprintf(stderr, "posix_memalign failed\n");
		return 1;
	}
	std::memset(buf, 0, BUF_SIZE);

	int ret = run(argv[1], argv[2], message, static_cast<char *>(buf));
	std::free(buf);
	return ret;
}
