// SPDX-License-Identifier: BSD-3-Clause
/*
 * provider_error.c -- a failing rdma-core call surfaces as RPMA_E_PROVIDER
 * and rpma_err_get_provider_error() then gives its errno, per thread:
 * registering memory that is not mapped, and binding to an address that no
 * device has
 */

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

static void *provider_error_of_thread(void *arg)
{
	*(int *)arg = rpma_err_get_provider_error();
	return NULL;
}

static int in_new_thread(void)
{
	pthread_t th;
	int err = -1;
	T_ASSERT(pthread_create(&th, NULL, provider_error_of_thread, &err) == 0);
	T_ASSERT(pthread_join(th, NULL) == 0);
	return err;
}

static void client(void)
{
	T_EQ(rpma_err_get_provider_error(), 0);
	struct rpma_peer *peer = t_peer_new();

	/* a page that was mapped and is no more */
	long page = sysconf(_SC_PAGESIZE);
	void *gone = mmap(NULL, (size_t)page * 4, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(gone != MAP_FAILED);
	T_ASSERT(munmap(gone, (size_t)page * 4) == 0);

	struct rpma_mr_local *mr = NULL;
	T_RET(rpma_mr_reg(peer, gone, (size_t)page, RPMA_MR_USAGE_READ_SRC, &mr), RPMA_E_PROVIDER);
	T_PTR_EQ(mr, NULL);
	int err = rpma_err_get_provider_error();
	t_log("registering unmapped memory: errno %d (%s)", err, strerror(err));
	T_ASSERT(err != 0);
	T_EQ(err, EFAULT);
	/* another thread has its own */
	T_EQ(in_new_thread(), 0);
	T_EQ(rpma_err_get_provider_error(), err);

	/* an address that no interface carries */
	struct ibv_context *ibv = NULL;
	int ret = rpma_utils_get_ibv_context("198.51.100.77", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv);
	T_RET(ret, RPMA_E_PROVIDER);
	T_PTR_EQ(ibv, NULL);
	err = rpma_err_get_provider_error();
	t_log("binding to 198.51.100.77: errno %d (%s)", err, strerror(err));
	T_ASSERT(err != 0);
	T_ASSERT(err != EFAULT);

	/* and a listen on it fails the same way */
	struct rpma_ep *ep = NULL;
	T_RET(rpma_ep_listen(peer, "198.51.100.77", t_env.port, &ep), RPMA_E_PROVIDER);
	T_PTR_EQ(ep, NULL);
	T_ASSERT(rpma_err_get_provider_error() != 0);

	T_OK(rpma_peer_delete(&peer));
}

int main(void)
{
	t_init("provider_error", 31);
	return t_run(NULL, client);
}
