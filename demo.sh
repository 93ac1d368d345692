#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: ./demo.sh [--provider rxe|siw] [--builddir DIR] [MESSAGE]
#
# From a fresh Debian 12 machine to persistent memory replicated over real
# RDMA, in one command:
#   1. installs the build dependencies with apt-get when they are missing;
#   2. configures (meson setup build) and builds (ninja -C build -j2);
#   3. prepares the test VM (tests/vm/setup.sh: kernel, initramfs, siw.ko) --
#      this machine's kernel need not have RDMA, the VM runs Debian's own
#      kernel with soft RoCE (rxe) or soft iWARP (siw);
#   4. runs examples/04-write-flush in the VM: the server maps emulated
#      persistent memory (device DAX, /dev/dax0.0) with libpmem2, the client
#      writes MESSAGE into it with rpma_write() and makes it persistent with
#      rpma_flush(); both outputs are shown. A second server then starts on
#      the same memory and finds the message still there.
# When this machine has an RDMA device of its own, step 4 runs here instead
# of in a VM.
#
# Needs root for the package installation (or everything installed
# already), and about 1 GB of disk for the packages and the kernel.

set -uo pipefail

top=$(cd "$(dirname "$0")" && pwd)
builddir=$top/build
provider=rxe
message=
while [ $# -gt 0 ]; do
	case "$1" in
	--provider) provider=${2:-}; shift 2 || break ;;
	--builddir) builddir=${2:-}; shift 2 || break ;;
	-h | --help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "usage: $0 [--provider rxe|siw] [--builddir DIR] [MESSAGE]" >&2; exit 2 ;;
	*) message=$1; shift ;;
	esac
done
case "$provider" in rxe | siw) ;; *) echo "demo: --provider must be rxe or siw" >&2; exit 2 ;; esac
[ -n "$message" ] || message="Hello from rpma-ng, replicated at $(date '+%F %T')"

t_demo=$(date +%s)
step_no=0
step() {
	step_no=$((step_no + 1))
	echo
	echo "demo: [$step_no/4] $*"
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

# --- 2. build ---------------------------------------------------------------
step "building in $builddir"
t=$(date +%s)
if [ ! -r "$builddir/build.ninja" ]; then
	info "meson setup $builddir"
	meson setup "$builddir" "$top" >/tmp/rpma-demo-meson.log 2>&1 || {
		tail -n 20 /tmp/rpma-demo-meson.log >&2
		fail "meson setup failed; the whole log: /tmp/rpma-demo-meson.log"
	}
fi
info "ninja -C $builddir -j2"
ninja -C "$builddir" -j2 >/tmp/rpma-demo-ninja.log 2>&1 || {
	grep -E -A5 'error|FAILED' /tmp/rpma-demo-ninja.log | head -n 40 >&2
	fail "the build failed; the whole log: /tmp/rpma-demo-ninja.log"
}
server=$builddir/examples/04-write-flush/server
client=$builddir/examples/04-write-flush/client
[ -x "$server" ] && [ -x "$client" ] ||
	fail "$server was not built (is libpmem2-dev installed? reconfigure: meson setup --reconfigure $builddir)"
info "built in $(($(date +%s) - t)) s"

# --- 3. the VM --------------------------------------------------------------
step "preparing the RDMA VM (tests/vm/setup.sh)"
if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
	info "this machine has an RDMA device ($(ls /sys/class/infiniband | tr '\n' ' ')): no VM needed"
	if [ ! -c /dev/dax0.0 ]; then
		# no device DAX here: a regular file stands in for the pmem
		export RPMA_EXAMPLE_PMEM=$builddir/demo-pmem-file
		rm -f "$RPMA_EXAMPLE_PMEM"
		info "no /dev/dax0.0: the server uses the file $RPMA_EXAMPLE_PMEM instead"
	fi
else
	"$top/tests/vm/setup.sh" "$builddir" ||
		fail "the VM could not be prepared (see the messages above)"
fi

# --- 4. the example -----------------------------------------------------------
step "running examples/04-write-flush over $provider with persistent memory"
info "the VM boots in a few seconds, then the server and the client run in it"
first="$message"
second="A second message, for the restarted server"
"$top/tests/vm/run-in-vm.sh" "$builddir" --provider "$provider" --pmem --timeout 300 -- \
	bash -c '
		set -e
		ex=$1 server=$2 client=$3
		echo "#### run 1: the client replicates its message into the server'"'"'s pmem"
		"$ex" 04-write-flush "$server" "$client" "$4"
		echo
		echo "#### run 2: a new server on the same pmem finds the first message"
		"$ex" 04-write-flush "$server" "$client" "$5"
	' demo "$top/examples/run-example.sh" "$server" "$client" "$first" "$second"
rc=$?
echo
case $rc in
0) info "done in $(($(date +%s) - t_demo)) s: the message went over RDMA into persistent memory and survived a server restart" ;;
125) fail "the VM could not run the example (see the messages above)" ;;
124) fail "the example timed out" ;;
*) fail "the example failed (status $rc; see the outputs above)" ;;
esac
