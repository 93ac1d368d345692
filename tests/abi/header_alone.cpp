/* SPDX-License-Identifier: BSD-3-Clause */
/* librpma.h must compile alone, first and only, as C99 and as C++17. */
/* (the C++ build of header_alone.c) */
#include <librpma.h>

int main()
{
	struct rpma_completion cmpl = {};
	return (int)cmpl.op + (RPMA_E_INVAL == -100004 ? 0 : 1);
}
