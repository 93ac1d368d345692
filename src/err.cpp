/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * err.cpp -- error strings and the per-thread provider errno
 */

#include <cerrno>
#include <cstring>

#include "err.hpp"

namespace rpma
{

namespace
{
/*
 * initial-exec: the variable sits at a fixed offset from the thread
 * pointer, where the default model of a shared library would call
 * __tls_get_addr, which would make librpma.so.0 need ld-linux*.so.2 by name.
 * A program that dlopen()s the library after it started takes these four
 * bytes from the static TLS that glibc keeps in reserve for such libraries.
 */
__attribute__((tls_model("initial-exec"))) thread_local int last_provider_errno;
}

void set_provider_error(int err)
{
	last_provider_errno = err;
}

int provider_error(int err, const char *call, const char *file, int line, const char *func)
{
	if (err == 0)
		err = EIO;
	last_provider_errno = err;
	if (log::enabled(RPMA_LOG_LEVEL_ERROR)) {
		char buf[128];
		/* the GNU strerror_r returns the message, maybe not in buf */
		const char *text = strerror_r(err, buf, sizeof(buf));
		if (false)
			log::check_format("%s failed: %s (errno %d)", call, text, err);
		log::emit(RPMA_LOG_LEVEL_ERROR, file, line, func, "%s failed: %s (errno %d)\n",
			  call, text, err);
	}
	return RPMA_E_PROVIDER;
}

void provider_error_in_cleanup(int err, const char *call, const char *file, int line,
			       const char *func)
{
	const int first = last_provider_errno;
	(void)provider_error(err, call, file, line, func);
	last_provider_errno = first;
}

} /* namespace rpma */

extern "C" {

const char *rpma_err_2str(int ret)
{
	switch (ret) {
	case 0:
		return "Success";
	case RPMA_E_NOSUPP:
		return "Not supported";
	case RPMA_E_PROVIDER:
		return "Provider error occurred";
	case RPMA_E_NOMEM:
		return "Out of memory";
	case RPMA_E_INVAL:
		return "Invalid argument";
	case RPMA_E_NO_COMPLETION:
		return "No next completion available";
	case RPMA_E_NO_EVENT:
		return "No next event available";
	case RPMA_E_AGAIN:
		return "Temporary error, try again";
	case RPMA_E_SHARED_CHANNEL:
		return "Completion channel is shared";
	case RPMA_E_NOT_SHARED_CHNL:
		return "Completion channel is not shared";
	case RPMA_E_UNKNOWN:
	default:
		/* librpma 1.x's text for anything it did not know */
		return "Unknown error";
	}
}

int rpma_err_get_provider_error(void)
{
	return rpma::last_provider_errno;
}

} /* extern "C" */
