/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpspm.hpp -- GPSPM: the target's CPU persists what the client flushes
 *
 * On a connection that carries GPSPM (rpma_conn_cfg_set_gpspm on both
 * sides) the receive queue belongs to the library. A GPSPM flush is a small
 * request sent behind the writes it covers; the target persists the range
 * with the function its application gave for the region and answers; the
 * answer completes the flush. Requests and answers are inline sends into
 * receive buffers the library keeps posted (the wire format is in
 * doc/wire-format.md). Flow control: a client has at most as many requests
 * in flight as the target keeps receives posted (the depth its versioned
 * peer configuration announced) and as it keeps itself for the answers.
 *
 * Everything here runs where completions are polled: in the application's
 * own rpma_cq_* calls (RPMA_GPSPM_POLLED) or in the library's thread of the
 * connection (RPMA_GPSPM_THREAD).
 */

#ifndef RPMA_GPSPM_HPP
#define RPMA_GPSPM_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <pthread.h>

#include <infiniband/verbs.h>

#include <librpma.h>

#include "flush.hpp"

struct rpma_conn;
struct rpma_conn_cfg;
struct rpma_cq;
struct rpma_mr_remote;
struct rpma_peer;

namespace rpma
{

struct conn_flush;
struct flush_slot;

/* what a target answers */
enum gpspm_status : uint8_t {
	GPSPM_OK = 0,
	GPSPM_MALFORMED = 1,	/* not a request this library understands */
	GPSPM_NO_REGION = 2,	/* no region with that rkey offers GPSPM */
	GPSPM_OUT_OF_RANGE = 3, /* the range is not inside the region */
};

/* the wire format (doc/wire-format.md) */
constexpr uint16_t GPSPM_MAGIC = 0x5047; /* "GP" */
constexpr uint8_t GPSPM_VERSION = 1;
constexpr uint8_t GPSPM_REQUEST = 1;
constexpr uint8_t GPSPM_ANSWER = 2;
constexpr uint32_t GPSPM_HEADER_SIZE = 12;
constexpr uint32_t GPSPM_REQUEST_SIZE = 32;
constexpr uint32_t GPSPM_ANSWER_SIZE = 16;
/* a receive buffer: room for a later, longer message */
constexpr uint32_t GPSPM_SLOT_SIZE = 64;
/* inline bytes a queue pair needs to send GPSPM messages */
constexpr uint32_t GPSPM_INLINE_SIZE = GPSPM_REQUEST_SIZE;
/* the versioned peer configuration carries the depth in a byte */
constexpr uint32_t GPSPM_DEPTH_MAX = 255;

/* What the bytes of a receive are, as gpspm_decode() reads them. */
enum gpspm_kind : uint8_t {
	GPSPM_KIND_REQUEST,	  /* a request: every field is valid but status */
	GPSPM_KIND_ANSWER,	  /* an answer: type, slot, seq and status are valid */
	GPSPM_KIND_FOREIGN,	  /* too short for a header, or another magic or version */
	GPSPM_KIND_SHORT_REQUEST, /* a request cut short: type, slot and seq are valid */
	GPSPM_KIND_SHORT_ANSWER,  /* an answer cut short: type, slot and seq are valid */
	GPSPM_KIND_UNKNOWN_TYPE,  /* a header of another type: type, slot and seq are valid */
};

/* A GPSPM message, decoded (doc/wire-format.md). */
struct gpspm_message {
	uint8_t type;
	uint32_t slot;	/* the initiator's flush */
	uint32_t seq;	/* the request's sequence number */
	uint32_t rkey;	/* request: the region */
	uint64_t raddr; /* request: the first byte, the target's address */
	uint64_t len;	/* request: the bytes to persist */
	uint8_t status; /* answer: a gpspm_status, or a later version's */
};

/*
 * Decodes the len bytes at msg, the contents of a receive, into *m. The
 * bytes come from the network: nothing beyond len is read, and nothing
 * but len is trusted. No state, no log: the caller decides what a kind
 * that is not a request or an answer costs.
 */
gpspm_kind gpspm_decode(const uint8_t *msg, uint32_t len, gpspm_message *m);

/*
 * Whether [raddr, raddr + len) lies inside the size bytes at base, without
 * overflow: what a request must ask for to be served.
 */
inline bool gpspm_range_inside(uint64_t base, uint64_t size, uint64_t raddr, uint64_t len)
{
	return raddr >= base && raddr - base <= size && len <= size - (raddr - base);
}

struct gpspm_engine {
	rpma_peer *peer;
	rdma_cm_id *id; /* the connection's: closed when an answer cannot go out */
	ibv_qp *qp;
	rpma_gpspm_mode mode;
	uint32_t depth; /* receive buffers kept posted */

