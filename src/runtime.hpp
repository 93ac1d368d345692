/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * runtime.hpp -- what the library would otherwise take from the C++
 * runtime: making and destroying objects, and holding a mutex
 *
 * librpma.so.0 is a C library and needs only libc, libibverbs and
 * librdmacm: a C program that loads it must not pull in libstdc++.so (the
 * loader's work, a second C++ runtime beside the program's own). So the
 * library calls nothing of libstdc++: its objects come from malloc and go
 * back to free, constructed in place (the placement new of <new> is
 * inline), and its locks are pthread mutexes, where std::mutex would bring
 * libstdc++'s std::__throw_system_error with it. The abi suite checks the
 * library's NEEDED entries; a reference to libstdc++ fails its link.
 *
 * Every allocation is one call to malloc or posix_memalign, which the unit
 * tests count and fail one by one (tests/unit/alloc_hooks/).
 */

#ifndef RPMA_RUNTIME_HPP
#define RPMA_RUNTIME_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

#include <pthread.h>

namespace rpma
{

namespace runtime_detail
{
/* Room for n objects of T, aligned for T; nullptr when short of memory. */
template <class T> void *allocate(size_t n) noexcept
{
	if (n > SIZE_MAX / sizeof(T))
		return nullptr;
	if constexpr (alignof(T) > alignof(std::max_align_t)) {
		/* malloc's alignment is max_align_t's: a cache-line aligned T asks for more */
		void *p = nullptr;
		return posix_memalign(&p, alignof(T), n * sizeof(T)) == 0 ? p : nullptr;
	} else {
		return malloc(n * sizeof(T));
	}
}
} /* namespace runtime_detail */

/* A new T, default-initialized as by `new T`; nullptr when short of memory. */
template <class T> T *make() noexcept
{
	void *p = runtime_detail::allocate<T>(1);
	return p == nullptr ? nullptr : ::new (p) T;
}

/*
 * A new T, value-initialized as by `new T{}` (the fields without an
 * initializer of their own are zero); nullptr when short of memory.
 */
template <class T> T *make_zeroed() noexcept
{
	void *p = runtime_detail::allocate<T>(1);
	return p == nullptr ? nullptr : ::new (p) T{};
}

/* n new T, default-initialized as by `new T[n]`; nullptr when short of memory. */
template <class T> T *make_array(size_t n) noexcept
{
	/* destroy_array() frees them without knowing n */
	static_assert(std::is_trivially_destructible<T>::value,
		      "make_array() is for elements that need no destructor");
	void *p = runtime_detail::allocate<T>(n);
	if (p == nullptr)
		return nullptr;
	T *a = static_cast<T *>(p);
	for (size_t i = 0; i < n; i++)
		::new (static_cast<void *>(a + i)) T;
	return a;
}

/* Destroys and frees what make() or make_zeroed() made; nullptr does nothing. */
template <class T> void destroy(T *p) noexcept
{
	if (p == nullptr)
		return;
	p->~T();
	free(static_cast<void *>(const_cast<std::remove_cv_t<T> *>(p)));
}

/* Frees what make_array() made; nullptr does nothing. */
template <class T> void destroy_array(T *a) noexcept
{
	free(static_cast<void *>(a));
}

/* A pthread mutex held from here to the end of the scope. */
class mutex_guard
{
      public:
	explicit mutex_guard(pthread_mutex_t &m) noexcept : m_(m)
	{
		pthread_mutex_lock(&m_);
	}
	~mutex_guard()
	{
		pthread_mutex_unlock(&m_);
	}
	mutex_guard(const mutex_guard &) = delete;
	mutex_guard &operator=(const mutex_guard &) = delete;

      private:
	pthread_mutex_t &m_;
};

} /* namespace rpma */

#endif /* RPMA_RUNTIME_HPP */
