#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Installs the Debian 12 packages that building and testing need, when
# they are missing. Needs root (or sudo) only when something is missing.
#
# usage: tests/install-deps.sh [build|test]
#        tests/install-deps.sh --state
#
# --state prints one line naming every package of both lists with its
# installed version (or "-"): a build directory records the line it was
# configured with, and is configured anew when the line changed, since
# Meson keeps the verdicts of its compiler checks (a header found or not)
# across reconfigurations.
set -euo pipefail

# dpkg-dev: Meson asks its dpkg-architecture for the multiarch library
# directory (lib/x86_64-linux-gnu); without it (Debian's meson only
# recommends it) the library installs into lib64, where neither the loader
# nor CMake looks on Debian. libsodium-dev: HMAC-SHA-256 and BLAKE2b for
# rpma-mirror and the replicated log (examples/common/psk.h)
build_packages=(meson ninja-build g++ pkg-config python3 dpkg-dev
	libibverbs-dev librdmacm-dev libpmem2-dev libcmocka-dev libsodium-dev)
# librpma-dev: Debian's librpma 1.x header and library for the compatibility
# tests (suites abi and interop); mandoc and groff-base: the man page checks; valgrind: leak checks;
# clang-format: the style check; cmake: building against the installed
# CMake package; clang and libclang-rt-14-dev: the libFuzzer build;
# build-essential, debhelper and lintian: the Debian packages of debian/,
# built by dpkg-buildpackage and checked (suite debian); ccache: the
# mutation suite compiles each object it restores after a mutant from the
# cache (meson then compiles every build through it).
test_packages=(librpma-dev mandoc groff-base valgrind clang-format cmake
	clang libclang-rt-14-dev build-essential debhelper lintian ccache)
# What the test VMs need on this host (tests/vm/setup.sh installs them too,
# for the demo): installed here with the rest, in one apt-get run, so that
# the two VMs' set-ups, which run side by side, need no apt of their own
# (but for the kernel source of the Debian 12 guest's modules). They make
# no difference to a build: --state leaves them out.
vm_packages=(qemu-system-x86 busybox-static kmod cpio xz-utils util-linux iproute2
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest ndctl daxctl
	librpma0 debootstrap zstd)

if [ "${1:-}" = --state ]; then
	for p in "${build_packages[@]}" "${test_packages[@]}"; do
		v=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p" 2>/dev/null || true)
		case "$v" in "installed "*) v=${v#installed } ;; *) v=- ;; esac
		printf '%s=%s ' "$p" "$v"
	done
	echo
	exit 0
fi

wanted=("${build_packages[@]}")
if [ "${1:-test}" = test ]; then
	wanted+=("${test_packages[@]}")
	[ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ] || wanted+=("${vm_packages[@]}")
fi

missing=()
for p in "${wanted[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "rpma-ng: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || {
		echo "rpma-ng: these packages are missing and I am not root: ${missing[*]}" >&2
		exit 1
	}
	as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q >/dev/null
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
