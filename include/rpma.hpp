/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma.hpp -- a thin, header-only C++ layer over librpma.h
 *
 * Every librpma object that has a delete function gets a move-only owner
 * (rpma::peer, peer_cfg, mr_local, mr_remote, conn_cfg, conn_req, conn, ep,
 * srq, srq_cfg) whose destructor calls that function; a completion queue,
 * which belongs to its connection or shared RQ, gets a non-owning view
 * (rpma::cq).
 *
 * Naming: rpma_<object>_<verb>(obj, args...) is obj.<verb>(args...);
 * rpma_<object>_new is <object>::create (rpma_mr_reg is mr_local::reg,
 * rpma_ep_listen is ep::listen, the *_from_descriptor functions keep their
 * names); a function of no object, rpma_<name>, is rpma::<name>
 * (rpma::utils_get_ibv_context, rpma::log_set_threshold, ...). The C
 * constants that a C++ type replaces keep their names in lower case:
 * RPMA_E_INVAL is rpma::errc::inval, RPMA_MR_USAGE_WRITE_SRC is
 * rpma::usage::write_src, RPMA_F_COMPLETION_ALWAYS is
 * rpma::flag::completion_always, RPMA_FLUSH_TYPE_PERSISTENT is
 * rpma::flush_type::persistent; timeouts are std::chrono durations. The
 * elements of conn.post_batch() (struct rpma_batch_op) are made by
 * rpma::batch::<call>, from the arguments of conn.<call>.
 *
 * Errors: every call that can fail returns rpma::result<T>, a T or an
 * rpma::error (an RPMA_E_* code as a std::error_code). Nothing here throws,
 * except value() of a failure when exceptions are enabled; the header
 * compiles with -fno-exceptions and -fno-rtti. The data path (posting,
 * polling) is inline and allocation-free: each call is the C call plus a
 * test of its return value.
 *
 * Lifetimes: an object that a call keeps using after it returns (the
 * region of an operation in flight, the peer of what is created from it,
 * the shared RQ of a configuration) is taken by lvalue reference, next to
 * a deleted overload taking `const T &&`: passing a temporary does not
 * compile. Likewise a view (a CQ, private data) cannot be taken from a
 * temporary owner, nor a member reached through `->` of a temporary result.
 *
 * Wrapping a C function: one that only returns a code is
 * result<void>::from_code(rpma_x(...)); one that gives a value through its
 * last parameter is detail::fetch<T>(&rpma_x, args...), T being the C++
 * type of that value. A parameter the C side keeps after the call gets a
 * deleted `const T &&` overload. A set of C constants is a scoped enum of
 * their values; if they combine, detail::bitmask<E> gives it the operators.
 *
 * Buffers are rpma::span, one type in every language standard, made from
 * arrays, contiguous containers and std::span (RPMA_HPP_STD_SPAN is
 * defined when the standard library has std::span: rpma::span then
 * converts to and from it).
 */

#ifndef RPMA_HPP
#define RPMA_HPP 1

#include <librpma.h>

#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif

#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#include <span>
/* rpma::span converts to and from std::span */
#define RPMA_HPP_STD_SPAN 1
#endif

namespace rpma
{

/* ------------------------------------------------------------------ errors */

/* The RPMA_E_* codes by name. */
enum class errc : int {
	unknown = RPMA_E_UNKNOWN,
	nosupp = RPMA_E_NOSUPP,
	provider = RPMA_E_PROVIDER,
	nomem = RPMA_E_NOMEM,
	inval = RPMA_E_INVAL,
	no_completion = RPMA_E_NO_COMPLETION,
	no_event = RPMA_E_NO_EVENT,
	again = RPMA_E_AGAIN,
	shared_channel = RPMA_E_SHARED_CHANNEL,
	not_shared_chnl = RPMA_E_NOT_SHARED_CHNL,
};

/* The macro name of an RPMA_E_* code ("RPMA_E_INVAL"), nullptr if none. */
constexpr const char *errc_name(int code) noexcept
{
	switch (code) {
	case RPMA_E_UNKNOWN:
		return "RPMA_E_UNKNOWN";
	case RPMA_E_NOSUPP:
		return "RPMA_E_NOSUPP";
	case RPMA_E_PROVIDER:
		return "RPMA_E_PROVIDER";
	case RPMA_E_NOMEM:
		return "RPMA_E_NOMEM";
	case RPMA_E_INVAL:
		return "RPMA_E_INVAL";
	case RPMA_E_NO_COMPLETION:
		return "RPMA_E_NO_COMPLETION";
	case RPMA_E_NO_EVENT:
		return "RPMA_E_NO_EVENT";
	case RPMA_E_AGAIN:
		return "RPMA_E_AGAIN";
	case RPMA_E_SHARED_CHANNEL:
		return "RPMA_E_SHARED_CHANNEL";
	case RPMA_E_NOT_SHARED_CHNL:
		return "RPMA_E_NOT_SHARED_CHNL";
	default:
		return nullptr;
	}
}

namespace detail
{

class rpma_error_category final : public std::error_category
{
      public:
	constexpr rpma_error_category() noexcept = default;

	const char *name() const noexcept override
	{
		return "rpma";
	}

	std::string message(int code) const override
	{
		return rpma_err_2str(code);
	}

	/* lets an rpma code compare equal to the matching std::errc */
	std::error_condition default_error_condition(int code) const noexcept override
	{
		switch (code) {
		case RPMA_E_NOSUPP:
			return std::make_error_condition(std::errc::not_supported);
		case RPMA_E_NOMEM:
			return std::make_error_condition(std::errc::not_enough_memory);
		case RPMA_E_INVAL:
			return std::make_error_condition(std::errc::invalid_argument);
		case RPMA_E_AGAIN:
			return std::make_error_condition(std::errc::resource_unavailable_try_again);
		default:
			return std::error_condition(code, *this);
		}
	}
};

/* constant-initialized: reaching it takes no guard, even on the data path */
inline const rpma_error_category category_instance{};

} /* namespace detail */

/* The category of the RPMA_E_* codes: name "rpma", messages of rpma_err_2str. */
inline const std::error_category &category() noexcept
{
	return detail::category_instance;
}

inline std::error_code make_error_code(errc e) noexcept
{
	return std::error_code(static_cast<int>(e), category());
}

/*
 * The errno of the calling thread's last failed rdma-core call: the cause
 * behind errc::provider (an empty error_code when none failed).
 */
inline std::error_code provider_error() noexcept
{
	return std::error_code(rpma_err_get_provider_error(), std::generic_category());
}

} /* namespace rpma */

namespace std
{
template <> struct is_error_code_enum<rpma::errc> : true_type {
};
} /* namespace std */

