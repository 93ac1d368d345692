# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash disable=SC2034
# Shared functions of the VM harness (sourced by setup.sh, run-in-vm.sh and
# run-suite.sh; not executable on its own).
#
# Cache layout under BUILDDIR/vm/:
#   state              key=value lines written by setup.sh (KPKG, KV, ...)
#   debs/              the downloaded kernel image package
#   kernel/            the package unpacked (boot/, lib/modules/KV/), plus
#                      boot/vmlinux-KV (uncompressed) and updates/siw.ko
#   initramfs.cpio.gz  busybox + the modules needed to mount the root
#   siw/               out-of-tree siw build; siw/unavailable holds the
#                      reason when siw.ko could not be built
#   jobs/              one directory per VM run (removed afterwards)

VM_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VM_TOPDIR=$(cd "$VM_SRCDIR/../.." && pwd)

# The guest's address for rdma_cm (TEST-NET-1; it exists only inside the
# VM, on a dummy netdev, because rdma_cm does not work on lo).
VM_ADDR=192.0.2.1

vm_quiet=${RPMA_VM_QUIET:-0}

msg() { [ "$vm_quiet" = 1 ] || echo "rpma-vm: $*" >&2; }
warn() { echo "rpma-vm: warning: $*" >&2; }
die() { echo "rpma-vm: error: $*" >&2; exit "${DIE_STATUS:-1}"; }

now() { date +%s.%N; }
# elapsed START [END] -> seconds with one decimal
elapsed() { awk -v a="$1" -v b="${2:-$(now)}" 'BEGIN { printf "%.1f", b - a }'; }

# vm_init BUILDDIR: set the cache paths
vm_init() {
	[ -n "${1:-}" ] || die "no build directory given"
	[ -d "$1" ] || die "build directory $1 does not exist"
	VM_BUILDDIR=$(cd "$1" && pwd)
	VM_DIR=$VM_BUILDDIR/vm
	VM_STATE=$VM_DIR/state
}

# state_get KEY -> value from BUILDDIR/vm/state (empty when unset)
state_get() {
	[ -r "$VM_STATE" ] || return 0
	sed -n "s/^$1=//p" "$VM_STATE" | tail -n 1
}

# A host that has its own RDMA device runs commands directly.
host_has_rdma() {
	[ "${RPMA_VM_FORCE:-0}" = 1 ] && return 1
	[ -d /sys/class/infiniband ] || return 1
	[ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]
}

# The IPv4 address of the netdev under the host's first RDMA device.
host_rdma_addr() {
	local dev nd
	for dev in /sys/class/infiniband/*; do
		for nd in "$dev"/ports/*/gid_attrs/ndevs/*; do
			[ -r "$nd" ] || continue
			nd=$(cat "$nd" 2>/dev/null) || continue
			[ -n "$nd" ] || continue
			ip -4 -o addr show dev "$nd" 2>/dev/null |
				awk '{ sub("/.*", "", $4); print $4; exit }'
			return 0
		done
	done
}

# Machine-wide lock: one VM at a time (TCG keeps both cores busy). The
# per-build lock file BUILDDIR/vm/lock is taken as well.
vm_lock() {
	local global=${RPMA_VM_LOCK:-/tmp/rpma-ng-vm.lock}
	mkdir -p "$VM_DIR"
	exec 8>>"$VM_DIR/lock"
	exec 9>>"$global"
	chmod 666 "$global" 2>/dev/null
	if ! flock -n 8 || ! flock -n 9; then
		msg "waiting for another VM run to finish (lock $global)"
		flock -w "${RPMA_VM_LOCK_WAIT:-3600}" 8 || die "timed out waiting for $VM_DIR/lock"
		flock -w "${RPMA_VM_LOCK_WAIT:-3600}" 9 || die "timed out waiting for $global"
	fi
}
