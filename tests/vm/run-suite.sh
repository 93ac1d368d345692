#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/vm/run-suite.sh BUILDDIR PROVIDER [--flavor F] [--build] TEST_EXE...
#
# Runs a list of RDMA test programs over PROVIDER (rxe or siw) in ONE boot
# of the test VM (see run-in-vm.sh) and prints the results as TAP version
# 13 on stdout, for `meson test` (protocol: 'tap').
#
# --flavor F  the guest's flavor (host, the default, or trixie; lib.sh)
# --build     the TEST_EXEs are ninja targets of the flavor's build inside
#             its root (BUILDDIR/trixie-build), built first with
#             build-in-root.sh so that they are always current
#
# Each test runs under `timeout 120` with RPMA_TEST_ADDR=192.0.2.1,
# RPMA_TEST_PROVIDER=PROVIDER, RPMA_TEST_DEVICE=rxe0|siw0 and
# RPMA_TEST_PMEM=/dev/dax0.0 (emulated device-DAX pmem; RPMA_SUITE_PMEM=0
# boots without it, RPMA_SUITE_PMEM_COUNT=N gives N areas, listed in
# RPMA_TEST_PMEM_ALL). Test protocol: exit 0 pass, 77 skip (the reason is the
# last line it printed), anything else fail.
#
# setup.sh runs first (fast when cached). When siw.ko could not be built,
# a siw suite bails out with the reason: it was asked for (meson's
# -Drdma_providers and -Drdma_native_providers leave siw out). When the VM
# itself cannot be prepared or booted, or the build fails, the suite bails
# out with the reason.
#
# Exit status: 0 when no test failed, 1 otherwise.
# Environment: RPMA_SUITE_TEST_TIMEOUT (s per test, 120),
# RPMA_SUITE_VERBOSE=1 (show every test's output as TAP comments),
# RPMA_SUITE_SHOW="NAME..." (show those programs' output), and
# those of run-in-vm.sh.

set -uo pipefail
. "$(dirname "$0")/lib.sh"

usage() { echo "usage: $0 BUILDDIR rxe|siw [--flavor F] [--build] TEST_EXE..." >&2; exit 2; }
[ $# -ge 2 ] || usage
builddir=$1
provider=$2
shift 2
case "$provider" in rxe | siw) ;; *) echo "run-suite: unknown provider $provider" >&2; exit 2 ;; esac
flavor=host
build=0
while [ $# -gt 0 ]; do
	case "$1" in
	--flavor) [ $# -ge 2 ] || usage; flavor=$2; shift 2 ;;
	--build) build=1; shift ;;
	*) break ;;
	esac
done
targets=("$@")

exes=()
if [ "$build" = 1 ]; then
	# the programs' paths, before they are built
	vm_init "$builddir" "$flavor"
	[ -n "$VM_FLAVOR_BUILD" ] || { echo "run-suite: the $flavor flavor builds on the host: no --build" >&2; exit 2; }
	for e in "$@"; do exes+=("$VM_FLAVOR_BUILD/$e"); done
else
	for e in "$@"; do exes+=("$(readlink -f "$e")"); done
