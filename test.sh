#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up and runs every test: installs what is missing (Debian 12), builds
# with warnings as errors, runs the unit, crash model, mutation, ABI, C++,
# man page, rdma, oracle, interop, example and cluster suites (rdma, oracle,
# interop and examples over soft RoCE and soft iWARP in a small VM when this
# host has no RDMA device; cluster across two to five VMs), runs the
# device-free suites once more under AddressSanitizer and
# UndefinedBehaviorSanitizer, the unit and C++ tests once more under
# ThreadSanitizer (suite tsan), fuzzes the decoders of network bytes with
# libFuzzer for a bounded time (a clang build, suite fuzz), and prints
# "N passed, N failed, N skipped" counting each distinct test case once
# (tests/summary.py; the reruns and the VM harness's smoke checks on lines
# of their own), after one line of time per phase.
#
# usage: ./test.sh [meson test arguments, e.g. --suite unit]
#        (with arguments, only the main build runs them)
#
# Root is needed only to install packages and to make the Debian 13 root
# of the rdma-native suite (debootstrap, chroot): a user who is not root
# gets those through sudo. Everything else, the VM included, runs as the
# caller.
set -euo pipefail
cd "$(dirname "$0")"
build=${RPMA_BUILD_DIR:-build}
sanitize_build=${build}-sanitize
jobs=$(nproc)
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

# configure DIR OPTION...: set up DIR, or bring it up to date. Meson keeps
# the verdict of every compiler check (a header found or not) across
# reconfigurations, even after --clearcache: a directory configured while
# other packages were installed (by demo.sh, which installs fewer, or
# before a package appeared) is configured anew, keeping the VM cache.
configure() {
	local dir=$1 state
	shift
	state=$(tests/install-deps.sh --state)
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@"
	elif [ "$(cat "$dir/rpma-deps.state" 2>/dev/null)" != "$state" ]; then
		echo "rpma-ng: $dir was configured with other packages installed: configuring it anew" >&2
		local keep
		keep=$(mktemp -d "$dir.keep.XXXXXX")
		for d in vm trixie-build; do
			[ ! -e "$dir/$d" ] || mv "$dir/$d" "$keep/$d"
		done
		meson setup --wipe "$dir" "$@"
		for d in vm trixie-build; do
			[ ! -e "$keep/$d" ] || mv "$keep/$d" "$dir/$d"
		done
		rmdir "$keep"
	else
		meson configure "$dir" "$@"
	fi
	echo "$state" >"$dir/rpma-deps.state"
}

# quietly CMD...: CMD with its output kept back, and shown (its end) only
# when it fails, so that a sanitizer or fuzzer build that breaks says why
quietly() {
	local log status=0
	log=$(mktemp)
	"$@" >"$log" 2>&1 || status=$?
	if [ $status -ne 0 ]; then
		echo "rpma-ng: failed ($status): $*" >&2
		tail -n 80 "$log" >&2
	fi
	rm -f "$log"
	return $status
}

# rdma and examples always: their harness installs and boots the VM
configure "$build" -Dwerror=true -Dbuildtype=debugoptimized -Drdma_tests=enabled
ninja -C "$build" -j"$jobs"
phase_done build

status=0
if [ $# -eq 0 ] && [ -z "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	# the VMs' kernels, initramfs, siw.ko and the Debian 13 root, now
	# rather than inside the first suite that needs them; a failure here
	# fails those suites with its reason
	echo "rpma-ng: preparing the RDMA test VMs (tests/vm/setup.sh)"
	tests/vm/setup.sh "$build" || status=1
	if meson introspect "$build" --tests | grep -q '"rdma-native'; then
		tests/vm/setup.sh "$build" --flavor trixie || status=1
	fi
	phase_done vm-setup
fi

meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || status=$?
# the mutation score, and the seeds the oracle ran with (to rerun one)
grep -h -e '^mutation: [0-9]* of' -e 'oracle_.*\] seed ' "$build/meson-logs/testlog.txt" || true
summaries=("$build")
phase_done tests

if [ $# -eq 0 ]; then
	echo "rpma-ng: the device-free suites again, under ASan and UBSan"
	quietly configure "$sanitize_build" -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Drdma_tests=disabled -Dman_checks=disabled
	quietly ninja -C "$sanitize_build" -j"$jobs"
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C "$sanitize_build" --print-errorlogs --num-processes 2 \
		--suite unit --suite cxx --suite abi || status=$?
	summaries+=("$sanitize_build:asan")
	phase_done asan-ubsan

	echo "rpma-ng: the unit and C++ tests again, under ThreadSanitizer (suite tsan)"
	tsan_build=${build}-tsan
	# -O0: a quarter of the compile time, and the tests are short
	quietly configure "$tsan_build" -Dwerror=true -Dbuildtype=debug -Db_sanitize=thread \
		-Db_lundef=false -Drdma_tests=disabled -Dman_checks=disabled \
		-Dpmem2=disabled
	quietly ninja -C "$tsan_build" -j"$jobs" tsan-targets
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		meson test -C "$tsan_build" --no-rebuild --print-errorlogs --num-processes 2 \
		--suite tsan || status=$?
	summaries+=("$tsan_build:tsan")
	phase_done tsan

	echo "rpma-ng: the decoders of network bytes under libFuzzer (clang, ASan, UBSan)"
	fuzz_build=${build}-fuzz
	CC=clang CXX=clang++ quietly configure "$fuzz_build" -Dwerror=true -Dfuzzer=true \
		-Drdma_tests=disabled -Dman_checks=disabled -Dpmem2=disabled
	quietly ninja -C "$fuzz_build" -j"$jobs" fuzz-targets
	meson test -C "$fuzz_build" --no-rebuild --print-errorlogs --num-processes 2 \
		--suite fuzz || status=$?
	grep -h '^fuzz .* executions in' "$fuzz_build/meson-logs/testlog.txt" || true
	summaries+=("$fuzz_build")
	phase_done fuzz
fi

python3 tests/summary.py --times "$times" "${summaries[@]}" || status=1
exit $status
