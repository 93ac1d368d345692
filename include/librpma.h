/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librpma.h -- remote persistent memory access over RDMA (rpma-ng)
 *
 * Source and binary compatible with librpma 1.x: every declaration of the
 * 1.x interface keeps its name, its prototype and its constant values.
 * Declarations marked "extension" are rpma-ng additions; they are exported
 * under a separate symbol version node and can be detected with
 * RPMA_NG_EXTENSIONS.
 *
 * Each function is described in its own man page, and the whole library in
 * librpma(7).
 */

#ifndef LIBRPMA_H
#define LIBRPMA_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Defined when the rpma-ng extensions below are available. */
#define RPMA_NG_EXTENSIONS 1

#define RPMA_W_WAIT_FOR_COMPLETION (1)

/* error codes */
#define RPMA_E_UNKNOWN	       (-100000) /* unknown error */
#define RPMA_E_NOSUPP	       (-100001) /* not supported */
#define RPMA_E_PROVIDER	       (-100002) /* provider (rdma-core) error */
#define RPMA_E_NOMEM	       (-100003) /* out of memory */
#define RPMA_E_INVAL	       (-100004) /* invalid argument */
#define RPMA_E_NO_COMPLETION   (-100005) /* no completion available */
#define RPMA_E_NO_EVENT	       (-100006) /* no event available */
#define RPMA_E_AGAIN	       (-100007) /* temporary error, try again */
#define RPMA_E_SHARED_CHANNEL  (-100008) /* completion channel is shared */
#define RPMA_E_NOT_SHARED_CHNL (-100009) /* completion channel isn't shared */

#define RPMA_DEFAULT_TIMEOUT_MS 1000

/* utils */

enum rpma_util_ibv_context_type {
	RPMA_UTIL_IBV_CONTEXT_LOCAL,  /* the device an address can be bound to */
	RPMA_UTIL_IBV_CONTEXT_REMOTE, /* the device that reaches an address */
};

/*
 * Finds the RDMA device of the address addr: LOCAL for an address of this
 * host (to listen on), REMOTE for a peer's (resolved). The context stored in
 * *ibv_ctx_ptr belongs to librdmacm: never close it. RPMA_E_INVAL for a NULL
 * argument or a bad type, RPMA_E_PROVIDER when no device goes with addr.
 */
int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type,
			       struct ibv_context **ibv_ctx_ptr);

/*
 * Sets *is_odp_capable to 1 when the device can register memory with
 * On-Demand Paging for RDMA reads and writes, 0 otherwise.
 * RPMA_E_INVAL for a NULL argument, RPMA_E_PROVIDER when the query fails.
 */
int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable);

/* peer configuration: what the target side guarantees about persistence */

struct rpma_peer_cfg;

/*
 * Creates a peer configuration (direct write to PMem: false); the caller
 * deletes it with rpma_peer_cfg_delete(). RPMA_E_INVAL, RPMA_E_NOMEM.
 */
int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);

/*
 * Deletes *pcfg_ptr and sets it to NULL; a NULL *pcfg_ptr is fine.
 * RPMA_E_INVAL when pcfg_ptr is NULL.
 */
int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);

/*
 * Declares whether RDMA writes to this target land in the persistent domain
 * (DDIO off, eADR, ...), which a persistent rpma_flush() needs. RPMA_E_INVAL.
 */
int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported);

/*
 * Stores in *supported what rpma_peer_cfg_set_direct_write_to_pmem() set.
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported);

/*
 * Writes the configuration's 1-byte descriptor (librpma 1.x's format) to
 * desc, which has rpma_peer_cfg_get_descriptor_size() bytes, for the peer.
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);

/*
 * Stores in *desc_size the size of the configuration's descriptor (1).
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size);

/*
 * Creates a peer configuration from a descriptor the peer sent; desc_size
 * bytes are read at most and later bytes ignored. The caller deletes the
 * result. RPMA_E_INVAL (NULL, or fewer than 1 byte), RPMA_E_NOMEM.
 */
int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
				  struct rpma_peer_cfg **pcfg_ptr);

/* peer: one RDMA device and its protection domain */

struct rpma_peer;

/*
 * Creates a peer: the device ibv_ctx with a protection domain of its own,
 * and what the device can do. The caller deletes it with rpma_peer_delete()
 * after everything made from it. RPMA_E_INVAL, RPMA_E_NOMEM, RPMA_E_PROVIDER.
 */
int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);

/*
 * Deletes *peer_ptr and sets it to NULL, even when RPMA_E_PROVIDER says that
 * rdma-core kept the protection domain (regions, connections or SRQs of the
 * peer still exist: delete them first). RPMA_E_INVAL when peer_ptr is NULL.
 */
