/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/conn.hpp -- connections and what makes them: rpma::conn_cfg, the
 * elements of a batch (rpma::batch) and rpma::batch_result, rpma::conn,
 * rpma::write_template, rpma::conn_req and rpma::ep
 */

#ifndef RPMA_HPP_CONN
#define RPMA_HPP_CONN 1

#include <librpma.h>

#include "constants.hpp"
#include "cq.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "span.hpp"
#include "srq.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

namespace rpma
{

/* ---------------------------------------------------------------- conn_cfg */

class conn_cfg : public detail::unique_handle<rpma_conn_cfg, &rpma_conn_cfg_delete>
{
public:
	using unique_handle::unique_handle;

	static result<conn_cfg> create() noexcept
	{
		return detail::fetch<conn_cfg>(&rpma_conn_cfg_new);
	}

	/* in whole milliseconds; a negative one is errc::inval */
	result<void> set_timeout(std::chrono::milliseconds timeout) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_cfg_set_timeout(ptr_, detail::clamp_ms(timeout)));
	}
	result<std::chrono::milliseconds> get_timeout() const noexcept
	{
		return detail::fetch<std::chrono::milliseconds>(&rpma_conn_cfg_get_timeout, ptr_);
	}

	result<void> set_cq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_cq_size(ptr_, size));
	}
	result<std::uint32_t> get_cq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_cq_size, ptr_);
	}
	result<void> set_rcq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_rcq_size(ptr_, size));
	}
	result<std::uint32_t> get_rcq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_rcq_size, ptr_);
	}
	result<void> set_sq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_sq_size(ptr_, size));
	}
	result<std::uint32_t> get_sq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_sq_size, ptr_);
	}
	result<void> set_rq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_rq_size(ptr_, size));
	}
	result<std::uint32_t> get_rq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_rq_size, ptr_);
	}

	result<void> set_compl_channel(bool shared) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_compl_channel(ptr_, shared));
	}
	result<bool> get_compl_channel() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_compl_channel, ptr_);
	}

	/*
	 * The configuration keeps the shared RQ (not owned) for the
	 * connections made with it: s must outlive them.
	 */
	result<void> set_srq(const srq &s) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_srq(ptr_, s.get()));
	}
	result<void> set_srq(const srq &&) = delete;
	result<void> clear_srq() noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_srq(ptr_, nullptr));
	}
	/* the shared RQ set (not owned), nullptr when none */
	result<rpma_srq *> get_srq() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_srq, ptr_);
	}

	/* extension: whether connections carry GPSPM flushes, and who serves them */
	result<void> set_gpspm(gpspm_mode mode) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_cfg_set_gpspm(ptr_, static_cast<rpma_gpspm_mode>(mode)));
	}
	result<gpspm_mode> get_gpspm() const noexcept
	{
		return detail::fetch<gpspm_mode>(&rpma_conn_cfg_get_gpspm, ptr_);
	}
	/*
	 * extension: how long RPMA_GPSPM_THREAD's thread polls after a request
	 * before it sleeps; at most RPMA_GPSPM_SPIN_US_MAX microseconds
	 */
	result<void> set_gpspm_spin(std::chrono::microseconds spin) noexcept
	{
		if (spin.count() < 0 || spin.count() > RPMA_GPSPM_SPIN_US_MAX)
			return rpma::error(RPMA_E_INVAL);
		return result<void>::from_code(
		    rpma_conn_cfg_set_gpspm_spin(ptr_, static_cast<std::uint32_t>(spin.count())));
	}
	result<std::chrono::microseconds> get_gpspm_spin() const noexcept
	{
		return detail::fetch<std::chrono::microseconds>(&rpma_conn_cfg_get_gpspm_spin,
								ptr_);
	}
};

