/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_post.cpp -- the data path: one-sided operations, messages and atomic
 * writes, each one work request list and one doorbell (flushes:
 * conn_post_flush.cpp; batches: conn_post_batch.cpp)
 *
 * Nothing here allocates or takes a lock: the work requests live on the
 * caller's stack (post.hpp), and the flush slots are claimed lock-free.
 */

#include <arpa/inet.h>
#include <cstring>

#include "conn.hpp"
#include "err.hpp"
#include "flush.hpp"
#include "flush_method.hpp"
#include "gpspm.hpp"
#include "mr.hpp"
#include "peer.hpp"
#include "post.hpp"
#include "conn_post.hpp"
#include "verbs/verbs.hpp"

using namespace rpma;

/* GPSPM: the receive queues of both sides belong to the library */
bool rpma::conn_takes_messages(const rpma_conn *conn)
{
	if (conn->queues.gpspm_mode == RPMA_GPSPM_DISABLED)
		return true;
	RPMA_LOG_ERROR("the receive queues of a GPSPM connection belong to the library: no "
		       "sends, receives or writes with immediate data");
	return false;
}

/*
 * The one-sided operations: rpma_read, rpma_write and rpma_write_with_imm.
 * `local` is the read's destination or the write's source.
 */
int rpma::one_sided_prepare(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
			    const rpma_mr_remote *remote, size_t remote_offset, size_t len,
			    unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
			    const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	/* both ends are given, or neither (a zero-length operation) */
	RPMA_CHECK_ARG((local == nullptr) == (remote == nullptr));
	RPMA_CHECK_ARG(opcode != IBV_WR_RDMA_WRITE_WITH_IMM || conn_takes_messages(conn));

	int nsge = local_sge(local, local_offset, len, sge);
	if (nsge < 0)
		return nsge;
	send_wr(wr, sge, nsge, opcode, send_flags, op_context);
	int ret =
	    remote_range(remote, remote_offset, len, &wr->wr.rdma.remote_addr, &wr->wr.rdma.rkey);
	if (ret)
		return ret;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr->imm_data = htonl(imm);
	return 0;
}

static int one_sided(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
		     const rpma_mr_remote *remote, size_t remote_offset, size_t len, int flags,
		     ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(conn_takes_posts(conn));

	ibv_sge sge;
	ibv_send_wr wr;
	int ret = one_sided_prepare(conn, local, local_offset, remote, remote_offset, len,
				    send_flags, opcode, imm, op_context, &wr, &sge);
	if (ret)
		return ret;
	if (conn_posts_held(conn))
		return RPMA_E_AGAIN;
	return conn->post_send(&wr);
}

/* A one-sided operation that one_sided_fits(), filled on the stack and posted */
[[gnu::always_inline]] static inline int
post_one_sided(rpma_conn *conn, const rpma_mr_local *local, size_t local_offset,
	       const rpma_mr_remote *remote, size_t remote_offset, size_t len, int flags,
	       ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	ibv_sge sge;
	ibv_send_wr wr;
	fill_one_sided(local, local_offset, remote, remote_offset, len, send_flags_of(flags),
		       opcode, imm, op_context, nullptr, &wr, &sge);
	return conn->post_send(&wr);
}

/*
 * rpma_read() and rpma_write() are their checks, then a jump: to the
 * function that fills and posts (the only one with a frame), or to the
 * checked path, which says what is wrong. Both take the public function's
 * parameters as they are, so that the jump moves none.
 */
RPMA_JUMP_TARGET static int read_post(rpma_conn *conn, rpma_mr_local *dst, size_t dst_offset,
				      const rpma_mr_remote *src, size_t src_offset, size_t len,
				      int flags, const void *op_context)
{
	return post_one_sided(conn, dst, dst_offset, src, src_offset, len, flags, IBV_WR_RDMA_READ,
			      0, op_context);
}

RPMA_JUMP_TARGET static int write_post(rpma_conn *conn, rpma_mr_remote *dst, size_t dst_offset,
				       const rpma_mr_local *src, size_t src_offset, size_t len,
				       int flags, const void *op_context)
{
	return post_one_sided(conn, src, src_offset, dst, dst_offset, len, flags, IBV_WR_RDMA_WRITE,
			      0, op_context);
}

RPMA_JUMP_TARGET static int read_checked(rpma_conn *conn, rpma_mr_local *dst, size_t dst_offset,
					 const rpma_mr_remote *src, size_t src_offset, size_t len,
					 int flags, const void *op_context)
{
	return one_sided(conn, dst, dst_offset, src, src_offset, len, flags, IBV_WR_RDMA_READ, 0,
			 op_context);
}

RPMA_JUMP_TARGET static int write_checked(rpma_conn *conn, rpma_mr_remote *dst, size_t dst_offset,
					  const rpma_mr_local *src, size_t src_offset, size_t len,
					  int flags, const void *op_context)
{
	return one_sided(conn, src, src_offset, dst, dst_offset, len, flags, IBV_WR_RDMA_WRITE, 0,
			 op_context);
}

