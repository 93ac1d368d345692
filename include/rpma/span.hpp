/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpma/span.hpp -- rpma::span, the buffers of rpma.hpp, with as_bytes and
 * as_writable_bytes; RPMA_HPP_STD_SPAN is defined when the standard library
 * has std::span
 */

#ifndef RPMA_HPP_SPAN
#define RPMA_HPP_SPAN 1

#include <cstddef>
#include <iterator>
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

/* -------------------------------------------------------------------- span */

namespace detail
{
template <class T> struct is_std_span : std::false_type {};
#ifdef RPMA_HPP_STD_SPAN
template <class T, std::size_t N> struct is_std_span<std::span<T, N>> : std::true_type {};
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

	template <class C, class = void> struct is_container : std::false_type {};
	template <class C>
	struct is_container<C, std::void_t<element_of<C>, decltype(std::size(std::declval<C &>()))>>
	    : std::true_type {};

	template <class U> struct is_span : std::false_type {};
	template <class U> struct is_span<span<U>> : std::true_type {};

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
	constexpr span(T *data, size_type size) noexcept : data_(data), size_(size) {}
	template <class U, std::size_t N, class = std::enable_if_t<compatible<U>::value>>
	constexpr span(U (&array)[N]) noexcept : data_(array), size_(N)
	{}
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
	{}
	template <class U,
		  class = std::enable_if_t<compatible<U>::value && !std::is_same<U, T>::value>>
	constexpr span(const span<U> &other) noexcept : data_(other.data()), size_(other.size())
	{}

	constexpr T *data() const noexcept { return data_; }
	constexpr size_type size() const noexcept { return size_; }
	constexpr size_type size_bytes() const noexcept { return size_ * sizeof(T); }
	constexpr bool empty() const noexcept { return size_ == 0; }
	constexpr T &operator[](size_type i) const noexcept { return data_[i]; }
	constexpr iterator begin() const noexcept { return data_; }
	constexpr iterator end() const noexcept { return data_ + size_; }
	constexpr span first(size_type count) const noexcept { return span(data_, count); }
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

#endif /* RPMA_HPP_SPAN */
