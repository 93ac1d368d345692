/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * consumer.cpp -- a C++ program built against an installed copy of the
 * library, through pkg-config or CMake: <rpma.hpp> and its parts
 * (<rpma/...>) come from that copy, and the program runs against it.
 *
 * usage: consumer-cxx
 */

#include <rpma.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			std::fprintf(stderr, "consumer-cxx: %s:%d: %s\n", __FILE__, __LINE__,      \
				     #cond);                                                       \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main()
{
	rpma::result<rpma::conn_cfg> cfg = rpma::conn_cfg::create();
	CHECK(cfg.has_value());
	rpma::result<std::uint32_t> size = cfg->get_sq_size();
	CHECK(size.has_value() && *size == 10);
	CHECK(cfg->reset().has_value() && !*cfg);

	rpma::error e = rpma::errc::inval;
	CHECK(std::strcmp(e.category().name(), "rpma") == 0);
	CHECK(e.message() == "Invalid argument");

	char bytes[4] = {};
	rpma::span<char> buffer(bytes);
	CHECK(rpma::as_bytes(buffer).size() == sizeof(bytes));

	std::printf("consumer-cxx: ran\n");
	return 0;
}
