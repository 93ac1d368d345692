/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * span_abi_main.cpp -- calls the functions of span_abi.hpp, built in
 * another language standard, with what a program has at hand
 */

#include <array>
#include <cstdio>
#include <vector>

#include "span_abi.hpp"

int main()
{
	int failures = 0;
	auto check = [&failures](bool ok, const char *what) {
		if (!ok) {
			std::fprintf(stderr, "span_abi: failed: %s\n", what);
			failures++;
		}
	};

	check(span_abi::standard() != __cplusplus, "the library is built in another standard");

	std::vector<int> vec(5, 0);
	span_abi::fill(vec, 7);
	check(vec[0] == 7 && vec[4] == 7, "fill a std::vector");
	int arr[3] = {};
	span_abi::fill(arr, -1);
	check(arr[0] == -1 && arr[2] == -1, "fill a C array");

	std::array<std::byte, 3> bytes{ std::byte{ 1 }, std::byte{ 2 }, std::byte{ 3 } };
	check(span_abi::sum(bytes) == 6, "sum a std::array");
	check(span_abi::sum(rpma::as_bytes(rpma::span<const int>(arr))) == 3 * 4 * 0xff,
	      "sum the bytes of a span");
#ifdef RPMA_HPP_STD_SPAN
	std::span<int> std_span(vec);
	span_abi::fill(std_span.first(2), 9);
	check(vec[0] == 9 && vec[1] == 9 && vec[2] == 7, "fill a std::span");
	check(span_abi::sum(std::as_bytes(std::span<const std::byte>(bytes))) == 6,
	      "sum a std::span");
#endif
	std::printf("span_abi: a C++ %ld program calls a C++ %ld library\n",
		    static_cast<long>(__cplusplus), span_abi::standard());
	return failures == 0 ? 0 : 1;
}
