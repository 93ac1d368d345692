/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_write_flush.cpp -- rpma.hpp end to end over a real RDMA device
 *
 * One program: the parent forks a server and a client and supervises them.
 * The server registers a region and sends its descriptor and its peer
 * configuration in the private data of the accept; the client writes a
 * pattern, flushes it to persistence, takes the completion through
 * rpma::cq, reads the range back and disconnects; the server then checks
 * the bytes it received.
 *
 * Environment: RPMA_TEST_ADDR (required; the test is skipped without it),
 * RPMA_TEST_CXX_PORT (default 7471). Exit status: 0 pass, 1 fail, 77 skip.
 */

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rpma.hpp>

namespace
{

constexpr int EXIT_SKIP = 77;
constexpr unsigned DEADLINE_S = 60;
constexpr std::chrono::milliseconds WAIT = std::chrono::seconds(20);
constexpr std::size_t REGION_SIZE = 4096;
constexpr std::size_t WRITE_OFFSET = 512;
constexpr std::size_t WRITE_LEN = 1024;

const char *role = "parent";
const char *addr;
const char *port;

[[noreturn]] void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fprintf(stderr, "cxx_rdma_write_flush: %s: ", role);
	std::vfprintf(stderr, fmt, ap);
	std::fprintf(stderr, "\n");
	va_end(ap);
	_exit(1);
}

/* the value of a result, or the end of the process with what failed */
template <class T> T take(rpma::result<T> &&r, const char *what)
{
	if (!r)
		fail("%s: %s (%s), provider errno %d", what, r.error().message().c_str(),
		     rpma::errc_name(r.code()), rpma_err_get_provider_error());
	return std::move(*r);
}

void ok(rpma::result<void> r, const char *what)
{
	if (!r)
		fail("%s: %s (%s), provider errno %d", what, r.error().message().c_str(),
		     rpma::errc_name(r.code()), rpma_err_get_provider_error());
}

unsigned char pattern(std::size_t i)
{
	return static_cast<unsigned char>((i * 7 + 13) ^ (i >> 8));
}

struct free_deleter {
	void operator()(void *p) const
	{
		std::free(p);
	}
};
using region_ptr = std::unique_ptr<unsigned char[], free_deleter>;

/* declared before the mr_local registering it, so that it outlives it */
region_ptr region()
{
	void *p = nullptr;
	if (posix_memalign(&p, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), REGION_SIZE) != 0)
		fail("posix_memalign failed");
	std::memset(p, 0, REGION_SIZE);
	return region_ptr(static_cast<unsigned char *>(p));
}

/* private data: items of one length byte and that many bytes */
struct pdata_writer {
	std::byte buf[196];
	std::size_t len = 0;

	void add(rpma::span<const std::byte> item)
	{
		if (item.size() > 255 || len + 1 + item.size() > sizeof(buf))
			fail("private data too long");
		buf[len++] = static_cast<std::byte>(item.size());
		std::memcpy(buf + len, item.data(), item.size());
		len += item.size();
	}
};

rpma::span<const std::byte> pdata_item(rpma::span<const std::byte> pdata, int index)
{
	std::size_t at = 0;
	for (int i = 0;; i++) {
		if (at >= pdata.size())
			fail("private data: no item %d", index);
		std::size_t len = static_cast<std::size_t>(pdata[at]);
		if (at + 1 + len > pdata.size())
			fail("private data: item %d is cut short", i);
		if (i == index)
			return pdata.subspan(at + 1, len);
		at += 1 + len;
	}
}

void expect_event(rpma::conn &conn, rpma_conn_event expected)
{
	rpma_conn_event event = take(conn.next_event(), "next_event");
	if (event != expected)
		fail("event %s, expected %s", rpma::utils_conn_event_2str(event),
		     rpma::utils_conn_event_2str(expected));
}

/* ----------------------------------------------------------------- server */