inline result<std::size_t> peer_cfg::get_versioned_descriptor(const conn_cfg &cfg,
							      span<std::byte> out) const noexcept
{
	const rpma_conn_cfg *c = cfg.get();
	return detail::write_descriptor(ptr_, out, &rpma_peer_cfg_get_versioned_descriptor_size,
					[c](const rpma_peer_cfg *pcfg, void *desc) {
						return rpma_peer_cfg_get_versioned_descriptor(
						    pcfg, c, desc);
					});
}

/* ------------------------------------------------------------------- batch */

namespace detail
{

/* an element of a batch (rpma::batch) */
inline rpma_batch_op batch_element(rpma_op kind, flag flags, const void *op_context,
				   const rpma_mr_local *local, std::size_t local_offset,
				   const rpma_mr_remote *remote, std::size_t remote_offset,
				   std::size_t len) noexcept
{
	rpma_batch_op op{};
	op.op = kind;
	op.flags = static_cast<int>(flags);
	op.op_context = op_context;
	op.local = local;
	op.local_offset = local_offset;
	op.remote = remote;
	op.remote_offset = remote_offset;
	op.len = len;
	return op;
}

} /* namespace detail */

/*
 * Extension: the elements of conn::post_batch(), each made from the
 * arguments that the conn call posting the same operation alone takes:
 * rpma::batch::write(dst, dst_offset, src, src_offset, len, flags) is what
 * conn.write(dst, dst_offset, src, src_offset, len, flags) would post. An
 * element points at its regions: the local one must outlive the operation,
 * the remote one the post, so that neither may be a temporary.
 */
