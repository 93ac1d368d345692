# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash disable=SC2034
# Shared functions of the VM harness (sourced by setup.sh, run-in-vm.sh and
# run-suite.sh; not executable on its own).
#
# Flavors: which root and kernel the guest boots.
#   host    (default) the host's own / as the guest's root and the kernel
#           Debian ships for it (Debian 12: Linux 6.1, rdma-core 44);
#           cached in BUILDDIR/vm/
#   trixie  a Debian 13 root made with debootstrap and Debian 13's kernel
#           (Linux 6.12, rdma-core 56: RDMA FLUSH and ATOMIC WRITE on rxe);
#           cached in BUILDDIR/vm/trixie/, the project built inside that
#           root in BUILDDIR/trixie-build (build-in-root.sh)
#
# Cache layout under BUILDDIR/vm/ (or BUILDDIR/vm/trixie/):
#   root/              (trixie) the Debian 13 root; root.stamp lists the
#                      packages installed in it
#   state              key=value lines written by setup.sh (KPKG, KV, ...)
#   debs/              the downloaded kernel image package
#   kernel/            the package unpacked (boot/, lib/modules/KV/), plus
#                      boot/vmlinux-KV (uncompressed), updates/siw.ko and
#                      updates/rdma_rxe.ko (setup.sh, step 6)
#   initramfs.cpio.gz  busybox + the modules needed to mount the root
#   siw/               out-of-tree siw build; siw/unavailable holds the
#                      reason when siw.ko could not be built
#   rxe/               out-of-tree rdma_rxe build (build.log)
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

# vm_init BUILDDIR [FLAVOR]: set the cache paths of the flavor (host)
#   VM_DIR    the flavor's cache
#   VM_ROOT   the guest's root on the host
#   VM_FLAVOR_BUILD  where the project is built inside VM_ROOT (trixie)
vm_init() {
	[ -n "${1:-}" ] || die "no build directory given"
	[ -d "$1" ] || die "build directory $1 does not exist"
	VM_BUILDDIR=$(cd "$1" && pwd)
	VM_FLAVOR=${2:-host}
	case "$VM_FLAVOR" in
	host)
		VM_DIR=$VM_BUILDDIR/vm
		VM_ROOT=/
		VM_FLAVOR_BUILD=
		;;
	trixie)
		VM_DIR=$VM_BUILDDIR/vm/trixie
		VM_ROOT=$VM_DIR/root
		VM_FLAVOR_BUILD=$VM_BUILDDIR/trixie-build
		;;
	*) die "unknown flavor '$VM_FLAVOR' (host or trixie)" ;;
	esac
	VM_STATE=$VM_DIR/state
}

# as_root COMMAND...: run COMMAND as root: directly when we are root,
# through sudo otherwise (installing packages, making and entering the
# Debian 13 root need it; nothing else does)
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
		return
	fi
	command -v sudo >/dev/null || {
		echo "rpma-vm: error: '$*' needs root: run as root, or install sudo" >&2
		return 1
	}
	sudo -- "$@"
}

# in_root COMMAND...: run COMMAND in the flavor's root. The host flavor's
# root is /: the command runs as it is. Otherwise it runs chrooted, in a
# private mount namespace (the mounts vanish with it) with /proc, /dev, the
# source tree and the build directory mounted at their own paths, and a
# clean environment. Entering the root needs root (sudo otherwise); the
# command runs as root there.
in_root() {
	in_root_as "" "$@"
}

# in_root_as_caller COMMAND...: as in_root, but the command runs with the
# caller's user and group ids, so that what it writes in the build
# directory belongs to the caller (builds); HOME is /tmp
in_root_as_caller() {
	in_root_as "$(id -u):$(id -g)" "$@"
}

