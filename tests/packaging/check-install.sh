#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Installs the build into a staging directory (meson install --destdir) and
# checks what a distribution and a user get there:
#   - the files, where librpma 1.x and Debian put them, with one version:
#     librpma.so.0 (and the librpma.so link), or librpma.a when only a
#     static library was asked for; librpma.pc; the CMake package under
#     LIBDIR/librpma/cmake; librpma.h; rpma.hpp and its parts under
#     INCLUDEDIR/rpma/, the headers of include/rpma/ and nothing else; the
#     manual pages; the licence; the programs (rpma-mirror, when built) and
#     their pages, which run;
#   - a C program and a C++ one (<rpma.hpp>, taken from the staged copy
#     alone) built with `pkg-config --cflags --libs librpma`, and the same
#     two built with CMake's find_package(librpma), all against the staged
#     copy, run against it;
#   - a build that asks for librpma 1.3, the last librpma release, which
#     this library succeeds, finds it: `pkg-config --atleast-version=1.3
#     librpma` and CMake's find_package(librpma 1.3 REQUIRED);
#   - every example and rpma-mirror built out of the tree against the
#     staged copy by examples/build-installed.sh (pkg-config only), the
#     ones that need no RDMA device to start run with bad usage.
#
# usage: check-install.sh BUILD_DIR SOURCE_DIR PREFIX LIBDIR INCLUDEDIR \
#                         DATADIR MANDIR VERSION DEFAULT_LIBRARY B_SANITIZE \
#                         BINDIR PROGRAMS
set -euo pipefail

build=$1 src=$2 prefix=$3 libdir=$4 includedir=$5 datadir=$6 mandir=$7 version=$8
default_library=$9 sanitize=${10} bindir=${11} programs=${12:-}
# a library built with sanitizers runs only in programs built with them
cflags=()
[ "$sanitize" = none ] || cflags=(-fsanitize="$sanitize")

abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-ng-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

meson install -C "$build" --destdir "$stage" --no-rebuild --quiet >"$work/install.log" 2>&1 || {
	cat "$work/install.log"
	echo "FAIL: meson install --destdir failed"
	exit 1
}

lib=$stage$(abs "$libdir")
inc=$stage$(abs "$includedir")
doc=$stage$(abs "$datadir")/doc/rpma-ng
man=$stage$(abs "$mandir")

# the files
[ -f "$inc/librpma.h" ] || fail "librpma.h is not installed in $includedir"
[ -f "$inc/rpma.hpp" ] || fail "rpma.hpp is not installed in $includedir"
# the parts of rpma.hpp: each header of include/rpma/, and nothing else
parts=$(cd "$src/include/rpma" && ls -- *.hpp)
installed_parts=$(cd "$inc/rpma" 2>/dev/null && ls -A || true)
[ "$installed_parts" = "$parts" ] ||
	fail "$includedir/rpma/ holds [$(echo "$installed_parts" | xargs)], not the headers of include/rpma/ [$(echo "$parts" | xargs)]"
if [ "$default_library" != static ]; then
	[ -f "$lib/librpma.so.0" ] && [ ! -L "$lib/librpma.so.0" ] ||
		fail "librpma.so.0 is not the library itself (Debian's librpma0 ships it so)"
	[ "$(readlink "$lib/librpma.so" 2>/dev/null)" = librpma.so.0 ] ||
		fail "librpma.so does not point at librpma.so.0"
	extra=$(cd "$lib" && ls librpma.so.* 2>/dev/null | grep -vx 'librpma.so.0' || true)
	[ -z "$extra" ] || fail "other library files: $extra"
	soname=$(objdump -p "$lib/librpma.so.0" | awk '$1 == "SONAME" { print $2 }')
	[ "$soname" = librpma.so.0 ] || fail "SONAME is $soname"
else
	[ ! -e "$lib/librpma.so.0" ] || fail "librpma.so.0 installed though only a static library was asked for"
fi
if [ "$default_library" = shared ]; then
	[ ! -e "$lib/librpma.a" ] || fail "librpma.a installed though default_library=shared"
else
	[ -f "$lib/librpma.a" ] || fail "librpma.a is not installed (default_library=$default_library)"
