#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up and runs every test: installs what is missing (Debian 12), builds
# with warnings as errors, runs the unit, ABI, C++, man page, rdma and
# example suites (rdma and examples over soft RoCE and soft iWARP in a
# small VM when this host has no RDMA device), and prints
# "N passed, N failed, N skipped" counting every test case.
#
# usage: ./test.sh [meson test arguments, e.g. --suite unit]
set -euo pipefail
cd "$(dirname "$0")"
build=${RPMA_BUILD_DIR:-build}

tests/install-deps.sh test

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dwerror=true -Dbuildtype=debugoptimized
fi
ninja -C "$build" -j"$(nproc)"

status=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=$?
python3 tests/summary.py "$build" || status=1
exit $status
