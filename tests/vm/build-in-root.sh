#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/vm/build-in-root.sh BUILDDIR [--flavor trixie] [--quiet] [TARGET...]
#
# Builds this source tree inside the flavor's root (chroot on the host, far
# faster than in the emulated guest), so that the programs are compiled by
# that root's compiler against its libraries (trixie: gcc 14, rdma-core 56)
# and run in the flavor's guest (run-in-vm.sh --flavor trixie). The build
# directory is BUILDDIR/trixie-build, configured on first use with warnings
# as errors; the source tree and BUILDDIR appear at their own paths in the
# root. TARGETs are ninja targets, paths relative to that directory (e.g.
# tests/rdma/rdma_write); without any, everything is built.
#
# The flavor is set up first (setup.sh, fast when cached); the set-up lock
# is held while building, so that no set-up changes the root meanwhile.
# Exit status: 0 built, 1 the set-up or the build failed (the reason is
# printed last).
#
# Entering the root needs root (chroot; through sudo when the caller is not
# root), but the build runs as the caller, whose files it writes.
#
# Environment: RPMA_VM_BUILD_JOBS (ninja -j, 2).

set -uo pipefail
. "$(dirname "$0")/lib.sh"
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

usage() { echo "usage: $0 BUILDDIR [--flavor trixie] [--quiet] [TARGET...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
builddir=$1
shift
flavor=trixie
targets=()
while [ $# -gt 0 ]; do
	case "$1" in
	--flavor) [ $# -ge 2 ] || usage; flavor=$2; shift ;;
	--flavor=*) flavor=${1#*=} ;;
	--quiet) vm_quiet=1; export RPMA_VM_QUIET=1 ;;
	-*) usage ;;
	*) targets+=("$1") ;;
	esac
	shift
done

vm_init "$builddir" "$flavor"
[ -n "$VM_FLAVOR_BUILD" ] || die "flavor $VM_FLAVOR builds on the host: use meson and ninja"

t0=$(now)
quiet_opt=()
[ "$vm_quiet" = 1 ] && quiet_opt=(--quiet)
"$VM_SRCDIR/setup.sh" "$VM_BUILDDIR" --flavor "$VM_FLAVOR" "${quiet_opt[@]}" ||
	die "the $VM_FLAVOR root could not be set up (see above)"
setup_lock

b=$VM_FLAVOR_BUILD
if [ ! -r "$b/build.ninja" ]; then
	msg "configuring $b in the $VM_FLAVOR root"
	rm -rf "$b"
	# no VM tests inside (the root has no QEMU): only their programs
	in_root_as_caller meson setup "$b" "$VM_TOPDIR" -Dwerror=true -Dbuildtype=debugoptimized \
		-Drdma_tests=auto -Dvm_trixie=disabled ||
		die "meson setup of $b in the $VM_FLAVOR root failed"
fi
msg "building ${targets[*]:-everything} in $b ($VM_FLAVOR root)"
in_root_as_caller ninja -C "$b" -j"${RPMA_VM_BUILD_JOBS:-2}" "${targets[@]}" ||
	die "the build in the $VM_FLAVOR root failed"
msg "built in the $VM_FLAVOR root ($(elapsed "$t0") s)"
