/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * debian_header.c -- a librpma 1.x program built against Debian's
 * /usr/include/librpma.h (package librpma-dev), linked to and run against
 * this project's librpma.so.0: the binary compatibility the library owes
 * to programs that were never rebuilt.
 */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <librpma.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(void)
{
	/* the library this process runs against must be the one under test */
	Dl_info info;
	CHECK(dladdr((void *)rpma_err_2str, &info) != 0);
	char loaded[PATH_MAX], expected[PATH_MAX];
	CHECK(realpath(info.dli_fname, loaded) != NULL);
	CHECK(realpath(BUILD_TREE_LIB_DIR, expected) != NULL);
	CHECK(strncmp(loaded, expected, strlen(expected)) == 0);
	CHECK(dlsym(RTLD_DEFAULT, "rpma_cq_get_completion") != NULL);

	CHECK(strcmp(rpma_err_2str(RPMA_E_INVAL), "Invalid argument") == 0);

	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg) == 0);
	uint32_t size = 0;
	CHECK(rpma_conn_cfg_set_cq_size(cfg, 42) == 0);
	CHECK(rpma_conn_cfg_get_cq_size(cfg, &size) == 0 && size == 42);
	int timeout = 0;
	CHECK(rpma_conn_cfg_get_timeout(cfg, &timeout) == 0 && timeout == RPMA_DEFAULT_TIMEOUT_MS);
	CHECK(rpma_conn_cfg_delete(&cfg) == 0 && cfg == NULL);

	struct rpma_peer_cfg *pcfg = NULL;
	CHECK(rpma_peer_cfg_new(&pcfg) == 0);
	CHECK(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true) == 0);
	size_t desc_size = 0;
	CHECK(rpma_peer_cfg_get_descriptor_size(pcfg, &desc_size) == 0 && desc_size >= 1);
	unsigned char desc[64];
	CHECK(rpma_peer_cfg_get_descriptor(pcfg, desc) == 0 && desc[0] == 1);
	CHECK(rpma_peer_cfg_delete(&pcfg) == 0);

	/*
	 * a region descriptor as a librpma 1.x peer writes it, a row per field
	 * (clang-format would lay the bytes out in columns of its own)
	 */
	/* clang-format off */
	unsigned char mr_desc[21] = {
		0x00, 0x10, 0, 0, 0, 0, 0, 0,	/* address 0x1000 */
		0x00, 0x20, 0, 0, 0, 0, 0, 0,	/* length 0x2000 */
		0x78, 0x56, 0x34, 0x12,		/* rkey 0x12345678 */
		RPMA_MR_USAGE_WRITE_DST		/* usage */
	};
	/* clang-format on */
	struct rpma_mr_remote *mr = NULL;
	CHECK(rpma_mr_remote_from_descriptor(mr_desc, sizeof(mr_desc), &mr) == 0);
	CHECK(rpma_mr_remote_get_size(mr, &desc_size) == 0 && desc_size == 0x2000);
	CHECK(rpma_mr_remote_delete(&mr) == 0 && mr == NULL);
	CHECK(rpma_mr_remote_from_descriptor(mr_desc, 20, &mr) == RPMA_E_INVAL);

	enum rpma_log_level level;
	CHECK(rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR) == 0);
	CHECK(rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level) == 0 &&
	      level == RPMA_LOG_LEVEL_ERROR);
	CHECK(strcmp(rpma_utils_conn_event_2str(RPMA_CONN_REJECTED), "Connection rejected") == 0);

	printf("a librpma 1.x program ran against %s\n", loaded);
	return 0;
}
