/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common.h -- what the server and the client of 10-separate-rcq and
 *             11-separate-rcq-shared-channel share
 */

#ifndef EXAMPLE_SEPARATE_RCQ_COMMON_H
#define EXAMPLE_SEPARATE_RCQ_COMMON_H 1

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <librpma.h>

#define WINDOW	4 /* requests in flight at most, receives posted on each side */
#define WAIT_MS 10000

enum msg_op {
	MSG_REQUEST = 1, /* the server answers with value squared */
	MSG_ANSWER = 2,
	MSG_STOP = 3, /* the client's last message, not answered */
};

/* one message; both sides on the same architecture: host byte order */
struct msg {
	uint32_t op;
	uint32_t seq; /* the request's number, copied into its answer */
	uint64_t value;
};

/*
 * The configuration of both sides' connections: WINDOW sends and WINDOW
 * receives in flight, and a receive CQ of its own: sends complete on the
 * main CQ (rpma_conn_get_cq()), receives on the receive CQ
 * (rpma_conn_get_rcq()).
 */
static inline int make_conn_cfg(struct rpma_conn_cfg **cfg, int shared_channel)
{
	int ret = rpma_conn_cfg_new(cfg);

	if (!ret)
		ret = rpma_conn_cfg_set_sq_size(*cfg, WINDOW + 1);
	if (!ret)
		ret = rpma_conn_cfg_set_rq_size(*cfg, WINDOW + 1);
	if (!ret)
		ret = rpma_conn_cfg_set_cq_size(*cfg, WINDOW + 1);
	if (!ret)
		ret = rpma_conn_cfg_set_rcq_size(*cfg, WINDOW + 1);
	if (!ret && shared_channel)
		ret = rpma_conn_cfg_set_compl_channel(*cfg, true);
	if (ret && *cfg)
		rpma_conn_cfg_delete(cfg);
	return ret;
}

static inline void report(const char *who, const char *call, int ret)
{
	int err = rpma_err_get_provider_error();

	if (ret == RPMA_E_PROVIDER && err)
		fprintf(stderr, "%s: %s failed: %s (%s)\n", who, call, rpma_err_2str(ret),
			strerror(err));
	else
		fprintf(stderr, "%s: %s failed: %s\n", who, call, rpma_err_2str(ret));
}

#endif /* EXAMPLE_SEPARATE_RCQ_COMMON_H */
