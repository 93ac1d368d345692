#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/vm/run-in-vm.sh BUILDDIR [OPTIONS] -- COMMAND [ARG...]
#
# Runs COMMAND as root over real kernel RDMA and returns its exit status.
# The host's kernel has no RDMA, so a small QEMU guest boots Debian's own
# kernel (prepared by setup.sh in BUILDDIR/vm); its root is the host's /
# (9p, read-only, tmpfs overlay on top) and the source tree, BUILDDIR and the
# current directory are shared read-write at the same paths, so host-built
# binaries run unchanged and files written there are seen by the host.
# With --flavor trixie the guest boots Debian 13's kernel and its root is
# the Debian 13 root of BUILDDIR/vm/trixie (shared the same way): run there
# what build-in-root.sh built in BUILDDIR/trixie-build.
# Inside the guest the provider's device is created on a dummy netdev that
# carries 192.0.2.1/32 (rdma_cm does not work on lo); COMMAND runs in the
# current directory with `ulimit -l unlimited`, stdin from /dev/null, its
# stdout and stderr forwarded to ours, under a timeout. Then the guest
# powers off.
#
# COMMAND sees: RPMA_TEST_ADDR=192.0.2.1  RPMA_TEST_PROVIDER=rxe|siw
#               RPMA_TEST_DEVICE=rxe0|siw0  RPMA_TEST_PMEM=/dev/dax0.0 (--pmem)
#               RPMA_TEST_PMEM_ALL="/dev/dax0.0 /dev/dax1.0 ..." (--pmem-count)
#               RPMA_TEST_SILENT_ADDR=198.51.100.1 (routed to a dummy netdev
#               that sends ARP and gets no answer: resolving it times out)
# plus the host's RPMA_* and sanitizer variables and any --env.
#
# When the host has an RDMA device of its own (/sys/class/infiniband is not
# empty), COMMAND runs directly on the host instead (RPMA_VM_FORCE=1 boots
# the VM anyway); RPMA_TEST_ADDR is then the host device's IPv4 address
# unless already set.
#
# OPTIONS
#   --flavor host|trixie      the guest's root and kernel (see lib.sh);
#                   host (the default) is the host's / and Debian 12's kernel
#   --provider rxe|siw|none   soft-RoCE (default), soft-iWARP, or no device
#   --pmem          emulated persistent memory as device DAX (/dev/dax0.0).
#                   host flavor: legacy pmem (memmap=512M!2G, 3 GiB guest,
#                   502 MiB); trixie flavor: a 512 MiB QEMU NVDIMM (ACPI
#                   NFIT), the kind rxe accepts for IBV_ACCESS_FLUSH_PERSISTENT
#                   (README.md); RPMA_VM_PMEM=legacy|nvdimm overrides
#   --pmem-count N  N separate device DAX areas (1-4, implies --pmem):
#                   /dev/dax0.0 ... /dev/dax<N-1>.0, 128 MiB each when N > 1
#   --timeout SEC   limit for COMMAND (default 600, RPMA_VM_TIMEOUT)
#   --env NAME=VAL  extra environment for COMMAND (repeatable)
#   --share DIR     one more directory shared read-write (repeatable)
#   --no-setup      do not run setup.sh first
#   --keep          keep the job directory (BUILDDIR/vm/jobs/...)
#   --quiet         no "rpma-vm:" progress lines (errors still printed)
#
# A boot that fails before the guest starts COMMAND (a kernel panic, the
# guest gone without a result, no ready mark within RPMA_VM_BOOT_TIMEOUT
# seconds, the RDMA set-up failing) is tried again, twice at most; the
# guest's kernel log of each failed boot is kept in
# BUILDDIR/vm/boot-failures/. Once COMMAND started, nothing is retried.
#
# Exit status: COMMAND's; 124 when it timed out; 125 when the VM could not
# run it (the reason is printed); 2 on usage errors.
#
# Other environment: RPMA_VM_MEM (MiB), RPMA_VM_CPUS (the host's cores
# shared among RPMA_VM_SLOTS guests, at least one; lib.sh), RPMA_VM_ACCEL
# (kvm|tcg; default kvm only with kvm_intel/kvm_amd loaded),
# RPMA_VM_TIMES=FILE (append "boot= ready= cmd= wall= boots=" seconds, and
# the number of boots it took), RPMA_VM_BOOT_TIMEOUT (s until the ready
# mark: 180 under TCG, 60 with KVM), RPMA_VM_BOOTS (tries, 3),
# RPMA_VM_FAIL_BOOTS=N (the first N boots are made to panic, no init: for
# the harness's own test, tests/vm/boot-retry.sh),
# RPMA_VM_APPEND (more kernel command line),
# RPMA_VM_LOCK (machine-wide lock file, /tmp/rpma-ng-vm.lock).

