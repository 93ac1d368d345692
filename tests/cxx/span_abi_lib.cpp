/* SPDX-License-Identifier: BSD-3-Clause */
/* span_abi_lib.cpp -- the library side of span_abi.hpp */

#include "span_abi.hpp"

unsigned span_abi::sum(rpma::span<const std::byte> bytes)
{
	unsigned total = 0;
	for (std::byte b : bytes)
		total += static_cast<unsigned>(b);
	return total;
}

void span_abi::fill(rpma::span<int> out, int value)
{
	for (int &x : out)
		x = value;
}

long span_abi::standard()
{
	return __cplusplus;
}
