#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage (inside the VM, by run-suite.sh): suite.sh TEST_EXE...
#
# Runs each test in turn under `timeout` (RPMA_SUITE_TEST_TIMEOUT, 120 s)
# and prints one TAP result line per test (run-suite.sh prints the header
# and the plan). Test protocol: exit 0 pass, 77 skip (the reason is the last
# line the test printed), anything else fail. What a failed or skipped test
# printed is shown as TAP comments; with RPMA_SUITE_VERBOSE=1, what every
# test printed; RPMA_SUITE_SHOW="NAME..." shows what the named programs
# printed (a report worth keeping in the test log).

limit=${RPMA_SUITE_TEST_TIMEOUT:-120}
verbose=${RPMA_SUITE_VERBOSE:-0}
always=" ${RPMA_SUITE_SHOW:-} "
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# the clock is bash's own (EPOCHREALTIME, microseconds) and the rest is
# builtins: in the guest (TCG) each date, awk or basename around a test
# costs tens of ms, and a run has hundreds of tests

n=0
bad=0
for exe in "$@"; do
	n=$((n + 1))
	name=${exe##*/}
	t0=${EPOCHREALTIME/[.,]/}
	timeout -k 5 "$limit" "$exe" </dev/null >"$log" 2>&1
	rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	# tenths of a second, rounded
	dt=$(((10#$t1 - 10#$t0 + 50000) / 100000))
	dt=$((dt / 10)).$((dt % 10))
	case $rc in
	0)
		echo "ok $n - $name"
		show=$verbose
		;;
	77)
		reason=$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | tr -d '#\r')
		echo "ok $n - $name # SKIP ${reason:-no reason given}"
		show=$verbose
		;;
	124 | 137)
		echo "not ok $n - $name"
		bad=1
		echo "# $name timed out after $limit s"
		show=1
		;;
	*)
		echo "not ok $n - $name"
		bad=1
		if [ $rc -gt 128 ]; then
			echo "# $name was killed by signal $((rc - 128))"
		else
			echo "# $name exited with status $rc"
		fi
		show=1
		;;
	esac
	[[ "$always" == *" $name "* ]] && show=1
	if [ "$show" = 1 ]; then
		mapfile -t lines <"$log"
		[ ${#lines[@]} -eq 0 ] || printf '#   %s\n' "${lines[@]}"
	fi
	echo "# $name: $dt s"
done
exit $bad