set -uo pipefail
. "$(dirname "$0")/lib.sh"
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

usage() {
	echo "usage: $0 BUILDDIR [--flavor host|trixie] [--provider rxe|siw|none] [--pmem] [--pmem-count N] [--timeout SEC] [--env N=V] [--share DIR] [--no-setup] [--keep] [--quiet] -- COMMAND..." >&2
	exit 2
}

[ $# -ge 1 ] || usage
builddir=$1
shift
provider=rxe
flavor=host
pmem=0
pmem_count=1
timeout_s=${RPMA_VM_TIMEOUT:-600}
setup=1
keep=0
extra_env=()
extra_share=()
while [ $# -gt 0 ]; do
	case "$1" in
	--provider) [ $# -ge 2 ] || usage; provider=$2; shift 2 ;;
	--provider=*) provider=${1#*=}; shift ;;
	--flavor) [ $# -ge 2 ] || usage; flavor=$2; shift 2 ;;
	--flavor=*) flavor=${1#*=}; shift ;;
	--pmem) pmem=1; shift ;;
	--pmem-count) [ $# -ge 2 ] || usage; pmem=1; pmem_count=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--env) [ $# -ge 2 ] || usage; extra_env+=("$2"); shift 2 ;;
	--share) [ $# -ge 2 ] || usage; extra_share+=("$2"); shift 2 ;;
	--no-setup) setup=0; shift ;;
	--keep) keep=1; shift ;;
	--quiet) vm_quiet=1; export RPMA_VM_QUIET=1; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ $# -ge 1 ] || usage
case "$provider" in rxe | siw | none) ;; *) usage ;; esac
case "$timeout_s" in '' | *[!0-9]*) usage ;; esac
case "$pmem_count" in [1-4]) ;; *) echo "$0: --pmem-count takes 1 to 4" >&2; exit 2 ;; esac

DIE_STATUS=125
vm_init "$builddir" "$flavor"

# --- a host with RDMA: no VM (the host flavor only: another flavor is there
# for its own kernel and userspace) -------------------------------------------
if [ "$VM_FLAVOR" = host ] && host_has_rdma; then
	msg "the host has an RDMA device: running the command here"
	export RPMA_TEST_PROVIDER=host
	[ -n "${RPMA_TEST_ADDR:-}" ] || RPMA_TEST_ADDR=$(host_rdma_addr)
	[ -n "$RPMA_TEST_ADDR" ] || die "cannot tell the host device's IPv4 address: set RPMA_TEST_ADDR"
	export RPMA_TEST_ADDR
	[ -n "${RPMA_TEST_DEVICE:-}" ] || export RPMA_TEST_DEVICE=$(ls /sys/class/infiniband | head -n 1)
	if [ "$pmem" = 1 ] && [ -z "${RPMA_TEST_PMEM:-}" ] && [ -c /dev/dax0.0 ]; then
		export RPMA_TEST_PMEM=/dev/dax0.0
	fi
	if [ "$pmem" = 1 ] && [ -z "${RPMA_TEST_PMEM_ALL:-}" ]; then
		all=$(ls /dev/dax*.* 2>/dev/null | head -n "$pmem_count" | tr '\n' ' ')
		export RPMA_TEST_PMEM_ALL=${all% }
	fi
	for e in "${extra_env[@]}"; do export "${e?}"; done
	ulimit -l unlimited 2>/dev/null || warn "cannot raise the locked-memory limit"
	exec timeout -k 5 "$timeout_s" "$@"