namespace rpma
{

/*
 * An RPMA_E_* code as a std::error_code of rpma::category(), or no error
 * (an empty error_code). It is what result<T>::error() gives and what any
 * result is made from, so that a failure passes from one result type to
 * another as it is: `return r.error();`. Only rpma codes get in.
 */
class error : public std::error_code
{
      public:
	error() noexcept = default;
	error(errc e) noexcept : std::error_code(e)
	{
	}
	/* what a C function returned: 0 is no error */
	explicit error(int code) noexcept
	    : std::error_code(code != 0 ? std::error_code(code, rpma::category())
					: std::error_code())
	{
	}

	void assign(int, const std::error_category &) = delete;
};

/* ------------------------------------------------------------------ result */

namespace detail
{

#if defined(__cpp_exceptions)
constexpr bool exceptions = true;
#else
constexpr bool exceptions = false;
#endif

/* value() of a failure: std::system_error, or the end of the program without exceptions */
[[noreturn]] inline void bad_result_access(int code) noexcept(!exceptions)
{
#if defined(__cpp_exceptions)
	throw std::system_error(code, category(), "rpma::result::value()");
#else
	const char *name = errc_name(code);
	std::fprintf(stderr, "rpma::result::value() of a failure: %s (%s)\n",
		     name != nullptr ? name : "?", rpma_err_2str(code));
	std::abort();
#endif
}

struct failure_t {
};
struct value_t {
};

template <class T>
constexpr bool trivial_value =
    std::is_trivially_copyable<T>::value &&std::is_trivially_destructible<T>::value;

/* trivially copyable values (numbers, views, rpma_completion): trivial copies */
template <class T, bool = trivial_value<T>> struct result_storage {
	int code_;
	union {
		char none_;
		T value_;
	};

	constexpr result_storage(failure_t, int code) noexcept : code_(code), none_()
	{
	}
	constexpr result_storage(value_t, const T &value) noexcept : code_(0), value_(value)
	{
	}
};

/* owners: move-only, the value is destroyed only when there is one */
template <class T> struct result_storage<T, false> {
	static_assert(std::is_nothrow_move_constructible<T>::value,
		      "rpma::result<T> needs a T that moves without throwing");

	int code_;
	union {
		char none_;
		T value_;
	};

	result_storage(failure_t, int code) noexcept : code_(code), none_()
	{
	}
	result_storage(value_t, T &&value) noexcept : code_(0)
	{
		::new (static_cast<void *>(&value_)) T(std::move(value));
	}
	result_storage(result_storage &&other) noexcept : code_(other.code_)
	{
		if (code_ == 0)
			::new (static_cast<void *>(&value_)) T(std::move(other.value_));
	}
	result_storage &operator=(result_storage &&other) noexcept
	{
		if (this != &other) {
			destroy();
			code_ = other.code_;
			if (code_ == 0)
				::new (static_cast<void *>(&value_)) T(std::move(other.value_));
		}
		return *this;
	}
	result_storage(const result_storage &) = delete;
	result_storage &operator=(const result_storage &) = delete;
	~result_storage()
	{
		destroy();
	}

      private:
	void destroy() noexcept
	{
		if (code_ == 0)
			value_.~T();
		code_ = RPMA_E_UNKNOWN;
	}
};

/*
 * `if (r)`: whether the call succeeded. Not for a result<bool>, where it
 * would read as the answer: there has_value() is the success, *r the answer.
 */
template <class Result, class T> struct success_test {
	explicit operator bool() const noexcept
	{
		return static_cast<const Result *>(this)->has_value();
	}
};
template <class Result> struct success_test<Result, bool> {
	explicit operator bool() const = delete;
};

} /* namespace detail */

/*
 * The outcome of a call: a T, or an RPMA_E_* code. As std::expected:
 * has_value() (and operator bool, but not for result<bool>) tells which;
 * *r and r-> give the value without a check; value() checks: it throws
 * std::system_error, or without exceptions prints the error and aborts;
 * error() is the code as an rpma::error (empty on success), code() the raw
 * RPMA_E_* value (0 on success). A result is made from a T, an errc or an
 * rpma::error; an empty error makes errc::unknown, never a success.
 * Taken from a temporary result, the value is moved out (not referenced).
 */
template <class T> class [[nodiscard]] result : public detail::success_test<result<T>, T>
{
	static_assert(!std::is_reference<T>::value && !std::is_void<T>::value,
		      "rpma::result<T> holds an object");

      public:
	using value_type = T;

	/* a success holding value */
	result(T value) noexcept : s_(detail::value_t{}, std::move(value))
	{
	}
	/* a failure */
	result(errc e) noexcept : s_(detail::failure_t{}, static_cast<int>(e))
	{
	}
	result(rpma::error e) noexcept : s_(detail::failure_t{}, e ? e.value() : RPMA_E_UNKNOWN)
	{
	}

	bool has_value() const noexcept
	{
		return s_.code_ == 0;
	}
	int code() const noexcept
	{
		return s_.code_;
	}
	rpma::error error() const noexcept
	{
		return rpma::error(s_.code_);
	}

	T &value() &noexcept(!detail::exceptions)
	{
		check();
		return s_.value_;
	}
	const T &value() const &noexcept(!detail::exceptions)
	{
		check();
		return s_.value_;
	}
	T value() &&noexcept(!detail::exceptions)
	{
		check();
		return std::move(s_.value_);
	}

	T &operator*() &noexcept
	{
		return s_.value_;
	}
	const T &operator*() const &noexcept
	{
		return s_.value_;
	}
	T operator*() &&noexcept
	{
		return std::move(s_.value_);
	}
	T *operator->() &noexcept
	{
		return &s_.value_;
	}
	const T *operator->() const &noexcept
	{
		return &s_.value_;
	}
	/* what it points to would die with the temporary result */
	T *operator->() && = delete;
	const T *operator->() const && = delete;

	template <class U> T value_or(U &&fallback) const &noexcept
	{
		return has_value() ? s_.value_ : static_cast<T>(std::forward<U>(fallback));
	}
	template <class U> T value_or(U &&fallback) &&noexcept
	{
		return has_value() ? std::move(s_.value_)
				   : static_cast<T>(std::forward<U>(fallback));
	}

      private:
	void check() const noexcept(!detail::exceptions)
	{
		if (s_.code_ != 0)
			detail::bad_result_access(s_.code_);
	}

	detail::result_storage<T> s_;
};

/*
 * The outcome of a call that gives nothing back: an RPMA_E_* code, 0 for
 * success, the size of an int. An empty rpma::error makes a success.
 */
template <> class [[nodiscard]] result<void>
{
      public:
	using value_type = void;

	constexpr result() noexcept = default;
	constexpr result(errc e) noexcept : code_(static_cast<int>(e))
	{
	}
	result(rpma::error e) noexcept : code_(e.value())
	{
	}

	/*
	 * What a C function returned: 0 is a success, anything else its
	 * failure. (A result<T> has no from_code: a C call gives its T
	 * through a pointer.)
	 */
	static constexpr result from_code(int ret) noexcept
	{
		return result(ret, 0);
	}

	constexpr bool has_value() const noexcept
	{
		return code_ == 0;
	}
	constexpr explicit operator bool() const noexcept
	{
		return code_ == 0;
	}
	constexpr int code() const noexcept
	{
		return code_;
	}
	rpma::error error() const noexcept
	{
		return rpma::error(code_);
	}
	void value() const noexcept(!detail::exceptions)
	{
		if (code_ != 0)
			detail::bad_result_access(code_);
	}

      private:
	constexpr result(int code, int) noexcept : code_(code)
	{
	}

	int code_ = 0;
};

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
template <class E> struct bitmask : std::false_type {
};
template <> struct bitmask<usage> : std::true_type {
};

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

/* -------------------------------------------------------------------- span */

namespace detail
{
template <class T> struct is_std_span : std::false_type {
};
#ifdef RPMA_HPP_STD_SPAN
template <class T, std::size_t N> struct is_std_span<std::span<T, N>> : std::true_type {
};
#endif
} /* namespace detail */

/*
 * A view of contiguous Ts (dynamic extent): the same type, defined by the
 * same tokens, whatever the language standard, so that it never changes
 * the signature of a function that takes one. Made implicitly from a C
 * array, a contiguous container (anything std::data and std::size apply
 * to: std::vector, std::array, std::string, std::span, ...), a span of
 * the same or less const elements, and a pointer and a size ({ptr, n}).
 * As std::span, it is made from a temporary container only when its
 * elements are const (or the container is a std::span). Where there is
 * std::span, an rpma::span converts to it too: it is a borrowed range.
 */
template <class T> class span
{
	template <class U> using compatible = std::is_convertible<U (*)[], T (*)[]>;

	template <class C>
	using element_of = std::remove_pointer_t<decltype(std::data(std::declval<C &>()))>;

	template <class C, class = void> struct is_container : std::false_type {
	};
	template <class C>
	struct is_container<C, std::void_t<element_of<C>, decltype(std::size(std::declval<C &>()))>>
	    : std::true_type {
	};

	template <class U> struct is_span : std::false_type {
	};
	template <class U> struct is_span<span<U>> : std::true_type {
	};

      public:
	using element_type = T;
	using value_type = std::remove_cv_t<T>;
	using size_type = std::size_t;
	using difference_type = std::ptrdiff_t;
	using pointer = T *;
	using const_pointer = const T *;
	using reference = T &;
	using iterator = T *;

	constexpr span() noexcept = default;
	constexpr span(T *data, size_type size) noexcept : data_(data), size_(size)
	{
	}
	template <class U, std::size_t N, class = std::enable_if_t<compatible<U>::value>>
	constexpr span(U (&array)[N]) noexcept : data_(array), size_(N)
	{
	}
	template <
	    class C, class B = std::remove_cv_t<std::remove_reference_t<C>>,
	    class = std::enable_if_t<!std::is_array<B>::value && !is_span<B>::value &&
				     is_container<C>::value>,
	    class = std::enable_if_t<compatible<element_of<C>>::value &&
				     (std::is_lvalue_reference<C>::value ||
				      std::is_const<T>::value || detail::is_std_span<B>::value)>>
	constexpr span(C &&container) noexcept(
	    noexcept(std::data(container)) &&noexcept(std::size(container)))
	    : data_(std::data(container)), size_(std::size(container))
	{
	}
	template <class U,
		  class = std::enable_if_t<compatible<U>::value && !std::is_same<U, T>::value>>
	constexpr span(const span<U> &other) noexcept : data_(other.data()), size_(other.size())
	{
	}

	constexpr T *data() const noexcept
	{
		return data_;
	}
	constexpr size_type size() const noexcept
	{
		return size_;
	}
	constexpr size_type size_bytes() const noexcept
	{
		return size_ * sizeof(T);
	}
	constexpr bool empty() const noexcept
	{
		return size_ == 0;
	}
	constexpr T &operator[](size_type i) const noexcept
	{
		return data_[i];
	}
	constexpr iterator begin() const noexcept
	{
		return data_;
	}
	constexpr iterator end() const noexcept
	{
		return data_ + size_;
	}
	constexpr span first(size_type count) const noexcept
	{
		return span(data_, count);
	}
	constexpr span last(size_type count) const noexcept
	{
		return span(data_ + (size_ - count), count);
	}
	constexpr span subspan(size_type offset, size_type count = size_type(-1)) const noexcept
	{
		return span(data_ + offset, count == size_type(-1) ? size_ - offset : count);
	}

      private:
	T *data_ = nullptr;
	size_type size_ = 0;
};

template <class T> span<const std::byte> as_bytes(span<T> s) noexcept
{
	return span<const std::byte>(reinterpret_cast<const std::byte *>(s.data()), s.size_bytes());
}

template <class T, class = std::enable_if_t<!std::is_const<T>::value>>
span<std::byte> as_writable_bytes(span<T> s) noexcept
{
	return span<std::byte>(reinterpret_cast<std::byte *>(s.data()), s.size_bytes());
}

} /* namespace rpma */

