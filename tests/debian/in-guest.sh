#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/debian/in-guest.sh DEBS_DIR DPKG_TAR SOURCE_DIR INTEROP_SERVER INTEROP_CLIENT GPSPM_SERVER
#
# Runs in the test VM (tests/vm/run-in-vm.sh), whose root is the host's
# under a throwaway overlay, where Debian's librpma0 and librpma-dev are
# installed, as on the host:
#   1. puts DPKG_TAR, what the host's dpkg database holds of the packages
#      concerned, in memory over the guest's /var/lib/dpkg (install-in-vm.sh
#      says why), and installs the packages of DEBS_DIR with dpkg, which
#      must remove librpma0 and librpma-dev in their favour;
#   2. runs a client and a server built against Debian's librpma-dev
#      (INTEROP_SERVER and INTEROP_CLIENT, tests/interop's programs of the
#      librpma 1.x interface, linked with Debian's librpma.so.0) against
#      each other: they now load the installed rpma-ng;
#   3. builds README.md's C example with `pkg-config --cflags --libs
#      librpma` against the installed packages and runs it against
#      GPSPM_SERVER (examples/15-gpspm's server, on DRAM): the write must
#      be persistent;
#   4. purges the packages, then runs the triggers their installing and
#      purging set off (ldconfig: once for both, its scan of the share costs
#      seconds in the VM, and the library's path is the one Debian's had,
#      known to the loader already): every file they installed must be gone
#      and dpkg must find nothing to audit.
# Anywhere else than in the VM's overlay it would change the machine's
# packages, so it skips (77) there.
set -uo pipefail

[ $# -eq 6 ] || {
	echo "usage: $0 DEBS_DIR DPKG_TAR SOURCE_DIR INTEROP_SERVER INTEROP_CLIENT GPSPM_SERVER" >&2
	exit 2
}
debs=$1 dpkg_tar=$2 src=$3 interop_server=$4 interop_client=$5 gpspm_server=$6
case "${RPMA_TEST_PROVIDER:-}" in
rxe | siw) ;;
*)
	echo "not in the test VM (RPMA_TEST_PROVIDER=${RPMA_TEST_PROVIDER:-}): installing the" \
		"packages would change this machine's"
	exit 77
	;;
esac
if [ "$(findmnt -n -o FSTYPE /)" != overlay ]; then
	echo "the root is not the test VM's throwaway overlay: installing the packages would last"
	exit 77
fi
addr=$RPMA_TEST_ADDR
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
lib=/usr/lib/$multiarch/librpma.so.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The guest's root is the host's, read by QEMU as the user who started it:
# when that user is not root, the host's /root cannot be read, and dpkg
# warns that it cannot read ~/.dpkg.cfg on every call. A home of our own.
export HOME=$work
failures=0
fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}
# step NAME: the start of a step, with the seconds since the start
start=$SECONDS
step() { echo "== $1 ($((SECONDS - start)) s)"; }
installed() { [ "$(dpkg-query -W -f '${db:Status-Status}' "$1" 2>/dev/null)" = installed ]; }
packages=(librpma-ng0 librpma-ng-dev rpma-ng-tools)

step "the host's dpkg database, the part of it concerned, in memory"
if ! mount -t tmpfs -o mode=755 rpma-ng-dpkg /var/lib/dpkg || ! tar -C /var/lib -xf "$dpkg_tar"; then
	echo "FAIL: cannot put $dpkg_tar in place of /var/lib/dpkg"
	exit 1
fi

step "install ${packages[*]}"
for p in librpma0 librpma-dev; do
	installed "$p" || fail "Debian's $p is not installed in the VM: it is what the packages replace"
