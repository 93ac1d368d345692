/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * set_srq_temporary.cpp -- must not compile (see compile_fail.py)
 *
 * A shared RQ that dies at once, kept by the configuration for the
 * connections made with it.
 *
 * expect: \bset_srq\b
 */

#include <rpma.hpp>

rpma::srq make_srq();

rpma::result<void> configure(rpma::conn_cfg &cfg, [[maybe_unused]] const rpma::srq &srq)
{
#ifdef RPMA_CONTROL
	return cfg.set_srq(srq);
#else
	return cfg.set_srq(make_srq());
#endif
}