fi
pc=$lib/pkgconfig/librpma.pc
[ -f "$pc" ] || fail "librpma.pc is not installed in $libdir/pkgconfig"
grep -qx "Version: $version" "$pc" || fail "librpma.pc does not say Version: $version"
cmake_dir=$lib/librpma/cmake
for f in librpma-config.cmake librpma-config-version.cmake; do
	[ -f "$cmake_dir/$f" ] || fail "$f is not installed in $libdir/librpma/cmake"
done
grep -q "PACKAGE_VERSION \"$version\"" "$cmake_dir/librpma-config-version.cmake" ||
	fail "the CMake package does not say version $version"
[ -f "$doc/LICENSE" ] || fail "the licence is not installed in share/doc/rpma-ng"
grep -q 'Copyright 2026, the rpma-ng authors' "$doc/LICENSE" || fail "LICENSE has no copyright line"
pages=$(ls "$man/man3" | wc -l)
[ "$pages" -ge 84 ] || fail "only $pages pages in man3"
th=$(grep -h '^\.TH' "$man"/man3/* "$man"/man7/* | grep -vc "\"rpma-ng $version\"" || true)
for p in $programs; do
	[ -x "$stage$(abs "$bindir")/$p" ] || fail "$p is not installed in $bindir"
	[ -f "$man/man1/$p.1" ] || fail "$p.1 is not installed in man1"
	grep -q "^\.TH $p 1 .*\"rpma-ng $version\"" "$man/man1/$p.1" 2>/dev/null ||
		fail "$p.1 does not say rpma-ng $version"
	LD_LIBRARY_PATH=$lib "$stage$(abs "$bindir")/$p" --help 2>&1 | grep -q '^usage: ' ||
		fail "the installed $p does not run"
done
[ "$th" -eq 0 ] || fail "$th manual pages do not say rpma-ng $version"
[ -L "$man/man3/rpma_op.3" ] || fail "rpma_op.3 is not a link to rpma_completion.3"

# a program built with pkg-config, against the staged copy
cc=${CC:-cc}
where=$lib
[ "$default_library" != static ] || where=static
export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion librpma)" = "$version" ] || fail "pkg-config --modversion librpma"
# what a build written for the last librpma release asks for
succeeds=1.3
pkg-config --atleast-version=$succeeds librpma ||
	fail "pkg-config --atleast-version=$succeeds librpma fails: version $(pkg-config --modversion librpma)"
libs=$(pkg-config --libs librpma)
[ "$default_library" != static ] || libs=$(pkg-config --static --libs librpma)
# shellcheck disable=SC2046
if "$cc" -Wall -Wextra -Werror "${cflags[@]}" -o "$work/consumer-pkg-config" \
	"$src/tests/packaging/consumer.c" $(pkg-config --cflags librpma) $libs -ldl; then
	LD_LIBRARY_PATH=$lib "$work/consumer-pkg-config" "$where" || fail "the pkg-config build does not run"
else
	fail "cannot build a program with pkg-config --cflags --libs librpma"
fi
# a C++ one: rpma.hpp and every part it includes come from the staged copy
cxx=${CXX:-c++}
# shellcheck disable=SC2046
if "$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror "${cflags[@]}" -MD -MF "$work/consumer-cxx.d" \
	-o "$work/consumer-cxx-pkg-config" "$src/tests/packaging/consumer.cpp" \
	$(pkg-config --cflags librpma) $libs; then
	LD_LIBRARY_PATH=$lib "$work/consumer-cxx-pkg-config" || fail "the C++ pkg-config build does not run"
	used=$(grep -oE '[^[:space:]]*/rpma(\.hpp|/[^/[:space:]]+\.hpp)' "$work/consumer-cxx.d" |
		sort -u | xargs -r realpath)
	expected=$( (echo "$inc/rpma.hpp" && for p in $parts; do echo "$inc/rpma/$p"; done) |
		xargs realpath | sort)
	[ "$(echo "$used" | sort)" = "$expected" ] ||
		fail "the C++ build did not take rpma.hpp and all its parts from $includedir: $(echo "$used" | xargs)"
else
	fail "cannot build a C++ program including <rpma.hpp> with pkg-config --cflags --libs librpma"
fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

# a program built with CMake's find_package(librpma)
if ! command -v cmake >/dev/null; then
	fail "cmake is missing (tests/install-deps.sh installs it)"
