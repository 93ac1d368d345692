#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up and runs every test: installs what is missing (Debian 12),
# configures the build with warnings as errors, then runs side by side, on
# every core (tests/run-suites.py), the build, the set-up of the test VMs
# (tests/vm/setup.sh: Debian 12 and Debian 13 guests with soft RoCE and
# soft iWARP, where this host has no RDMA device) and every suite of
# tests/budgets: the device-free ones on this host, those over real RDMA
# in the VMs, and the sanitizer suites in builds of their own (asan:
# unit, cxx and abi again under AddressSanitizer and
# UndefinedBehaviorSanitizer; tsan: the unit and C++ tests under
# ThreadSanitizer; fuzz: the decoders of network bytes under libFuzzer).
# It ends with each suite's time against its budget and the line
# "N passed, N failed, N skipped", counting each distinct test case once
# (tests/summary.py).
#
# usage: ./test.sh [meson test arguments, e.g. --suite unit]
#        (with arguments, only the main build runs them, one suite after
#        another, as meson test does)
#
# Root is needed only to install packages and to make the Debian 13 root
# of the rdma-native suite (debootstrap, chroot): a user who is not root
# gets those through sudo. Everything else, the VM included, runs as the
# caller.
set -euo pipefail
cd "$(dirname "$0")"
build=${RPMA_BUILD_DIR:-build}
times=$(mktemp)
trap 'rm -f "$times"' EXIT
phase_start=$(date +%s)
# phase_done NAME: the time since the previous phase ended, for the summary
phase_done() {
	local t
	t=$(date +%s)
	echo "$1 $((t - phase_start))" >>"$times"
	phase_start=$t
}

tests/install-deps.sh test
phase_done packages

# rdma and examples always: their harness installs and boots the VM
tests/configure.sh "$build" -Dwerror=true -Dbuildtype=debugoptimized -Drdma_tests=enabled
phase_done configure

if [ $# -gt 0 ]; then
	ninja -C "$build"
	status=0
	meson test -C "$build" --print-errorlogs "$@" || status=$?
	python3 tests/summary.py "$build" || status=1
	exit $status
fi

run_opts=()
if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	run_opts+=(--no-vm)
elif ! meson introspect "$build" --tests | grep -q '"rdma-native'; then
	run_opts+=(--no-trixie)
fi
status=0
python3 tests/run-suites.py "$build" "${run_opts[@]}" || status=1
phase_done suites
python3 tests/summary.py --times "$times" --jobs "$build/meson-logs/run/jobs.json" || status=1
exit $status
