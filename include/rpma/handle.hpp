/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/handle.hpp -- what the objects of rpma.hpp are made of: detail::fetch
 * (a C call that gives its value through its last parameter, as a result),
 * detail::unique_handle (the owner of one librpma object) and the helpers of
 * the wrappers (counts and times as ints, private data, descriptors)
 */

#ifndef RPMA_HPP_HANDLE
#define RPMA_HPP_HANDLE 1

#include <librpma.h>

#include "error.hpp"
#include "span.hpp"

#include <chrono>
#include <climits>
#include <cstddef>
#include <tuple>
#include <type_traits>

namespace rpma
{

namespace detail
{

/* what a C function stores through its last parameter, a pointer */
template <class F> struct out_of {};
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
	constexpr explicit unique_handle(T *p) noexcept : ptr_(p) {}

	unique_handle(const unique_handle &) = delete;
	unique_handle &operator=(const unique_handle &) = delete;

	unique_handle(unique_handle &&other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
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

	~unique_handle() { destroy(); }

	T *get() const noexcept { return ptr_; }
	explicit operator bool() const noexcept { return ptr_ != nullptr; }

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

} /* namespace rpma */

#endif /* RPMA_HPP_HANDLE */
