# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# What the example checks share (sourced; see README.md here). A check runs
# where there is RDMA (the test VM), as
#     check/NN-topic.sh BINDIR [pmem|dram]
# BINDIR holds the built examples (BINDIR/NN-topic/server, ...). It runs the
# example's programs against each other, counts every program's exit
# status and looks for what must be in their outputs; it ends with PASSED
# (exit 0), FAILED (exit 1) or a reason to skip (exit 77, the last line).
#
# Environment: RPMA_TEST_ADDR (the address to use), RPMA_TEST_PROVIDER
# (rxe, siw, host), RPMA_TEST_PMEM_ALL (device DAX areas, separated by
# spaces), RPMA_EXAMPLE_TIMEOUT (seconds each program may take, 90).

set -u
[ $# -ge 1 ] || { echo "usage: $0 BINDIR [pmem|dram]" >&2; exit 2; }
BIN=$(cd "$1" && pwd) || exit 2
MODE=${2:-dram}
case "$MODE" in pmem | dram) ;; *) echo "$0: the mode is pmem or dram" >&2; exit 2 ;; esac
ADDR=${RPMA_TEST_ADDR:-}
PROVIDER=${RPMA_TEST_PROVIDER:-}
LIMIT=${RPMA_EXAMPLE_TIMEOUT:-90}
[ -n "$ADDR" ] || { echo "RPMA_TEST_ADDR is not set: no RDMA address to use"; exit 77; }

WORK=$(mktemp -d)
declare -A PID STATUS
FAILURES=0
# What runs often here is done by bash itself, without a process: in the
# test VM each fork and exec (grep, sed, sleep) costs tens of ms, and a
# check makes hundreds of them. TICK: a pipe that nobody writes to, where
# `read -t` waits as sleep would.
mkfifo "$WORK/.tick" && exec {TICK}<>"$WORK/.tick" || exit 2

# pause SECONDS: waits that long
pause() { read -r -t "$1" -u "$TICK" _ || true; }

# program_of NAME: the PID of the program NAME runs (a child of timeout),
# in PROGRAM (empty when there is none)
program_of() {
	PROGRAM=
	read -r PROGRAM _ 2>/dev/null <"/proc/${PID[$1]}/task/${PID[$1]}/children" || true
}