int rpma_peer_delete(struct rpma_peer **peer_ptr);

/* memory regions */

struct rpma_mr_local;
struct rpma_mr_remote;

#define RPMA_MR_USAGE_READ_SRC		    (1 << 0)
#define RPMA_MR_USAGE_READ_DST		    (1 << 1)
#define RPMA_MR_USAGE_WRITE_SRC		    (1 << 2)
#define RPMA_MR_USAGE_WRITE_DST		    (1 << 3)
#define RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY (1 << 4)
#define RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT (1 << 5)
#define RPMA_MR_USAGE_SEND		    (1 << 6)
#define RPMA_MR_USAGE_RECV		    (1 << 7)

/*
 * Registers size bytes at ptr with the peer for the RPMA_MR_USAGE_* bits of
 * usage; the memory stays the caller's and must outlive the region, which
 * the caller deletes with rpma_mr_dereg(). RPMA_E_INVAL (NULL, size 0, no
 * or unknown usage), RPMA_E_NOMEM, RPMA_E_PROVIDER (e.g. the memlock limit).
 */
int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr);

/*
 * Deregisters *mr_ptr, deletes it and sets it to NULL, even when
 * RPMA_E_PROVIDER says that the device kept the registration. The memory is
 * not freed. RPMA_E_INVAL when mr_ptr is NULL.
 */
int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);

/*
 * Writes the region's 21-byte descriptor (address, length, rkey, usage;
 * librpma 1.x's format) to desc, for the peer to use in
 * rpma_mr_remote_from_descriptor(). RPMA_E_INVAL for a NULL argument.
 */
int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);

/*
 * Creates a remote region from a descriptor the peer sent: at least 21
 * bytes, later bytes ignored, nothing in it trusted beyond its size. The
 * caller deletes it with rpma_mr_remote_delete(). RPMA_E_INVAL (NULL, too
 * short, no usage), RPMA_E_NOMEM.
 */
int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
				   struct rpma_mr_remote **mr_ptr);

/*
 * Stores in *desc_size the size of the region's descriptor (21).
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size);

/*
 * Stores in *ptr the start of the registered memory. RPMA_E_INVAL.
 */
int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);

/*
 * Stores in *size the length of the registered memory. RPMA_E_INVAL.
 */
int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);

/*
 * Stores in *size the length of the remote region. RPMA_E_INVAL.
 */
int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);

/*
 * Stores in *flush_type the RPMA_MR_USAGE_FLUSH_TYPE_* bits the remote
 * region was registered with: the flush types rpma_flush() may use on it.
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type);

/*
 * Deletes *mr_ptr and sets it to NULL; a NULL *mr_ptr is fine.
 * RPMA_E_INVAL when mr_ptr is NULL.
 */
int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);

/*
 * Advises the device about len bytes at offset in mr (ibv_advise_mr(), e.g.
 * prefetching the pages of an On-Demand Paging region). RPMA_E_INVAL (NULL,
 * len 0, a range outside mr, bad advice or flags), RPMA_E_NOSUPP (the device
 * cannot), RPMA_E_PROVIDER.
 */
int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags);

/* connection configuration */

struct rpma_conn_cfg;
struct rpma_srq;

/*
 * Creates a connection configuration with the defaults (timeout 1000 ms,
 * CQ, SQ and RQ of 10, no receive CQ, no shared channel, no SRQ); the caller
 * deletes it with rpma_conn_cfg_delete(). RPMA_E_INVAL, RPMA_E_NOMEM.
 */
int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);

/*
 * Deletes *cfg_ptr and sets it to NULL; a NULL *cfg_ptr is fine.
 * RPMA_E_INVAL when cfg_ptr is NULL.
 */
int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);

/*
 * Sets how long rpma_conn_req_new() may take to resolve the peer's address
 * and route, in milliseconds. RPMA_E_INVAL (NULL cfg, negative timeout).
 */
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);

/*
 * Stores in *timeout_ms the connecting timeout. RPMA_E_INVAL.
 */
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);

/*
 * Sets the size of the main CQ of connections made from cfg.
 * RPMA_E_INVAL (NULL cfg, a size beyond INT_MAX).
 */
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);

/*
 * Stores in *shared whether the CQs of a connection share one completion
 * channel. RPMA_E_INVAL for a NULL argument.
 */
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);

/*
 * Makes the main CQ and the receive CQ of connections share one completion
 * channel (rpma_conn_wait(), rpma_conn_get_compl_fd()); not with an SRQ that
 * has its own receive CQ. RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);

/*
 * Stores in *cq_size the size of the main CQ. RPMA_E_INVAL.
 */
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);

