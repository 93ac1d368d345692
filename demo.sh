#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: ./demo.sh [--provider rxe|siw] [--builddir DIR]
#
# From a fresh Debian 12 machine to a log replicated over real RDMA into
# several machines' persistent memory, in one command:
#   1. installs the build dependencies with apt-get when they are missing;
#   2. configures (meson setup build) and builds the library and the two
#      programs of the demo (the whole tree is ./test.sh's to build), and
#      meanwhile prepares the test VM (tests/vm/setup.sh: kernel,
#      initramfs, rdma_rxe.ko rebuilt with its fence fixed, and siw.ko only
#      for --provider siw, both from Debian's kernel source) -- this
#      machine's kernel need not have RDMA, the VM runs Debian's own kernel
#      with soft RoCE (rxe) or soft iWARP (siw);
#   3. runs examples/19-replicated-log in the VM, three machines' worth of
#      processes, each with its own emulated persistent memory (device DAX):
#      a writer appends records to its log and to two replicas and
#      acknowledges each once both have made it durable; one replica is
#      killed mid-stream, the writer goes on, the replica restarts, checks
#      every record and catches up; all three logs end the same
#      (examples/19-replicated-log/three-machines.sh shows all they print).
# When this machine has an RDMA device of its own, step 3 runs here instead
# of in a VM, with files standing in for the pmem.
#
# Needs root for the package installation, through sudo when not run as
# root (or everything installed already), and about 1 GB of disk for the
# packages and the kernel. The VM runs as the caller.

set -uo pipefail

top=$(cd "$(dirname "$0")" && pwd)
builddir=$top/build
provider=rxe
while [ $# -gt 0 ]; do
	case "$1" in
	--provider) provider=${2:-}; shift 2 || break ;;
	--builddir) builddir=${2:-}; shift 2 || break ;;
	-h | --help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: $0 [--provider rxe|siw] [--builddir DIR]" >&2; exit 2 ;;
	esac
done
case "$provider" in rxe | siw) ;; *) echo "demo: --provider must be rxe or siw" >&2; exit 2 ;; esac

t_demo=$(date +%s)
step_no=0
step() {
	step_no=$((step_no + 1))
	echo
	echo "demo: [$step_no/3] $*"
}
info() { echo "demo: $*"; }
fail() {
	echo "demo: FAILED: $*" >&2
	exit 1
}
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

# --- 1. build dependencies --------------------------------------------------
step "checking the build dependencies"
[ -r /etc/debian_version ] || info "warning: not a Debian system; package names may not match"
"$top/tests/install-deps.sh" build || fail "could not install the build dependencies (see above)"

# --- 2. build, and the VM beside it -----------------------------------------
# The set-up of the VM mostly waits for downloads and builds two kernel
# modules: it runs while the library builds, its output kept for the end.
step "building in $builddir, and preparing the RDMA VM (tests/vm/setup.sh) meanwhile"
t=$(date +%s)
vm_pid=
vm_log=$(mktemp)
trap 'rm -f "$vm_log"; [ -z "$vm_pid" ] || kill "$vm_pid" 2>/dev/null' EXIT
if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	info "this machine has an RDMA device ($(ls /sys/class/infiniband | tr '\n' ' ')): no VM needed"
else
	siw_opt=()
	# siw.ko is built from the kernel's source: only when the demo needs it
	[ "$provider" = siw ] || siw_opt=(--no-siw)
	mkdir -p "$builddir"
	"$top/tests/vm/setup.sh" "$builddir" "${siw_opt[@]}" >"$vm_log" 2>&1 &
	vm_pid=$!
fi
if [ ! -r "$builddir/build.ninja" ]; then
	info "meson setup $builddir"
	meson setup "$builddir" "$top" >/tmp/rpma-demo-meson.log 2>&1 || {
		tail -n 20 /tmp/rpma-demo-meson.log >&2
		fail "meson setup failed; the whole log: /tmp/rpma-demo-meson.log"
	}
fi
bindir=$builddir/examples/19-replicated-log
demo_targets=(examples/19-replicated-log/writer examples/19-replicated-log/replica)
info "ninja -C $builddir -j2 ${demo_targets[*]}"
ninja -C "$builddir" -j2 "${demo_targets[@]}" >/tmp/rpma-demo-ninja.log 2>&1 || {
	grep -E -A5 'error|FAILED|unknown target' /tmp/rpma-demo-ninja.log | head -n 40 >&2
	fail "the build failed (is libpmem2-dev installed? reconfigure: meson setup --reconfigure $builddir); the whole log: /tmp/rpma-demo-ninja.log"
}
[ -x "$bindir/writer" ] && [ -x "$bindir/replica" ] ||
	fail "$bindir was not built (is libpmem2-dev installed? reconfigure: meson setup --reconfigure $builddir)"
info "built in $(($(date +%s) - t)) s"
if [ -n "$vm_pid" ]; then
	info "waiting for the VM's set-up"
	vm_status=0
	wait "$vm_pid" || vm_status=$?
	vm_pid=
	cat "$vm_log"
	[ "$vm_status" = 0 ] || fail "the VM could not be prepared (see the messages above)"
	info "VM ready in $(($(date +%s) - t)) s"
fi

# --- 3. the replicated log ---------------------------------------------------
step "running examples/19-replicated-log over $provider: a writer and two replicas"
info "the VM boots in a few seconds, then the writer and the replicas run in it"
"$top/tests/vm/run-in-vm.sh" "$builddir" --no-setup --provider "$provider" --pmem-count 3 --timeout 300 -- \
	"$top/examples/19-replicated-log/three-machines.sh" "$bindir"
rc=$?
echo
case $rc in
0) info "done in $(($(date +%s) - t_demo)) s: every record went over RDMA into three places' persistent memory, and survived a replica's death" ;;
125) fail "the VM could not run the demo (see the messages above)" ;;
124) fail "the demo timed out" ;;
*) fail "the demo failed (status $rc; see the outputs above)" ;;
esac