cleanup() {
	local name
	for name in "${!PID[@]}"; do
		program_of "$name"
		kill -KILL $PROGRAM "${PID[$name]}" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# output_has NAME TEXT: a line of NAME's output holds TEXT (a fixed string)
output_has() {
	local IFS=$'\n' lines
	mapfile -t lines 2>/dev/null <"$WORK/$1.out" || return 1
	[[ "${lines[*]}" == *"$2"* ]]
}

skip() {
	echo "$*"
	exit 77
}
fail() {
	echo "FAILED: $*"
	FAILURES=$((FAILURES + 1))
}

# is_iwarp: the provider carries no immediate data and no atomics
is_iwarp() { [ "$PROVIDER" = siw ]; }

# every_step: this run checks what does not depend on the provider too:
# the command line, what a program prints, how it treats peers that
# misbehave in the handshake its private data carries. Those run over one
# provider (rxe, or the host's own device); over siw a check runs what
# RDMA carries: the data, the flushes, the connections.
every_step() { [ "$PROVIDER" != siw ]; }

# pmem_area I: the I-th device DAX area (from 0); skips the check when
# there are not that many
pmem_area() {
	local -a all
	read -r -a all <<<"${RPMA_TEST_PMEM_ALL:-${RPMA_TEST_PMEM:-}}"
	[ "${#all[@]}" -gt "$1" ] ||
		skip "needs $(($1 + 1)) device DAX areas, has ${#all[@]} (run-in-vm.sh --pmem-count)"
	echo "${all[$1]}"
}

# show NAME: what the program printed, indented
show() {
	local lines
	echo "--- $NAME_PREFIX$1 (status ${STATUS[$1]:-running}):"
	mapfile -t lines <"$WORK/$1.out"
	[ ${#lines[@]} -eq 0 ] || printf '    %s\n' "${lines[@]}"
}
NAME_PREFIX=

# start NAME CMD...: runs CMD in the background, its output in WORK/NAME.out
start() {
	local name=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	echo "\$ $cmd&    [$name]"
	# emptied here, not only by the background job's redirection: a
	# wait_for right after must not find what an earlier program of the
	# same NAME printed
	: >"$WORK/$name.out"
	timeout -k 5 "$LIMIT" "$@" >"$WORK/$name.out" 2>&1 &
	PID[$name]=$!
	unset "STATUS[$name]"
}

# wait_for NAME TEXT [SECONDS]: until NAME's output holds TEXT; fails when
# NAME ends or the time runs out first
wait_for() {
	local name=$1 text=$2 n=$((${3:-30} * 10))
	while ! output_has "$name" "$text"; do
		if ! kill -0 "${PID[$name]:-}" 2>/dev/null; then
			finish "$name"
			output_has "$name" "$text" && return 0
			fail "$name ended before it printed \"$text\""
			return 1
		fi
		n=$((n - 1))
		if [ $n -le 0 ]; then
			fail "$name did not print \"$text\" in time"
			return 1
		fi
		pause 0.1
	done
}

# listening NAME: until the server NAME listens
listening() { wait_for "$1" "listening on"; }

# finish NAME: waits for the background program NAME to end
finish() {
	[ -n "${PID[$1]:-}" ] || return 0
	wait "${PID[$1]}"
	STATUS[$1]=$?
	unset "PID[$1]"
}

# stop NAME [SIGNAL]: signals the program NAME (TERM) and waits for it;
# the signal goes to the program itself, not to the timeout around it,
# which would pass TERM on but cannot pass KILL
stop() {
	[ -n "${PID[$1]:-}" ] || return 0
	program_of "$1"
	[ -n "$PROGRAM" ] && kill -"${2:-TERM}" "$PROGRAM" 2>/dev/null
	finish "$1"
}

# run NAME CMD...: runs CMD to its end
run() {
	local name=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	echo "\$ $cmd   [$name]"
	timeout -k 5 "$LIMIT" "$@" >"$WORK/$name.out" 2>&1
	STATUS[$name]=$?
}

# status_is NAME CODE: NAME ended with exit status CODE (a NAME that never
# ran fails it too, and the check goes on to show every output)
status_is() {
	finish "$1"
	[ "${STATUS[$1]:-}" = "$2" ] ||
		fail "$1 exited with status ${STATUS[$1]:-none (it never ran)}, expected $2"
}
ok() { status_is "$1" 0; }

# has NAME TEXT: NAME printed TEXT (a fixed string)
has() {
	output_has "$1" "$2" || fail "$1 did not print \"$2\""
}
# lacks NAME TEXT: NAME did not print TEXT
lacks() {
	! output_has "$1" "$2" || fail "$1 printed \"$2\""
}
# lines_with NAME TEXT: how many lines of NAME's output hold TEXT (a
# fixed string), in LINES_WITH; for the loops that wait for a number of
# lines, which would otherwise fork a grep each turn
lines_with() {
	local line lines
	LINES_WITH=0
	mapfile -t lines 2>/dev/null <"$WORK/$1.out"
	for line in "${lines[@]}"; do
		[[ $line != *"$2"* ]] || LINES_WITH=$((LINES_WITH + 1))
	done
}
# count NAME TEXT N: NAME printed N lines holding TEXT
count() {
	lines_with "$1" "$2"
	[ "$LINES_WITH" = "$3" ] || fail "$1 printed \"$2\" $LINES_WITH times, expected $3"
}
# value NAME SED-REGEX: the first match of the regex's group \1 in NAME's output
value() { sed -n "/$2/{s//\\1/p;q;}" "$WORK/$1.out"; }

# digest_ok NAME SERVER: rpma-mirror's client NAME ended with the digest
# its server SERVER printed last, once SERVER has seen NAME go (it may
# print its line after NAME has ended); for rpma-mirror's checks
# (check/rpma-mirror.sh, tests/attack)
digest_ok() {
	local mine theirs i
	mine=$(value "$1" '.*digest \([0-9a-f]\{64\}\) on both sides.*')
	for i in $(seq 300); do
		theirs=$(sed -n 's/.*: digest \([0-9a-f]\{64\}\)$/\1/p' "$WORK/$2.out" | tail -n 1)
		[ -n "$mine" ] && [ "$mine" = "$theirs" ] && return 0
		pause 0.1
	done
	fail "$1's digest ${mine:-(none)} is not $2's ${theirs:-(none)}"
}

# show_all_or_fail: every output; then, when something failed, the RDMA
# devices' state and FAILED (exit 1). What conclude and conclude_skip share.
show_all_or_fail() {
	local f
	for f in "$WORK"/*.out; do
		[ -e "$f" ] || continue
		f=${f##*/}
		show "${f%.out}"
	done
	if [ "$FAILURES" -ne 0 ]; then
		device_state
		echo "FAILED ($FAILURES problems)"
		exit 1
	fi
}

# conclude: every output, then the verdict
conclude() {
	show_all_or_fail
	echo "PASSED"
	exit 0
}

# device_state: what the RDMA devices counted since the machine started
# (rxe: packets, retransmissions, retry errors) and their queue pairs now,
# for a failure that left no error of its own, such as a completion that
# never came
device_state() {
	command -v rdma >/dev/null 2>&1 || return 0
	echo "--- the RDMA devices at the end:"
	{ rdma statistic show || true; rdma resource show qp || true; } 2>&1 | sed 's/^/    /'
}

# conclude_skip REASON: like conclude, but what passed is only the
# example's refusal of a capability the device lacks: the check is
# reported skipped, with REASON, unless something failed
conclude_skip() {
	show_all_or_fail
	echo "$*"
	exit 77
}
