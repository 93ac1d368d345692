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

} /* namespace rpma */

/* return RPMA_PROVIDER_FAILED(errno, "ibv_reg_mr"); */
#define RPMA_PROVIDER_FAILED(err, call)                                                            \
	rpma::provider_error((err), (call), __FILE__, __LINE__, __func__)

/* Argument checks: log what was wrong, return RPMA_E_INVAL. */
#define RPMA_CHECK_ARG(cond)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			RPMA_LOG_ERROR("invalid argument: %s", #cond);                             \
			return RPMA_E_INVAL;                                                       \
		}                                                                                  \
	} while (0)

#endif /* RPMA_ERR_HPP */