else
	mkdir "$work/cmake-src"
	cp "$src/tests/packaging/consumer.c" "$src/tests/packaging/consumer.cpp" "$work/cmake-src/"
	cat >"$work/cmake-src/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.10)
project(consumer C CXX)
find_package(librpma $version REQUIRED)
add_executable(consumer consumer.c)
target_include_directories(consumer PRIVATE \${LIBRPMA_INCLUDE_DIRS})
target_link_libraries(consumer PRIVATE \${LIBRPMA_LIBRARIES} dl)
target_compile_options(consumer PRIVATE -Wall -Wextra -Werror)
add_executable(consumer-cxx consumer.cpp)
set_target_properties(consumer-cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
target_include_directories(consumer-cxx PRIVATE \${LIBRPMA_INCLUDE_DIRS})
target_link_libraries(consumer-cxx PRIVATE \${LIBRPMA_LIBRARIES})
target_compile_options(consumer-cxx PRIVATE -Wall -Wextra -Wpedantic -Werror)
CMAKE
	if cmake -S "$work/cmake-src" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$stage$prefix" \
		-DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${cflags[*]}" \
		-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="${cflags[*]}" >"$work/cmake.log" 2>&1 &&
		cmake --build "$work/cmake-build" >>"$work/cmake.log" 2>&1; then
		LD_LIBRARY_PATH=$lib "$work/cmake-build/consumer" "$where" ||
			fail "the CMake build does not run"
		LD_LIBRARY_PATH=$lib "$work/cmake-build/consumer-cxx" ||
			fail "the C++ CMake build does not run"
		grep -qx "librpma_DIR:PATH=$cmake_dir" "$work/cmake-build/CMakeCache.txt" ||
			fail "CMake did not take the staged package ($cmake_dir)"
	else
		cat "$work/cmake.log"
		fail "cannot build a program with find_package(librpma)"
	fi
	# the version file: librpma 1.3's users find us, a later version than
	# ours is not offered
	sed -i "s/find_package(librpma $version REQUIRED)/find_package(librpma $succeeds REQUIRED)/" \
		"$work/cmake-src/CMakeLists.txt"
	cmake -S "$work/cmake-src" -B "$work/cmake-build-$succeeds" \
		-DCMAKE_PREFIX_PATH="$stage$prefix" >"$work/cmake-$succeeds.log" 2>&1 || {
		cat "$work/cmake-$succeeds.log"
		fail "find_package(librpma $succeeds REQUIRED) refused version $version"
	}
	sed -i "s/find_package(librpma $succeeds REQUIRED)/find_package(librpma 99 REQUIRED)/" \
		"$work/cmake-src/CMakeLists.txt"
	if cmake -S "$work/cmake-src" -B "$work/cmake-build-99" \
		-DCMAKE_PREFIX_PATH="$stage$prefix" >/dev/null 2>&1; then
		fail "find_package(librpma 99) accepted version $version"
	fi
fi

# the examples, built as a user builds them (a shared library only: a
# static one would need pkg-config --static, which they do not use)
if [ "$default_library" != static ]; then
	if PKG_CONFIG_SYSROOT_DIR=$stage CFLAGS="${cflags[*]}" CXXFLAGS="${cflags[*]}" CXX=${CXX:-c++} \
		"$src/examples/build-installed.sh" "$stage$prefix" "$work/examples" >"$work/examples.log" 2>&1; then
		tail -n 1 "$work/examples.log"
		# they load the staged library and say how to use them
		for p in 01-connection/client 04-write-flush/server 18-cxx/client rpma-mirror; do
			[ -x "$work/examples/$p" ] || continue
			rc=0
			LD_LIBRARY_PATH=$lib "$work/examples/$p" >"$work/run.log" 2>&1 || rc=$?
			[ $rc = 2 ] && grep -q '^usage: ' "$work/run.log" ||
				fail "examples built out of the tree: $p without arguments: status $rc"
		done
	else
		cat "$work/examples.log"
		fail "examples/build-installed.sh could not build the examples against the staged copy"
	fi
fi

echo "installed tree ($stage):"
(cd "$stage" && find . \( -name 'librpma*' -o -name LICENSE -o -name 'rpma.hpp' -o -path '*/rpma/*.hpp' -o -name 'rpma-mirror*' \) |
	sort)
if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s)"
	exit 1
fi
echo "ok"