void server(int ready_fd)
{
	role = "server";
	ibv_context *dev =
	    take(rpma::utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL), "get_ibv_context");
	rpma::peer peer = take(rpma::peer::create(dev), "peer::create");

	region_ptr mem_owner = region();
	unsigned char *mem = mem_owner.get();
	rpma::mr_local mr =
	    take(rpma::mr_local::reg(peer, mem, REGION_SIZE,
				     rpma::usage::read_src | rpma::usage::write_dst |
					 rpma::usage::flush_type_persistent),
		 "mr_local::reg");
	rpma::peer_cfg pcfg = take(rpma::peer_cfg::create(), "peer_cfg::create");
	/* the test stands for a target whose RDMA writes are persistent */
	ok(pcfg.set_direct_write_to_pmem(true), "set_direct_write_to_pmem");

	pdata_writer pd;
	std::byte desc[64];
	pd.add(rpma::span<const std::byte>(desc, take(mr.get_descriptor(desc), "mr descriptor")));
	pd.add(rpma::span<const std::byte>(desc,
					   take(pcfg.get_descriptor(desc), "peer_cfg descriptor")));

	rpma::ep ep = take(rpma::ep::listen(peer, addr, port), "ep::listen");
	if (write(ready_fd, "L", 1) != 1)
		fail("cannot tell the client");
	close(ready_fd);

	rpma::conn_req req = take(ep.next_conn_req(), "next_conn_req");
	rpma::conn conn = take(req.connect(rpma::span<const std::byte>(pd.buf, pd.len)), "accept");
	if (req)
		fail("connect() left the request owned");
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	/* the client disconnects when it is done */
	expect_event(conn, RPMA_CONN_CLOSED);
	for (std::size_t i = 0; i < REGION_SIZE; i++) {
		bool written = i >= WRITE_OFFSET && i < WRITE_OFFSET + WRITE_LEN;
		unsigned char want = written ? pattern(i - WRITE_OFFSET) : 0;
		if (mem[i] != want)
			fail("byte %zu is %#x, expected %#x", i, mem[i], want);
	}
	std::printf("server: %zu bytes arrived intact\n", WRITE_LEN);
	/* conn, ep, mr and peer go in this order as the scope ends */
}

/* ----------------------------------------------------------------- client */

rpma_completion next_completion(const rpma::cq &cq)
{
	rpma::result<rpma_completion> cmpl = cq.wait_completion(WAIT);
	if (cmpl.error() == rpma::errc::no_completion)
		fail("no completion within %lld ms", static_cast<long long>(WAIT.count()));
	return take(std::move(cmpl), "wait_completion");
}