	/*
	 * depth + 1 buffers of GPSPM_SLOT_SIZE: the receive buffers, then one
	 * whose address is the wr_id of the answers this side sends.
	 */
	uint8_t *buffers;
	ibv_mr *buffers_mr;

	/* the flushes this side may have in flight: 0 until the target announced GPSPM */
	std::atomic<uint32_t> max_in_flight{ 0 };
	std::atomic<uint32_t> in_flight{ 0 };
	std::atomic<uint32_t> next_seq{ 0 };
	/* the queue pair failed: no answer will come any more */
	std::atomic<bool> broken{ false };

	/*
	 * Completions the library made up: the flushes that the failure of the
	 * connection left without an answer. Rare; a spinlock guards them and
	 * pending_count lets pollers skip the lock.
	 */
	std::atomic<uint32_t> pending_count{ 0 };
	std::atomic_flag pending_lock = ATOMIC_FLAG_INIT;
	ibv_wc *pending;
	uint32_t pending_capacity;

	/*
	 * Held by whoever polls the connection's CQ (take_begin/take_end):
	 * requests are served one at a time in the order they arrived, so
	 * their answers go back in that order too, whatever the number of
	 * threads polling.
	 */
	pthread_mutex_t take_lock;

	/* RPMA_GPSPM_THREAD */
	pthread_t thread;
	int stop_fd;
	bool thread_running;

	bool owns(uint64_t wr_id) const
	{
		const uintptr_t offset =
		    static_cast<uintptr_t>(wr_id) - reinterpret_cast<uintptr_t>(buffers);
		return offset <= static_cast<uintptr_t>(depth) * GPSPM_SLOT_SIZE &&
		       offset % GPSPM_SLOT_SIZE == 0;
	}
};

/*
 * How many requests a GPSPM connection made with cfg takes at a time (its
 * receive queue's size, at most GPSPM_DEPTH_MAX); 0 when it carries none.
 */
uint32_t gpspm_depth_of(const rpma_conn_cfg &cfg);

/*
 * RPMA_E_INVAL, logged, when cfg asks for GPSPM with queues it cannot work
 * with: a receive CQ or a shared receive queue (the library's receives
 * must complete where it polls), no receive queue at all, or, for
 * RPMA_GPSPM_THREAD, a completion channel shared with the application.
 */
int gpspm_check_cfg(const rpma_conn_cfg &cfg);

/*
 * Creates the GPSPM engine of a connection on peer: depth receive buffers,
 * room for max_flushes made-up completions.
 */
int gpspm_new(rpma_peer *peer, rpma_gpspm_mode mode, uint32_t depth, uint32_t max_flushes,
	      gpspm_engine **gpspm_ptr);
/*
 * Posts every receive buffer on the queue pair of id: before the
 * connection can carry requests.
 */
int gpspm_start(gpspm_engine *g, rdma_cm_id *id);
/* Starts the serving thread (RPMA_GPSPM_THREAD) on the connection's CQ. */
int gpspm_start_thread(gpspm_engine *g, rpma_cq *cq);
/* Stops the thread, if any, and frees everything; the queue pair must be gone. */
int gpspm_delete(gpspm_engine **gpspm_ptr);

/*
 * A completion of the library's own GPSPM work (g->owns(wc.wr_id)): a
 * request to serve, an answer to a flush of this side, the completion of
 * an answer sent. True when it makes a completion for the application,
 * stored in *out (a flush: opcode IBV_WC_RDMA_READ, as librpma reported
 * flushes).
 */
bool gpspm_handle(gpspm_engine *g, conn_flush *flush, const ibv_wc &wc, ibv_wc *out);

/* The completion of the send that carried a GPSPM flush's request. */
bool gpspm_request_sent(gpspm_engine *g, conn_flush *flush, flush_slot *slot, const ibv_wc &wc,
			ibv_wc *out);

/*
 * Brackets every poll of the connection's CQ and the handling of what it
 * polled: one poller at a time (take_lock). The persist functions run
 * inside, so they must not poll that CQ themselves.
 */
void gpspm_take_begin(gpspm_engine *g);
void gpspm_take_end(gpspm_engine *g);

/* Takes up to n made-up completions; the number taken. */
int gpspm_take_pending(gpspm_engine *g, ibv_wc *wc, int n);

/*
 * Makes a GPSPM flush of [offset, offset + len) of dst ready to post: its
 * place in the flow control (RPMA_E_AGAIN when the target's receives are
 * all taken), its slot, and its request, an inline send.
 */
int gpspm_flush_prepare(rpma_conn *conn, const rpma_mr_remote *dst, size_t offset, size_t len,
			unsigned send_flags, const void *op_context, prepared_wr *p);

} /* namespace rpma */

#endif /* RPMA_GPSPM_HPP */