/*
 * Sets the size of a separate receive CQ; 0 (the default) sends receive
 * completions to the main CQ. RPMA_E_INVAL (NULL cfg, a size beyond INT_MAX).
 */
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);

/*
 * Stores in *rcq_size the size of the receive CQ (0: none). RPMA_E_INVAL.
 */
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);

/*
 * Sets how many operations can be posted and not yet completed on a
 * connection. RPMA_E_INVAL (NULL cfg, a size beyond INT_MAX).
 */
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);

/*
 * Stores in *sq_size the size of the send queue. RPMA_E_INVAL.
 */
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);

/*
 * Sets how many receives can be posted at once on a connection without an
 * SRQ. RPMA_E_INVAL (NULL cfg, a size beyond INT_MAX).
 */
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);

/*
 * Stores in *rq_size the size of the receive queue. RPMA_E_INVAL.
 */
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);

/*
 * Makes connections take their receives from srq (NULL: a receive queue of
 * their own); the configuration keeps the pointer only, srq must outlive the
 * connections. RPMA_E_INVAL when cfg is NULL.
 */
int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);

/*
 * Stores in *srq_ptr the SRQ of the configuration, or NULL. RPMA_E_INVAL.
 */
int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg *cfg, struct rpma_srq **srq_ptr);

/* connections */

struct rpma_conn;
struct rpma_cq;

enum rpma_conn_event {
	RPMA_CONN_UNDEFINED = -1, /* undefined connection event */
	RPMA_CONN_ESTABLISHED,	  /* connection established */
	RPMA_CONN_CLOSED,	  /* connection closed */
	RPMA_CONN_LOST,		  /* connection lost */
	RPMA_CONN_REJECTED,	  /* connection rejected by the peer */
	RPMA_CONN_UNREACHABLE,	  /* peer unreachable */
};

/* Bytes exchanged with the peer while connecting (rdma_cm private data). */
struct rpma_conn_private_data {
	void *ptr;
	uint8_t len;
};

/*
 * Stores in *fd the descriptor of the connection's event channel, readable
 * when rpma_conn_next_event() has an event; it belongs to the connection.
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);

/*
 * Takes the connection's next event (ESTABLISHED, CLOSED, LOST, REJECTED,
 * UNREACHABLE), blocking unless the event fd is non-blocking.
 * RPMA_E_INVAL, RPMA_E_NO_EVENT (nothing pending), RPMA_E_UNKNOWN (an
 * unexpected event, consumed), RPMA_E_PROVIDER.
 */
int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);

/*
 * Returns a constant English description of conn_event; never NULL.
 */
const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);

/*
 * Fills *pdata with the bytes the peer sent while connecting; they belong to
 * the connection and live as long as it does. RPMA_E_INVAL.
 */
int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata);

/*
 * Tells the connection what the peer declared in pcfg (direct write to PMem,
 * which a persistent rpma_flush() needs); pcfg may be deleted afterwards.
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg);

/*
 * Stores in *qp_num the number of the connection's queue pair. RPMA_E_INVAL.
 */
int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);

/*
 * Stores in *cq_ptr the connection's main CQ, which belongs to the
 * connection. RPMA_E_INVAL for a NULL argument.
 */
int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);

/*
 * Stores in *rcq_ptr the connection's receive CQ, or NULL when it has none;
 * it belongs to the connection. RPMA_E_INVAL for a NULL argument.
 */
int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);

/*
 * Tears the connection down: to close it (then wait for RPMA_CONN_CLOSED
 * before deleting it), or to answer a close the peer started.
 * RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_conn_disconnect(struct rpma_conn *conn);

/*
 * Releases the connection, its queues and its CQs, and sets *conn_ptr to
 * NULL, even when a step fails (the first failure is returned).
 * RPMA_E_INVAL when conn_ptr is NULL, RPMA_E_PROVIDER.
 */
int rpma_conn_delete(struct rpma_conn **conn_ptr);

/*
 * Stores in *fd the descriptor of the shared completion channel.
 * RPMA_E_INVAL, RPMA_E_NOT_SHARED_CHNL (the channel is not shared).
 */
int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);

/*
 * Waits on the shared completion channel, acknowledges the event and stores
 * in *cq the CQ that has completions (and in *is_rcq, if not NULL, whether
 * it is the receive CQ); on failure *cq is NULL. RPMA_E_INVAL,
 * RPMA_E_NOT_SHARED_CHNL, RPMA_E_NO_COMPLETION, RPMA_E_UNKNOWN, RPMA_E_PROVIDER.
 */
int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq);

/* connection requests */

struct rpma_conn_req;