fi

# --- prepare ------------------------------------------------------------------
if [ "$setup" = 1 ]; then
	"$VM_SRCDIR/setup.sh" "$VM_BUILDDIR" --flavor "$VM_FLAVOR" --quiet || die "the VM set-up failed (see above)"
fi
setup_hint="tests/vm/setup.sh $VM_BUILDDIR$([ "$VM_FLAVOR" = host ] || echo " --flavor $VM_FLAVOR")"
[ "$(state_get COMPLETE)" = 1 ] || die "no VM in $VM_DIR: run $setup_hint"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found (package qemu-system-x86)"
kv=$(state_get KV)
kimg=$VM_DIR/kernel/boot/vmlinux-$kv
[ -r "$kimg" ] || kimg=$VM_DIR/kernel/boot/vmlinuz-$kv
[ -r "$kimg" ] || die "no kernel image in $VM_DIR/kernel/boot: run $setup_hint"
initrd=$VM_DIR/initramfs.cpio.gz
[ -r "$initrd" ] || die "no $initrd: run $setup_hint"
if [ "$provider" = siw ] && [ "$(state_get SIW)" != ok ]; then
	die "siw.ko is not available: $(cat "$VM_DIR/siw/unavailable" 2>/dev/null || echo 'run setup.sh')"
fi

mkdir -p "$VM_DIR/jobs"
job=$(mktemp -d "$VM_DIR/jobs/job.XXXXXX")
chmod 755 "$job"
qpid=
cleanup() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null
	[ "$keep" = 1 ] || rm -rf "$job"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the command, exactly as given
{
	printf '%q ' "$@"
	echo
} >"$job/cmd"

# environment forwarded to the command
{
	while IFS='=' read -r name _; do
		case "$name" in
		RPMA_VM_*) ;;
		RPMA_* | ASAN_OPTIONS | UBSAN_OPTIONS | LSAN_OPTIONS | TSAN_OPTIONS | \
			MALLOC_PERTURB_ | MALLOC_CHECK_ | LD_LIBRARY_PATH | LD_PRELOAD | VALGRIND_OPTS)
			printf 'export %s=%q\n' "$name" "${!name}" ;;
		esac
	done < <(env)
	for e in "${extra_env[@]}"; do
		printf 'export %s=%q\n' "${e%%=*}" "${e#*=}"
	done
} >"$job/env"

# the kind of emulated pmem: rxe takes only NFIT-described pmem for
# IBV_ACCESS_FLUSH_PERSISTENT, which the Debian 12 kernel does not offer
pmem_kind=legacy
[ "$VM_FLAVOR" = host ] || pmem_kind=nvdimm
pmem_kind=${RPMA_VM_PMEM:-$pmem_kind}
case "$pmem_kind" in legacy | nvdimm) ;; *) die "RPMA_VM_PMEM=$pmem_kind: legacy or nvdimm" ;; esac

cat >"$job/conf" <<EOF
PROVIDER=$provider
PMEM=$pmem
PMEM_KIND=$pmem_kind
PMEM_COUNT=$pmem_count
TIMEOUT=$timeout_s
CWD=$(printf '%q' "$PWD")
ADDR=$VM_ADDR
EOF
echo "$VM_DIR/kernel/lib/modules/$kv" >"$job/kmoddir"

# read-write shares: the source tree, the build directory, the current
# directory, --share dirs
vm_share_args "$job" "$VM_TOPDIR" "$VM_BUILDDIR" "$PWD" "${extra_share[@]}"
vm_accel_args 256

mem=${RPMA_VM_MEM:-2048}
machine=pc
append="console=ttyS0 quiet loglevel=4 panic=-1 oops=panic"
qpmem=()
if [ "$pmem" = 1 ] && [ "$pmem_kind" = legacy ]; then
	mem=${RPMA_VM_MEM:-3072}
	if [ "$pmem_count" = 1 ]; then
		append="$append memmap=512M!2G"
	else
		# the kernel merges adjacent e820 ranges of one type into one
		# region: 128 MiB ranges 256 MiB apart stay apart (all below 3 GiB)
		for ((i = 0; i < pmem_count; i++)); do
			append="$append memmap=128M!$((2048 + i * 256))M"
		done
	fi
