/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * post.cpp -- what the data path does when a post fails
 */

#include "post.hpp"

namespace rpma
{

int post_failed(int ret, const char *call)
{
	return RPMA_PROVIDER_FAILED(post_errno(ret), call);
}

} /* namespace rpma */