/*
 * Creates a request to connect to addr:port (active side): resolves the
 * address and route and makes the queues as cfg says (NULL: defaults). The
 * caller connects it with rpma_conn_req_connect() or deletes it.
 * RPMA_E_INVAL, RPMA_E_NOMEM, RPMA_E_PROVIDER (e.g. an unreachable address).
 */
int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		      const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);

/*
 * Deletes the request (rejecting it on the passive side) and sets *req_ptr
 * to NULL, even when a step fails. RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);

/*
 * Connects (active) or accepts (passive) the request, sending pdata (may be
 * NULL), and stores the new connection in *conn_ptr; the request is consumed
 * and *req_ptr set to NULL whatever happens. RPMA_E_INVAL, RPMA_E_NOMEM,
 * RPMA_E_PROVIDER.
 */
int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
			  const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);

/*
 * Posts a receive of len bytes at offset in dst on the request's queue
 * pair, so that it is in place when the connection starts. RPMA_E_INVAL
 * (NULL req or dst, a range outside dst), RPMA_E_PROVIDER.
 */
int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
		       size_t len, const void *op_context);

/*
 * Fills *pdata with the bytes the client sent with its request (passive
 * side); they belong to the request. RPMA_E_INVAL for a NULL argument.
 */
int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
				   struct rpma_conn_private_data *pdata);

/* endpoints: the passive (server) side */

struct rpma_ep;

/*
 * Starts listening for connections on addr:port of the peer's device; the
 * caller takes requests with rpma_ep_next_conn_req() and stops with
 * rpma_ep_shutdown(). RPMA_E_INVAL, RPMA_E_NOMEM, RPMA_E_PROVIDER.
 */
int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		   struct rpma_ep **ep_ptr);

/*
 * Stops listening, deletes the endpoint and sets *ep_ptr to NULL, even when
 * RPMA_E_PROVIDER is returned; connections already made are not affected.
 * RPMA_E_INVAL when ep_ptr is NULL.
 */
int rpma_ep_shutdown(struct rpma_ep **ep_ptr);

/*
 * Stores in *fd the descriptor of the endpoint's event channel, readable when
 * a connection request waits. RPMA_E_INVAL for a NULL argument.
 */
int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);

/*
 * Takes the next connection request, blocking unless the endpoint's fd is
 * non-blocking, and makes its queues as cfg says (NULL: defaults); the caller
 * accepts it with rpma_conn_req_connect() or rejects it with
 * rpma_conn_req_delete(). RPMA_E_INVAL, RPMA_E_NO_EVENT, RPMA_E_NOMEM,
 * RPMA_E_PROVIDER.
 */
int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr);

/* shared receive queues */

struct rpma_srq_cfg;

/*
 * Creates a shared receive queue configuration (20 receives, a receive CQ
 * of 20); the caller deletes it. RPMA_E_INVAL, RPMA_E_NOMEM.
 */
int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);

/*
 * Deletes *cfg_ptr and sets it to NULL; a NULL *cfg_ptr is fine.
 * RPMA_E_INVAL when cfg_ptr is NULL.
 */
int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);

/*
 * Sets how many receives the SRQ holds at once.
 * RPMA_E_INVAL (NULL cfg, a size beyond INT_MAX).
 */
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);

/*
 * Stores in *rq_size the size of the SRQ. RPMA_E_INVAL.
 */
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);

/*
 * Sets the size of the SRQ's own receive CQ; 0 gives it none (receives then
 * complete on each connection's CQs). RPMA_E_INVAL (NULL cfg, beyond INT_MAX).
 */
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);

/*
 * Stores in *rcq_size the size of the SRQ's receive CQ. RPMA_E_INVAL.
 */
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);

/*
 * Creates a shared receive queue on the peer as cfg says (NULL: defaults),
 * for connections configured with rpma_conn_cfg_set_srq(); the caller deletes
 * it after them. RPMA_E_INVAL, RPMA_E_NOMEM, RPMA_E_PROVIDER.
 */
int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr);

/*
 * Deletes the SRQ and its receive CQ and sets *srq_ptr to NULL, even when a
 * step fails. RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_srq_delete(struct rpma_srq **srq_ptr);

/*
 * Posts a receive of len bytes at offset in dst on the SRQ; dst may be NULL
 * for 0 bytes. RPMA_E_INVAL (NULL srq, a range outside dst), RPMA_E_PROVIDER.
 */
int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context);

/*
 * Stores in *rcq_ptr the SRQ's receive CQ, or NULL; it belongs to the SRQ.
 * RPMA_E_INVAL for a NULL argument.
 */
int rpma_srq_get_rcq(const struct rpma_srq *srq, struct rpma_cq **rcq_ptr);

/* data path */

