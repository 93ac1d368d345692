/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/error.hpp -- the errors of rpma.hpp: rpma::errc (the RPMA_E_* codes
 * by name), their std::error_code category, rpma::error and rpma::result<T>
 */

#ifndef RPMA_HPP_ERROR
#define RPMA_HPP_ERROR 1

#include <librpma.h>

#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

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

	const char *name() const noexcept override { return "rpma"; }

	std::string message(int code) const override { return rpma_err_2str(code); }

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
template <> struct is_error_code_enum<rpma::errc> : true_type {};
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
	error(errc e) noexcept : std::error_code(e) {}
	/* what a C function returned: 0 is no error */
	explicit error(int code) noexcept
	    : std::error_code(code != 0 ? std::error_code(code, rpma::category())
					: std::error_code())
	{}

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

struct failure_t {};
struct value_t {};

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

	constexpr result_storage(failure_t, int code) noexcept : code_(code), none_() {}
	constexpr result_storage(value_t, const T &value) noexcept : code_(0), value_(value) {}
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

	result_storage(failure_t, int code) noexcept : code_(code), none_() {}
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
	~result_storage() { destroy(); }

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
	result(T value) noexcept : s_(detail::value_t{}, std::move(value)) {}
	/* a failure */
	result(errc e) noexcept : s_(detail::failure_t{}, static_cast<int>(e)) {}
	result(rpma::error e) noexcept : s_(detail::failure_t{}, e ? e.value() : RPMA_E_UNKNOWN) {}

	bool has_value() const noexcept { return s_.code_ == 0; }
	int code() const noexcept { return s_.code_; }
	rpma::error error() const noexcept { return rpma::error(s_.code_); }

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

	T &operator*() &noexcept { return s_.value_; }
	const T &operator*() const &noexcept { return s_.value_; }
	T operator*() &&noexcept { return std::move(s_.value_); }
	T *operator->() &noexcept { return &s_.value_; }
	const T *operator->() const &noexcept { return &s_.value_; }
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
	constexpr result(errc e) noexcept : code_(static_cast<int>(e)) {}
	result(rpma::error e) noexcept : code_(e.value()) {}

	/*
	 * What a C function returned: 0 is a success, anything else its
	 * failure. (A result<T> has no from_code: a C call gives its T
	 * through a pointer.)
	 */
	static constexpr result from_code(int ret) noexcept { return result(ret, 0); }

	constexpr bool has_value() const noexcept { return code_ == 0; }
	constexpr explicit operator bool() const noexcept { return code_ == 0; }
	constexpr int code() const noexcept { return code_; }
	rpma::error error() const noexcept { return rpma::error(code_); }
	void value() const noexcept(!detail::exceptions)
	{
		if (code_ != 0)
			detail::bad_result_access(code_);
	}

private:
	constexpr result(int code, int) noexcept : code_(code) {}

	int code_ = 0;
};

} /* namespace rpma */

#endif /* RPMA_HPP_ERROR */
