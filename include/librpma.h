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

int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type,
			       struct ibv_context **ibv_ctx_ptr);

int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable);

/* peer configuration: what the target side guarantees about persistence */

struct rpma_peer_cfg;

int rpma_peer_cfg_new(struct rpma_peer_cfg **pcfg_ptr);
int rpma_peer_cfg_delete(struct rpma_peer_cfg **pcfg_ptr);
int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg *pcfg, bool supported);
int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg *pcfg, bool *supported);
int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg *pcfg, void *desc);
int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg *pcfg, size_t *desc_size);
int rpma_peer_cfg_from_descriptor(const void *desc, size_t desc_size,
				  struct rpma_peer_cfg **pcfg_ptr);

/* peer: one RDMA device and its protection domain */

struct rpma_peer;

int rpma_peer_new(struct ibv_context *ibv_ctx, struct rpma_peer **peer_ptr);
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

int rpma_mr_reg(struct rpma_peer *peer, void *ptr, size_t size, int usage,
		struct rpma_mr_local **mr_ptr);
int rpma_mr_dereg(struct rpma_mr_local **mr_ptr);
int rpma_mr_get_descriptor(const struct rpma_mr_local *mr, void *desc);
int rpma_mr_remote_from_descriptor(const void *desc, size_t desc_size,
				   struct rpma_mr_remote **mr_ptr);
int rpma_mr_get_descriptor_size(const struct rpma_mr_local *mr, size_t *desc_size);
int rpma_mr_get_ptr(const struct rpma_mr_local *mr, void **ptr);
int rpma_mr_get_size(const struct rpma_mr_local *mr, size_t *size);
int rpma_mr_remote_get_size(const struct rpma_mr_remote *mr, size_t *size);
int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote *mr, int *flush_type);
int rpma_mr_remote_delete(struct rpma_mr_remote **mr_ptr);
int rpma_mr_advise(struct rpma_mr_local *mr, size_t offset, size_t len, int advice, uint32_t flags);

/* connection configuration */

struct rpma_conn_cfg;
struct rpma_srq;

int rpma_conn_cfg_new(struct rpma_conn_cfg **cfg_ptr);
int rpma_conn_cfg_delete(struct rpma_conn_cfg **cfg_ptr);
int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg *cfg, int timeout_ms);
int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg *cfg, int *timeout_ms);
int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg *cfg, uint32_t cq_size);
int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg *cfg, bool *shared);
int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg *cfg, bool shared);
int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg *cfg, uint32_t *cq_size);
int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg *cfg, uint32_t rcq_size);
int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg *cfg, uint32_t *rcq_size);
int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg *cfg, uint32_t sq_size);
int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg *cfg, uint32_t *sq_size);
int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg *cfg, uint32_t rq_size);
int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg *cfg, uint32_t *rq_size);
int rpma_conn_cfg_set_srq(struct rpma_conn_cfg *cfg, struct rpma_srq *srq);
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

int rpma_conn_get_event_fd(const struct rpma_conn *conn, int *fd);
int rpma_conn_next_event(struct rpma_conn *conn, enum rpma_conn_event *event);
const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event);
int rpma_conn_get_private_data(const struct rpma_conn *conn, struct rpma_conn_private_data *pdata);
int rpma_conn_apply_remote_peer_cfg(struct rpma_conn *conn, const struct rpma_peer_cfg *pcfg);
int rpma_conn_get_qp_num(const struct rpma_conn *conn, uint32_t *qp_num);
int rpma_conn_get_cq(const struct rpma_conn *conn, struct rpma_cq **cq_ptr);
int rpma_conn_get_rcq(const struct rpma_conn *conn, struct rpma_cq **rcq_ptr);
int rpma_conn_disconnect(struct rpma_conn *conn);
int rpma_conn_delete(struct rpma_conn **conn_ptr);
int rpma_conn_get_compl_fd(const struct rpma_conn *conn, int *fd);
int rpma_conn_wait(struct rpma_conn *conn, int flags, struct rpma_cq **cq, bool *is_rcq);