/* unsignaled: a completion is generated only when the operation fails */
#define RPMA_F_COMPLETION_ON_ERROR (1 << 0)
/* signaled: a completion is always generated */
#define RPMA_F_COMPLETION_ALWAYS (1 << 1 | RPMA_F_COMPLETION_ON_ERROR)

#define RPMA_ATOMIC_WRITE_ALIGNMENT 8

enum rpma_flush_type {
	RPMA_FLUSH_TYPE_PERSISTENT, /* the data reached the persistent domain */
	RPMA_FLUSH_TYPE_VISIBILITY, /* the data is visible to the target's CPU */
};

/*
 * Posts an RDMA read of len bytes from src at src_offset into dst at
 * dst_offset (NULL regions and 0s: an empty read). flags: RPMA_F_COMPLETION_*
 * (0 is refused); op_context comes back in the completion. RPMA_E_INVAL,
 * RPMA_E_PROVIDER (e.g. a full send queue).
 */
int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context);

/*
 * Posts an RDMA write of len bytes from src at src_offset to dst at
 * dst_offset; its completion does not mean the data is visible or persistent
 * there (see rpma_flush()). flags: RPMA_F_COMPLETION_* (0 is refused).
 * RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context);

/*
 * rpma_write() that also consumes a receive on the peer, which completes with
 * the 32-bit immediate value imm. RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context);

/*
 * Posts an 8-byte write of src to dst at dst_offset (a multiple of 8) that
 * lands whole, after the flushes posted before it. RPMA_E_INVAL (NULL,
 * unaligned, out of dst, flags 0), RPMA_E_PROVIDER.
 */
int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context);

/*
 * Posts a flush of len bytes at dst_offset in dst: its completion means the
 * writes posted before it are visible (RPMA_FLUSH_TYPE_VISIBILITY) or
 * persistent (RPMA_FLUSH_TYPE_PERSISTENT) on the target. RPMA_E_INVAL,
 * RPMA_E_NOSUPP (the region or the peer's configuration does not allow the
 * type), RPMA_E_PROVIDER.
 */
int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
	       enum rpma_flush_type type, int flags, const void *op_context);

/*
 * Posts a send of len bytes at offset in src, consumed by a receive posted
 * on the peer (src may be NULL for 0 bytes). flags: RPMA_F_COMPLETION_*.
 * RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context);

/*
 * rpma_send() with the 32-bit immediate value imm, delivered with the peer's
 * receive completion. RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context);

/*
 * Posts a receive of at most len bytes at offset in dst (dst may be NULL for
 * 0 bytes) for the peer's next send; it completes on the receive CQ, or the
 * main CQ without one. RPMA_E_INVAL, RPMA_E_PROVIDER.
 */
int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context);

/* completion queues */

/*
 * Stores in *fd the descriptor of the CQ's completion channel, readable when
 * rpma_cq_wait() has an event; it belongs to the CQ. RPMA_E_INVAL.
 */
int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);

/*
 * Waits for the CQ's next completion event, acknowledges it and re-arms the
 * CQ; then take completions until none is left (a wake-up may bring none).
 * RPMA_E_INVAL, RPMA_E_SHARED_CHANNEL (use rpma_conn_wait()),
 * RPMA_E_NO_COMPLETION (no event, e.g. a non-blocking fd), RPMA_E_PROVIDER.
 */
int rpma_cq_wait(struct rpma_cq *cq);

/*
 * Takes up to num_entries completions, oldest first, as struct ibv_wc; the
 * number taken goes to *num_entries_got (may be NULL only when num_entries is
 * 1). RPMA_E_INVAL, RPMA_E_NO_COMPLETION (the CQ is empty), RPMA_E_PROVIDER.
 */
int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);

/* errors */

/*
 * Returns a constant English description of an RPMA_E_* code (0: "Success",
 * anything else unknown: "Unknown error"); never NULL.
 */
const char *rpma_err_2str(int ret);

/* logging */

enum rpma_log_level {
	RPMA_LOG_DISABLED = -1, /* all messages are suppressed */
	RPMA_LOG_LEVEL_FATAL,	/* an unrecoverable error */
	RPMA_LOG_LEVEL_ERROR,	/* an error that the library reports */
	RPMA_LOG_LEVEL_WARNING, /* a condition worth a look */
	RPMA_LOG_LEVEL_NOTICE,	/* a normal but significant condition */
	RPMA_LOG_LEVEL_INFO,	/* informational */
	RPMA_LOG_LEVEL_DEBUG,	/* debugging */
};

enum rpma_log_threshold {
	RPMA_LOG_THRESHOLD,	/* messages at or above it go to the log function */
	RPMA_LOG_THRESHOLD_AUX, /* messages at or above it also go to stderr */
	RPMA_LOG_THRESHOLD_MAX
};

