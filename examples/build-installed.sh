#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: examples/build-installed.sh PREFIX OUTDIR
#
# Builds every example (examples/NN-topic/*.c, *.cpp) and rpma-mirror
# against the copy of the library installed under PREFIX, outside the
# tree, with nothing but what pkg-config says about librpma (and about
# libpmem2, for the programs whose sources include libpmem2.h, and libsodium
# with examples/common, for those that include psk.h; examples/common for
# the ping-pong examples, whose client is examples/common/ping-pong-client.c):
# the way a user
# builds an example directory copied out of the tree. The programs go to
# OUTDIR/NN-topic/ and OUTDIR/rpma-mirror.
#
# PREFIX is where `meson install` put the library (meson setup
# --prefix=PREFIX); for a tree staged with `meson install --destdir`, set
# PKG_CONFIG_SYSROOT_DIR to the stage and give the prefix inside it.
# CC and CXX pick the compilers, CFLAGS and CXXFLAGS add to their flags.
# Exit status: 0 when everything built.

set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 PREFIX OUTDIR" >&2; exit 2; }
prefix=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
cxx=${CXX:-c++}

pc=$(find "$prefix" -name librpma.pc -path '*/pkgconfig/*' 2>/dev/null | head -n 1)
[ -n "$pc" ] || { echo "no librpma.pc under $prefix: is the library installed there?" >&2; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
rpma_cflags=$(pkg-config --cflags librpma) && rpma_libs=$(pkg-config --libs librpma) ||
	{ echo "pkg-config cannot use $pc" >&2; exit 1; }
pmem2_flags=$(pkg-config --cflags --libs libpmem2 2>/dev/null) || pmem2_flags=
sodium_flags=$(pkg-config --cflags --libs libsodium 2>/dev/null) || sodium_flags=
echo "librpma $(pkg-config --modversion librpma) from $pc"

built=0 failed=0 skipped=0
# build NAME OUTFILE SOURCE: one program
# build NAME OUTFILE SOURCE...: one program of one or more sources, which
# share a directory
build() {
	local name=$1 outfile=$2 src=$3 flags
	local -a sources=("${@:3}")
	flags="$rpma_cflags $rpma_libs"
	# shellcheck disable=SC2046
	if grep -qs '<libpmem2.h>' "${sources[@]}" $(ls "$(dirname "$src")"/*.h 2>/dev/null); then
		if [ -z "$pmem2_flags" ]; then
			echo "skipped $name: libpmem2 is not there (pkg-config libpmem2)"
			skipped=$((skipped + 1))
			return
		fi
		flags="$flags $pmem2_flags"
	fi
	# examples/common/psk.h, the pre-shared key handshake, takes libsodium
	# shellcheck disable=SC2046
	if grep -qsE '^#include [<"]([^">]*/)?psk\.h[">]' "${sources[@]}" $(ls "$(dirname "$src")"/*.h 2>/dev/null); then
		if [ -z "$sodium_flags" ]; then
			echo "skipped $name: libsodium is not there (pkg-config libsodium)"
			skipped=$((skipped + 1))
			return
		fi
		flags="$flags -I$here/common $sodium_flags"
	fi
	# examples/common/ping-pong.h, the messages of 05 to 09
	if grep -qs '^#include "ping-pong.h"' "${sources[@]}"; then
		flags="$flags -I$here/common"
	fi
	mkdir -p "$(dirname "$outfile")"
	local compiler=("$cc" -std=gnu11) extra=${CFLAGS:-}
	[[ $src == *.cpp ]] && compiler=("$cxx" -std=c++17) extra=${CXXFLAGS:-}
	# shellcheck disable=SC2086
	if "${compiler[@]}" -Wall -Wextra -Werror -O2 $extra -o "$outfile" "${sources[@]}" $flags; then
		echo "built $name"
		built=$((built + 1))
	else
		echo "FAILED $name"
		failed=$((failed + 1))
	fi
}

for dir in "$here"/[0-9][0-9]-*/; do
	ex=$(basename "$dir")
	for src in "$dir"*.c "$dir"*.cpp; do
		[ -e "$src" ] || continue
		prog=$(basename "${src%.*}")
		build "$ex/$prog" "$out/$ex/$prog" "$src"
	done
	# the ping-pong servers play against the client they share
	if grep -qs '^#include "ping-pong.h"' "$dir"server.c; then
		build "$ex/client" "$out/$ex/client" "$here/common/ping-pong-client.c"
	fi
done
mirror=$here/../tools/rpma-mirror
build rpma-mirror "$out/rpma-mirror" "$mirror/rpma-mirror.c" "$mirror/client.c" \
	"$mirror/server.c" "$mirror/common.c"

echo "$built built, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
