#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/debian/build-packages.sh SOURCE_DIR OUT_DIR
#
# Builds the Debian packages of the tree at SOURCE_DIR (debian/) with
# `dpkg-buildpackage -us -uc -b`, in a copy of the tree, so that nothing is
# written into SOURCE_DIR: OUT_DIR/debs/ receives the .deb files, the
# .changes and the .buildinfo, OUT_DIR/build.log what the build said.
#
# The build takes about a minute, so its result is kept: OUT_DIR/key holds
# a digest of every file of the tree (the files git lists, committed or
# not, or every file outside the build directories where there is no git)
# and of the versions of the packages the build uses; a build whose key is
# the same is not run again. The tests of suite debian call this each, the
# first one builds, under a lock (OUT_DIR/lock).
#
# Exit status: 0 when OUT_DIR/debs holds the packages of this tree.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR OUT_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)

exec {lock}>"$out/lock"
flock "$lock"

# the tree's files, NUL-separated, relative to it
tree_files() {
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$src" ls-files -z --cached --others --exclude-standard |
			while IFS= read -r -d '' f; do
				[ -e "$src/$f" ] && printf '%s\0' "$f"
			done
	else
		(cd "$src" && find . -path './build*' -prune -o -path './.git' -prune -o \
			-path './debian/.debhelper' -prune -o -path './obj-*' -prune -o \
			\( -type f -o -type l \) -printf '%P\0')
	fi
}

key=$( {
	tree_files | sort -z | (cd "$src" && xargs -0 -r sha256sum --)
	dpkg-query -W -f '${Package} ${Version}\n' debhelper dpkg-dev meson ninja-build gcc g++ \
		libibverbs-dev librdmacm-dev libpmem2-dev libsodium-dev 2>/dev/null
} | sha256sum | cut -d' ' -f1)

if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -d "$out/debs" ]; then
	echo "the packages of this tree are built already ($out/debs, key ${key:0:12})"
	exit 0
fi

rm -rf "$out/debs" "$out/work" "$out/key"
mkdir -p "$out/work/rpma-ng"
tree_files | (cd "$src" && tar --null -T - -cf -) | tar -C "$out/work/rpma-ng" -xf -

start=$(date +%s)
# parallel=2: the build machines have two cores; noautodbgsym: the debug
# symbols' packages are not tested; CCACHE_DISABLE: built as a distribution
# builds them, without the compiler cache meson would otherwise find
if ! (cd "$out/work/rpma-ng" &&
	CCACHE_DISABLE=1 DEB_BUILD_OPTIONS="parallel=2 noautodbgsym" dpkg-buildpackage -us -uc -b) \
	>"$out/build.log" 2>&1; then
	tail -n 60 "$out/build.log"
	echo "FAIL: dpkg-buildpackage -us -uc -b failed (log: $out/build.log)"
	exit 1
fi
mkdir "$out/debs"
mv "$out"/work/*.deb "$out"/work/*.changes "$out"/work/*.buildinfo "$out/debs/"
rm -rf "$out/work"
echo "$key" >"$out/key"
echo "dpkg-buildpackage -us -uc -b: $(($(date +%s) - start)) s; the packages are in $out/debs"