#if defined(RPMA_HPP_STD_SPAN) && defined(__cpp_lib_ranges)
namespace std::ranges
{
/* as std::span: what an rpma::span views does not die with it */
template <class T> inline constexpr bool enable_borrowed_range<rpma::span<T>> = true;
} /* namespace std::ranges */
#endif

namespace rpma
{

namespace detail
{

/* what a C function stores through its last parameter, a pointer */
template <class F> struct out_of {
};
template <class... P> struct out_of<int (*)(P...)> {
	using type =
	    std::remove_pointer_t<std::tuple_element_t<sizeof...(P) - 1, std::tuple<P...>>>;
};

template <class T, class F>
using fetched = std::conditional_t<std::is_void<T>::value, typename out_of<F>::type, T>;

/*
 * Calls fn(args..., &out), a C function that returns 0 or an RPMA_E_* code
 * and stores what it gives through its last parameter, and makes that
 * outcome a result: of T(out), or of out itself when T is void. Every
 * getter and constructor below is this one call.
 */
template <class T = void, class F, class... A>
inline result<fetched<T, F>> fetch(F fn, A... args) noexcept
{
	typename out_of<F>::type out;
	int ret = fn(args..., &out);
	if (ret != 0)
		return rpma::error(ret);
	return fetched<T, F>(out);
}

/*
 * Owns one librpma object. The C delete function gets the address of the
 * owned pointer, so whatever it does to it (NULL on success) is what the
 * owner holds afterwards: an object the library freed is never deleted
 * again, and one it could not free stays owned.
 */
template <class T, int (*Delete)(T **)> class unique_handle
{
      public:
	using pointer = T *;

	constexpr unique_handle() noexcept = default;
	/* takes ownership of p */
	constexpr explicit unique_handle(T *p) noexcept : ptr_(p)
	{
	}

	unique_handle(const unique_handle &) = delete;
	unique_handle &operator=(const unique_handle &) = delete;

	unique_handle(unique_handle &&other) noexcept : ptr_(other.ptr_)
	{
		other.ptr_ = nullptr;
	}
	/* deletes the object held so far (a failure to do so is dropped) */
	unique_handle &operator=(unique_handle &&other) noexcept
	{
		if (this != &other) {
			destroy();
			ptr_ = other.ptr_;
			other.ptr_ = nullptr;
		}
		return *this;
	}

	~unique_handle()
	{
		destroy();
	}

	T *get() const noexcept
	{
		return ptr_;
	}
	explicit operator bool() const noexcept
	{
		return ptr_ != nullptr;
	}

	/* gives the object up: the caller deletes it */
	[[nodiscard]] T *release() noexcept
	{
		T *p = ptr_;
		ptr_ = nullptr;
		return p;
	}

	/*
	 * Deletes the object now and says how that went; on a failure the
	 * object is still owned if the library kept it. Nothing to do when
	 * empty.
	 */
	result<void> reset() noexcept
	{
		if (ptr_ == nullptr)
			return result<void>();
		return result<void>::from_code(Delete(&ptr_));
	}

      protected:
	void destroy() noexcept
	{
		if (ptr_ != nullptr)
			(void)Delete(&ptr_);
	}

	T *ptr_ = nullptr;
};

/* a size_t element count as the int the C calls take */
constexpr int clamp_count(std::size_t n) noexcept
{
	return n > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
}

/* a time in milliseconds as the int the C calls take */
constexpr int clamp_ms(std::chrono::milliseconds t) noexcept
{
	return t.count() > INT_MAX   ? INT_MAX
	       : t.count() < INT_MIN ? INT_MIN
				     : static_cast<int>(t.count());
}

/* the private data of a connection or a request, as bytes */
template <class C>
result<span<const std::byte>> private_data(int (*get)(const C *, rpma_conn_private_data *),
					   const C *obj) noexcept
{
	result<rpma_conn_private_data> pdata = fetch(get, obj);
	if (!pdata)
		return pdata.error();
	return span<const std::byte>(static_cast<const std::byte *>(pdata->ptr),
				     pdata->ptr != nullptr ? pdata->len : 0);
}

/* the descriptor of obj, write(obj, buffer), written at the start of out: its size */
template <class C, class W>
result<std::size_t> write_descriptor(const C *obj, span<std::byte> out,
				     int (*size_of)(const C *, std::size_t *), W write) noexcept
{
	result<std::size_t> size = fetch(size_of, obj);
	if (!size)
		return size;
	if (out.size() < *size)
		return errc::inval;
	if (int ret = write(obj, out.data()); ret != 0)
		return rpma::error(ret);
	return size;
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
	constexpr explicit cq(rpma_cq *p) noexcept : ptr_(p)
	{
	}

	constexpr rpma_cq *get() const noexcept
	{
		return ptr_;
	}
	constexpr explicit operator bool() const noexcept
	{
		return ptr_ != nullptr;
	}

	result<int> get_fd() const noexcept
	{
		return detail::fetch(&rpma_cq_get_fd, ptr_);
	}

	/* waits for one completion event and re-arms (rpma_cq_wait) */
	result<void> wait() const noexcept
	{
		return result<void>::from_code(rpma_cq_wait(ptr_));
	}

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
		int ms = timeout == no_timeout ? -1
			 : timeout.count() < 0 ? 0
					       : detail::clamp_ms(timeout);
		return result<void>::from_code(rpma_cq_wait_completion(ptr_, &cmpl, ms));
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

/* ---------------------------------------------------------------- peer_cfg */

class conn_cfg;

class peer_cfg : public detail::unique_handle<rpma_peer_cfg, &rpma_peer_cfg_delete>
{
      public:
	using unique_handle::unique_handle;

	static result<peer_cfg> create() noexcept
	{
		return detail::fetch<peer_cfg>(&rpma_peer_cfg_new);
	}

	/* a peer's configuration as it sent it (untrusted bytes, copied) */
	static result<peer_cfg> from_descriptor(span<const std::byte> desc) noexcept
	{
		return detail::fetch<peer_cfg>(&rpma_peer_cfg_from_descriptor, desc.data(),
					       desc.size());
	}

	result<void> set_direct_write_to_pmem(bool supported) noexcept
	{
		return result<void>::from_code(
		    rpma_peer_cfg_set_direct_write_to_pmem(ptr_, supported));
	}
	result<bool> get_direct_write_to_pmem() const noexcept
	{
		return detail::fetch(&rpma_peer_cfg_get_direct_write_to_pmem, ptr_);
	}

	result<std::size_t> get_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_peer_cfg_get_descriptor_size, ptr_);
	}
	/* writes the descriptor at the start of out: its size, errc::inval if out is too small */
	result<std::size_t> get_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(ptr_, out, &rpma_peer_cfg_get_descriptor_size,
						&rpma_peer_cfg_get_descriptor);
	}

