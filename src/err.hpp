/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * err.hpp -- turning failures into RPMA_E_* codes
 */

#ifndef RPMA_ERR_HPP
#define RPMA_ERR_HPP

#include <librpma.h>

#include "log.hpp"

namespace rpma
{

/*
 * Records err as the calling thread's provider error (see
 * rpma_err_get_provider_error), logs "<call>: <strerror>" at ERROR and
 * returns RPMA_E_PROVIDER. err == 0 (a provider that failed without setting
 * errno) is recorded as EIO so that the caller never sees "no error".
 */
int provider_error(int err, const char *call, const char *file, int line, const char *func);

/* Records err as the calling thread's provider error without logging. */
void set_provider_error(int err);

/*
 * Logs "<call> failed: <strerror>" at ERROR for a failure in the clean-up
 * after another one: the calling thread's provider error stays that of the
 * first failure, the one the caller is told about.
 */
void provider_error_in_cleanup(int err, const char *call, const char *file, int line,
			       const char *func);

} /* namespace rpma */

/* return RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr"); */
#define RPMA_PROVIDER_FAILED(err, call)                                                            \
	rpma::provider_error((err), (call), __FILE__, __LINE__, __func__)

/* if (verbs::reject(id, nullptr, 0)) RPMA_PROVIDER_FAILED_IN_CLEANUP(errno, "rdma_reject"); */
#define RPMA_PROVIDER_FAILED_IN_CLEANUP(err, call)                                                 \
	rpma::provider_error_in_cleanup((err), (call), __FILE__, __LINE__, __func__)

#endif /* RPMA_ERR_HPP */
