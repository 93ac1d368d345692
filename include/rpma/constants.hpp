/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/constants.hpp -- the C constants that a C++ type of rpma.hpp
 * replaces: the scoped enums (usage, flag, flush_type, flush_method,
 * gpspm_mode), the timeouts, and the operators of the enums whose bits
 * combine
 */

#ifndef RPMA_HPP_CONSTANTS
#define RPMA_HPP_CONSTANTS 1

#include <librpma.h>

#include <chrono>
#include <type_traits>

namespace rpma
{

/* ------------------------------------------------------------- constants */

/* RPMA_MR_USAGE_*: what a region is registered for; the bits combine. */
enum class usage : int {
	read_src = RPMA_MR_USAGE_READ_SRC,
	read_dst = RPMA_MR_USAGE_READ_DST,
	write_src = RPMA_MR_USAGE_WRITE_SRC,
	write_dst = RPMA_MR_USAGE_WRITE_DST,
	flush_type_visibility = RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
	flush_type_persistent = RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT,
	send = RPMA_MR_USAGE_SEND,
	recv = RPMA_MR_USAGE_RECV,
};

/* RPMA_F_COMPLETION_*: whether an operation completes always or only when it fails. */
enum class flag : int {
	completion_on_error = RPMA_F_COMPLETION_ON_ERROR,
	completion_always = RPMA_F_COMPLETION_ALWAYS,
};

/* RPMA_FLUSH_TYPE_*: where a flush takes the data. */
enum class flush_type : int {
	persistent = RPMA_FLUSH_TYPE_PERSISTENT,
	visibility = RPMA_FLUSH_TYPE_VISIBILITY,
};

/* RPMA_FLUSH_METHOD_*: what carries a flush to the target (conn::get_flush_method). */
enum class flush_method : int {
	none = RPMA_FLUSH_METHOD_NONE,
	read_after_write = RPMA_FLUSH_METHOD_READ_AFTER_WRITE,
	gpspm = RPMA_FLUSH_METHOD_GPSPM,
	native = RPMA_FLUSH_METHOD_NATIVE,
};

/* RPMA_GPSPM_*: whether connections carry GPSPM, and who serves it (conn_cfg::set_gpspm). */
enum class gpspm_mode : int {
	disabled = RPMA_GPSPM_DISABLED,
	polled = RPMA_GPSPM_POLLED,
	thread = RPMA_GPSPM_THREAD,
};

/* RPMA_DEFAULT_TIMEOUT_MS */
constexpr std::chrono::milliseconds default_timeout{ RPMA_DEFAULT_TIMEOUT_MS };
/* a wait without limit */
constexpr std::chrono::milliseconds no_timeout = std::chrono::milliseconds::max();

namespace detail
{

/* the scoped enums whose values are bits that combine: |, &, ^, ~ and has() */
template <class E> struct bitmask : std::false_type {};
template <> struct bitmask<usage> : std::true_type {};

template <class E, class R = E> using if_bitmask = std::enable_if_t<bitmask<E>::value, R>;

template <class E> constexpr std::underlying_type_t<E> bits(E e) noexcept
{
	return static_cast<std::underlying_type_t<E>>(e);
}

} /* namespace detail */

template <class E> constexpr detail::if_bitmask<E> operator|(E a, E b) noexcept
{
	return E(detail::bits(a) | detail::bits(b));
}
template <class E> constexpr detail::if_bitmask<E> operator&(E a, E b) noexcept
{
	return E(detail::bits(a) & detail::bits(b));
}
template <class E> constexpr detail::if_bitmask<E> operator^(E a, E b) noexcept
{
	return E(detail::bits(a) ^ detail::bits(b));
}
template <class E> constexpr detail::if_bitmask<E> operator~(E a) noexcept
{
	return E(~detail::bits(a));
}
template <class E> constexpr detail::if_bitmask<E, E &> operator|=(E &a, E b) noexcept
{
	return a = a | b;
}
template <class E> constexpr detail::if_bitmask<E, E &> operator&=(E &a, E b) noexcept
{
	return a = a & b;
}
template <class E> constexpr detail::if_bitmask<E, E &> operator^=(E &a, E b) noexcept
{
	return a = a ^ b;
}
/* whether every bit of `bits` is set in `set` */
template <class E> constexpr detail::if_bitmask<E, bool> has(E set, E bits) noexcept
{
	return (set & bits) == bits;
}

} /* namespace rpma */

#endif /* RPMA_HPP_CONSTANTS */