namespace batch
{

inline rpma_batch_op read(mr_local &dst, std::size_t dst_offset, const mr_remote &src,
			  std::size_t src_offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
{
	return detail::batch_element(RPMA_OP_READ, flags, op_context, dst.get(), dst_offset,
				     src.get(), src_offset, len);
}
rpma_batch_op read(const mr_local &&, std::size_t, const mr_remote &, std::size_t, std::size_t,
		   flag, const void * = nullptr) = delete;
rpma_batch_op read(mr_local &, std::size_t, const mr_remote &&, std::size_t, std::size_t, flag,
		   const void * = nullptr) = delete;

inline rpma_batch_op write(const mr_remote &dst, std::size_t dst_offset, const mr_local &src,
			   std::size_t src_offset, std::size_t len, flag flags,
			   const void *op_context = nullptr) noexcept
{
	return detail::batch_element(RPMA_OP_WRITE, flags, op_context, src.get(), src_offset,
				     dst.get(), dst_offset, len);
}
rpma_batch_op write(const mr_remote &, std::size_t, const mr_local &&, std::size_t, std::size_t,
		    flag, const void * = nullptr) = delete;
rpma_batch_op write(const mr_remote &&, std::size_t, const mr_local &, std::size_t, std::size_t,
		    flag, const void * = nullptr) = delete;
rpma_batch_op write(const mr_remote &&, std::size_t, const mr_local &&, std::size_t, std::size_t,
		    flag, const void * = nullptr) = delete;

inline rpma_batch_op write_with_imm(const mr_remote &dst, std::size_t dst_offset,
				    const mr_local &src, std::size_t src_offset, std::size_t len,
				    flag flags, std::uint32_t imm,
				    const void *op_context = nullptr) noexcept
{
	rpma_batch_op op = write(dst, dst_offset, src, src_offset, len, flags, op_context);
	op.imm = imm;
	op.with_imm = true;
	return op;
}
rpma_batch_op write_with_imm(const mr_remote &, std::size_t, const mr_local &&, std::size_t,
			     std::size_t, flag, std::uint32_t, const void * = nullptr) = delete;
rpma_batch_op write_with_imm(const mr_remote &&, std::size_t, const mr_local &, std::size_t,
			     std::size_t, flag, std::uint32_t, const void * = nullptr) = delete;
rpma_batch_op write_with_imm(const mr_remote &&, std::size_t, const mr_local &&, std::size_t,
			     std::size_t, flag, std::uint32_t, const void * = nullptr) = delete;

inline rpma_batch_op flush(const mr_remote &dst, std::size_t dst_offset, std::size_t len,
			   flush_type type, flag flags, const void *op_context = nullptr) noexcept
{
	rpma_batch_op op = detail::batch_element(RPMA_OP_FLUSH, flags, op_context, nullptr, 0,
						 dst.get(), dst_offset, len);
	op.flush_type = static_cast<rpma_flush_type>(type);
	return op;
}
rpma_batch_op flush(const mr_remote &&, std::size_t, std::size_t, flush_type, flag,
		    const void * = nullptr) = delete;

inline rpma_batch_op send(const mr_local &src, std::size_t offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
{
	return detail::batch_element(RPMA_OP_SEND, flags, op_context, src.get(), offset, nullptr, 0,
				     len);
}
rpma_batch_op send(const mr_local &&, std::size_t, std::size_t, flag,
		   const void * = nullptr) = delete;

inline rpma_batch_op send_with_imm(const mr_local &src, std::size_t offset, std::size_t len,
				   flag flags, std::uint32_t imm,
				   const void *op_context = nullptr) noexcept
{
	rpma_batch_op op = send(src, offset, len, flags, op_context);
	op.imm = imm;
	op.with_imm = true;
	return op;
}
rpma_batch_op send_with_imm(const mr_local &&, std::size_t, std::size_t, flag, std::uint32_t,
			    const void * = nullptr) = delete;

} /* namespace batch */

/*
 * Extension: what conn::post_batch() did: a result<void>, and the index of
 * the element that a failure concerns, as rpma_post_batch() stores it in
 * *failed: the element refused (nothing was posted), or with
 * errc::provider the first element not posted (those before it were). -1
 * on success, and when the call was refused as a whole.
 */
class [[nodiscard]] batch_result : public result<void>
{
public:
	constexpr batch_result() noexcept = default;
	constexpr batch_result(result<void> outcome, int failed) noexcept
	    : result<void>(outcome), failed_(failed)
	{}

	constexpr int failed() const noexcept { return failed_; }

private:
	int failed_ = -1;
};

/* -------------------------------------------------------------------- conn */

/* which CQ a shared completion channel woke up for (conn::wait) */
struct conn_wait_result {
	cq queue;
	bool is_rcq;
};

namespace detail
{
/*
 * How the owner of a connection deletes it: a connection still up is
 * disconnected first, without waiting for RPMA_CONN_CLOSED, so that an
 * owner that goes out of scope early (a failed step, an early return)
 * tells the peer the connection is closed, rather than leaving it to find
 * out when its next operation times out. A connection already down is
 * only deleted: a second disconnect would fail and be logged.
 */
inline int conn_disconnect_delete(rpma_conn **conn_ptr) noexcept
{
	bool up = false;
	if (conn_ptr != nullptr && *conn_ptr != nullptr && rpma_conn_is_up(*conn_ptr, &up) == 0 &&
	    up)
		(void)rpma_conn_disconnect(*conn_ptr);
	return rpma_conn_delete(conn_ptr);
}
} /* namespace detail */

/*
 * A connection. The owner disconnects it if it is still up, then deletes
 * it; for a close the peer sees as orderly, with the events of this side
 * read, call disconnect() and wait for RPMA_CONN_CLOSED first. Its peer
 * must outlive it, and a local region must outlive every operation in
 * flight on it; a remote region is read by the call only.
 */
class conn : public detail::unique_handle<rpma_conn, &detail::conn_disconnect_delete>
{
public:
	using unique_handle::unique_handle;

	result<int> get_event_fd() const noexcept
	{
		return detail::fetch(&rpma_conn_get_event_fd, ptr_);
	}
	result<rpma_conn_event> next_event() noexcept
	{
		return detail::fetch(&rpma_conn_next_event, ptr_);
	}
	/*
	 * Extension: whether the connection is still up; false for good once
	 * the library has seen it closed or lost. Never blocks; the events it
	 * takes stay for next_event(). For programs that only poll their CQs.
	 */
	result<bool> is_up() noexcept { return detail::fetch(&rpma_conn_is_up, ptr_); }

	/*
	 * Extension: waits until a GPSPM flush can be posted without
	 * errc::again; the other completions it finds on the CQ stay for the
	 * next take. errc::no_completion once timeout has passed (a negative
	 * one is 0); the default, no_timeout, waits without limit.
	 */
	result<void> wait_flush_room(std::chrono::milliseconds timeout = no_timeout) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_wait_flush_room(ptr_, detail::wait_ms(timeout)));
	}