elif [ "$pmem" = 1 ]; then
	# sparse files in the job directory back the NVDIMMs (no label area:
	# one raw namespace each, turned into device DAX by stage2.sh)
	nvdimm_mib=$((512 / pmem_count / 128 * 128))
	machine=pc,nvdimm=on
	mem="$mem,slots=$((pmem_count + 1)),maxmem=$((mem + 1024))M"
	for ((i = 0; i < pmem_count; i++)); do
		truncate -s "${nvdimm_mib}M" "$job/nvdimm$i.img" || die "cannot create $job/nvdimm$i.img"
		qpmem+=(-object "memory-backend-file,id=nvmem$i,share=on,mem-path=$job/nvdimm$i.img,size=${nvdimm_mib}M"
			-device "nvdimm,id=nvdimm$i,memdev=nvmem$i")
	done
fi
[ -z "${RPMA_VM_APPEND:-}" ] || append="$append $RPMA_VM_APPEND"
append="$append rpmavm.job=$job rpmavm.stage2=$VM_SRCDIR/guest/stage2.sh"

# QEMU writes the guest's hvc0/hvc1 into our stdout/stderr through fd sets
# (-add-fd), which must be write-only descriptors. A write-only stdout is
# shared as is (one file offset for everybody; QEMU is told to append, as
# it would truncate a file otherwise); one open read-write (a terminal) is
# reopened write-only.
wronly() { # FD: is it open write-only?
	[ "$(awk '/^flags:/ { print substr($2, length($2)) % 4; exit }' "/proc/$$/fdinfo/$1" 2>/dev/null)" = 1 ]
}
if wronly 1 || ! exec 5>>"/proc/$$/fd/1"; then exec 5>&1; fi
if wronly 2 || ! exec 6>>"/proc/$$/fd/2"; then exec 6>&2; fi

lock_t=$(now)
vm_lock
[ "$(elapsed "$lock_t")" = 0.0 ] || msg "waited $(elapsed "$lock_t") s for the lock"

kpkg=$(state_get KPKG)
kversion=$(state_get KVERSION)
boot_limit=${RPMA_VM_BOOT_TIMEOUT:-180}
[ "$VM_ACCEL" = kvm ] && boot_limit=${RPMA_VM_BOOT_TIMEOUT:-60}
max_boots=${RPMA_VM_BOOTS:-3}
mkdir -p "$VM_DIR/boot-failures"

# boot: one run of the guest, until it powers off. Sets qrc (QEMU's exit
# status, 124 on the outer timeout) and boot_failure (empty when the guest
# got as far as starting the command, else why it did not).
boot() {
	rm -f "$job/ready" "$job/result" "$job/console.log" "$job/setup.log"
	local boot_append=$append
	[ "$boots" -gt "${RPMA_VM_FAIL_BOOTS:-0}" ] || boot_append="$append rdinit=/rpma-vm-no-such-init"
	timeout -k 10 $((timeout_s + boot_limit)) \
		qemu-system-x86_64 "${VM_ACCEL_ARGS[@]}" -M "$machine" -smp "$(vm_cpus)" -m "$mem" "${qpmem[@]}" \
		-nodefaults -no-user-config -display none -vga none -no-reboot \
		-kernel "$kimg" -initrd "$initrd" -append "$boot_append" \
		-serial "file:$job/console.log" \
		-add-fd fd=5,set=1 -add-fd fd=6,set=2 \
		-device virtio-serial-pci \
		-chardev file,id=out,path=/dev/fdset/1,append=on -device virtconsole,chardev=out \
		-chardev file,id=err,path=/dev/fdset/2,append=on -device virtconsole,chardev=err \
		-fsdev "local,id=hostroot,path=$VM_ROOT,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=job,path=$job,security_model=none" \
		-device virtio-9p-pci,fsdev=job,mount_tag=job \
		"${VM_SHARE_ARGS[@]}" -nic none </dev/null >"$job/qemu.log" 2>&1 &
	qpid=$!
	local waited=0 hung=0
	# the guest marks the start of the command (guest/stage2.sh); until
	# then a hang is a failed boot
	while kill -0 "$qpid" 2>/dev/null && [ ! -e "$job/ready" ]; do
		if [ "$waited" -ge $((boot_limit * 10)) ]; then
			hung=1
			kill "$qpid" 2>/dev/null
			break
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	wait "$qpid"
	qrc=$?
	qpid=
	boot_failure=
	if [ "$hung" = 1 ]; then
		boot_failure="no ready mark from the guest within $boot_limit s"
	elif [ ! -e "$job/ready" ]; then
		if [ -r "$job/result" ]; then
			boot_failure="the RDMA/pmem set-up in the guest failed"
		elif grep -qs 'Kernel panic' "$job/console.log"; then
			boot_failure="the guest's kernel panicked: $(grep -m 1 'Kernel panic' "$job/console.log" | sed 's/^\[[^]]*\] *//')"
		else
			boot_failure="the guest stopped before starting the command (qemu exit status $qrc)"
		fi
	fi
}

