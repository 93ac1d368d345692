#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: bench/compare.sh [BUILDDIR] [--quick] [--rounds N] [--out DIR] [--no-callgrind]
#
# Measures this tree's librpma.so.0 against Debian's librpma 1.2 (package
# librpma0) and against perftest, in one boot of the test VM over soft
# RoCE (tests/vm/run-in-vm.sh; a host with an RDMA device runs it
# directly), interleaved round by round (bench/guest-compare.sh):
#   perftest    ib_write_lat, ib_read_lat, ib_write_bw over rdma_cm
#   librpma     bench/rpma-bench on Debian's librpma.so.0
#   ours        the same binary on this tree's librpma.so.0 (1.x calls)
#   ours-batch  rpma-bench-ng with one doorbell per write+flush, when the
#               library declares rpma_post_batch
#   ours-gpspm  rpma-bench-ng on both sides, the persistent flush carried
#               by GPSPM (write-lat only; compared with ours, since
#               librpma 1.x has no GPSPM in the library)
# then counts user-space instructions per operation with callgrind, and
# prints the table and one line per figure
#   figure NAME ours=X baseline=Y ratio=Z
# (bench/report.py). OUT (BUILDDIR/bench-results) receives results.csv,
# summary.csv, report.md, latency.svg, throughput.svg and the raw output.
#
# Under TCG the absolute numbers mean nothing: compare the ratios, and the
# instruction counts.
#
#   --quick         one round, fewer sizes, shorter runs (about 3 minutes)
#   --rounds N      rounds of the interleaved comparison (3; --quick: 1)
#   --out DIR       where the results go (BUILDDIR/bench-results)
#   --no-callgrind  no instruction counts
#
# Exit status: 0 when every run completed, 1 otherwise, 2 on usage errors.

set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

builddir=
profile=full
rounds=
out=
callgrind=1
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) profile=quick; shift ;;
	--rounds) [ $# -ge 2 ] || exit 2; rounds=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || exit 2; out=$2; shift 2 ;;
	--no-callgrind) callgrind=0; shift ;;
	-h | --help) sed -n '3,33s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
	*) [ -z "$builddir" ] || { echo "compare.sh: one build directory" >&2; exit 2; }
	   builddir=$1; shift ;;
	esac
done
builddir=${builddir:-$top/build}
[ -n "$rounds" ] || { [ $profile = quick ] && rounds=1 || rounds=3; }
case "$rounds" in '' | *[!0-9]* | 0) echo "compare.sh: --rounds N, N >= 1" >&2; exit 2 ;; esac
[ -f "$builddir/build.ninja" ] || { echo "compare.sh: $builddir is not a configured build directory (meson setup $builddir)" >&2; exit 2; }
builddir=$(cd "$builddir" && pwd)
out=${out:-$builddir/bench-results}

# What the comparison needs beyond the build: Debian's librpma 1.2, perftest
# (the VM set-up installs it), valgrind and gnuplot.
debian_lib=/usr/lib/x86_64-linux-gnu
need=()
[ -e "$debian_lib/librpma.so.0" ] || need+=(librpma0)
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
[ $callgrind = 0 ] || command -v valgrind >/dev/null || need+=(valgrind)
command -v ib_write_bw >/dev/null || need+=(perftest)
if [ ${#need[@]} -gt 0 ]; then
	echo "compare.sh: installing ${need[*]}" >&2
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get install -y "${need[@]}" >&2
fi

ninja -C "$builddir" -j2 src/librpma.so.0 bench/rpma-bench bench/rpma-bench-ng >&2

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/raw" "$out/callgrind"
t0=$SECONDS
status=0
"$top/tests/vm/run-in-vm.sh" "$builddir" --provider rxe --timeout 1800 --share "$out" \
	--env "RPMA_BENCH_DIR=$builddir/bench" --env "RPMA_BENCH_OURS=$builddir/src" \
	--env "RPMA_BENCH_DEBIAN=$debian_lib" --env "RPMA_BENCH_CALLGRIND=$callgrind" \
	-- "$here/guest-compare.sh" "$out" "$rounds" "$profile" || status=1
echo "compare.sh: measured in $((SECONDS - t0)) s; results in $out" >&2
python3 "$here/report.py" "$out" || status=1
exit $status
