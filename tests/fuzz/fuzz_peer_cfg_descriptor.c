/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_peer_cfg_descriptor.c -- rpma_peer_cfg_from_descriptor on any bytes
 *
 * A peer-config descriptor comes from the target, in librpma's form (one
 * byte) or a longer one with a versioned trailer. Whatever the bytes and
 * their count, decoding returns 0 or RPMA_E_INVAL, reads nothing past them,
 * leaves the out-pointer alone on failure, accepts every librpma descriptor,
 * and a decoded configuration says what its first byte says.
 */

#include <librpma.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED);
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *bytes = fuzz_copy(data, size);
	struct rpma_peer_cfg *const untouched = (struct rpma_peer_cfg *)(uintptr_t)0x5eed;
	struct rpma_peer_cfg *pcfg = untouched;

	int ret = rpma_peer_cfg_from_descriptor(bytes, size, &pcfg);
	if (ret != 0) {
		REQUIRE(ret == RPMA_E_INVAL);
		REQUIRE(pcfg == untouched);
		/* librpma's own form is always understood */
		REQUIRE(size != 1);
	} else {
		REQUIRE(size >= 1);
		REQUIRE(pcfg != NULL && pcfg != untouched);
		bool direct = !(bytes[0] != 0);
		REQUIRE(rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct) == 0);
		REQUIRE(direct == (bytes[0] != 0));
		/* what it describes, it describes again: in librpma's form at least */
		size_t desc_size = 0;
		REQUIRE(rpma_peer_cfg_get_descriptor_size(pcfg, &desc_size) == 0);
		REQUIRE(desc_size >= 1 && desc_size <= 255);
		uint8_t again[255];
		REQUIRE(rpma_peer_cfg_get_descriptor(pcfg, again) == 0);
		REQUIRE(again[0] == (direct ? 1 : 0));
		REQUIRE(rpma_peer_cfg_delete(&pcfg) == 0);
		REQUIRE(pcfg == NULL);
	}
	free(bytes);
	return 0;
}
