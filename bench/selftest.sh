#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage (over RDMA, through tests/vm/run-in-vm.sh): bench/selftest.sh BUILDDIR
#
# The bench suite's test: the benchmark cannot rot unnoticed. Checks that
# rpma-bench references no symbol beyond librpma 1.x (so that it runs on
# Debian's librpma.so.0), then runs five operations of every mode against
# this tree's library, with every way of taking completions and with
# batched posting when it is built, and checks that each run completed on
# the right library and that its output parses (bench/report.py --check).

set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
builddir=$(cd "${1:?usage: $0 BUILDDIR}" && pwd)

# every librpma symbol of the 1.x binary from LIBRPMA_1.0
bad=$(objdump -T "$builddir/bench/rpma-bench" | awk '/rpma_/ && !/\(LIBRPMA_1\.0\)/')
if [ -n "$bad" ]; then
	echo "rpma-bench uses symbols beyond librpma 1.x:"
	echo "$bad"
	exit 1
fi
echo "rpma-bench: every librpma symbol is from LIBRPMA_1.0"

work=$(mktemp -d "$builddir/bench-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
RPMA_BENCH_DIR=$builddir/bench RPMA_BENCH_OURS=$builddir/src \
	"$here/guest-compare.sh" "$work" 1 check
rc=$?
configs=$(cd "$work/raw" && ls | sed 's/^r1-//; s/\.txt$//')
python3 "$here/report.py" --check "$work" $configs || rc=1
[ $rc = 0 ] || for f in "$work"/raw/*; do echo "--- $f"; cat "$f"; done
exit $rc