	/* the peer's private data (untrusted), valid while the connection lives */
	result<span<const std::byte>> get_private_data() const &noexcept
	{
		return detail::private_data(&rpma_conn_get_private_data, ptr_);
	}
	result<span<const std::byte>> get_private_data() const && = delete;

	/* the configuration is read by the call only */
	result<void> apply_remote_peer_cfg(const peer_cfg &pcfg) noexcept
	{
		return result<void>::from_code(rpma_conn_apply_remote_peer_cfg(ptr_, pcfg.get()));
	}

	/*
	 * Extension: the method flush() uses for dst and type; errc::nosupp
	 * when none can carry it. The region is read by the call only.
	 */
	result<flush_method> get_flush_method(const mr_remote &dst, flush_type type) const noexcept
	{
		return detail::fetch<flush_method>(&rpma_conn_get_flush_method, ptr_, dst.get(),
						   static_cast<rpma_flush_type>(type));
	}

	result<std::uint32_t> get_qp_num() const noexcept
	{
		return detail::fetch(&rpma_conn_get_qp_num, ptr_);
	}

	result<cq> get_cq() const &noexcept { return detail::fetch<cq>(&rpma_conn_get_cq, ptr_); }
	result<cq> get_cq() const && = delete;
	/* the receive CQ (an empty view when the connection has none) */
	result<cq> get_rcq() const &noexcept { return detail::fetch<cq>(&rpma_conn_get_rcq, ptr_); }
	result<cq> get_rcq() const && = delete;

	result<int> get_compl_fd() const noexcept
	{
		return detail::fetch(&rpma_conn_get_compl_fd, ptr_);
	}
	/* waits on the shared completion channel: which CQ has completions */
	result<conn_wait_result> wait() &noexcept
	{
		rpma_cq *c = nullptr;
		bool is_rcq = false;
		if (int ret = rpma_conn_wait(ptr_, 0, &c, &is_rcq); ret != 0)
			return rpma::error(ret);
		return conn_wait_result{ cq(c), is_rcq };
	}
	result<conn_wait_result> wait() && = delete;

	result<void> disconnect() noexcept
	{
		return result<void>::from_code(rpma_conn_disconnect(ptr_));
	}

	/* data path: one work request each, as the C calls */

