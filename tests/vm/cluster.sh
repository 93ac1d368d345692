# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# A cluster of test machines: several QEMU guests at once, each with its own
# kernel and root (a flavor of lib.sh), its own NIC and address on one
# Ethernet segment, and rxe or siw on that NIC. Sourced by the scenarios of
# tests/cluster/; see tests/vm/README.md, "A cluster".
#
# The segment: every guest's NIC is a QEMU `-netdev dgram` on a unix
# socket, and l2switch.py forwards the frames between them. Nothing leaves
# the host; no root, no host interface, no multicast. Guest I (from 0) has
# the address 192.0.2.(11+I)/24 and the MAC 52:54:00:00:02:(11+I).
#
# Faults:
#   cl_netem NAME ARGS...   `tc qdisc replace dev eth0 root netem ARGS` on
#                           NAME (loss, delay, reorder, duplicate); "off"
#                           removes it
#   cl_cut A B / cl_heal [A B]  a partition made in the switch: every frame
#                           between A and B dropped, no event on either side
#   cl_power_loss NAME      the guest's QEMU killed (SIGKILL): what reached
#                           its emulated NVDIMM (a file on the host) stays,
#                           the rest is gone; cl_boot NAME starts it again
#                           on the same file
#
# Commands: every guest runs an agent (guest/stage2.sh, AGENT=1) that runs
# the scripts the host drops into its job directory, each in the background.
#   cl_on NAME [--timeout S] -- CMD...       run CMD on NAME and wait: its
#                           output on ours, its exit status returned
#   cl_start NAME ID [--timeout S] -- CMD... start CMD, do not wait
#   cl_wait NAME ID [SECONDS]  wait for it: its output, its exit status
#                           (124 when it is not done after SECONDS)
#   cl_signal NAME ID SIG   send SIG to what cl_start started
# Every command runs under `timeout` (default 120 s), as root, in the
# source tree, with ulimit -l unlimited and RPMA_TEST_ADDR (its own
# address), RPMA_TEST_PROVIDER, RPMA_TEST_DEVICE and, with pmem,
# RPMA_TEST_PMEM=/dev/dax0.0.
#
# Environment: RPMA_CLUSTER_KEEP=1 keeps the cluster's directory (the
# guests' kernel logs, every command's output) after the run.

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CL_NAMES=()
declare -A CL_INDEX CL_FLAVOR CL_PMEM CL_QPID CL_JOB CL_BOOTS CL_CPUS CL_MEM
CL_DIR=
CL_SWITCH_PID=
CL_PROVIDER=rxe
CL_SEQ=0

cl_addr() { echo "192.0.2.$((11 + CL_INDEX[$1]))"; }