	/* extension: the descriptor followed by the GPSPM service of the connections */
	result<std::size_t> get_versioned_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_peer_cfg_get_versioned_descriptor_size, ptr_);
	}
	/*
	 * Writes the versioned descriptor at the start of out, announcing the
	 * GPSPM service of connections made with the default configuration
	 * (none): its size, errc::inval if out is too small.
	 */
	result<std::size_t> get_versioned_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(
		    ptr_, out, &rpma_peer_cfg_get_versioned_descriptor_size,
		    [](const rpma_peer_cfg *pcfg, void *desc) {
			    return rpma_peer_cfg_get_versioned_descriptor(pcfg, nullptr, desc);
		    });
	}
	/* ...of connections made with cfg (read by the call only) */
	result<std::size_t> get_versioned_descriptor(const conn_cfg &cfg,
						     span<std::byte> out) const noexcept;
};

/* -------------------------------------------------------------------- peer */

class peer : public detail::unique_handle<rpma_peer, &rpma_peer_delete>
{
      public:
	using unique_handle::unique_handle;

	static result<peer> create(ibv_context *ibv_ctx) noexcept
	{
		return detail::fetch<peer>(&rpma_peer_new, ibv_ctx);
	}
};

/* ---------------------------------------------------------------- mr_local */

/* A registered local memory region; the memory and the peer must outlive it. */
class mr_local : public detail::unique_handle<rpma_mr_local, &rpma_mr_dereg>
{
      public:
	using unique_handle::unique_handle;