	result<void> read(mr_local &dst, std::size_t dst_offset, const mr_remote &src,
			  std::size_t src_offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_read(ptr_, dst.get(), dst_offset, src.get(),
							 src_offset, len, static_cast<int>(flags),
							 op_context));
	}
	result<void> read(const mr_local &&, std::size_t, const mr_remote &, std::size_t,
			  std::size_t, flag, const void * = nullptr) = delete;

	result<void> write(const mr_remote &dst, std::size_t dst_offset, const mr_local &src,
			   std::size_t src_offset, std::size_t len, flag flags,
			   const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_write(ptr_, dst.get(), dst_offset, src.get(),
							  src_offset, len, static_cast<int>(flags),
							  op_context));
	}
	result<void> write(const mr_remote &, std::size_t, const mr_local &&, std::size_t,
			   std::size_t, flag, const void * = nullptr) = delete;

	result<void> write_with_imm(const mr_remote &dst, std::size_t dst_offset,
				    const mr_local &src, std::size_t src_offset, std::size_t len,
				    flag flags, std::uint32_t imm,
				    const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_write_with_imm(ptr_, dst.get(), dst_offset, src.get(), src_offset, len,
					static_cast<int>(flags), imm, op_context));
	}
	result<void> write_with_imm(const mr_remote &, std::size_t, const mr_local &&, std::size_t,
				    std::size_t, flag, std::uint32_t,
				    const void * = nullptr) = delete;

	/* 8 bytes at an RPMA_ATOMIC_WRITE_ALIGNMENT-aligned offset, copied by the call */
	result<void> atomic_write(const mr_remote &dst, std::size_t dst_offset,
				  const char (&src)[RPMA_ATOMIC_WRITE_ALIGNMENT], flag flags,
				  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_atomic_write(
		    ptr_, dst.get(), dst_offset, src, static_cast<int>(flags), op_context));
	}
	/* the 8 bytes of value as they lie in this host's memory */
	result<void> atomic_write(const mr_remote &dst, std::size_t dst_offset, std::uint64_t value,
				  flag flags, const void *op_context = nullptr) noexcept
	{
		char src[RPMA_ATOMIC_WRITE_ALIGNMENT];
		static_assert(sizeof(src) == sizeof(value), "atomic writes are 8 bytes");
		std::memcpy(src, &value, sizeof(src));
		return atomic_write(dst, dst_offset, src, flags, op_context);
	}

	result<void> flush(const mr_remote &dst, std::size_t dst_offset, std::size_t len,
			   flush_type type, flag flags, const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_flush(ptr_, dst.get(), dst_offset, len,
							  static_cast<rpma_flush_type>(type),
							  static_cast<int>(flags), op_context));
	}

	result<void> send(const mr_local &src, std::size_t offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_send(ptr_, src.get(), offset, len, static_cast<int>(flags), op_context));
	}
	result<void> send(const mr_local &&, std::size_t, std::size_t, flag,
			  const void * = nullptr) = delete;

	result<void> send_with_imm(const mr_local &src, std::size_t offset, std::size_t len,
				   flag flags, std::uint32_t imm,
				   const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_send_with_imm(
		    ptr_, src.get(), offset, len, static_cast<int>(flags), imm, op_context));
	}
	result<void> send_with_imm(const mr_local &&, std::size_t, std::size_t, flag, std::uint32_t,
				   const void * = nullptr) = delete;

	result<void> recv(mr_local &dst, std::size_t offset, std::size_t len,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_recv(ptr_, dst.get(), offset, len, op_context));
	}
	result<void> recv(const mr_local &&, std::size_t, std::size_t,
			  const void * = nullptr) = delete;

	/*
	 * Extension: 1 to RPMA_BATCH_MAX operations (made by rpma::batch) as
	 * one chain, with one doorbell; every element is checked before
	 * anything is posted. The elements are read by the call only.
	 */
	batch_result post_batch(span<const rpma_batch_op> ops) noexcept
	{
		int failed = -1;
		int ret =
		    rpma_post_batch(ptr_, ops.data(), detail::clamp_count(ops.size()), &failed);
		return batch_result(result<void>::from_code(ret), failed);
	}
	/* conn.post_batch({ rpma::batch::write(...), rpma::batch::flush(...) }) */
	batch_result post_batch(std::initializer_list<rpma_batch_op> ops) noexcept
	{
		return post_batch(span<const rpma_batch_op>(ops.begin(), ops.size()));
	}
};

/* ---------------------------------------------------------- write_template */

/*
 * Extension: writes from one local region to one remote region and the
 * flush that follows them, checked once (rpma_write_template_new); each
 * post is one chain, one doorbell. Threads may post through one at once;
 * one per thread costs least. It must go before the connection and the
 * regions.
 */