done
# man-db's trigger would rebuild the whole index of the manual, slowly in
# an emulated machine; it runs only where this file is
rm -f /var/lib/man-db/auto-update
# unsafe-io: nothing here outlives the VM, and syncing costs seconds in it
if ! dpkg --install --auto-deconfigure --force-unsafe-io --no-triggers "$debs"/*.deb \
	>"$work/install.log" 2>&1; then
	cat "$work/install.log"
	fail "dpkg --install failed"
fi
for p in "${packages[@]}"; do
	installed "$p" || fail "$p is not installed"
done
for p in librpma0 librpma-dev; do
	! installed "$p" || fail "$p is still installed beside the packages that replace it"
done
grep -E 'in favour of|Removing' "$work/install.log"
for p in "${packages[@]}"; do
	dpkg-query -L "$p" >"$work/$p.files"
done
grep -qxF "$lib" "$work/librpma-ng0.files" || fail "$lib is not librpma-ng0's"
# (grep -q in a pipe would end objdump early, and pipefail fail the test)
objdump -T "$lib" >"$work/exports"
grep -q 'LIBRPMA_NG_1.0' "$work/exports" || fail "$lib exports no LIBRPMA_NG_1.0: not rpma-ng"

step "librpma 1.x programs built against Debian's librpma-dev, on the installed rpma-ng"
readelf -d "$interop_client" >"$work/dynamic"
grep -q 'RUNPATH\|RPATH' "$work/dynamic" &&
	fail "$interop_client has a run path: it would not load the installed library"
if "$src/tests/interop/run-pair.sh" 7590 -- "$interop_server" --expect-lib "$lib" --direct-write \
	-- "$interop_client" --expect-lib "$lib" >"$work/pair.log" 2>&1; then
	tail -n 1 "$work/pair.log"
else
	cat "$work/pair.log"
	fail "the librpma 1.x client and server do not work on the installed rpma-ng"
fi

step "README.md's C example, built with pkg-config against the installed packages"
awk '/^```c$/ { on = 1; next } on && /^```/ { exit } on { print }' "$src/README.md" >"$work/write.c"
# shellcheck disable=SC2046
if cc -Wall -Wextra -Werror -o "$work/write" "$work/write.c" \
	$(pkg-config --cflags --libs librpma) 2>"$work/cc.log"; then
	timeout 60 "$gpspm_server" "$addr" 7591 >"$work/server.log" 2>&1 &
	server=$!
	for _ in $(seq 100); do
		grep -q 'listening on' "$work/server.log" && break
		sleep 0.1
	done
	rc=0
	timeout 60 "$work/write" "$addr" 7591 >"$work/write.log" 2>&1 || rc=$?
	wait "$server" || fail "the GPSPM server failed: $(cat "$work/server.log")"
	[ $rc = 0 ] && grep -qx 'persistent: Hello, persistent world!' "$work/write.log" ||
		fail "README.md's example: status $rc: $(cat "$work/write.log")"
	cat "$work/write.log"
else
	cat "$work/cc.log"
	fail "README.md's example does not build against the installed packages"
fi

step "purge ${packages[*]}"
if ! dpkg --purge --force-unsafe-io --no-triggers "${packages[@]}" >"$work/purge.log" 2>&1 ||
	! dpkg --triggers-only --pending >>"$work/purge.log" 2>&1; then
	cat "$work/purge.log"
	fail "dpkg --purge, or the triggers after it, failed"
fi
grep 'Processing triggers' "$work/purge.log"
for p in "${packages[@]}"; do
	! installed "$p" || fail "$p is still installed"
	while IFS= read -r f; do
		[ -d "$f" ] && [ ! -L "$f" ] && continue
		[ ! -e "$f" ] && [ ! -L "$f" ] || fail "$f of $p is still there"
	done <"$work/$p.files"
done
audit=$(dpkg --audit 2>&1)
[ -z "$audit" ] || fail "dpkg --audit: $audit"

step "done"
if [ "$failures" -ne 0 ]; then
	echo "$failures problem(s)"
	exit 1
fi
echo "installed, used by librpma 1.x programs and README.md's example, and purged: ok"