	static result<mr_local> reg(peer &p, void *ptr, std::size_t size, usage u) noexcept
	{
		return detail::fetch<mr_local>(&rpma_mr_reg, p.get(), ptr, size,
					       static_cast<int>(u));
	}
	static result<mr_local> reg(peer &p, span<std::byte> memory, usage u) noexcept
	{
		return reg(p, memory.data(), memory.size(), u);
	}
	static result<mr_local> reg(const peer &&, void *, std::size_t, usage) = delete;
	static result<mr_local> reg(const peer &&, span<std::byte>, usage) = delete;

	result<std::size_t> get_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_mr_get_descriptor_size, ptr_);
	}
	/* writes the descriptor at the start of out: its size, errc::inval if out is too small */
	result<std::size_t> get_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(ptr_, out, &rpma_mr_get_descriptor_size,
						&rpma_mr_get_descriptor);
	}

	/* extension: the descriptor followed by the flush methods the region offers */
	result<std::size_t> get_versioned_descriptor_size() const noexcept
	{
		return detail::fetch(&rpma_mr_get_versioned_descriptor_size, ptr_);
	}
	/* writes it at the start of out: its size, errc::inval if out is too small */
	result<std::size_t> get_versioned_descriptor(span<std::byte> out) const noexcept
	{
		return detail::write_descriptor(ptr_, out, &rpma_mr_get_versioned_descriptor_size,
						&rpma_mr_get_versioned_descriptor);
	}

	/*
	 * Extension: offers GPSPM flushes of the region, persisted with persist
	 * (pmem2_get_persist_fn() of its mapping fits); nullptr withdraws the
	 * offer. persist runs in whichever thread serves a GPSPM connection.
	 */
	result<void> set_persist_fn(rpma_persist_fn *persist) noexcept
	{
		return result<void>::from_code(rpma_mr_set_persist_fn(ptr_, persist));
	}
	/* Extension: the same, persist given ctx too (the caller's state for the region). */
	result<void> set_persist_fn(rpma_persist_ctx_fn *persist, void *ctx) noexcept
	{
		return result<void>::from_code(rpma_mr_set_persist_ctx_fn(ptr_, persist, ctx));
	}

	result<void *> get_ptr() const noexcept
	{
		return detail::fetch(&rpma_mr_get_ptr, ptr_);
	}
	result<std::size_t> get_size() const noexcept
	{
		return detail::fetch(&rpma_mr_get_size, ptr_);
	}

	result<void> advise(std::size_t offset, std::size_t len, ibv_advise_mr_advice advice,
			    std::uint32_t flags = 0) noexcept
	{
		return result<void>::from_code(rpma_mr_advise(ptr_, offset, len, advice, flags));
	}
};

/* --------------------------------------------------------------- mr_remote */

class mr_remote : public detail::unique_handle<rpma_mr_remote, &rpma_mr_remote_delete>
{
      public:
	using unique_handle::unique_handle;

	/* a peer's region as it sent it (untrusted bytes, copied) */
	static result<mr_remote> from_descriptor(span<const std::byte> desc) noexcept
	{
		return detail::fetch<mr_remote>(&rpma_mr_remote_from_descriptor, desc.data(),
						desc.size());
	}

	result<std::size_t> get_size() const noexcept
	{
		return detail::fetch(&rpma_mr_remote_get_size, ptr_);
	}
	/* the usage::flush_type_* bits the region was registered with */
	result<usage> get_flush_type() const noexcept
	{
		return detail::fetch<usage>(&rpma_mr_remote_get_flush_type, ptr_);
	}
};

/* ----------------------------------------------------------------- srq_cfg */

class srq_cfg : public detail::unique_handle<rpma_srq_cfg, &rpma_srq_cfg_delete>
{
      public:
	using unique_handle::unique_handle;

	static result<srq_cfg> create() noexcept
	{
		return detail::fetch<srq_cfg>(&rpma_srq_cfg_new);
	}

	result<void> set_rq_size(std::uint32_t rq_size) noexcept
	{
		return result<void>::from_code(rpma_srq_cfg_set_rq_size(ptr_, rq_size));
	}
	result<std::uint32_t> get_rq_size() const noexcept
	{
		return detail::fetch(&rpma_srq_cfg_get_rq_size, ptr_);
	}
	result<void> set_rcq_size(std::uint32_t rcq_size) noexcept
	{
		return result<void>::from_code(rpma_srq_cfg_set_rcq_size(ptr_, rcq_size));
	}
	result<std::uint32_t> get_rcq_size() const noexcept
	{
		return detail::fetch(&rpma_srq_cfg_get_rcq_size, ptr_);
	}
};

/* --------------------------------------------------------------------- srq */

/* A shared receive queue; its peer must outlive it, the connections that use it go first. */
class srq : public detail::unique_handle<rpma_srq, &rpma_srq_delete>
{
      public:
	using unique_handle::unique_handle;

	/* the configuration is read by the call only */
	static result<srq> create(peer &p) noexcept
	{
		return detail::fetch<srq>(&rpma_srq_new, p.get(), nullptr);
	}
	static result<srq> create(peer &p, const srq_cfg &cfg) noexcept
	{
		return detail::fetch<srq>(&rpma_srq_new, p.get(), cfg.get());
	}
	static result<srq> create(const peer &&) = delete;
	static result<srq> create(const peer &&, const srq_cfg &) = delete;

	/* dst until the receive completes */
	result<void> recv(mr_local &dst, std::size_t offset, std::size_t len,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_srq_recv(ptr_, dst.get(), offset, len, op_context));
	}
	result<void> recv(const mr_local &&, std::size_t, std::size_t,
			  const void * = nullptr) = delete;

	/* the receive CQ (an empty view when the SRQ has none) */
	result<cq> get_rcq() const &noexcept
	{
		return detail::fetch<cq>(&rpma_srq_get_rcq, ptr_);
	}
	result<cq> get_rcq() const && = delete;
};

/* ---------------------------------------------------------------- conn_cfg */

class conn_cfg : public detail::unique_handle<rpma_conn_cfg, &rpma_conn_cfg_delete>
{
      public:
	using unique_handle::unique_handle;

	static result<conn_cfg> create() noexcept
	{
		return detail::fetch<conn_cfg>(&rpma_conn_cfg_new);
	}

