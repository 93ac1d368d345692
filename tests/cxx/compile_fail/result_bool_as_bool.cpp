/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * result_bool_as_bool.cpp -- must not compile (see compile_fail.py)
 *
 * A result<bool> tested as a bool: that would be the success of the call,
 * read as its answer.
 *
 * expect: operator bool
 */

#include <rpma.hpp>

bool shared_channel(const rpma::conn_cfg &cfg)
{
#ifdef RPMA_CONTROL
	auto shared = cfg.get_compl_channel();
	return shared.has_value() && *shared;
#else
	if (cfg.get_compl_channel())
		return true;
	return false;
#endif
}