/*
 * Sets the level that messages must reach to go to the log function
 * (RPMA_LOG_THRESHOLD, default WARNING) or, with the default function, also
 * to stderr (RPMA_LOG_THRESHOLD_AUX, default DISABLED). RPMA_E_INVAL.
 */
int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);

/*
 * Stores in *level the level of the threshold. RPMA_E_INVAL.
 */
int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level);

typedef void rpma_log_function(enum rpma_log_level level, const char *file_name, const int line_no,
			       const char *function_name, const char *message_format, ...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

/*
 * Installs log_function to receive the library's messages (a format ending
 * in a newline, and its arguments), or restores the default one (syslog,
 * identity "rpma") with RPMA_LOG_USE_DEFAULT_FUNCTION. Cannot fail.
 */
int rpma_log_set_function(rpma_log_function *log_function);

/*
 * Extension: completions described without struct ibv_wc.
 * Values are appended only at the end.
 */
enum rpma_op {
	RPMA_OP_READ,		    /* rpma_read */
	RPMA_OP_WRITE,		    /* rpma_write, rpma_write_with_imm, rpma_atomic_write */
	RPMA_OP_FLUSH,		    /* rpma_flush, whatever method carries it */
	RPMA_OP_SEND,		    /* rpma_send, rpma_send_with_imm */
	RPMA_OP_RECV,		    /* a receive matched by a send */
	RPMA_OP_RECV_RDMA_WITH_IMM, /* a receive consumed by a write with immediate data */
};

struct rpma_completion {
	void *op_context;	      /* the op_context given when posting */
	enum rpma_op op;	      /* valid only when op_status is IBV_WC_SUCCESS */
	uint32_t byte_len;	      /* bytes received (receives only) */
	enum ibv_wc_status op_status; /* IBV_WC_SUCCESS or the failure */
	unsigned flags;		      /* IBV_WC_WITH_IMM when imm is valid */
	uint32_t imm;		      /* immediate data, host byte order */
};

/* Extension: take the oldest completion from a CQ. */
int rpma_cq_get_completion(struct rpma_cq *cq, struct rpma_completion *cmpl);

/*
 * Extension: take up to max_cmpls completions in one call, polling the CQ
 * for up to 32 entries at a time. Returns how many were stored (0 when
 * the CQ is empty), or a negative RPMA_E_* code.
 */
int rpma_cq_get_completions(struct rpma_cq *cq, struct rpma_completion *cmpls, int max_cmpls);

/*
 * Extension: wait until the CQ holds a completion and take it.
 * timeout_ms < 0 waits without limit; RPMA_E_NO_COMPLETION when the time ran
 * out. Re-arming and spurious wake-ups are handled inside.
 */
int rpma_cq_wait_completion(struct rpma_cq *cq, struct rpma_completion *cmpl, int timeout_ms);

/*
 * Extension: the errno of the last rdma-core call that failed in the calling
 * thread (the cause behind RPMA_E_PROVIDER), 0 when none failed.
 */
int rpma_err_get_provider_error(void);

/*
 * Extension: flush methods that both peers agree on.
 *
 * A flush reaches the target's persistence by one of these methods; the
 * library picks, for each remote region and flush type, the best one that
 * both sides support (see rpma_flush(3) and librpma(7), PERSISTENCE).
 */
enum rpma_flush_method {
	RPMA_FLUSH_METHOD_NONE,		    /* nothing can carry this flush */
	RPMA_FLUSH_METHOD_READ_AFTER_WRITE, /* an RDMA read behind the writes */
	RPMA_FLUSH_METHOD_GPSPM,	    /* the target's CPU persists the range */
	RPMA_FLUSH_METHOD_NATIVE,	    /* the RDMA FLUSH verb */
};

/*
 * Extension: the method rpma_flush() uses on conn for dst and type.
 * RPMA_E_NOSUPP (and RPMA_FLUSH_METHOD_NONE) when there is none.
 */
int rpma_conn_get_flush_method(const struct rpma_conn *conn, const struct rpma_mr_remote *dst,
			       enum rpma_flush_type type, enum rpma_flush_method *method);

/*
 * Extension: the versioned region descriptor: the librpma 1.x descriptor
 * followed by a trailer naming the flush methods the region offers. A
 * librpma 1.x peer reads it as the 1.x form; rpma_mr_remote_from_descriptor()
 * reads both forms.
 */
int rpma_mr_get_versioned_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size);
int rpma_mr_get_versioned_descriptor(const struct rpma_mr_local *mr, void *desc);

