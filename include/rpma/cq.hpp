/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/cq.hpp -- rpma::cq, the view of a completion queue
 */

#ifndef RPMA_HPP_CQ
#define RPMA_HPP_CQ 1

#include <librpma.h>

#include "constants.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "span.hpp"

#include <chrono>
#include <cstddef>

namespace rpma
{

namespace detail
{
/*
 * The timeout of a wait as the int the C calls take: no_timeout is -1,
 * without limit; any other negative time is 0, an answer at once (the C
 * calls would take it as no limit, which a negative duration does not say).
 */
constexpr int wait_ms(std::chrono::milliseconds timeout) noexcept
{
	return timeout == no_timeout ? -1 : timeout.count() < 0 ? 0 : clamp_ms(timeout);
}
} /* namespace detail */

/* ---------------------------------------------------------------------- cq */

/*
 * A completion queue, not owned: it lives as long as the connection (or
 * shared RQ) it was taken from. Copy it freely.
 */
class cq
{
public:
	constexpr cq() noexcept = default;
	constexpr explicit cq(rpma_cq *p) noexcept : ptr_(p) {}

	constexpr rpma_cq *get() const noexcept { return ptr_; }
	constexpr explicit operator bool() const noexcept { return ptr_ != nullptr; }

	result<int> get_fd() const noexcept { return detail::fetch(&rpma_cq_get_fd, ptr_); }

	/* waits for one completion event and re-arms (rpma_cq_wait) */
	result<void> wait() const noexcept { return result<void>::from_code(rpma_cq_wait(ptr_)); }

	/* the oldest completion; errc::no_completion when there is none */
	result<rpma_completion> get_completion() const noexcept
	{
		return detail::fetch(&rpma_cq_get_completion, ptr_);
	}
	result<void> get_completion(rpma_completion &cmpl) const noexcept
	{
		return result<void>::from_code(rpma_cq_get_completion(ptr_, &cmpl));
	}

	/*
	 * Up to out.size() completions with one poll: how many were stored
	 * (0 when the CQ was empty; fewer than asked means it is empty now).
	 */
	result<std::size_t> get_completions(span<rpma_completion> out) const noexcept
	{
		int ret =
		    rpma_cq_get_completions(ptr_, out.data(), detail::clamp_count(out.size()));
		if (ret < 0)
			return rpma::error(ret);
		return static_cast<std::size_t>(ret);
	}

	/*
	 * Waits until a completion is there and takes it; errc::no_completion
	 * once timeout has passed (a negative one is 0). The default,
	 * no_timeout, waits without limit.
	 */
	result<void> wait_completion(rpma_completion &cmpl,
				     std::chrono::milliseconds timeout = no_timeout) const noexcept
	{
		return result<void>::from_code(
		    rpma_cq_wait_completion(ptr_, &cmpl, detail::wait_ms(timeout)));
	}
	result<rpma_completion>
	wait_completion(std::chrono::milliseconds timeout = no_timeout) const noexcept
	{
		rpma_completion cmpl;
		if (result<void> r = wait_completion(cmpl, timeout); !r)
			return r.error();
		return cmpl;
	}

	/* librpma 1.x polling: up to wc.size() work completions, how many */
	result<std::size_t> get_wc(span<ibv_wc> wc) const noexcept
	{
		return detail::fetch<std::size_t>(&rpma_cq_get_wc, ptr_,
						  detail::clamp_count(wc.size()), wc.data());
	}

private:
	rpma_cq *ptr_ = nullptr;
};

} /* namespace rpma */

#endif /* RPMA_HPP_CQ */