void client(int ready_fd)
{
	role = "client";
	char tag = 0;
	if (read(ready_fd, &tag, 1) != 1)
		fail("the server did not start listening");
	close(ready_fd);

	ibv_context *dev = take(rpma::utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE),
				"get_ibv_context");
	rpma::peer peer = take(rpma::peer::create(dev), "peer::create");

	region_ptr mem_owner = region();
	unsigned char *mem = mem_owner.get();
	for (std::size_t i = 0; i < WRITE_LEN; i++)
		mem[i] = pattern(i);
	rpma::mr_local mr =
	    take(rpma::mr_local::reg(peer, mem, REGION_SIZE,
				     rpma::usage::write_src | rpma::usage::read_dst),
		 "mr_local::reg");

	rpma::conn_req req = take(rpma::conn_req::create(peer, addr, port), "conn_req::create");
	rpma::conn conn = take(req.connect(), "connect");
	expect_event(conn, RPMA_CONN_ESTABLISHED);

	rpma::span<const std::byte> pdata = take(conn.get_private_data(), "get_private_data");
	rpma::mr_remote dst = take(rpma::mr_remote::from_descriptor(pdata_item(pdata, 0)),
				   "mr_remote::from_descriptor");
	rpma::peer_cfg remote_cfg = take(rpma::peer_cfg::from_descriptor(pdata_item(pdata, 1)),
					 "peer_cfg::from_descriptor");
	ok(conn.apply_remote_peer_cfg(remote_cfg), "apply_remote_peer_cfg");
	if (take(dst.get_size(), "remote size") != REGION_SIZE)
		fail("the remote region has the wrong size");

	rpma::cq cq = take(conn.get_cq(), "get_cq");
	static const char write_ctx = 'w', flush_ctx = 'f', read_ctx = 'r';

	ok(conn.write(dst, WRITE_OFFSET, mr, 0, WRITE_LEN, rpma::flag::completion_on_error,
		      &write_ctx),
	   "write");
	ok(conn.flush(dst, WRITE_OFFSET, WRITE_LEN, rpma::flush_type::persistent,
		      rpma::flag::completion_always, &flush_ctx),
	   "flush");
	rpma_completion cmpl = next_completion(cq);
	if (cmpl.op_status != IBV_WC_SUCCESS)
		fail("flush completed with %s", ibv_wc_status_str(cmpl.op_status));
	if (cmpl.op_context != &flush_ctx || cmpl.op != RPMA_OP_FLUSH)
		fail("unexpected completion: op %d, context %p", static_cast<int>(cmpl.op),
		     cmpl.op_context);

	/* read the range back next to what was written */
	ok(conn.read(mr, REGION_SIZE - WRITE_LEN, dst, WRITE_OFFSET, WRITE_LEN,
		     rpma::flag::completion_always, &read_ctx),
	   "read");
	cmpl = next_completion(cq);
	if (cmpl.op_status != IBV_WC_SUCCESS || cmpl.op != RPMA_OP_READ ||
	    cmpl.op_context != &read_ctx)
		fail("unexpected read completion: status %s, op %d",
		     ibv_wc_status_str(cmpl.op_status), static_cast<int>(cmpl.op));
	if (std::memcmp(mem, mem + REGION_SIZE - WRITE_LEN, WRITE_LEN) != 0)
		fail("the bytes read back differ from those written");
	if (cq.get_completion().error() != rpma::errc::no_completion)
		fail("a completion too many");

	std::printf("client: write + persistent flush completed (op %d, status %s), read back\n",
		    static_cast<int>(RPMA_OP_FLUSH), ibv_wc_status_str(IBV_WC_SUCCESS));
	ok(conn.disconnect(), "disconnect");
	expect_event(conn, RPMA_CONN_CLOSED);
}

/* ----------------------------------------------------------------- parent */

pid_t spawn(void (*body)(int), int fd, int other_fd)
{
	pid_t pid = fork();
	if (pid < 0) {
		std::perror("fork");
		std::exit(1);
	}
	if (pid == 0) {
		close(other_fd);
		alarm(DEADLINE_S);
		body(fd);
		std::fflush(stdout);
		_exit(0);
	}
	return pid;
}

int outcome(const char *name, int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	std::fprintf(stderr, "cxx_rdma_write_flush: %s killed by signal %d%s\n", name,
		     WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (deadline)" : "");
	return 1;
}

} /* namespace */

int main()
{
	addr = std::getenv("RPMA_TEST_ADDR");
	if (addr == nullptr || *addr == '\0') {
		std::printf("skip: RPMA_TEST_ADDR is not set (no RDMA device to test on)\n");
		return EXIT_SKIP;
	}
	port = std::getenv("RPMA_TEST_CXX_PORT");
	if (port == nullptr || *port == '\0')
		port = "7471";

	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	int fds[2];
	if (pipe(fds) != 0) {
		std::perror("pipe");
		return 1;
	}
	pid_t server_pid = spawn(server, fds[1], fds[0]);
	pid_t client_pid = spawn(client, fds[0], fds[1]);
	close(fds[0]);
	close(fds[1]);

	int server_status = 0, client_status = 0;
	if (waitpid(client_pid, &client_status, 0) != client_pid)
		return 1;
	/* a client that failed leaves a server waiting: do not wait for its deadline */
	if (!WIFEXITED(client_status) || WEXITSTATUS(client_status) != 0) {
		usleep(200 * 1000);
		kill(server_pid, SIGTERM);
	}
	if (waitpid(server_pid, &server_status, 0) != server_pid)
		return 1;

	int c = outcome("client", client_status);
	int s = outcome("server", server_status);
	if (c != 0 || s != 0)
		return c == EXIT_SKIP && s == EXIT_SKIP ? EXIT_SKIP : 1;
	std::printf("cxx_rdma_write_flush: pass\n");
	return 0;
}