/*
 * Extension: the versioned peer-configuration descriptor: the librpma 1.x
 * byte followed by a trailer saying whether the connections made with cfg
 * (NULL: the defaults) serve GPSPM flushes, and how many at a time.
 */
int rpma_peer_cfg_get_versioned_descriptor_size(const struct rpma_peer_cfg *pcfg,
						size_t *desc_size);
int rpma_peer_cfg_get_versioned_descriptor(const struct rpma_peer_cfg *pcfg,
					   const struct rpma_conn_cfg *cfg, void *desc);

/*
 * Extension: GPSPM, the General Purpose Server Persistency Method. The
 * target's CPU makes a flushed range persistent with the function its
 * application gives for the region (pmem2_get_persist_fn() fits), which
 * works whatever the platform does with the NIC's writes.
 */
typedef void rpma_persist_fn(const void *ptr, size_t len);

/* Extension: how a region is made persistent; NULL withdraws the offer. */
int rpma_mr_set_persist_fn(struct rpma_mr_local *mr, rpma_persist_fn *persist);

/*
 * Extension: a persist function that is given ctx as well, so that a target
 * can find its own state for the region without globals.
 */
typedef void rpma_persist_ctx_fn(void *ctx, const void *ptr, size_t len);

/* Extension: rpma_mr_set_persist_fn() with a context; NULL withdraws the offer. */
int rpma_mr_set_persist_ctx_fn(struct rpma_mr_local *mr, rpma_persist_ctx_fn *persist, void *ctx);

enum rpma_gpspm_mode {
	RPMA_GPSPM_DISABLED, /* the receive queue is the application's */
	RPMA_GPSPM_POLLED,   /* GPSPM messages are handled when the CQ is polled */
	RPMA_GPSPM_THREAD,   /* a library thread serves the peer's flushes */
};

/*
 * Extension: whether connections made with cfg carry GPSPM. Both sides set
 * it; the receive queue then belongs to the library.
 */
int rpma_conn_cfg_set_gpspm(struct rpma_conn_cfg *cfg, enum rpma_gpspm_mode mode);
int rpma_conn_cfg_get_gpspm(const struct rpma_conn_cfg *cfg, enum rpma_gpspm_mode *mode);

/*
 * Extension: RPMA_GPSPM_THREAD: how many microseconds the library's thread
 * keeps polling the connection's CQ after the last entry it found before
 * it sleeps on the CQ's channel. A request that comes while it polls is
 * served at once instead of after a wake-up, at the cost of a CPU kept
 * busy for up to spin_us after each request; 0 sleeps at once. At most
 * RPMA_GPSPM_SPIN_US_MAX.
 */
#define RPMA_DEFAULT_GPSPM_SPIN_US 50
#define RPMA_GPSPM_SPIN_US_MAX	   1000000
int rpma_conn_cfg_set_gpspm_spin(struct rpma_conn_cfg *cfg, uint32_t spin_us);
int rpma_conn_cfg_get_gpspm_spin(const struct rpma_conn_cfg *cfg, uint32_t *spin_us);

/*
 * Extension: whether conn is still up: false once the library has seen it
 * closed or lost (then its QP is in the error state and everything still
 * outstanding completes with an error). Never blocks; the connection
 * events it takes stay for rpma_conn_next_event().
 */
int rpma_conn_is_up(struct rpma_conn *conn, bool *is_up);

/*
 * Extension: waits up to timeout_ms (negative: no limit) until a GPSPM flush or
 * atomic write can be posted on conn without RPMA_E_AGAIN, handling the
 * target's answers from the connection's CQ; the completions of other
 * operations found there are kept, in order, for the next rpma_cq_* call.
 * 0 when there is room, RPMA_E_NO_COMPLETION when the time ran out (or
 * the connection is down and no answer can come).
 */
int rpma_conn_wait_flush_room(struct rpma_conn *conn, int timeout_ms);

/*
 * Extension: copies into *addr the address of req's peer, as rdma_cm knows
 * it, the rest of *addr zeroed: on the passive side
 * (rpma_ep_next_conn_req()) the requester's, so that a server can decide
 * by it whether to connect or to delete (reject) the request; on the
 * active side (rpma_conn_req_new()) the address it connects to.
 */
int rpma_conn_req_get_peer_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr);

/*
 * Extension: copies into *addr this side's own address of req, as rdma_cm
 * knows it, the rest of *addr zeroed: on the passive side the address the
 * request came in at, on the active side the source address chosen when
 * the route was resolved; with rpma_conn_req_get_peer_addr(), what a
 * handshake can bind its proof to (both ends as each side sees them).
 */
int rpma_conn_req_get_local_addr(const struct rpma_conn_req *req, struct sockaddr_storage *addr);

