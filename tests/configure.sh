#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/configure.sh BUILDDIR [MESON OPTION...]
#
# Sets up BUILDDIR with the options, or brings it up to date. Meson keeps
# the verdict of every compiler check (a header found or not) across
# reconfigurations, even after --clearcache: a directory configured while
# other packages were installed (by demo.sh, which installs fewer, or
# before a package appeared) is configured anew, keeping the VM cache
# (vm/ and trixie-build/). Quiet unless something fails.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR [MESON OPTION...]" >&2; exit 2; }
dir=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
state=$("$top/tests/install-deps.sh" --state)
status=0
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "$top" "$@" >"$log" 2>&1 || status=$?
elif [ "$(cat "$dir/rpma-deps.state" 2>/dev/null)" != "$state" ]; then
	echo "rpma-ng: $dir was configured with other packages installed: configuring it anew" >&2
	keep=$(mktemp -d "$dir.keep.XXXXXX")
	for d in vm trixie-build; do
		[ ! -e "$dir/$d" ] || mv "$dir/$d" "$keep/$d"
	done
	meson setup --wipe "$dir" "$top" "$@" >"$log" 2>&1 || status=$?
	for d in vm trixie-build; do
		[ ! -e "$keep/$d" ] || mv "$keep/$d" "$dir/$d"
	done
	rmdir "$keep"
else
	meson configure "$dir" "$@" >"$log" 2>&1 || status=$?
fi
if [ $status -ne 0 ]; then
	tail -n 60 "$log" >&2
	echo "rpma-ng: configuring $dir failed" >&2
	exit $status
fi
echo "$state" >"$dir/rpma-deps.state"
