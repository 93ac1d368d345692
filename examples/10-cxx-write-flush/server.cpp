/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.cpp -- the target of the C++ write-and-flush example (rpma.hpp)
 *
 * Registers a region for remote writes that are flushed to persistence,
 * accepts one connection and gives the client, in the private data of the
 * accept, the region's descriptor and the peer configuration that says
 * RDMA writes reach persistence here. When the client disconnects, prints
 * what it wrote.
 *
 * usage: server <addr> <port>
 */

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include <rpma.hpp>

namespace {

constexpr std::size_t REGION_SIZE = 4096;

/* prints what failed; true when r holds a value */
template <class T> bool check(const rpma::result<T> &r, const char *what)
{
	if (r)
		return true;
	std::fprintf(stderr, "%s: %s\n", what, r.error().message().c_str());
	if (r.error() == rpma::errc::provider)
		std::fprintf(stderr, "  caused by: %s\n", rpma::provider_error().message().c_str());
	return false;
}

/*
 * Private data: items of one length byte and that many bytes. The lengths
 * let the client find each descriptor even when the transport pads the
 * private data (RoCE does).
 */
struct private_data {
	std::byte bytes[196];
	std::size_t len = 0;

	bool add(rpma::span<const std::byte> item)
	{
		if (item.size() > 255 || len + 1 + item.size() > sizeof(bytes))
			return false;
		bytes[len++] = static_cast<std::byte>(item.size());
		std::memcpy(bytes + len, item.data(), item.size());
		len += item.size();
		return true;
	}
};

int run(const char *addr, const char *port, unsigned char *mem)
{
	auto dev = rpma::utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	if (!check(dev, "rpma::utils_get_ibv_context"))
		return 1;
	auto peer = rpma::peer::create(*dev);
	if (!check(peer, "rpma::peer::create"))
		return 1;

	/* the client writes into it and flushes what it wrote to persistence */
	auto mr = rpma::mr_local::reg(*peer, mem, REGION_SIZE,
				      rpma::usage::write_dst |
					      rpma::usage::flush_type_persistent);
	if (!check(mr, "rpma::mr_local::reg"))
		return 1;

	/*
	 * Declare that RDMA writes land in the persistent domain here. That
	 * holds on a platform with persistent memory and eADR, or with ADR
	 * and DDIO off; this example's ordinary memory only plays that part.
	 */
	auto pcfg = rpma::peer_cfg::create();
	if (!check(pcfg, "rpma::peer_cfg::create") ||
	    !check(pcfg->set_direct_write_to_pmem(true), "set_direct_write_to_pmem"))
		return 1;

	private_data pdata;
	std::byte desc[64];
	auto mr_desc_len = mr->get_descriptor(desc);
	if (!check(mr_desc_len, "rpma::mr_local::get_descriptor") ||
	    !pdata.add(rpma::span<const std::byte>(desc, *mr_desc_len)))
		return 1;
	auto pcfg_desc_len = pcfg->get_descriptor(desc);
	if (!check(pcfg_desc_len, "rpma::peer_cfg::get_descriptor") ||
	    !pdata.add(rpma::span<const std::byte>(desc, *pcfg_desc_len)))
		return 1;

	auto ep = rpma::ep::listen(*peer, addr, port);
	if (!check(ep, "rpma::ep::listen"))
		return 1;
	std::printf("server: listening on %s:%s\n", addr, port);
	/* whoever starts the client may be watching for this line */
	std::fflush(stdout);

	auto req = ep->next_conn_req();
	if (!check(req, "rpma::ep::next_conn_req"))
		return 1;
	/* accepting consumes the request */
	auto conn = req->connect(rpma::span<const std::byte>(pdata.bytes, pdata.len));
	if (!check(conn, "rpma::conn_req::connect"))
		return 1;

	auto event = conn->next_event();
	if (!check(event, "rpma::conn::next_event"))
		return 1;
	if (*event != RPMA_CONN_ESTABLISHED) {
		std::fprintf(stderr, "unexpected event: %s\n", rpma::utils_conn_event_2str(*event));
		return 1;
	}
	std::printf("server: connected\n");

	/* the client writes, flushes and disconnects */
	event = conn->next_event();
	if (!check(event, "rpma::conn::next_event"))
		return 1;
	if (*event != RPMA_CONN_CLOSED) {
		std::fprintf(stderr, "unexpected event: %s\n", rpma::utils_conn_event_2str(*event));
		return 1;
	}

	mem[REGION_SIZE - 1] = 0;
	std::printf("server: the client wrote: \"%s\"\n", reinterpret_cast<const char *>(mem));

	/*
	 * Leaving the scope deletes the connection, the endpoint, the region
	 * and the peer, in this order: the reverse of their creation.
	 */
	return 0;
}

} /* namespace */

int main(int argc, char *argv[])
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: %s <addr> <port>\n", argv[0]);
		return 1;
	}

	void *mem = nullptr;
	if (posix_memalign(&mem, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), REGION_SIZE)) {
		std::fprintf(stderr, "posix_memalign failed\n");
		return 1;
	}
	std::memset(mem, 0, REGION_SIZE);

	int ret = run(argv[1], argv[2], static_cast<unsigned char *>(mem));
	/* the region is deregistered by now */
	std::free(mem);
	return ret;
}