/*
 * Extension: stores in *qp_num the number of req's own queue pair: on the
 * active side from rpma_conn_req_new() on; on the passive side once the
 * request has its queues (rpma_conn_req_recv(), rpma_conn_req_gpspm_offer()),
 * RPMA_E_INVAL before. A client binds it into a proof sent with
 * rpma_conn_req_connect(), which the server checks against
 * rpma_conn_req_get_peer_qp_num().
 */
int rpma_conn_req_get_qp_num(const struct rpma_conn_req *req, uint32_t *qp_num);

/*
 * Extension: stores in *qp_num the number of the client's queue pair as its
 * connection request carried it (passive side, InfiniBand and RoCE).
 * RPMA_E_NOSUPP when the connection manager carries none (iWARP),
 * RPMA_E_INVAL on the active side.
 */
int rpma_conn_req_get_peer_qp_num(const struct rpma_conn_req *req, uint32_t *qp_num);

/*
 * Extension: answers the incoming request *req_ptr with a reject that
 * carries pdata (may be NULL; at most 148 bytes on InfiniBand and RoCE),
 * releases the request and sets *req_ptr to NULL. Its queue pair is never
 * connected: a server can tell a client something (a challenge, a reason)
 * without giving it a queue pair. The client sees RPMA_CONN_REJECTED and
 * reads pdata with rpma_conn_get_private_data(). RPMA_E_INVAL, with the
 * request kept, for an outgoing request or empty private data.
 */
int rpma_conn_req_reject(struct rpma_conn_req **req_ptr,
			 const struct rpma_conn_private_data *pdata);

/*
 * Extension: lets the connection made from req reach mr by GPSPM (mr
 * offers it: rpma_mr_set_persist_fn()). A connection that was offered
 * regions serves GPSPM requests for those only; one that was offered none
 * serves every region of its peer that offers GPSPM. At most 16 regions
 * a connection. Call it before rpma_conn_req_connect(). RPMA_E_INVAL when
 * req carries no GPSPM, mr belongs to another peer or offers no GPSPM, or
 * 16 regions are offered already.
 */
int rpma_conn_req_gpspm_offer(struct rpma_conn_req *req, const struct rpma_mr_local *mr);

/*
 * Extension: several operations on one connection posted together, as one
 * chain of work requests: one doorbell (on soft RoCE one system call)
 * instead of one per operation. A persistent write is a write and a flush
 * in one batch.
 */
#define RPMA_BATCH_MAX 64

struct rpma_batch_op {
	enum rpma_op op;		   /* RPMA_OP_READ, _WRITE, _FLUSH or _SEND */
	int flags;			   /* RPMA_F_COMPLETION_* */
	const void *op_context;		   /* what its completion carries back */
	const struct rpma_mr_local *local; /* read: destination; write, send: source */
	size_t local_offset;
	const struct rpma_mr_remote *remote; /* read: source; write, flush: destination */
	size_t remote_offset;
	size_t len;
	enum rpma_flush_type flush_type; /* flush only */
	uint32_t imm;			 /* write and send, with with_imm */
	bool with_imm;
};

int rpma_post_batch(struct rpma_conn *conn, const struct rpma_batch_op *ops, int count,
		    int *failed);

/*
 * Extension: a write template: writes from one local region to one remote
 * region, and the flush of type that follows them. The connection and the
 * regions are checked and looked up once, when the template is made; a
 * post checks only its ranges and posts its writes and their flush as one
 * chain, with one doorbell. Threads may post through one template at
 * once; a post that finds the template's prebuilt chain in another's hands
 * builds its own, which costs more. Delete it before the connection and
 * the regions.
 */
struct rpma_write_template;

/* One write of a post: len bytes from src_offset of the source to dst_offset. */
struct rpma_write_range {
	size_t dst_offset;
	size_t src_offset;
	size_t len;
};

int rpma_write_template_new(struct rpma_conn *conn, const struct rpma_mr_remote *dst,
			    const struct rpma_mr_local *src, enum rpma_flush_type type,
			    struct rpma_write_template **tmpl_ptr);
int rpma_write_template_delete(struct rpma_write_template **tmpl_ptr);

/*
 * Extension: posts count writes (1 to RPMA_BATCH_MAX - 1) through tmpl,
 * then one flush of the range from the lowest destination offset to the
 * highest end among them, by the method rpma_flush() would use; the flush
 * completes as rpma_flush()'s does, with op_context, as flags says; a
 * write completes only when it fails, with op_context.
 */
int rpma_write_template_post(struct rpma_write_template *tmpl,
			     const struct rpma_write_range *writes, int count, int flags,
			     const void *op_context);

#ifdef __cplusplus
}
#endif

#endif /* LIBRPMA_H */