class write_template
    : public detail::unique_handle<rpma_write_template, &rpma_write_template_delete>
{
public:
	using unique_handle::unique_handle;

	static result<write_template> create(conn &c, const mr_remote &dst, const mr_local &src,
					     flush_type type) noexcept
	{
		return detail::fetch<write_template>(&rpma_write_template_new, c.get(), dst.get(),
						     src.get(), static_cast<rpma_flush_type>(type));
	}
	/* the template refers to the regions: they must outlive it */
	static result<write_template> create(conn &, const mr_remote &&, const mr_local &,
					     flush_type) = delete;
	static result<write_template> create(conn &, const mr_remote &, const mr_local &&,
					     flush_type) = delete;

	/* writes, then one flush of the range that covers them all */
	result<void> post(span<const rpma_write_range> writes, flag flags,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_write_template_post(
		    ptr_, writes.data(), detail::clamp_count(writes.size()),
		    static_cast<int>(flags), op_context));
	}
	result<void> post(std::initializer_list<rpma_write_range> writes, flag flags,
			  const void *op_context = nullptr) noexcept
	{
		return post(span<const rpma_write_range>(writes.begin(), writes.size()), flags,
			    op_context);
	}
};

/* ---------------------------------------------------------------- conn_req */

/*
 * A connection request: outgoing (create) or incoming (ep::next_conn_req).
 * Deleting an incoming one rejects it. Its peer must outlive it and the
 * connection made from it.
 */
class conn_req : public detail::unique_handle<rpma_conn_req, &rpma_conn_req_delete>
{
public:
	using unique_handle::unique_handle;

	/* the configuration is read by the call only */
	static result<conn_req> create(peer &p, const char *addr, const char *port) noexcept
	{
		return detail::fetch<conn_req>(&rpma_conn_req_new, p.get(), addr, port, nullptr);
	}
	static result<conn_req> create(peer &p, const char *addr, const char *port,
				       const conn_cfg &cfg) noexcept
	{
		return detail::fetch<conn_req>(&rpma_conn_req_new, p.get(), addr, port, cfg.get());
	}
	static result<conn_req> create(const peer &&, const char *, const char *) = delete;
	static result<conn_req> create(const peer &&, const char *, const char *,
				       const conn_cfg &) = delete;

	/*
	 * Connects (outgoing) or accepts (incoming). The request is consumed
	 * whatever the outcome, as rpma_conn_req_connect does: *this is
	 * empty afterwards. Private data (copied by the call) longer than
	 * 255 bytes is errc::inval, and then nothing is consumed.
	 */
	result<conn> connect() noexcept
	{
		return detail::fetch<conn>(&rpma_conn_req_connect, &ptr_, nullptr);
	}
	result<conn> connect(span<const std::byte> private_data) noexcept
	{
		if (private_data.size() > UINT8_MAX)
			return errc::inval;
		if (private_data.empty())
			return connect();
		/* the library only reads the bytes; the 1.x struct has no const */
		rpma_conn_private_data pdata{ const_cast<void *>(
						  static_cast<const void *>(private_data.data())),
					      static_cast<std::uint8_t>(private_data.size()) };
		return detail::fetch<conn>(&rpma_conn_req_connect, &ptr_, &pdata);
	}

	/*
	 * Extension: refuses an incoming request with private data carried
	 * by the reject (copied by the call), without ever connecting its
	 * queue pair. The request is consumed as by connect(): *this is empty
	 * afterwards, unless the arguments were refused (an outgoing request,
	 * or more than 255 bytes: errc::inval).
	 */
	result<void> reject() noexcept
	{
		return result<void>::from_code(rpma_conn_req_reject(&ptr_, nullptr));
	}
	result<void> reject(span<const std::byte> private_data) noexcept
	{
		if (private_data.size() > UINT8_MAX)
			return errc::inval;
		if (private_data.empty())
			return reject();
		rpma_conn_private_data pdata{ const_cast<void *>(
						  static_cast<const void *>(private_data.data())),
					      static_cast<std::uint8_t>(private_data.size()) };
		return result<void>::from_code(rpma_conn_req_reject(&ptr_, &pdata));
	}