	/* in whole milliseconds; a negative one is errc::inval */
	result<void> set_timeout(std::chrono::milliseconds timeout) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_cfg_set_timeout(ptr_, detail::clamp_ms(timeout)));
	}
	result<std::chrono::milliseconds> get_timeout() const noexcept
	{
		return detail::fetch<std::chrono::milliseconds>(&rpma_conn_cfg_get_timeout, ptr_);
	}

	result<void> set_cq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_cq_size(ptr_, size));
	}
	result<std::uint32_t> get_cq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_cq_size, ptr_);
	}
	result<void> set_rcq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_rcq_size(ptr_, size));
	}
	result<std::uint32_t> get_rcq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_rcq_size, ptr_);
	}
	result<void> set_sq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_sq_size(ptr_, size));
	}
	result<std::uint32_t> get_sq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_sq_size, ptr_);
	}
	result<void> set_rq_size(std::uint32_t size) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_rq_size(ptr_, size));
	}
	result<std::uint32_t> get_rq_size() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_rq_size, ptr_);
	}

	result<void> set_compl_channel(bool shared) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_compl_channel(ptr_, shared));
	}
	result<bool> get_compl_channel() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_compl_channel, ptr_);
	}

	/*
	 * The configuration keeps the shared RQ (not owned) for the
	 * connections made with it: s must outlive them.
	 */
	result<void> set_srq(const srq &s) noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_srq(ptr_, s.get()));
	}
	result<void> set_srq(const srq &&) = delete;
	result<void> clear_srq() noexcept
	{
		return result<void>::from_code(rpma_conn_cfg_set_srq(ptr_, nullptr));
	}
	/* the shared RQ set (not owned), nullptr when none */
	result<rpma_srq *> get_srq() const noexcept
	{
		return detail::fetch(&rpma_conn_cfg_get_srq, ptr_);
	}

	/* extension: whether connections carry GPSPM flushes, and who serves them */
	result<void> set_gpspm(gpspm_mode mode) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_cfg_set_gpspm(ptr_, static_cast<rpma_gpspm_mode>(mode)));
	}
	result<gpspm_mode> get_gpspm() const noexcept
	{
		return detail::fetch<gpspm_mode>(&rpma_conn_cfg_get_gpspm, ptr_);
	}
};

inline result<std::size_t> peer_cfg::get_versioned_descriptor(const conn_cfg &cfg,
							      span<std::byte> out) const noexcept
{
	const rpma_conn_cfg *c = cfg.get();
	return detail::write_descriptor(ptr_, out, &rpma_peer_cfg_get_versioned_descriptor_size,
					[c](const rpma_peer_cfg *pcfg, void *desc) {
						return rpma_peer_cfg_get_versioned_descriptor(
						    pcfg, c, desc);
					});
}

/* ------------------------------------------------------------------- batch */

namespace detail
{

/* an element of a batch (rpma::batch) */
inline rpma_batch_op batch_element(rpma_op kind, flag flags, const void *op_context,
				   const rpma_mr_local *local, std::size_t local_offset,
				   const rpma_mr_remote *remote, std::size_t remote_offset,
				   std::size_t len) noexcept
{
	rpma_batch_op op{};
	op.op = kind;
	op.flags = static_cast<int>(flags);
	op.op_context = op_context;
	op.local = local;
	op.local_offset = local_offset;
	op.remote = remote;
	op.remote_offset = remote_offset;
	op.len = len;
	return op;
}

} /* namespace detail */

/*
 * Extension: the elements of conn::post_batch(), each made from the
 * arguments that the conn call posting the same operation alone takes:
 * rpma::batch::write(dst, dst_offset, src, src_offset, len, flags) is what
 * conn.write(dst, dst_offset, src, src_offset, len, flags) would post. An
 * element points at its regions: the local one must outlive the operation,
 * the remote one the post, so that neither may be a temporary.
 */