/* connection requests */

struct rpma_conn_req;

int rpma_conn_req_new(struct rpma_peer *peer, const char *addr, const char *port,
		      const struct rpma_conn_cfg *cfg, struct rpma_conn_req **req_ptr);
int rpma_conn_req_delete(struct rpma_conn_req **req_ptr);
int rpma_conn_req_connect(struct rpma_conn_req **req_ptr,
			  const struct rpma_conn_private_data *pdata, struct rpma_conn **conn_ptr);
int rpma_conn_req_recv(struct rpma_conn_req *req, struct rpma_mr_local *dst, size_t offset,
		       size_t len, const void *op_context);
int rpma_conn_req_get_private_data(const struct rpma_conn_req *req,
				   struct rpma_conn_private_data *pdata);

/* endpoints: the passive (server) side */

struct rpma_ep;

int rpma_ep_listen(struct rpma_peer *peer, const char *addr, const char *port,
		   struct rpma_ep **ep_ptr);
int rpma_ep_shutdown(struct rpma_ep **ep_ptr);
int rpma_ep_get_fd(const struct rpma_ep *ep, int *fd);
int rpma_ep_next_conn_req(struct rpma_ep *ep, const struct rpma_conn_cfg *cfg,
			  struct rpma_conn_req **req_ptr);

/* shared receive queues */

struct rpma_srq_cfg;

int rpma_srq_cfg_new(struct rpma_srq_cfg **cfg_ptr);
int rpma_srq_cfg_delete(struct rpma_srq_cfg **cfg_ptr);
int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg *cfg, uint32_t rq_size);
int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg *cfg, uint32_t *rq_size);
int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg *cfg, uint32_t rcq_size);
int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg *cfg, uint32_t *rcq_size);

int rpma_srq_new(struct rpma_peer *peer, struct rpma_srq_cfg *cfg, struct rpma_srq **srq_ptr);
int rpma_srq_delete(struct rpma_srq **srq_ptr);
int rpma_srq_recv(struct rpma_srq *srq, struct rpma_mr_local *dst, size_t offset, size_t len,
		  const void *op_context);
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

int rpma_read(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t dst_offset,
	      const struct rpma_mr_remote *src, size_t src_offset, size_t len, int flags,
	      const void *op_context);
int rpma_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
	       const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
	       const void *op_context);
int rpma_write_with_imm(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
			const struct rpma_mr_local *src, size_t src_offset, size_t len, int flags,
			uint32_t imm, const void *op_context);
int rpma_atomic_write(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset,
		      const char src[8], int flags, const void *op_context);
int rpma_flush(struct rpma_conn *conn, struct rpma_mr_remote *dst, size_t dst_offset, size_t len,
	       enum rpma_flush_type type, int flags, const void *op_context);
int rpma_send(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset, size_t len,
	      int flags, const void *op_context);
int rpma_send_with_imm(struct rpma_conn *conn, const struct rpma_mr_local *src, size_t offset,
		       size_t len, int flags, uint32_t imm, const void *op_context);
int rpma_recv(struct rpma_conn *conn, struct rpma_mr_local *dst, size_t offset, size_t len,
	      const void *op_context);

/* completion queues */

int rpma_cq_get_fd(const struct rpma_cq *cq, int *fd);
int rpma_cq_wait(struct rpma_cq *cq);
int rpma_cq_get_wc(struct rpma_cq *cq, int num_entries, struct ibv_wc *wc, int *num_entries_got);

/* errors */

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

int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level);
int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level *level);

typedef void rpma_log_function(enum rpma_log_level level, const char *file_name, const int line_no,
			       const char *function_name, const char *message_format, ...);

#define RPMA_LOG_USE_DEFAULT_FUNCTION (NULL)

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
 * Extension: take up to max_cmpls completions with one poll of the CQ.
 * Returns how many were stored (0 when the CQ is empty), or a negative
 * RPMA_E_* code.
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

#ifdef __cplusplus
}
#endif

#endif /* LIBRPMA_H */
