/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/utils.hpp -- the functions of no object: rpma::utils_* and
 * rpma::log_*
 */

#ifndef RPMA_HPP_UTILS
#define RPMA_HPP_UTILS 1

#include <librpma.h>

#include "error.hpp"
#include "handle.hpp"

namespace rpma
{

/* ------------------------------------------------------------- utils, log */

/* the device for an address; the context belongs to librdmacm */
inline result<ibv_context *> utils_get_ibv_context(const char *addr,
						   rpma_util_ibv_context_type type) noexcept
{
	return detail::fetch(&rpma_utils_get_ibv_context, addr, type);
}

inline result<bool> utils_ibv_context_is_odp_capable(ibv_context *ibv_ctx) noexcept
{
	return detail::fetch<bool>(&rpma_utils_ibv_context_is_odp_capable, ibv_ctx);
}

inline const char *utils_conn_event_2str(rpma_conn_event event) noexcept
{
	return rpma_utils_conn_event_2str(event);
}

inline result<void> log_set_threshold(rpma_log_threshold threshold, rpma_log_level level) noexcept
{
	return result<void>::from_code(rpma_log_set_threshold(threshold, level));
}

inline result<rpma_log_level> log_get_threshold(rpma_log_threshold threshold) noexcept
{
	return detail::fetch(&rpma_log_get_threshold, threshold);
}

/* nullptr (RPMA_LOG_USE_DEFAULT_FUNCTION) restores the default */
inline result<void> log_set_function(rpma_log_function *function) noexcept
{
	return result<void>::from_code(rpma_log_set_function(function));
}

} /* namespace rpma */

#endif /* RPMA_HPP_UTILS */