namespace batch
{

inline rpma_batch_op read(mr_local &dst, std::size_t dst_offset, const mr_remote &src,
			  std::size_t src_offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
{
	return detail::batch_element(RPMA_OP_READ, flags, op_context, dst.get(), dst_offset,
				     src.get(), src_offset, len);
}
rpma_batch_op read(const mr_local &&, std::size_t, const mr_remote &, std::size_t, std::size_t,
		   flag, const void * = nullptr) = delete;
rpma_batch_op read(mr_local &, std::size_t, const mr_remote &&, std::size_t, std::size_t, flag,
		   const void * = nullptr) = delete;

inline rpma_batch_op write(const mr_remote &dst, std::size_t dst_offset, const mr_local &src,
			   std::size_t src_offset, std::size_t len, flag flags,
			   const void *op_context = nullptr) noexcept
{
	return detail::batch_element(RPMA_OP_WRITE, flags, op_context, src.get(), src_offset,
				     dst.get(), dst_offset, len);
}
rpma_batch_op write(const mr_remote &, std::size_t, const mr_local &&, std::size_t, std::size_t,
		    flag, const void * = nullptr) = delete;
rpma_batch_op write(const mr_remote &&, std::size_t, const mr_local &, std::size_t, std::size_t,
		    flag, const void * = nullptr) = delete;
rpma_batch_op write(const mr_remote &&, std::size_t, const mr_local &&, std::size_t, std::size_t,
		    flag, const void * = nullptr) = delete;

inline rpma_batch_op write_with_imm(const mr_remote &dst, std::size_t dst_offset,
				    const mr_local &src, std::size_t src_offset, std::size_t len,
				    flag flags, std::uint32_t imm,
				    const void *op_context = nullptr) noexcept
{
	rpma_batch_op op = write(dst, dst_offset, src, src_offset, len, flags, op_context);
	op.imm = imm;
	op.with_imm = true;
	return op;
}
rpma_batch_op write_with_imm(const mr_remote &, std::size_t, const mr_local &&, std::size_t,
			     std::size_t, flag, std::uint32_t, const void * = nullptr) = delete;
rpma_batch_op write_with_imm(const mr_remote &&, std::size_t, const mr_local &, std::size_t,
			     std::size_t, flag, std::uint32_t, const void * = nullptr) = delete;
rpma_batch_op write_with_imm(const mr_remote &&, std::size_t, const mr_local &&, std::size_t,
			     std::size_t, flag, std::uint32_t, const void * = nullptr) = delete;

inline rpma_batch_op flush(const mr_remote &dst, std::size_t dst_offset, std::size_t len,
			   flush_type type, flag flags, const void *op_context = nullptr) noexcept
{
	rpma_batch_op op = detail::batch_element(RPMA_OP_FLUSH, flags, op_context, nullptr, 0,
						 dst.get(), dst_offset, len);
	op.flush_type = static_cast<rpma_flush_type>(type);
	return op;
}
rpma_batch_op flush(const mr_remote &&, std::size_t, std::size_t, flush_type, flag,
		    const void * = nullptr) = delete;

inline rpma_batch_op send(const mr_local &src, std::size_t offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
{
	return detail::batch_element(RPMA_OP_SEND, flags, op_context, src.get(), offset, nullptr, 0,
				     len);
}
rpma_batch_op send(const mr_local &&, std::size_t, std::size_t, flag,
		   const void * = nullptr) = delete;

inline rpma_batch_op send_with_imm(const mr_local &src, std::size_t offset, std::size_t len,
				   flag flags, std::uint32_t imm,
				   const void *op_context = nullptr) noexcept
{
	rpma_batch_op op = send(src, offset, len, flags, op_context);
	op.imm = imm;
	op.with_imm = true;
	return op;
}
rpma_batch_op send_with_imm(const mr_local &&, std::size_t, std::size_t, flag, std::uint32_t,
			    const void * = nullptr) = delete;

} /* namespace batch */

/*
 * Extension: what conn::post_batch() did: a result<void>, and the index of
 * the element that a failure concerns, as rpma_post_batch() stores it in
 * *failed: the element refused (nothing was posted), or with
 * errc::provider the first element not posted (those before it were). -1
 * on success, and when the call was refused as a whole.
 */
class [[nodiscard]] batch_result : public result<void>
{
      public:
	constexpr batch_result() noexcept = default;
	constexpr batch_result(result<void> outcome, int failed) noexcept
	    : result<void>(outcome), failed_(failed)
	{
	}

	constexpr int failed() const noexcept
	{
		return failed_;
	}

      private:
	int failed_ = -1;
};

/* -------------------------------------------------------------------- conn */

/* which CQ a shared completion channel woke up for (conn::wait) */
struct conn_wait_result {
	cq queue;
	bool is_rcq;
};

/*
 * A connection. The owner deletes it but does not disconnect it: call
 * disconnect() and wait for RPMA_CONN_CLOSED first for an orderly close.
 * Its peer must outlive it, and a local region must outlive every
 * operation in flight on it; a remote region is read by the call only.
 */
class conn : public detail::unique_handle<rpma_conn, &rpma_conn_delete>
{
      public:
	using unique_handle::unique_handle;

	result<int> get_event_fd() const noexcept
	{
		return detail::fetch(&rpma_conn_get_event_fd, ptr_);
	}
	result<rpma_conn_event> next_event() noexcept
	{
		return detail::fetch(&rpma_conn_next_event, ptr_);
	}
	/*
	 * Extension: whether the connection is still up; false for good once
	 * the library has seen it closed or lost. Never blocks; the events it
	 * takes stay for next_event(). For programs that only poll their CQs.
	 */
	result<bool> is_up() noexcept
	{
		return detail::fetch(&rpma_conn_is_up, ptr_);
	}

	/*
	 * Extension: waits up to timeout_ms (-1: no limit) until a GPSPM flush
	 * can be posted without errc::again; the other completions it finds
	 * on the CQ stay for the next take. errc::no_completion on time-out.
	 */
	result<void> wait_flush_room(int timeout_ms) noexcept
	{
		return result<void>::from_code(rpma_conn_wait_flush_room(ptr_, timeout_ms));
	}

	/* the peer's private data (untrusted), valid while the connection lives */
	result<span<const std::byte>> get_private_data() const &noexcept
	{
		return detail::private_data(&rpma_conn_get_private_data, ptr_);
	}
	result<span<const std::byte>> get_private_data() const && = delete;

	/* the configuration is read by the call only */
	result<void> apply_remote_peer_cfg(const peer_cfg &pcfg) noexcept
	{
		return result<void>::from_code(rpma_conn_apply_remote_peer_cfg(ptr_, pcfg.get()));
	}

	/*
	 * Extension: the method flush() uses for dst and type; errc::nosupp
	 * when none can carry it. The region is read by the call only.
	 */
	result<flush_method> get_flush_method(const mr_remote &dst, flush_type type) const noexcept
	{
		return detail::fetch<flush_method>(&rpma_conn_get_flush_method, ptr_, dst.get(),
						   static_cast<rpma_flush_type>(type));
	}

	result<std::uint32_t> get_qp_num() const noexcept
	{
		return detail::fetch(&rpma_conn_get_qp_num, ptr_);
	}

	result<cq> get_cq() const &noexcept
	{
		return detail::fetch<cq>(&rpma_conn_get_cq, ptr_);
	}
	result<cq> get_cq() const && = delete;
	/* the receive CQ (an empty view when the connection has none) */
	result<cq> get_rcq() const &noexcept
	{
		return detail::fetch<cq>(&rpma_conn_get_rcq, ptr_);
	}
	result<cq> get_rcq() const && = delete;

	result<int> get_compl_fd() const noexcept
	{
		return detail::fetch(&rpma_conn_get_compl_fd, ptr_);
	}
	/* waits on the shared completion channel: which CQ has completions */
	result<conn_wait_result> wait() &noexcept
	{
		rpma_cq *c = nullptr;
		bool is_rcq = false;
		if (int ret = rpma_conn_wait(ptr_, 0, &c, &is_rcq); ret != 0)
			return rpma::error(ret);
		return conn_wait_result{ cq(c), is_rcq };
	}
	result<conn_wait_result> wait() && = delete;

	result<void> disconnect() noexcept
	{
		return result<void>::from_code(rpma_conn_disconnect(ptr_));
	}

	/* data path: one work request each, as the C calls */

	result<void> read(mr_local &dst, std::size_t dst_offset, const mr_remote &src,
			  std::size_t src_offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_read(ptr_, dst.get(), dst_offset, src.get(),
							 src_offset, len, static_cast<int>(flags),
							 op_context));
	}
	result<void> read(const mr_local &&, std::size_t, const mr_remote &, std::size_t,
			  std::size_t, flag, const void * = nullptr) = delete;

	result<void> write(const mr_remote &dst, std::size_t dst_offset, const mr_local &src,
			   std::size_t src_offset, std::size_t len, flag flags,
			   const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_write(ptr_, dst.get(), dst_offset, src.get(),
							  src_offset, len, static_cast<int>(flags),
							  op_context));
	}
	result<void> write(const mr_remote &, std::size_t, const mr_local &&, std::size_t,
			   std::size_t, flag, const void * = nullptr) = delete;