# keep_guest_log NAME WHY: the guest's kernel log, kept as
# boot-failures/DATE-NAME.log with WHY and the kernel on its first lines;
# its path in $kept
keep_guest_log() {
	kept=$VM_DIR/boot-failures/$(date +%Y%m%d-%H%M%S)-$1.log
	{
		echo "# $2"
		echo "# kernel $kpkg $kversion, accel $VM_ACCEL"
		cat "$job/console.log" 2>/dev/null
	} >"$kept"
}

# show_guest_log N: the last N lines of the guest's kernel log, if any
show_guest_log() {
	[ -s "$job/console.log" ] || return 0
	echo "rpma-vm: last lines of the guest's kernel log:" >&2
	tail -n "$1" "$job/console.log" | sed 's/^/  /' >&2
}

t0=$(now)
boots=0
while :; do
	boots=$((boots + 1))
	boot
	[ -n "$boot_failure" ] || break
	keep_guest_log "$boots" "$boot_failure (boot $boots of $max_boots)"
	echo "rpma-vm: boot $boots of $max_boots failed: $boot_failure (kernel $kpkg $kversion; its log: $kept)" >&2
	show_guest_log 15
	[ "$boots" -lt "$max_boots" ] || {
		exec 5>&- 6>&-
		echo "rpma-vm: error: the VM failed to boot $boots times in a row; the last: $boot_failure" >&2
		exit 125
	}
done
t1=$(now)
exec 5>&- 6>&-

if [ ! -r "$job/result" ]; then
	echo "rpma-vm: error: the guest reported no result (qemu exit status $qrc$([ $qrc = 124 ] && echo ', timed out'))" >&2
	[ -s "$job/qemu.log" ] && sed 's/^/rpma-vm: qemu: /' "$job/qemu.log" >&2
	[ ! -s "$job/console.log" ] || keep_guest_log no-result "the guest reported no result"
	show_guest_log 30
	[ $qrc = 124 ] && exit 124
	exit 125
fi
RC=125 T_BOOT=0 T_READY=0 T_END=0
. "$job/result"
wall=$(elapsed "$t0" "$t1")
boot=$(awk -v a="$T_BOOT" 'BEGIN { printf "%.1f", a }')
ready=$(elapsed "$T_BOOT" "$T_READY")
cmd=$(elapsed "$T_READY" "$T_END")
what=$provider
[ "$pmem" = 1 ] && what="$what+pmem"
[ "$pmem_count" = 1 ] || what="$what x$pmem_count"
[ "$VM_FLAVOR" = host ] || what="$VM_FLAVOR, $what"
msg "VM ($what, $VM_ACCEL, kernel $kpkg $kversion): boot $boot s, rdma set-up $ready s, command $cmd s, wall $wall s, status $RC$([ "$boots" = 1 ] || echo ", $boots boots")"
[ -z "${RPMA_VM_TIMES:-}" ] || echo "boot=$boot ready=$ready cmd=$cmd wall=$wall boots=$boots" >>"$RPMA_VM_TIMES"
exit "$RC"