fi
total=${#exes[@]}

echo "TAP version 13"
if [ "$total" = 0 ]; then
	echo "1..0 # SKIP no tests given"
	exit 0
fi
echo "1..$total"

bail() {
	echo "Bail out! $*"
	exit 1
}
# skip_all REASON: every test skipped
skip_all() {
	local i=0 e
	for e in "${exes[@]}"; do
		i=$((i + 1))
		echo "ok $i - $(basename "$e") # SKIP $*"
	done
	exit 0
}

t_suite=$(now)
[ -d "$builddir" ] || bail "build directory $builddir does not exist"
(vm_init "$builddir" "$flavor") 2>/dev/null || bail "unknown flavor $flavor"
vm_init "$builddir" "$flavor"

# The host flavor on a host with its own RDMA device runs the tests
# directly; it has no soft provider to pick, so the siw suite runs only
# over an iWARP device.
on_host=0
[ "$VM_FLAVOR" = host ] && host_has_rdma && on_host=1
if [ "$on_host" = 1 ] && [ "$provider" = siw ]; then
	grep -qs RNIC /sys/class/infiniband/*/node_type || skip_all "the host has RDMA devices, none of them iWARP"
fi

if [ "$on_host" = 0 ]; then
	setup_log=$(mktemp)
	trap 'rm -f "$setup_log"' EXIT
	if ! "$VM_SRCDIR/setup.sh" "$VM_BUILDDIR" --flavor "$VM_FLAVOR" --quiet >"$setup_log" 2>&1; then
		sed 's/^/# /' "$setup_log"
		bail "the $VM_FLAVOR test VM could not be set up: $(grep 'error:' "$setup_log" | tail -n 1 | sed 's/^rpma-vm: error: //')"
	fi
	sed 's/^/# /' "$setup_log"
	if [ "$provider" = siw ] && [ "$(state_get SIW)" != ok ]; then
		reason="siw.ko unavailable: $(cat "$VM_DIR/siw/unavailable" 2>/dev/null || echo unknown reason)"
		if [ "$VM_FLAVOR" = host ]; then
			bail "$reason (-Drdma_providers=rxe leaves siw out)"
		fi
		bail "$reason (the $VM_FLAVOR flavor needs it; -Drdma_native_providers=rxe leaves siw out)"
	fi
fi

if [ "$build" = 1 ]; then
	t_build=$(now)
	if ! "$VM_SRCDIR/build-in-root.sh" "$VM_BUILDDIR" --flavor "$VM_FLAVOR" --quiet "${targets[@]}" \
		>"$setup_log" 2>&1; then
		sed 's/^/# /' "$setup_log"
		bail "building in the $VM_FLAVOR root failed: $(grep 'error:' "$setup_log" | tail -n 1 | sed 's/^rpma-vm: error: //')"
	fi
	tail -n 1 "$setup_log" | sed 's/^/# /'
	echo "# built ${#targets[@]} programs in $VM_FLAVOR_BUILD ($VM_FLAVOR root) in $(elapsed "$t_build") s"
fi

pmem_opt=(--pmem-count "${RPMA_SUITE_PMEM_COUNT:-1}")
[ "${RPMA_SUITE_PMEM:-1}" = 1 ] || pmem_opt=()
times=$(mktemp)
vmerr=$(mktemp)
trap 'rm -f "$times" "$vmerr" "${setup_log:-}"' EXIT

# The guest prints the result lines; count them to report the tests a
# crashed or stuck VM never got to.
done_n=0
bad_n=0
while IFS= read -r line; do
	printf '%s\n' "$line"
	case "$line" in
	"ok "*) done_n=$((done_n + 1)) ;;
	"not ok "*) done_n=$((done_n + 1)) bad_n=$((bad_n + 1)) ;;
	esac
done < <(RPMA_VM_TIMES=$times "$VM_SRCDIR/run-in-vm.sh" "$VM_BUILDDIR" --flavor "$VM_FLAVOR" --no-setup \
	--provider "$provider" "${pmem_opt[@]}" --timeout $((total * ${RPMA_SUITE_TEST_TIMEOUT:-120} + 60)) \
	--env "RPMA_SUITE_TEST_TIMEOUT=${RPMA_SUITE_TEST_TIMEOUT:-120}" \
	-- "$VM_SRCDIR/guest/suite.sh" "${exes[@]}" 2>"$vmerr")
wait $! 2>/dev/null
vm_rc=$?

failed=0
if [ "$done_n" -lt "$total" ]; then
	sed 's/^/# /' "$vmerr"
	reason="the VM stopped before this test ran (status $vm_rc)"
	for ((i = done_n + 1; i <= total; i++)); do
		echo "not ok $i - $(basename "${exes[i - 1]}") # $reason"
	done
	failed=1
else
	grep -v '^rpma-vm: VM (' "$vmerr" | sed 's/^/# /'
fi
[ "$bad_n" = 0 ] || failed=1
# suite.sh exits 1 when a test failed; anything else is the VM's own trouble
case "$vm_rc" in 0 | 1) ;; *) failed=1 ;; esac

if [ -s "$times" ]; then
	# boot=.. ready=.. cmd=.. wall=..
	eval "$(tail -n 1 "$times")"
	echo "# boot ${boot} s, rdma set-up ${ready} s (guest uptime), tests ${cmd} s, VM wall ${wall} s, ${boots} boot(s)"
fi
[ "$on_host" = 1 ] || echo "# kernel: $(state_get KPKG) $(state_get KVERSION) ($VM_FLAVOR flavor)"
echo "# suite $provider ($VM_FLAVOR): $total tests in $(elapsed "$t_suite") s"
exit $failed
