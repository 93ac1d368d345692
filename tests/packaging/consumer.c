/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * consumer.c -- a program built against an installed copy of the library,
 * through pkg-config or CMake: it must run, and run against that copy.
 *
 * usage: consumer LIBDIR (the directory the library must be loaded from)
 *        consumer static (the library is linked into the program)
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
			fprintf(stderr, "consumer: %s:%d: %s\n", __FILE__, __LINE__, #cond);       \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(int argc, char *argv[])
{
	CHECK(argc == 2);

	/* the library of the installed copy, not the system's librpma */
	Dl_info info;
	CHECK(dladdr((void *)rpma_conn_cfg_new, &info) != 0);
	char loaded[PATH_MAX], expected[PATH_MAX];
	CHECK(realpath(info.dli_fname, loaded) != NULL);
	if (strcmp(argv[1], "static") == 0) {
		CHECK(realpath("/proc/self/exe", expected) != NULL);
		CHECK(strcmp(loaded, expected) == 0);
	} else {
		CHECK(realpath(argv[1], expected) != NULL);
		CHECK(strncmp(loaded, expected, strlen(expected)) == 0);
	}

	struct rpma_conn_cfg *cfg = NULL;
	CHECK(rpma_conn_cfg_new(&cfg) == 0);
	uint32_t size = 0;
	CHECK(rpma_conn_cfg_get_sq_size(cfg, &size) == 0 && size == 10);
	CHECK(rpma_conn_cfg_delete(&cfg) == 0 && cfg == NULL);
	CHECK(strcmp(rpma_err_2str(RPMA_E_INVAL), "Invalid argument") == 0);

#ifdef RPMA_NG_EXTENSIONS
	/* an extension links and answers */
	struct rpma_completion cmpl;
	CHECK(rpma_cq_get_completion(NULL, &cmpl) == RPMA_E_INVAL);
#endif
	printf("consumer: ran against %s\n", loaded);
	return 0;
}
