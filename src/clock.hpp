/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clock.hpp -- the one clock the library's waits and timeouts read
 */

#ifndef RPMA_CLOCK_HPP
#define RPMA_CLOCK_HPP

#include <climits>
#include <ctime>

namespace rpma
{

/* Milliseconds of CLOCK_MONOTONIC: never jumps with the wall clock. */
inline long long monotonic_ms()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

/* Nanoseconds of CLOCK_MONOTONIC: for a bounded busy wait. */
inline long long monotonic_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<long long>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/* The milliseconds from now to deadline (a monotonic_ms()), 0 once it passed. */
inline int ms_until(long long deadline)
{
	const long long remaining = deadline - monotonic_ms();
	if (remaining <= 0)
		return 0;
	return remaining > INT_MAX ? INT_MAX : static_cast<int>(remaining);
}

} /* namespace rpma */

#endif /* RPMA_CLOCK_HPP */
