/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_mr_descriptor.c -- rpma_mr_remote_from_descriptor on any bytes
 *
 * A region descriptor comes from a peer that may be broken or hostile, in
 * either form: librpma's 21 bytes, or a longer one with a versioned trailer.
 * Whatever the bytes and their count, decoding returns 0 or RPMA_E_INVAL,
 * reads nothing past them, leaves the out-pointer alone on failure, accepts
 * every librpma descriptor (21 bytes, a usage), and a decoded region
 * reports what the librpma part of its bytes says.
 */

#include <librpma.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* invalid descriptors are logged at ERROR by design: keep quiet */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *bytes = fuzz_copy(data, size);
	struct rpma_mr_remote *const untouched = (struct rpma_mr_remote *)(uintptr_t)0x5eed;
	struct rpma_mr_remote *mr = untouched;

	int ret = rpma_mr_remote_from_descriptor(bytes, size, &mr);
	if (ret != 0) {
		REQUIRE(ret == RPMA_E_INVAL);
		REQUIRE(mr == untouched);
		/* librpma's own form is always understood */
		REQUIRE(size != 21 || bytes[20] == 0);
	} else {
		REQUIRE(size >= 21 && bytes[20] != 0);
		REQUIRE(mr != NULL && mr != untouched);
		size_t mr_size = 0;
		REQUIRE(rpma_mr_remote_get_size(mr, &mr_size) == 0);
		REQUIRE(mr_size == (size_t)fuzz_le64(bytes + 8));
		int flush_type = -1;
		REQUIRE(rpma_mr_remote_get_flush_type(mr, &flush_type) == 0);
		REQUIRE((flush_type & ~(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
					RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)) == 0);
		if (size == 21)
			REQUIRE(flush_type == (bytes[20] & (RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
							    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT)));
		REQUIRE(rpma_mr_remote_delete(&mr) == 0);
		REQUIRE(mr == NULL);
	}
	free(bytes);
	return 0;
}