in_root_as() {
	local userspec=$1 home=/root
	shift
	if [ "$VM_ROOT" = / ]; then
		"$@"
		return
	fi
	local keep=() v
	for v in http_proxy https_proxy no_proxy; do
		[ -z "${!v:-}" ] || keep+=("$v=${!v}")
	done
	[ "$userspec" = 0:0 ] && userspec=
	[ -z "$userspec" ] || home=/tmp
	as_root unshare --mount --propagation private -- /bin/bash -c '
		set -e
		r=$1 top=$2 build=$3 userspec=$4
		shift 4
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		# the outer one first: a directory inside it stays visible
		[ ${#build} -ge ${#top} ] || { d=$top top=$build build=$d; }
		for d in "$top" "$build"; do
			mkdir -p "$r$d"
			mount --bind "$d" "$r$d"
		done
		exec chroot ${userspec:+--userspec="$userspec"} "$r" "$@"' in_root "$VM_ROOT" "$VM_TOPDIR" "$VM_BUILDDIR" "$userspec" \
		/usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=$home LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive "${keep[@]}" "$@"
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

# vm_share_args JOB DIR...: the 9p devices that share the existing DIRs
# read-write at their own paths (one inside another is visible through
# it, and / never is) in VM_SHARE_ARGS, and the "tag path" lines the
# guest's init mounts them by in JOB/mounts
vm_share_args() {
	local job=$1 d prev= i=0 dirs=()
	shift
	for d in "$@"; do
		d=$(readlink -f "$d") || continue
		[ -d "$d" ] && [ "$d" != / ] || continue
		dirs+=("$d")
	done
	mapfile -t dirs < <(printf '%s\n' "${dirs[@]}" | LC_ALL=C sort -u)
	VM_SHARE_ARGS=()
	: >"$job/mounts"
	for d in "${dirs[@]}"; do
		if [ -n "$prev" ] && [[ "$d/" == "$prev/"* ]]; then continue; fi
		prev=$d
		VM_SHARE_ARGS+=(-fsdev "local,id=rw$i,path=$d,security_model=none,multidevs=remap"
			-device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
		echo "rw$i $d" >>"$job/mounts"
		i=$((i + 1))
	done
}

# vm_accel_args TB_SIZE: the accelerator (RPMA_VM_ACCEL, else hardware KVM
# only when kvm_intel or kvm_amd is loaded: a software /dev/kvm such as
# kvm_pvm cannot boot a stock kernel in reasonable time; else TCG with a
# translation cache of TB_SIZE MiB) in VM_ACCEL (kvm|tcg) and its QEMU
# arguments in VM_ACCEL_ARGS
vm_accel_args() {
	VM_ACCEL=${RPMA_VM_ACCEL:-}
	if [ -z "$VM_ACCEL" ]; then
		VM_ACCEL=tcg
		if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
			VM_ACCEL=kvm
		fi
	fi
	case "$VM_ACCEL" in
	kvm) VM_ACCEL_ARGS=(-accel kvm -cpu host) ;;
	# TCG runs "rep movsb" a byte at a time, where other vCPUs see each
	# store: with fast string moves (erms, fsrm) offered, the guest
	# kernel's memcpy, which places rxe's and siw's data, lets a reader
	# see an aligned 8-byte RDMA write half done. Without them it stores
	# 8 bytes at once, as an RDMA NIC places them.
	*) VM_ACCEL_ARGS=(-accel "tcg,thread=multi,tb-size=$1" -cpu max,erms=off,fsrm=off) ;;
	esac
}

# vm_cpus: the guest's vCPUs, RPMA_VM_CPUS or else this host's cores
# shared among the guests that may run at once (RPMA_VM_SLOTS), at least
# one: TCG runs each vCPU in a thread of its own, and a guest whose vCPUs
# wait for host cores taken by another guest waits on its own spinlocks
# and interrupts too, which slows it down far more than one vCPU does
vm_cpus() {
	local slots=${RPMA_VM_SLOTS:-1} cores
	[ -z "${RPMA_VM_CPUS:-}" ] || { echo "$RPMA_VM_CPUS"; return; }
	case "$slots" in '' | *[!0-9]* | 0) slots=1 ;; esac
	cores=$(nproc)
	[ "$cores" -le 2 ] || cores=2
	[ $((cores / slots)) -ge 1 ] && echo $((cores / slots)) || echo 1
}

# setup_lock: two set-ups (or a set-up and a build in the root) of the same
# flavor must not interleave
setup_lock() {
	mkdir -p "$VM_DIR"
	exec 7>>"$VM_DIR/setup.lock"
	flock -w 3600 7 || die "timed out waiting for $VM_DIR/setup.lock"
}

# Machine-wide slots: at most RPMA_VM_SLOTS runs (1 by default) at once,
# since a guest under TCG keeps a core busy and its tests have time bounds
# that a starved guest would miss. A run takes the first free slot, or
# waits for one: slot K is the lock file RPMA_VM_LOCK (/tmp/rpma-ng-vm.lock)
# with ".K" appended from the second on, taken both machine-wide and in
# the build (BUILDDIR/vm/lock.K), so that runs of two builds or two users
# count against the same slots.
vm_lock() {
	local global=${RPMA_VM_LOCK:-/tmp/rpma-ng-vm.lock} slots=${RPMA_VM_SLOTS:-1} k suffix
	local waited=0 t=0 limit=$((${RPMA_VM_LOCK_WAIT:-3600} * 10))
	case "$slots" in '' | *[!0-9]* | 0) slots=1 ;; esac
	mkdir -p "$VM_DIR"
	while :; do
		for ((k = 0; k < slots; k++)); do
			suffix=
			[ "$k" = 0 ] || suffix=.$k
			exec 8>>"$VM_DIR/lock$suffix"
			exec 9>>"$global$suffix"
			chmod 666 "$global$suffix" 2>/dev/null
			if flock -n 8; then
				flock -n 9 && return 0
				flock -u 8
			fi
			exec 8>&- 9>&-
		done
		if [ "$waited" = 0 ]; then
			msg "waiting for another VM run to finish (lock $global)"
			waited=1
		fi
		t=$((t + 1))
		[ "$t" -lt "$limit" ] || die "timed out waiting for a free VM slot ($global)"
		sleep 0.1
	done
}
