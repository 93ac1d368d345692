/* SPDX-License-Identifier: BSD-3-Clause */
/* librpma.h must compile alone, first and only, as C99 and as C++17. */
#include <librpma.h>

int main(void)
{
	struct rpma_completion cmpl = { 0 };
	return (int)cmpl.op + (RPMA_E_INVAL == -100004 ? 0 : 1);
}
