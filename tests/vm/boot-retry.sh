#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/vm/boot-retry.sh BUILDDIR
#
# Checks that run-in-vm.sh retries a boot that fails before the command
# starts, keeps the guest's kernel log of each failed boot, names the
# kernel package, and gives up after three boots: the first boot is made
# to panic (RPMA_VM_FAIL_BOOTS=1) and the command must still run, once;
# then every boot panics and the status must be 125 with the reason.
# Prints TAP. On a host with its own RDMA device there is no VM to boot:
# skipped.

set -uo pipefail
. "$(dirname "$0")/lib.sh"
builddir=$1
vm_init "$builddir"

echo "TAP version 13"
echo "1..2"
if host_has_rdma; then
	echo "ok 1 - retry # SKIP the host has an RDMA device: no VM"
	echo "ok 2 - give-up # SKIP the host has an RDMA device: no VM"
	exit 0
fi
"$VM_SRCDIR/setup.sh" "$VM_BUILDDIR" --quiet --no-siw || { echo "Bail out! the VM set-up failed"; exit 1; }

# in the build directory, which the guest shares (its /tmp is its own)
work=$(mktemp -d "$VM_BUILDDIR/boot-retry.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
check() { # N NAME CONDITION...
	local n=$1 name=$2
	shift 2
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		sed 's/^/# /' "$work/err"
		failed=1
	fi
}

kept_before=$(ls "$VM_DIR/boot-failures" 2>/dev/null | wc -l)
RPMA_VM_FAIL_BOOTS=1 "$VM_SRCDIR/run-in-vm.sh" "$VM_BUILDDIR" --no-setup --provider none -- \
	/bin/sh -c 'echo ran >>"$1"' sh "$work/ran" >"$work/out" 2>"$work/err"
rc=$?
kept_after=$(ls "$VM_DIR/boot-failures" 2>/dev/null | wc -l)
retried() {
	[ "$rc" = 0 ] && [ "$(cat "$work/ran" 2>/dev/null)" = ran ] &&
		grep -q "boot 1 of 3 failed: the guest's kernel panicked" "$work/err" &&
		grep -q "kernel $(state_get KPKG) $(state_get KVERSION)" "$work/err" &&
		grep -q ', 2 boots' "$work/err" &&
		[ "$kept_after" = $((kept_before + 1)) ]
}
check 1 "retry: a failed first boot is retried, its log kept, the command run once" retried

rm -f "$work/ran"
RPMA_VM_FAIL_BOOTS=3 "$VM_SRCDIR/run-in-vm.sh" "$VM_BUILDDIR" --no-setup --provider none -- \
	/bin/sh -c 'echo ran >>"$1"' sh "$work/ran" >"$work/out" 2>"$work/err"
rc=$?
gave_up() {
	[ "$rc" = 125 ] && [ ! -e "$work/ran" ] &&
		grep -q 'failed to boot 3 times in a row; the last: the guest.s kernel panicked' "$work/err"
}
check 2 "give-up: three failed boots end with status 125 and the reason" gave_up
exit $failed