int rpma::send_prepare(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
		       unsigned send_flags, ibv_wr_opcode opcode, uint32_t imm,
		       const void *op_context, ibv_send_wr *wr, ibv_sge *sge)
{
	RPMA_CHECK_ARG(conn_takes_messages(conn));
	int nsge = local_sge(src, offset, len, sge);
	if (nsge < 0)
		return nsge;
	send_wr(wr, sge, nsge, opcode, send_flags, op_context);
	if (opcode == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(imm);
	return 0;
}

static int send_common(rpma_conn *conn, const rpma_mr_local *src, size_t offset, size_t len,
		       int flags, ibv_wr_opcode opcode, uint32_t imm, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));

	ibv_sge sge;
	ibv_send_wr wr;
	int ret =
	    send_prepare(conn, src, offset, len, send_flags, opcode, imm, op_context, &wr, &sge);
	if (ret)
		return ret;
	return conn->post_send(&wr);
}

/*
 * What the entry of a one-sided operation checks before it jumps to its
 * posting function: a connection that takes posts now, flags, and the
 * operation that one_sided_fits().
 */
[[gnu::always_inline]] static inline bool
one_sided_entry_fits(const rpma_conn *conn, int flags, const rpma_mr_local *local,
		     size_t local_offset, const rpma_mr_remote *remote, size_t remote_offset,
		     size_t len, ibv_wr_opcode opcode)
{
	return __builtin_expect(
	    conn != nullptr && flags != 0 && conn->app_qp != nullptr && !conn_posts_held(conn) &&
		one_sided_fits(conn, local, local_offset, remote, remote_offset, len, opcode),
	    1);
}

extern "C" {

int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context)
{
	if (one_sided_entry_fits(conn, flags, dst, dst_offset, src, src_offset, len,
				 IBV_WR_RDMA_READ))
		return read_post(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
	return read_checked(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
}

int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context)
{
	if (one_sided_entry_fits(conn, flags, src, src_offset, dst, dst_offset, len,
				 IBV_WR_RDMA_WRITE))
		return write_post(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
	return write_checked(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
}

int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context)
{
	if (one_sided_entry_fits(conn, flags, src, src_offset, dst, dst_offset, len,
				 IBV_WR_RDMA_WRITE_WITH_IMM))
		return post_one_sided(conn, src, src_offset, dst, dst_offset, len, flags,
				      IBV_WR_RDMA_WRITE_WITH_IMM, imm, op_context);
	return one_sided(conn, src, src_offset, dst, dst_offset, len, flags,
			 IBV_WR_RDMA_WRITE_WITH_IMM, imm, op_context);
}

int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context)
{
	unsigned send_flags;
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(dst != nullptr);
	RPMA_CHECK_ARG(src != nullptr);
	RPMA_CHECK_ARG(send_flags_from(flags, &send_flags));
	RPMA_CHECK_ARG(dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT == 0);
	RPMA_CHECK_ARG(conn_takes_posts(conn));
	if (conn_posts_held(conn))
		return RPMA_E_AGAIN;

	uint64_t raddr;
	uint32_t rkey;
	int ret = remote_range(dst, dst_offset, RPMA_ATOMIC_WRITE_ALIGNMENT, &raddr, &rkey);
	if (ret)
		return ret;

	/*
	 * A GPSPM flush is done when its answer comes, not when its send
	 * does: behind one still unanswered, the target's CPU makes the write,
	 * once it has persisted what came before.
	 */
	gpspm_engine *g = conn->queues.gpspm;
	if (g != nullptr && gpspm_atomic_write_waits(g))
		return gpspm_atomic_write(g, conn->queues.flush, dst, dst_offset, src, send_flags,
					  op_context);

	/*
	 * The fence keeps the write behind the reads (flushes) posted before
	 * it, so that e.g. a commit flag lands only after the data it covers
	 * was flushed.
	 */
	send_flags |= IBV_SEND_FENCE;
	/*
	 * Natively only where both devices have ATOMIC WRITE: a target that
	 * cannot execute it would fail the request and the connection, where
	 * the inline write works.
	 */
	if ((conn->peer->native & verbs::NATIVE_ATOMIC_WRITE) &&
	    (remote_flush_methods(dst) & METHOD_NATIVE_ATOMIC_WRITE)) {
		ret = verbs::post_atomic_write(conn->app_qp, wr_id_of(op_context), send_flags, rkey,
					       raddr, src);
		if (ret)
			return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_wr_atomic_write");
		return 0;
	}

	/* an 8-byte aligned write placed by one inline packet is not torn */
	ibv_sge sge{};
	sge.addr = reinterpret_cast<uintptr_t>(src);
	sge.length = RPMA_ATOMIC_WRITE_ALIGNMENT;
	ibv_send_wr wr;
	send_wr(&wr, &sge, 1, IBV_WR_RDMA_WRITE, send_flags | IBV_SEND_INLINE, op_context);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return conn->post_send(&wr);
}

int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context)
{
	return send_common(conn, src, offset, len, flags, IBV_WR_SEND, 0, op_context);
}

int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context)
{
	return send_common(conn, src, offset, len, flags, IBV_WR_SEND_WITH_IMM, imm, op_context);
}

int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context)
{
	RPMA_CHECK_ARG(conn != nullptr);
	RPMA_CHECK_ARG(conn_takes_messages(conn));
	ibv_recv_wr wr;
	ibv_sge sge;
	int ret = prepare_recv(dst, offset, len, op_context, &wr, &sge);
	if (ret)
		return ret;
	ibv_recv_wr *bad_wr;
	ret = verbs::post_recv(conn->app_qp, &wr, &bad_wr);
	if (ret)
		return RPMA_PROVIDER_FAILED(post_errno(ret), "ibv_post_recv");
	return 0;
}

} /* extern "C" */
