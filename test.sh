#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up and runs every test: installs what is missing (Debian 12), builds
# with warnings as errors, runs the unit, ABI, C++, man page, rdma, interop
# and example suites (rdma, interop and examples over soft RoCE and soft
# iWARP in a small VM when this host has no RDMA device), runs the
# device-free suites once more under AddressSanitizer and
# UndefinedBehaviorSanitizer, the unit and C++ tests once more under
# ThreadSanitizer (suite tsan), fuzzes the decoders of network bytes with
# libFuzzer for a bounded time (a clang build, suite fuzz), and prints
# "N passed, N failed, N skipped" counting each distinct test case once
# (tests/summary.py; the reruns and the VM harness's smoke checks on lines
# of their own).
#
# usage: ./test.sh [meson test arguments, e.g. --suite unit]
#        (with arguments, only the main build runs them)
set -euo pipefail
cd "$(dirname "$0")"
build=${RPMA_BUILD_DIR:-build}
sanitize_build=${build}-sanitize
jobs=$(nproc)

tests/install-deps.sh test

# rdma and examples always: their harness installs and boots the VM
main_options=(-Dwerror=true -Dbuildtype=debugoptimized -Drdma_tests=enabled)
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "${main_options[@]}"
else
	# a build directory made by demo.sh or by hand gets the options the tests need
	meson configure "$build" "${main_options[@]}"
fi
ninja -C "$build" -j"$jobs"

status=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=$?
summaries=("$build")

if [ $# -eq 0 ]; then
	echo "rpma-ng: the device-free suites again, under ASan and UBSan"
	if [ ! -f "$sanitize_build/build.ninja" ]; then
		meson setup "$sanitize_build" -Dwerror=true -Db_sanitize=address,undefined \
			-Db_lundef=false -Drdma_tests=disabled -Dman_checks=disabled >/dev/null
	fi
	ninja -C "$sanitize_build" -j"$jobs" >/dev/null
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C "$sanitize_build" --print-errorlogs --num-processes 2 \
		--suite unit --suite cxx --suite abi || status=$?
	summaries+=("$sanitize_build:asan")

	echo "rpma-ng: the unit and C++ tests again, under ThreadSanitizer (suite tsan)"
	tsan_build=${build}-tsan
	if [ ! -f "$tsan_build/build.ninja" ]; then
		# -O0: a quarter of the compile time, and the tests are short
		meson setup "$tsan_build" -Dwerror=true -Dbuildtype=debug -Db_sanitize=thread \
			-Db_lundef=false -Drdma_tests=disabled -Dman_checks=disabled \
			-Dpmem2=disabled >/dev/null
	fi
	ninja -C "$tsan_build" -j"$jobs" tsan-targets >/dev/null
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		meson test -C "$tsan_build" --no-rebuild --print-errorlogs --num-processes 2 \
		--suite tsan || status=$?
	summaries+=("$tsan_build:tsan")

	echo "rpma-ng: the decoders of network bytes under libFuzzer (clang, ASan, UBSan)"
	fuzz_build=${build}-fuzz
	if [ ! -f "$fuzz_build/build.ninja" ]; then
		CC=clang CXX=clang++ meson setup "$fuzz_build" -Dwerror=true -Dfuzzer=true \
			-Drdma_tests=disabled -Dman_checks=disabled -Dpmem2=disabled >/dev/null
	fi
	ninja -C "$fuzz_build" -j"$jobs" fuzz-targets >/dev/null
	meson test -C "$fuzz_build" --no-rebuild --print-errorlogs --num-processes 2 \
		--suite fuzz || status=$?
	grep -h '^fuzz .* executions in' "$fuzz_build/meson-logs/testlog.txt" || true
	summaries+=("$fuzz_build")
fi

python3 tests/summary.py "${summaries[@]}" || status=1
exit $status
