/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * server.cpp -- 18-cxx: the target of a write and a flush, with rpma.hpp
 *
 * usage: server [--direct-write-to-pmem] <addr> <port> [<pmem-path>]
 *
 * What 04-write-flush's server does, written with the C++ layer: it maps
 * persistent memory with libpmem2 (a device DAX or a file, created when
 * missing), or takes DRAM when no path is given, registers it for remote
 * writes and flushes, accepts one connection with the region's descriptor
 * and its peer configuration in the private data, and prints what the
 * client wrote once the client has gone.
 *
 * The guarantee it offers is said aloud: persistence only where RDMA
 * writes reach the persistent domain, which only the person running it
 * knows (eADR, or DDIO off) and says with --direct-write-to-pmem --
 * and visibility otherwise, in which case the server persists the data
 * itself once the client has gone. DRAM gives visibility, nothing more.
 */

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem2.h>
#include <rpma.hpp>

namespace
{

constexpr std::size_t REGION_SIZE = 4096;

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

/* where the client's bytes land: pmem mapped with libpmem2, or DRAM */
class memory
{
      public:
	memory() = default;
	memory(const memory &) = delete;
	memory &operator=(const memory &) = delete;
	~memory()
	{
		if (map_)
			pmem2_map_delete(&map_);
		std::free(dram_);
	}

	bool map_pmem(const char *path)
	{
		int fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0) {
			std::fprintf(stderr, "server: cannot open %s: %s\n", path,
				     std::strerror(errno));
			return false;
		}
		struct stat st;
		pmem2_config *cfg = nullptr;
		pmem2_source *src = nullptr;
		bool ok = !(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
			    st.st_size < static_cast<off_t>(REGION_SIZE) &&
			    ftruncate(fd, REGION_SIZE) != 0);
		/* the weakest store granularity: any mapping has it; the real one is asked */
		ok =
		    ok && pmem2_config_new(&cfg) == 0 &&
		    pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE) == 0 &&
		    pmem2_source_from_fd(&src, fd) == 0 && pmem2_map_new(&map_, cfg, src) == 0;
		if (!ok)
			std::fprintf(stderr, "server: cannot map %s: %s\n", path, pmem2_errormsg());
		if (src)
			pmem2_source_delete(&src);
		if (cfg)
			pmem2_config_delete(&cfg);
		close(fd);
		if (!ok)
			return false;
		if (pmem2_map_get_size(map_) < REGION_SIZE) {
			std::fprintf(stderr, "server: %s is too small\n", path);
			return false;
		}
		addr_ = static_cast<unsigned char *>(pmem2_map_get_address(map_));
		persist_ = pmem2_get_persist_fn(map_);
		granularity_ = pmem2_map_get_store_granularity(map_);
		std::memset(addr_, 0, REGION_SIZE);
		persist_(addr_, REGION_SIZE);
		return true;
	}

	bool alloc_dram()
	{
		void *p = nullptr;
		if (posix_memalign(&p, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)),
				   REGION_SIZE)) {
			std::fprintf(stderr, "server: out of memory\n");
			return false;
		}
		dram_ = p;
		addr_ = static_cast<unsigned char *>(p);
		std::memset(addr_, 0, REGION_SIZE);
		return true;
	}

	/*
	 * writes that the NIC has placed are persistent: the server declares
	 * it only on the word of the person running it (see 04-write-flush)
	 */
	bool direct_write(bool declared) const
	{
		if (!map_)
			return false;
		return declared && granularity_ != PMEM2_GRANULARITY_PAGE;
	}

	void persist() const
	{
		if (persist_)
			persist_(addr_, REGION_SIZE);
	}

	unsigned char *addr() const
	{
		return addr_;
	}

	bool is_pmem() const
	{
		return map_ != nullptr;
	}

      private:
	pmem2_map *map_ = nullptr;
	void *dram_ = nullptr;
	unsigned char *addr_ = nullptr;
	pmem2_persist_fn persist_ = nullptr;
	pmem2_granularity granularity_ = PMEM2_GRANULARITY_PAGE;
};

int run(const char *addr, const char *port, const memory &mem, bool direct_write)
{
	auto dev = rpma::utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	if (!check(dev, "rpma::utils_get_ibv_context"))
		return 1;
	auto peer = rpma::peer::create(*dev);
	if (!check(peer, "rpma::peer::create"))
		return 1;

	/* the client writes into it and flushes as deep as it is allowed to */
	rpma::usage usage = rpma::usage::write_dst | rpma::usage::flush_type_visibility;
	if (direct_write)
		usage = usage | rpma::usage::flush_type_persistent;
	auto mr = rpma::mr_local::reg(*peer, mem.addr(), REGION_SIZE, usage);
	if (!check(mr, "rpma::mr_local::reg"))
		return 1;

	auto pcfg = rpma::peer_cfg::create();
	if (!check(pcfg, "rpma::peer_cfg::create") ||
	    !check(pcfg->set_direct_write_to_pmem(direct_write), "set_direct_write_to_pmem"))
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

	/* durable whatever the client's flush could promise */
	mem.persist();
	mem.addr()[REGION_SIZE - 1] = 0;
	std::printf("server: the client wrote: \"%s\"%s\n",
		    reinterpret_cast<const char *>(mem.addr()),
		    mem.is_pmem() ? " (persisted)" : "");

	/*
	 * Leaving the scope deletes the connection, the endpoint, the region
	 * and the peer, in this order: the reverse of their creation.
	 */
	return 0;
}

} /* namespace */

int main(int argc, char *argv[])
{
	bool declared = false;
	if (argc > 1 && std::strcmp(argv[1], "--direct-write-to-pmem") == 0) {
		declared = true;
		argc--;
		argv++;
	}
	if (argc != 3 && argc != 4) {
		std::fprintf(stderr,
			     "usage: %s [--direct-write-to-pmem] <addr> <port> [<pmem-path>]\n",
			     argv[0]);
		return 2;
	}

	memory mem;
	if (argc == 4) {
		if (!mem.map_pmem(argv[3]))
			return 1;
	} else {
		if (!mem.alloc_dram())
			return 1;
		std::printf("server: no pmem path given: using DRAM, which nothing makes "
			    "persistent\n");
	}
	bool direct_write = mem.direct_write(declared);
	std::printf("server: guarantee offered to the client: %s\n",
		    direct_write    ? "persistence (direct write to pmem)"
		    : mem.is_pmem() ? "visibility (the server persists the data itself)"
				    : "visibility (DRAM)");
	/* the region is deregistered when run() returns, before mem unmaps it */
	return run(argv[1], argv[2], mem, direct_write);
}