# cl_init BUILDDIR PROVIDER NAME[:FLAVOR[:pmem]]...: declare the machines
# (flavor host or trixie; ":pmem" gives one 256 MiB NVDIMM), set the
# flavors up, take the machine-wide VM lock, start the switch. Nothing is
# booted yet.
cl_init() {
	local builddir=$1 spec name flavor rest i=0
	CL_PROVIDER=$2
	shift 2
	for spec in "$@"; do
		name=${spec%%:*}
		rest=${spec#"$name"}
		rest=${rest#:}
		flavor=${rest%%:*}
		[ -n "$flavor" ] || flavor=host
		CL_NAMES+=("$name")
		CL_INDEX[$name]=$i
		CL_FLAVOR[$name]=$flavor
		CL_PMEM[$name]=0
		[[ "$rest" == *:pmem ]] && CL_PMEM[$name]=1
		CL_BOOTS[$name]=0
		CL_CPUS[$name]=${RPMA_CLUSTER_CPUS:-1}
		CL_MEM[$name]=${RPMA_CLUSTER_MEM:-1024}
		i=$((i + 1))
	done
	local f
	for f in $(printf '%s\n' "${CL_FLAVOR[@]}" | sort -u); do
		vm_init "$builddir" "$f"
		"$VM_SRCDIR/setup.sh" "$VM_BUILDDIR" --flavor "$f" --quiet || die "the VM set-up of flavor $f failed"
		if [ "$CL_PROVIDER" = siw ] && [ "$(state_get SIW)" != ok ]; then
			die "siw.ko is not available in flavor $f: $(cat "$VM_DIR/siw/unavailable" 2>/dev/null)"
		fi
	done
	vm_init "$builddir" host
	vm_lock
	# a short path: unix socket names are limited to 108 bytes
	CL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rpma-cluster.XXXXXX") || die "mktemp failed"
	chmod 755 "$CL_DIR"
	trap cl_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	python3 "$VM_SRCDIR/l2switch.py" "$CL_DIR" "${CL_NAMES[@]}" 2>"$CL_DIR/switch.log" &
	CL_SWITCH_PID=$!
	local n=0
	while [ ! -e "$CL_DIR/switch.ready" ]; do
		kill -0 "$CL_SWITCH_PID" 2>/dev/null || die "the switch did not start: $(cat "$CL_DIR/switch.log")"
		n=$((n + 1))
		[ $n -lt 100 ] || die "the switch did not start within 10 s"
		sleep 0.1
	done
}

cl_cleanup() {
	local name
	for name in "${CL_NAMES[@]}"; do
		[ -z "${CL_QPID[$name]:-}" ] || kill -9 "${CL_QPID[$name]}" 2>/dev/null
	done
	[ -z "$CL_SWITCH_PID" ] || kill "$CL_SWITCH_PID" 2>/dev/null
	wait 2>/dev/null
	if [ -n "$CL_DIR" ] && [ "${RPMA_CLUSTER_KEEP:-0}" != 1 ]; then
		rm -rf "$CL_DIR"
	elif [ -n "$CL_DIR" ]; then
		echo "rpma-cluster: kept $CL_DIR" >&2
	fi
}

# cl_start_guest NAME: start NAME's QEMU in the background (cl_ready waits)
cl_start_guest() {
	local name=$1 i=${CL_INDEX[$1]} flavor=${CL_FLAVOR[$1]}
	vm_init "$VM_BUILDDIR" "$flavor"
	local kv kimg initrd
	kv=$(state_get KV)
	kimg=$VM_DIR/kernel/boot/vmlinux-$kv
	[ -r "$kimg" ] || kimg=$VM_DIR/kernel/boot/vmlinuz-$kv
	initrd=$VM_DIR/initramfs.cpio.gz
	CL_BOOTS[$name]=$((CL_BOOTS[$name] + 1))
	local job=$CL_DIR/$name.boot${CL_BOOTS[$name]}
	mkdir -p "$job/q"
	chmod 755 "$job" "$job/q"
	CL_JOB[$name]=$job
	local kept=0 pmem=${CL_PMEM[$name]} mem=${CL_MEM[$name]} qpmem=() machine=pc
	if [ "$pmem" = 1 ]; then
		# the NVDIMM's file outlives the guest: a power loss keeps it
		[ -e "$CL_DIR/$name.pmem" ] && kept=1
		[ "$kept" = 1 ] || truncate -s 256M "$CL_DIR/$name.pmem"
		machine=pc,nvdimm=on
		qpmem=(-object "memory-backend-file,id=nvmem0,share=on,mem-path=$CL_DIR/$name.pmem,size=256M"
			-device "nvdimm,id=nvdimm0,memdev=nvmem0")
		mem="$mem,slots=2,maxmem=$((mem + 512))M"
	fi
	cat >"$job/conf" <<EOF
PROVIDER=$CL_PROVIDER
PMEM=$pmem
PMEM_KIND=nvdimm
PMEM_COUNT=1
PMEM_KEPT=$kept
NIC=1
AGENT=1
TIMEOUT=${RPMA_CLUSTER_TIMEOUT:-3600}
CWD=$(printf '%q' "$VM_TOPDIR")
ADDR=$(cl_addr "$name")
EOF
	: >"$job/env"
	echo "$VM_DIR/kernel/lib/modules/$kv" >"$job/kmoddir"
	vm_share_args "$job" "$VM_TOPDIR" "$VM_BUILDDIR"
	# several guests at once: a smaller translation cache each
	vm_accel_args 128
	local mac
	printf -v mac '52:54:00:00:02:%02x' $((11 + i))
	# The NIC without event_idx: QEMU 7.2 can stop sending a guest's frames
	# for good after a send to the switch had to wait (EAGAIN). Its
	# completion goes on with at most x-txburst frames and leaves the rest
	# to a kick that the index-based notification then never asks for; the
	# guest's TCP (siw) or UDP (rxe) backs off and the case hangs. With a
	# plain flag, the guest's next frame kicks it.
	qemu-system-x86_64 "${VM_ACCEL_ARGS[@]}" -M "$machine" -smp "${CL_CPUS[$name]}" -m "$mem" "${qpmem[@]}" \
		-nodefaults -no-user-config -display none -vga none -no-reboot \
		-kernel "$kimg" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1 oops=panic rpmavm.job=$job rpmavm.stage2=$VM_SRCDIR/guest/stage2.sh" \
		-serial "file:$job/console.log" \
		-device virtio-serial-pci \
		-chardev "file,id=out,path=$job/hvc0.log" -device virtconsole,chardev=out \
		-chardev "file,id=err,path=$job/hvc1.log" -device virtconsole,chardev=err \
		-fsdev "local,id=hostroot,path=$VM_ROOT,security_model=none,readonly=on,multidevs=remap" \
		-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
		-fsdev "local,id=job,path=$job,security_model=none" \
		-device virtio-9p-pci,fsdev=job,mount_tag=job \
		"${VM_SHARE_ARGS[@]}" \
		-netdev "dgram,id=n0,local.type=unix,local.path=$CL_DIR/$name.sock,remote.type=unix,remote.path=$CL_DIR/switch.sock" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,event_idx=off" \
		</dev/null >"$job/qemu.log" 2>&1 &
	CL_QPID[$name]=$!
	vm_init "$VM_BUILDDIR" host
}

# cl_ready NAME: wait until NAME's agent serves (its RDMA, NIC and pmem set
# up), or fail with the reason
cl_ready() {
	local name=$1 job=${CL_JOB[$1]} n=0
	while [ ! -e "$job/ready" ]; do
		if ! kill -0 "${CL_QPID[$name]}" 2>/dev/null || [ -e "$job/result" ]; then
			echo "rpma-cluster: $name did not come up:" >&2
			sed 's/^/  /' "$job/setup.log" "$job/qemu.log" "$job/hvc1.log" >&2 2>/dev/null
			tail -n 20 "$job/console.log" 2>/dev/null | sed 's/^/  /' >&2
			return 1
		fi
		n=$((n + 1))
		if [ $n -ge 1800 ]; then
			echo "rpma-cluster: $name not ready within 180 s" >&2
			return 1
		fi
		sleep 0.1
	done
}

# cl_boot NAME...: boot the machines (together) and wait until all serve
cl_boot() {
	local name t0
	t0=$(now)
	for name in "$@"; do
		cl_start_guest "$name"
	done
	for name in "$@"; do
		cl_ready "$name" || return 1
	done
	msg "booted $* in $(elapsed "$t0") s"
}

# cl_power_loss NAME: pull the plug
cl_power_loss() {
	kill -9 "${CL_QPID[$1]}" 2>/dev/null
	wait "${CL_QPID[$1]}" 2>/dev/null
	CL_QPID[$1]=
}

# cl_stop NAME...: shut the machines down (their agents stop)
cl_stop() {
	local name n
	for name in "$@"; do
		[ -n "${CL_QPID[$name]:-}" ] || continue
		: >"${CL_JOB[$name]}/q/stop.cmd"
	done
	for name in "$@"; do
		[ -n "${CL_QPID[$name]:-}" ] || continue
		n=0
		while kill -0 "${CL_QPID[$name]}" 2>/dev/null && [ $n -lt 300 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		cl_power_loss "$name"
	done
}

# cl_start NAME ID [--timeout S] -- CMD...
cl_start() {
	local name=$1 id=$2 limit=120
	shift 2
	if [ "${1:-}" = --timeout ]; then
		limit=$2
		shift 2
	fi
	[ "${1:-}" = -- ] && shift
	local q=${CL_JOB[$name]}/q
	rm -f "$q/$id".*
	{
		echo 'ulimit -l unlimited'
		echo "export RPMA_TEST_ADDR=$(cl_addr "$name") RPMA_TEST_PROVIDER=$CL_PROVIDER RPMA_TEST_DEVICE=${CL_PROVIDER}0"
		[ "${CL_PMEM[$name]}" = 1 ] && echo 'export RPMA_TEST_PMEM=/dev/dax0.0'
		# after the exec, this PID is timeout's: the program is its child
		echo "echo \$\$ >$q/$id.pid"
		printf 'exec timeout -k 5 %s ' "$limit"
		printf '%q ' "$@"
		echo
	} >"$q/$id.tmp"
	mv "$q/$id.tmp" "$q/$id.cmd"
}

# cl_last_words NAME: the end of NAME's kernel log and of what QEMU said,
# for a guest that went down (the cluster's directory is gone after the run)
cl_last_words() {
	local job=${CL_JOB[$1]}
	tail -n 40 "$job/console.log" 2>/dev/null | sed 's/^/  console: /'
	tail -n 10 "$job/qemu.log" 2>/dev/null | sed 's/^/  qemu: /'
	tail -n 10 "$job/hvc1.log" 2>/dev/null | sed 's/^/  agent: /'
}

# cl_wait NAME ID [SECONDS]
cl_wait() {
	local name=$1 id=$2 limit=${3:-600} q=${CL_JOB[$1]}/q n=0
	while [ ! -e "$q/$id.rc" ]; do
		if [ -z "${CL_QPID[$name]:-}" ] || ! kill -0 "${CL_QPID[$name]}" 2>/dev/null; then
			cat "$q/$id.out" 2>/dev/null
			echo "rpma-cluster: $name went down before '$id' ended; its last words:" >&2
			cl_last_words "$name" >&2
			return 125
		fi
		n=$((n + 1))
		if [ $n -ge $((limit * 20)) ]; then
			cat "$q/$id.out" 2>/dev/null
			return 124
		fi
		sleep 0.05
	done
	cat "$q/$id.out" 2>/dev/null
	cat "$q/$id.err" >&2 2>/dev/null
	return "$(cat "$q/$id.rc")"
}

# cl_on NAME [--timeout S] -- CMD...
cl_on() {
	local name=$1
	shift
	CL_SEQ=$((CL_SEQ + 1))
	cl_start "$name" "on$CL_SEQ" "$@"
	cl_wait "$name" "on$CL_SEQ"
}

# cl_signal NAME ID SIG: send SIG to the program cl_start started as ID
# (the child of its `timeout`, whose PID the script wrote)
cl_signal() {
	local f=${CL_JOB[$1]}/q/$2.pid n=0
	while [ ! -s "$f" ] && [ $n -lt 200 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	cl_on "$1" -- pkill "-$3" -P "$(cat "${CL_JOB[$1]}/q/$2.pid")"
}

cl_netem() {
	local name=$1
	shift
	if [ "$1" = off ]; then
		cl_on "$name" -- tc qdisc del dev eth0 root
	else
		cl_on "$name" -- tc qdisc replace dev eth0 root netem "$@"
	fi
}

cl_cut() { python3 "$VM_SRCDIR/l2switch.py" --ctl "$CL_DIR" cut "$1" "$2" >/dev/null; }
cl_heal() { python3 "$VM_SRCDIR/l2switch.py" --ctl "$CL_DIR" heal "$@" >/dev/null; }
cl_switch_stats() { python3 "$VM_SRCDIR/l2switch.py" --ctl "$CL_DIR" stats; }
