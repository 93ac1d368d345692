#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: three-machines.sh BINDIR [ADDR]
#
# The replicated log with three machines' worth of processes on one host
# with RDMA (the test VM: tests/vm/run-in-vm.sh --pmem-count 3): a writer
# and two replicas, each with persistent memory of its own, the three
# device DAX areas of $RPMA_TEST_PMEM_ALL (files in a temporary directory
# when there are fewer). Everything they print is shown as it comes,
# each line tagged with who printed it:
#   1. two new replicas; the writer starts a new log and appends 1000
#      records, acknowledged once both replicas have made them durable;
#   2. the writer appends 3000 more, and replica 2 is killed (SIGKILL) in
#      the middle: the writer reports it and goes on with replica 1;
#   3. replica 2 restarts: it reads its log back and checks every record;
#   4. the writer appends 100 more: replica 2 first gets what it missed;
#   5. the writer's log and both replicas' are the same (same digest).
# The three share one pre-shared key, made here as an operator would (a
# file that only its owner reads; on real machines, the same file copied to
# each). BINDIR holds the built replica and writer; ADDR is the RDMA
# address to listen on ($RPMA_TEST_ADDR). Exit status 0 when all of it
# happened.

set -u
[ $# -ge 1 ] || { echo "usage: $0 BINDIR [ADDR]" >&2; exit 2; }
bin=$(cd "$1" && pwd) || exit 2
addr=${2:-${RPMA_TEST_ADDR:-}}
[ -n "$addr" ] || { echo "no RDMA address: give ADDR or set RPMA_TEST_ADDR" >&2; exit 2; }
p1=7419 p2=7420

work=$(mktemp -d)
declare -A pid shown
cleanup() {
	local n
	for n in "${!pid[@]}"; do kill -KILL "${pid[$n]}" 2>/dev/null; done
	for n in "${!shown[@]}"; do kill "${shown[$n]}" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

read -r -a pmem <<<"${RPMA_TEST_PMEM_ALL:-}"
if [ "${#pmem[@]}" -lt 3 ]; then
	pmem=("$work/writer.pmem" "$work/replica1.pmem" "$work/replica2.pmem")
	echo "== fewer than three device DAX areas: the logs are files (${pmem[*]})"
fi

# the key that the writer and the replicas hold: 32 random bytes, mode 600
key=$work/log.key
(umask 077 && head -c 32 /dev/urandom >"$key") || { echo "cannot make a key in $work" >&2; exit 1; }

say() { printf '\n== %s\n' "$*"; }
problems=0
problem() {
	echo "== PROBLEM: $*"
	problems=$((problems + 1))
}

# run_tagged TAG CMD...: runs CMD in the background, its pid in pid[TAG],
# its output in $work/TAG.out, shown as it comes with each line tagged
run_tagged() {
	local tag=$1
	shift
	echo "\$ ${*/#$bin\//}"
	"$@" >"$work/$tag.out" 2>&1 &
	pid[$tag]=$!
	tail -s 0.1 --pid="${pid[$tag]}" -n +1 -f "$work/$tag.out" | sed -u "s/^/[$tag] /" &
	shown[$tag]=$!
}
# ended TAG: TAG's process is gone; all it printed has been shown
ended() {
	wait "${shown[$1]}" 2>/dev/null
	unset "pid[$1]" "shown[$1]"
}
wait_for() { # TAG TEXT: until TAG printed TEXT (60 s at most)
	local i
	for i in $(seq 600); do
		grep -qF -- "$2" "$work/$1.out" 2>/dev/null && return 0
		kill -0 "${pid[$1]}" 2>/dev/null || break
		sleep 0.1
	done
	grep -qF -- "$2" "$work/$1.out" 2>/dev/null
}
finish() { # TAG: waits for TAG, returns its exit status
	wait "${pid[$1]}"
	local rc=$?
	ended "$1"
	return $rc
}
digest() { sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' "$work/$1.out" | tail -n 1; }

say "1. two replicas on their own pmem (${pmem[1]}, ${pmem[2]}); a writer on ${pmem[0]}"
run_tagged replica1 "$bin/replica" --key "$key" --format "$addr" $p1 "${pmem[1]}"
run_tagged replica2 "$bin/replica" --key "$key" --format "$addr" $p2 "${pmem[2]}"
wait_for replica1 "listening on" && wait_for replica2 "listening on" ||
	{ problem "the replicas did not start"; exit 1; }
run_tagged writer "$bin/writer" --key "$key" --new --log "${pmem[0]}" --records 1000 --size 200 \
	"$addr:$p1" "$addr:$p2"
finish writer || problem "the writer did not get every record acknowledged"

say "2. 3000 more records; replica 2 is killed in the middle of them"
run_tagged writer "$bin/writer" --key "$key" --log "${pmem[0]}" --records 3000 --size 200 --rate 1000 \
	"$addr:$p1" "$addr:$p2"
if wait_for writer "1200 of 3000 records acknowledged by 2 replicas"; then
	echo "\$ kill -KILL <replica 2>"
	kill -KILL "${pid[replica2]}"
	wait "${pid[replica2]}" 2>/dev/null
	ended replica2
else
	problem "the writer did not get far enough to kill a replica under it"
fi
finish writer
[ $? = 3 ] || problem "the writer should have ended with status 3: acknowledged by fewer replicas"
grep -q "replica 2 .* FAILED" "$work/writer.out" || problem "the writer did not report replica 2"

say "3. replica 2 restarts on its pmem and checks what it holds"
run_tagged replica2 "$bin/replica" --key "$key" "$addr" $p2 "${pmem[2]}"
wait_for replica2 "listening on" || problem "replica 2 did not come back"
grep -q "every checksum good" "$work/replica2.out" || problem "replica 2's log is damaged"

say "4. 100 more records: replica 2 first gets what it missed"
run_tagged writer "$bin/writer" --key "$key" --log "${pmem[0]}" --records 100 --size 200 \
	"$addr:$p1" "$addr:$p2"
finish writer || problem "the writer did not get every record acknowledged by both"

say "5. the replicas stop; the same log in three places?"
for r in replica1 replica2; do
	kill -TERM "${pid[$r]}"
	finish $r || problem "$r did not end cleanly"
done
w=$(digest writer) r1=$(digest replica1) r2=$(digest replica2)
echo "digests: writer $w, replica 1 $r1, replica 2 $r2"
if [ -n "$w" ] && [ "$w" = "$r1" ] && [ "$w" = "$r2" ]; then
	echo "== the same $(sed -n 's/.*the log holds \([0-9]*\) records.*/\1/p' "$work/writer.out" | tail -n 1) records, every checksum good, on all three"
else
	problem "the logs differ"
fi
[ "$problems" = 0 ] || { echo "== $problems problems"; exit 1; }
