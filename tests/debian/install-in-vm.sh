#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/debian/install-in-vm.sh BUILD_DIR SOURCE_DIR OUT_DIR PROVIDER PROGRAM...
#
# The packages of this tree (build-packages.sh builds them into OUT_DIR
# unless they are there already), installed, used and purged in one boot
# of the test VM over PROVIDER: in-guest.sh, given OUT_DIR/debs, SOURCE_DIR
# and PROGRAM... (the 1.x interop server and client, the GPSPM server).
#
# dpkg reads the whole of /var/lib/dpkg each time it runs: on a development
# machine, a thousand packages' file lists, which in the emulated guest,
# through the 9p share of the host's root, took a minute a run. So the host
# hands the guest OUT_DIR/dpkg.tar, the part of its database that
# installing and purging these packages involves (dpkg-subset.py), which
# the guest unpacks into memory over its own /var/lib/dpkg (in-guest.sh).
set -euo pipefail

[ $# -eq 7 ] || {
	echo "usage: $0 BUILD_DIR SOURCE_DIR OUT_DIR PROVIDER SERVER_1X CLIENT_1X GPSPM_SERVER" >&2
	exit 2
}
build=$1 src=$2 out=$3 provider=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)

"$here/build-packages.sh" "$src" "$out"
# the locks are root's, and mean nothing in a copy
trap 'rm -f "$out/dpkg.tar"' EXIT
python3 "$here/dpkg-subset.py" "$out/dpkg.tar" "$out"/debs/*.deb
"$src/tests/vm/run-in-vm.sh" "$build" --provider "$provider" --timeout 240 -- \
	"$here/in-guest.sh" "$out/debs" "$out/dpkg.tar" "$src" "$@"