	/*
	 * Extension: lets the connection made from this request reach mr by
	 * GPSPM; from the first region offered, it reaches no other that way.
	 */
	result<void> gpspm_offer(const mr_local &mr) noexcept
	{
		return result<void>::from_code(rpma_conn_req_gpspm_offer(ptr_, mr.get()));
	}

	/* a receive posted before the connection exists: dst until it completes */
	result<void> recv(mr_local &dst, std::size_t offset, std::size_t len,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_req_recv(ptr_, dst.get(), offset, len, op_context));
	}
	result<void> recv(const mr_local &&, std::size_t, std::size_t,
			  const void * = nullptr) = delete;

	/* the requester's private data (untrusted), valid while the request lives */
	result<span<const std::byte>> get_private_data() const &noexcept
	{
		return detail::private_data(&rpma_conn_req_get_private_data, ptr_);
	}
	result<span<const std::byte>> get_private_data() const && = delete;

	/*
	 * Extension: the peer's address, a copy: the requester's on an
	 * incoming request (to connect or delete it by where it comes from),
	 * the one connected to on an outgoing one.
	 */
	result<sockaddr_storage> get_peer_addr() const noexcept
	{
		return detail::fetch(&rpma_conn_req_get_peer_addr, ptr_);
	}

	/*
	 * Extension: this side's own address, a copy: the one an incoming
	 * request came in at, the source chosen for an outgoing one.
	 */
	result<sockaddr_storage> get_local_addr() const noexcept
	{
		return detail::fetch(&rpma_conn_req_get_local_addr, ptr_);
	}

	/*
	 * Extension: the number of the request's own queue pair, for a client
	 * to bind into the proof it connects with; an incoming request has
	 * one only once recv() or gpspm_offer() made its queues (errc::inval
	 * before: asking makes none).
	 */
	result<std::uint32_t> get_qp_num() const noexcept
	{
		return detail::fetch(&rpma_conn_req_get_qp_num, ptr_);
	}

	/*
	 * Extension: the client's queue pair number as its incoming request
	 * announced it, the one the server's queue pair is joined to, for the
	 * server to check a proof against before it consents; errc::nosupp
	 * where the request carries none (iWARP), errc::inval on an outgoing
	 * request.
	 */
	result<std::uint32_t> get_peer_qp_num() const noexcept
	{
		return detail::fetch(&rpma_conn_req_get_peer_qp_num, ptr_);
	}
};

/* ---------------------------------------------------------------------- ep */

/* A listening endpoint (server side); deleting it is rpma_ep_shutdown. */
class ep : public detail::unique_handle<rpma_ep, &rpma_ep_shutdown>
{
public:
	using unique_handle::unique_handle;

	/* the peer must outlive the endpoint and the requests it gives */
	static result<ep> listen(peer &p, const char *addr, const char *port) noexcept
	{
		return detail::fetch<ep>(&rpma_ep_listen, p.get(), addr, port);
	}
	static result<ep> listen(const peer &&, const char *, const char *) = delete;

	result<int> get_fd() const noexcept { return detail::fetch(&rpma_ep_get_fd, ptr_); }

	/* the configuration is read by the call only */
	result<conn_req> next_conn_req() noexcept
	{
		return detail::fetch<conn_req>(&rpma_ep_next_conn_req, ptr_, nullptr);
	}
	result<conn_req> next_conn_req(const conn_cfg &cfg) noexcept
	{
		return detail::fetch<conn_req>(&rpma_ep_next_conn_req, ptr_, cfg.get());
	}
};

} /* namespace rpma */

#endif /* RPMA_HPP_CONN */