	result<void> write_with_imm(const mr_remote &dst, std::size_t dst_offset,
				    const mr_local &src, std::size_t src_offset, std::size_t len,
				    flag flags, std::uint32_t imm,
				    const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_write_with_imm(ptr_, dst.get(), dst_offset, src.get(), src_offset, len,
					static_cast<int>(flags), imm, op_context));
	}
	result<void> write_with_imm(const mr_remote &, std::size_t, const mr_local &&, std::size_t,
				    std::size_t, flag, std::uint32_t,
				    const void * = nullptr) = delete;

	/* 8 bytes at an RPMA_ATOMIC_WRITE_ALIGNMENT-aligned offset, copied by the call */
	result<void> atomic_write(const mr_remote &dst, std::size_t dst_offset,
				  const char (&src)[RPMA_ATOMIC_WRITE_ALIGNMENT], flag flags,
				  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_atomic_write(
		    ptr_, dst.get(), dst_offset, src, static_cast<int>(flags), op_context));
	}
	/* the 8 bytes of value as they lie in this host's memory */
	result<void> atomic_write(const mr_remote &dst, std::size_t dst_offset, std::uint64_t value,
				  flag flags, const void *op_context = nullptr) noexcept
	{
		char src[RPMA_ATOMIC_WRITE_ALIGNMENT];
		static_assert(sizeof(src) == sizeof(value), "atomic writes are 8 bytes");
		std::memcpy(src, &value, sizeof(src));
		return atomic_write(dst, dst_offset, src, flags, op_context);
	}

	result<void> flush(const mr_remote &dst, std::size_t dst_offset, std::size_t len,
			   flush_type type, flag flags, const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_flush(ptr_, dst.get(), dst_offset, len,
							  static_cast<rpma_flush_type>(type),
							  static_cast<int>(flags), op_context));
	}

	result<void> send(const mr_local &src, std::size_t offset, std::size_t len, flag flags,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_send(ptr_, src.get(), offset, len, static_cast<int>(flags), op_context));
	}
	result<void> send(const mr_local &&, std::size_t, std::size_t, flag,
			  const void * = nullptr) = delete;

	result<void> send_with_imm(const mr_local &src, std::size_t offset, std::size_t len,
				   flag flags, std::uint32_t imm,
				   const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_send_with_imm(
		    ptr_, src.get(), offset, len, static_cast<int>(flags), imm, op_context));
	}
	result<void> send_with_imm(const mr_local &&, std::size_t, std::size_t, flag, std::uint32_t,
				   const void * = nullptr) = delete;

	result<void> recv(mr_local &dst, std::size_t offset, std::size_t len,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(rpma_recv(ptr_, dst.get(), offset, len, op_context));
	}
	result<void> recv(const mr_local &&, std::size_t, std::size_t,
			  const void * = nullptr) = delete;

	/*
	 * Extension: 1 to RPMA_BATCH_MAX operations (made by rpma::batch) as
	 * one chain, with one doorbell; every element is checked before
	 * anything is posted. The elements are read by the call only.
	 */
	batch_result post_batch(span<const rpma_batch_op> ops) noexcept
	{
		int failed = -1;
		int ret =
		    rpma_post_batch(ptr_, ops.data(), detail::clamp_count(ops.size()), &failed);
		return batch_result(result<void>::from_code(ret), failed);
	}
	/* conn.post_batch({ rpma::batch::write(...), rpma::batch::flush(...) }) */
	batch_result post_batch(std::initializer_list<rpma_batch_op> ops) noexcept
	{
		return post_batch(span<const rpma_batch_op>(ops.begin(), ops.size()));
	}
};

/* ---------------------------------------------------------------- conn_req */

/*
 * A connection request: outgoing (create) or incoming (ep::next_conn_req).
 * Deleting an incoming one rejects it. Its peer must outlive it and the
 * connection made from it.
 */
class conn_req : public detail::unique_handle<rpma_conn_req, &rpma_conn_req_delete>
{
      public:
	using unique_handle::unique_handle;

	/* the configuration is read by the call only */
	static result<conn_req> create(peer &p, const char *addr, const char *port) noexcept
	{
		return detail::fetch<conn_req>(&rpma_conn_req_new, p.get(), addr, port, nullptr);
	}
	static result<conn_req> create(peer &p, const char *addr, const char *port,
				       const conn_cfg &cfg) noexcept
	{
		return detail::fetch<conn_req>(&rpma_conn_req_new, p.get(), addr, port, cfg.get());
	}
	static result<conn_req> create(const peer &&, const char *, const char *) = delete;
	static result<conn_req> create(const peer &&, const char *, const char *,
				       const conn_cfg &) = delete;

	/*
	 * Connects (outgoing) or accepts (incoming). The request is consumed
	 * whatever the outcome, as rpma_conn_req_connect does: *this is
	 * empty afterwards. Private data (copied by the call) longer than
	 * 255 bytes is errc::inval, and then nothing is consumed.
	 */
	result<conn> connect() noexcept
	{
		return detail::fetch<conn>(&rpma_conn_req_connect, &ptr_, nullptr);
	}
	result<conn> connect(span<const std::byte> private_data) noexcept
	{
		if (private_data.size() > UINT8_MAX)
			return errc::inval;
		if (private_data.empty())
			return connect();
		/* the library only reads the bytes; the 1.x struct has no const */
		rpma_conn_private_data pdata{ const_cast<void *>(
						  static_cast<const void *>(private_data.data())),
					      static_cast<std::uint8_t>(private_data.size()) };
		return detail::fetch<conn>(&rpma_conn_req_connect, &ptr_, &pdata);
	}

	/* a receive posted before the connection exists: dst until it completes */
	result<void> recv(mr_local &dst, std::size_t offset, std::size_t len,
			  const void *op_context = nullptr) noexcept
	{
		return result<void>::from_code(
		    rpma_conn_req_recv(ptr_, dst.get(), offset, len, op_context));
	}
	result<void> recv(const mr_local &&, std::size_t, std::size_t,
			  const void * = nullptr) = delete;

	/* the requester's private data (untrusted), valid while the request lives */
	result<span<const std::byte>> get_private_data() const &noexcept
	{
		return detail::private_data(&rpma_conn_req_get_private_data, ptr_);
	}
	result<span<const std::byte>> get_private_data() const && = delete;

	/*
	 * Extension: the peer's address, a copy: the requester's on an
	 * incoming request (to connect or delete it by where it comes from),
	 * the one connected to on an outgoing one.
	 */
	result<sockaddr_storage> get_peer_addr() const noexcept
	{
		return detail::fetch(&rpma_conn_req_get_peer_addr, ptr_);
	}
};

/* ---------------------------------------------------------------------- ep */

/* A listening endpoint (server side); deleting it is rpma_ep_shutdown. */
class ep : public detail::unique_handle<rpma_ep, &rpma_ep_shutdown>
{
      public:
	using unique_handle::unique_handle;

	/* the peer must outlive the endpoint and the requests it gives */
	static result<ep> listen(peer &p, const char *addr, const char *port) noexcept
	{
		return detail::fetch<ep>(&rpma_ep_listen, p.get(), addr, port);
	}
	static result<ep> listen(const peer &&, const char *, const char *) = delete;

	result<int> get_fd() const noexcept
	{
		return detail::fetch(&rpma_ep_get_fd, ptr_);
	}

	/* the configuration is read by the call only */
	result<conn_req> next_conn_req() noexcept
	{
		return detail::fetch<conn_req>(&rpma_ep_next_conn_req, ptr_, nullptr);
	}
	result<conn_req> next_conn_req(const conn_cfg &cfg) noexcept
	{
		return detail::fetch<conn_req>(&rpma_ep_next_conn_req, ptr_, cfg.get());
	}
};

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

#endif /* RPMA_HPP */
