#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Builds README.md's C example against the build tree, not installed, as
# doc/building.md tells a user to: inside `meson devenv -C BUILD_DIR`, whose
# PKG_CONFIG_PATH holds BUILD_DIR/meson-uninstalled, with `pkg-config
# --cflags --libs librpma`; and without pkg-config, with the -I, -L and -l
# options that README.md gives. On a host with Debian's librpma-dev the
# compiler finds that package's librpma 1.x header in /usr/include unless
# the -I options name the tree's, and the example, which uses extensions,
# does not compile: so the test needs librpma-dev, and checks from the
# compiler's dependency list that librpma.h came from the tree. The
# programs must then start on the tree's library (no arguments: their usage
# and status 2). On a host without an RDMA device, the example given the
# loopback address must fail in its first call and say with which error
# number rdma-core failed, as README.md's report() does.
#
# usage: check-uninstalled.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail

build=$(realpath "$1") src=$(realpath "$2") version=$3
cc=${CC:-cc}
work=$(mktemp -d "${TMPDIR:-/tmp}/rpma-ng-uninstalled.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

if [ ! -f /usr/include/librpma.h ]; then
	echo "FAIL: Debian's librpma 1.x header /usr/include/librpma.h is missing (package" \
		"librpma-dev; ./test.sh installs it): without it this test proves nothing"
	exit 1
fi

# the first ```c block of README.md
awk '/^```c$/ { on = 1; next } on && /^```/ { exit } on { print }' "$src/README.md" >"$work/write.c"
[ -s "$work/write.c" ] || {
	echo "FAIL: README.md has no C example"
	exit 1
}
# the command line README.md gives for a build tree without pkg-config,
# run from the top of the tree (the build directory named build)
direct=$(grep -m 1 -E '^cc -o write write\.c -Iinclude ' "$src/README.md" || true)
[ -n "$direct" ] || fail "README.md does not say how to build the example without pkg-config"

# from_tree DEPFILE: librpma.h of the compilation came from the tree
from_tree() {
	local used
	used=$(grep -oE '[^[:space:]]*/librpma\.h' "$1" | head -n 1 | xargs -r realpath)
	[ "$used" = "$src/include/librpma.h" ] || {
		fail "$2: librpma.h came from ${used:-nowhere}, not $src/include"
		return 1
	}
}

# runs NAME: the program starts on the tree's library
runs() {
	local rc=0
	meson devenv -C "$build" "$work/$1" >"$work/$1.out" 2>&1 || rc=$?
	[ $rc = 2 ] && grep -q '^usage: ' "$work/$1.out" ||
		fail "$1 without arguments: status $rc, not its usage: $(head -n 3 "$work/$1.out")"
	[ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ] || return 0
	rc=0
	meson devenv -C "$build" "$work/$1" 127.0.0.1 7204 >"$work/$1.out" 2>&1 || rc=$?
	[ $rc = 1 ] && grep -qE '^rpma_utils_get_ibv_context\(.*\): .+: [A-Z][a-z]' "$work/$1.out" ||
		fail "$1 127.0.0.1 7204 on a host without an RDMA device: status $rc," \
			"not the failure of rpma_utils_get_ibv_context with its error number:" \
			"$(head -n 3 "$work/$1.out")"
}

# shellcheck disable=SC2016
pc_flags=$(meson devenv -C "$build" sh -c \
	'printf "%s\n%s\n" "$(pkg-config --modversion librpma)" "$(pkg-config --cflags --libs librpma)"') || {
	fail "pkg-config cannot use $build/meson-uninstalled"
	pc_flags=
}
modversion=$(echo "$pc_flags" | sed -n 1p)
[ "$modversion" = "$version" ] || fail "the uninstalled librpma.pc says version $modversion, not $version"
# shellcheck disable=SC2046
if "$cc" -std=gnu11 -Wall -Wextra -Werror -MD -MF "$work/pkg-config.d" -o "$work/write-pkg-config" \
	"$work/write.c" $(echo "$pc_flags" | sed -n 2p) 2>"$work/cc.log"; then
	from_tree "$work/pkg-config.d" "pkg-config build" && runs write-pkg-config
else
	cat "$work/cc.log"
	fail "README.md's C example does not build with the uninstalled librpma.pc"
fi

# README.md's own words, the tree's directories put where they are here
if [ -n "$direct" ]; then
	read -ra words <<<"${direct#cc }"
	for i in "${!words[@]}"; do
		case ${words[$i]} in
		-Iinclude) words[i]=-I$src/include ;;
		-Lbuild/src) words[i]=-L$build/src ;;
		esac
	done
	if (cd "$work" && "$cc" -std=gnu11 -Wall -Wextra -Werror -MD -MF direct.d "${words[@]}") \
		2>"$work/cc.log"; then
		mv "$work/write" "$work/write-direct"
		from_tree "$work/direct.d" "build without pkg-config" && runs write-direct
	else
		cat "$work/cc.log"
		fail "README.md's C example does not build as README.md says without pkg-config"
	fi
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s)"
	exit 1
fi
echo "README.md's C example builds against $build, not installed, with and without pkg-config: ok"
