/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * span_abi.hpp -- functions that take rpma::span, defined in a library
 * built in one language standard and called from a program built in the
 * other (see meson.build): they link only if rpma::span is the same type
 * in both.
 */

#ifndef RPMA_CXX_SPAN_ABI_HPP
#define RPMA_CXX_SPAN_ABI_HPP

#include <rpma.hpp>

namespace span_abi
{

/* the sum of the bytes */
unsigned sum(rpma::span<const std::byte> bytes);
/* sets every element to value */
void fill(rpma::span<int> out, int value);
/* __cplusplus of the library */
long standard();

} /* namespace span_abi */

#endif /* RPMA_CXX_SPAN_ABI_HPP */
