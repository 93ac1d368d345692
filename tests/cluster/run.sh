#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/cluster/run.sh BUILDDIR rxe|siw [CASE...]
#
# The cluster suite: machines (QEMU guests, tests/vm/cluster.sh) on one
# virtual Ethernet segment, rxe or siw on their NICs; "a" (Debian 12) has
# a 256 MiB emulated NVDIMM as device DAX and serves, "b" (Debian 12) is
# the client; "c" (Debian 13, pmem) and "d" (Debian 13) join them for the
# mixed case, with the program built in the Debian 13 root, and "e"
# (Debian 12, pmem) for the replicated log. Each case
# runs programs across them with a fault injected and prints one TAP line;
# what the programs printed follows as comments. CASEs name the cases to
# run (all by default). Exit status 0 when no case failed.
#
# The bound a peer's death or a partition must be noticed within comes
# from the library's defaults (src/conn_req.cpp): 7 tries of an ACK
# timeout of 4.096 us * 2^15 = 0.94 s for the default connection timeout
# of 1000 ms. A case allows BOUND_SLACK_S more for the guests' emulated
# clocks and timers.

set -uo pipefail
[ $# -ge 2 ] || {
	echo "usage: $0 BUILDDIR rxe|siw [CASE...]" >&2
	exit 2
}
builddir=$1
provider=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../vm/cluster.sh"
vm_quiet=1

X=$(cd "$builddir" && pwd)/tests/cluster/cluster_xfer
[ -x "$X" ] || die "$X is not built"
BOUND_S=0.94
BOUND_SLACK_S=1.5
LIMIT=$(awk -v b="$BOUND_S" -v s="$BOUND_SLACK_S" 'BEGIN { print b + s }')
DEBIAN_LIBRPMA=/usr/lib/x86_64-linux-gnu/librpma.so.0
# What the cases move, checked byte for byte: BIG for the plain transfer,
# SIZE under loss, delay and reordering, between librpma 1.x and this
# library, and between Debian 13 and 12. Every byte is checked whatever the
# size, so these are enough to prove it; a soak run may move more
# (RPMA_CLUSTER_BIG=128M RPMA_CLUSTER_SIZE=16M).
BIG=${RPMA_CLUSTER_BIG:-32M}
SIZE=${RPMA_CLUSTER_SIZE:-4M}
# mib 32M -> 32MiB, for the names of the cases
mib() { echo "${1%M}MiB"; }

n=0
failed=0
port=7500
out=

# ok NAME / not_ok NAME / skip NAME REASON, with $out as comments
report() {
	n=$((n + 1))
	echo "$1 $n - $2${3:+ # SKIP $3}"
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
	out=
}
pass() { report ok "$1"; }
fail() {
	failed=$((failed + 1))
	report "not ok" "$1"
}
skip() { report ok "$1" "$2"; }

# run NAME COMMAND...: append what COMMAND printed to $out; its status
run() {
	local text rc
	text=$("$@" 2>&1)
	rc=$?
	out+="${out:+$'\n'}$text"
	return $rc
}

# xfer NAME: the program built for NAME's flavor
xfer() {
	if [ "${CL_FLAVOR[$1]}" = trixie ]; then
		echo "$XT"
	else
		echo "$X"
	fi
}

# transfer_between SERVER CLIENT SIZE SEED [CHUNK]: the xfer client on
# CLIENT against a server on SERVER (which has pmem)
transfer_between() {
	local s=$1 c=$2
	shift 2
	port=$((port + 1))
	# the server outlives the client's limit: a slow transfer fails as
	# the client's, not as a server gone from under it
	cl_start "$s" srv --timeout 660 -- "$(xfer "$s")" server "$(cl_addr "$s")" $port "$1" /dev/dax0.0
	run cl_on "$c" --timeout 600 -- "$(xfer "$c")" client "$(cl_addr "$s")" $port "$@"
	local crc=$?
	run cl_wait "$s" srv 120
	local src=$?
	out+=$'\n'"client status $crc, server status $src"
	[ $crc = 0 ] && [ $src = 0 ]
}

# transfer SIZE SEED [CHUNK]: from b to a
transfer() {
	transfer_between a b "$@"
}

# within_bound ID: the stream's error came within LIMIT s of its last success
within_bound() {
	local t
	t=$(sed -n 's/.*error completion \([0-9.]*\) s after.*/\1/p' "${CL_JOB[b]}/q/$1.out")
	[ -n "$t" ] || t=$(sed -n 's/.*a post failed after \([0-9.]*\) s.*/\1/p' "${CL_JOB[b]}/q/$1.out")
	out+=$'\n'"noticed after ${t:-?} s (bound $BOUND_S s + $BOUND_SLACK_S s)"
	[ -n "$t" ] && awk -v t="$t" -v l="$LIMIT" 'BEGIN { exit !(t <= l) }'
}

case_ops_big() {
	transfer "$BIG" 11 && pass "ops-$(mib "$BIG")" || fail "ops-$(mib "$BIG")"
}

# The size of a message at 1 % loss. rxe's MTU here is 1 KiB, and rxe asks
# for an ACK at the end of a message: each loss costs a sequence NAK, and
# each NAK one of the 6 retries a request has (as on any RoCE NIC), given
# back only when an ACK or a read response comes. A 64 KiB message (64
# packets, about half of them lost in part at 1 % loss) then ended a
# connection with "transport retry counter exceeded" now and then (once in
# a fresh root's ./test.sh); one of 16 KiB is whole 85 % of the time.
LOSSY_OP=16K

case_ops_loss() {
	run cl_netem a loss 1% && run cl_netem b loss 1%
	# writes of 16 KiB (LOSSY_OP)
	transfer "$SIZE" 12 $LOSSY_OP && pass "ops-$(mib "$SIZE")-1pct-loss" ||
		fail "ops-$(mib "$SIZE")-1pct-loss"
	cl_netem a off >/dev/null
	cl_netem b off >/dev/null
}

case_ops_delay() {
	run cl_netem a delay 50ms
	transfer "$SIZE" 13 && pass "ops-$(mib "$SIZE")-50ms-delay" ||
		fail "ops-$(mib "$SIZE")-50ms-delay"
	cl_netem a off >/dev/null
}

# rxe_disorder: the requests a and b's rxe took twice, out of sequence or
# answered with a sequence NAK, since they booted (0 on siw)
rxe_disorder() {
	[ "$provider" = rxe ] || {
		echo 0
		return
	}
	for m in a b; do
		cl_on $m -- sh -c 'cd /sys/class/infiniband/rxe0/ports/1/hw_counters &&
			cat duplicate_request out_of_seq_request rcvd_seq_err'
	done | awk '{ s += $1 } END { print s + 0 }'
}

# packets reordered (1 % of them overtake the 2 ms delay of the rest) and
# duplicated (1 %), both ways: rxe answers a gap with a NAK and the sender
# goes back to it, a duplicate is dropped by its sequence number; siw's TCP
# sorts both out. Each NAK takes one of the 6 retries a request has (as on
# any RoCE NIC), so heavy reordering ends a connection: RoCE wants a
# network that keeps order.
case_ops_reorder() {
	run cl_netem a delay 2ms reorder 1% 50% duplicate 1% &&
		run cl_netem b delay 2ms reorder 1% 50% duplicate 1%
	local ok=1 before seen
	before=$(rxe_disorder)
	transfer "$SIZE" 14 64K || ok=0
	cl_netem a off >/dev/null
	cl_netem b off >/dev/null
	if [ "$provider" = rxe ]; then
		# the faults happened: rxe counted requests out of order and twice
		seen=$(($(rxe_disorder) - before))
		out+=$'\n'"rxe counted $seen requests duplicated, out of sequence or NAKed meanwhile"
		[ "$seen" -gt 0 ] || ok=0
	fi
	[ $ok = 1 ] && pass "ops-$(mib "$SIZE")-reorder-duplicate" ||
		fail "ops-$(mib "$SIZE")-reorder-duplicate"
}

# rpma-mirror (tools/rpma-mirror) from b into a's device DAX at 1 % loss
# both ways: the copy is checked byte for byte by the client, and its
# digest must be the one the server computes over its own memory
case_mirror_loss() {
	local ok=1 tool mine theirs
	tool=$(cd "$builddir" && pwd)/tools/rpma-mirror/rpma-mirror
	if [ ! -x "$tool" ]; then
		out="$tool is not built (libsodium, libpmem2)"
		fail "rpma-mirror-1pct-loss"
		return
	fi
	port=$((port + 1))
	give_key a && give_key b || ok=0
	run cl_on b -- sh -c "head -c $SIZE /dev/urandom >/tmp/mirror.src" || ok=0
	run cl_netem a loss 1% && run cl_netem b loss 1% || ok=0
	cl_start a mirror --timeout 660 -- "$tool" --serve --once -k /tmp/log.key "$(cl_addr a):$port" /dev/dax0.0
	printed a mirror "serving" 30 || ok=0
	# chunks of 16 KiB (LOSSY_OP)
	run cl_on b --timeout 600 -- "$tool" -k /tmp/log.key --chunk $LOSSY_OP /tmp/mirror.src "$(cl_addr a):$port" || ok=0
	run cl_wait a mirror 120 || ok=0
	cl_netem a off >/dev/null
	cl_netem b off >/dev/null
	mine=$(sed -n 's/.*digest \([0-9a-f]\{64\}\) on both sides.*/\1/p' <<<"$out" | tail -n 1)
	theirs=$(out_of a mirror | sed -n 's/.*: digest \([0-9a-f]\{64\}\)$/\1/p' | tail -n 1)
	out+=$'\n'"digests: client ${mine:-(none)}, server ${theirs:-(none)}"
	[ -n "$mine" ] && [ "$mine" = "$theirs" ] || ok=0
	[ $ok = 1 ] && pass "rpma-mirror-1pct-loss" || fail "rpma-mirror-1pct-loss"
}

# killed_peer LIB: the server is SIGKILLed under a busy-polling 1.x client
case_killed_peer() {
	port=$((port + 1))
	cl_start a srv -- "$X" server "$(cl_addr a)" $port 16M /dev/dax0.0
	cl_start b st -- "$X" stream "$(cl_addr a)" $port 16M 21 10
	local ok=1
	printed b st "^streaming" || ok=0
	sleep 0.5
	cl_signal a srv KILL >/dev/null
	run cl_wait b st 60 || ok=0
	cl_wait a srv 30 >/dev/null 2>&1
	within_bound st || ok=0
	[ $ok = 1 ] && pass "killed-peer-busy-poll" || fail "killed-peer-busy-poll"
}

# partition STYLE: the segment cut under a 1.x client polling or waiting;
# what it was told was durable is on the server's pmem
case_partition() {
	local style=$1 name="partition-$1" ok=1 durable
	if [ "$provider" = siw ]; then
		skip "$name" "siw: the kernel's TCP retransmission timeout (net.ipv4.tcp_retries2, about 15 minutes) bounds it, not the ACK timeout"
		return
	fi
	port=$((port + 1))
	cl_start a srv -- "$X" server "$(cl_addr a)" $port 16M /dev/dax0.0
	cl_start b st -- "$X" stream "$(cl_addr a)" $port 16M 31 10 "$style"
	printed b st "^streaming" || ok=0
	sleep 0.5
	cl_cut a b
	run cl_wait b st 60 || ok=0
	cl_heal
	cl_signal a srv KILL >/dev/null
	cl_wait a srv 30 >/dev/null 2>&1
	within_bound st || ok=0
	durable=$(sed -n 's/^durable //p' "${CL_JOB[b]}/q/st.out")
	if [ -n "$durable" ] && [ "$durable" -gt 0 ]; then
		run cl_on a -- "$X" verify /dev/dax0.0 "$durable" 31 || ok=0
	else
		out+=$'\n'"nothing was reported durable"
		ok=0
	fi
	[ $ok = 1 ] && pass "$name" || fail "$name"
}

# the server's machine loses power mid-stream; started again on the same
# NVDIMM, it holds every byte the client was told was durable
case_power_loss() {
	local ok=1 durable
	if [ "$provider" = siw ]; then
		skip "power-loss" "siw: a machine that vanishes is noticed by TCP's retransmission timeout (net.ipv4.tcp_retries2, about 15 minutes)"
		return
	fi
	port=$((port + 1))
	cl_start a srv -- "$X" server "$(cl_addr a)" $port 16M /dev/dax0.0
	cl_start b st -- "$X" stream "$(cl_addr a)" $port 16M 41 10
	printed b st "^streaming" || ok=0
	sleep 0.5
	cl_power_loss a
	run cl_wait b st 60 || ok=0
	within_bound st || ok=0
	durable=$(sed -n 's/^durable //p' "${CL_JOB[b]}/q/st.out")
	cl_boot a || ok=0
	if [ $ok = 1 ] && [ -n "$durable" ] && [ "$durable" -gt 0 ]; then
		run cl_on a -- "$X" verify /dev/dax0.0 "$durable" 41 || ok=0
	else
		ok=0
	fi
	[ $ok = 1 ] && pass "power-loss" || fail "power-loss"
}

# Debian 13 (Linux 6.12, rdma-core 56: native RDMA FLUSH and ATOMIC WRITE on
# rxe) against Debian 12 (Linux 6.1, rdma-core 44: neither), both ways, and
# Debian 13 on both sides: the peers agree on the best flush method both
# have, and nothing native reaches a target that cannot execute it (it
# would fail the connection); the data is checked on both sides
case_hetero() {
	local ok=1 native=native pair s c want
	[ "$provider" = siw ] && native=read-after-write # siw has no native flush
	if [ -z "$XT" ]; then
		out=$XT_WHY
		fail "debian13-vs-debian12"
		return
	fi
	cl_boot c d || {
		fail "debian13-vs-debian12"
		return
	}
	for pair in "c d $native" "c b read-after-write" "a d read-after-write"; do
		read -r s c want <<<"$pair"
		out+="${out:+$'\n'}server on ${CL_FLAVOR[$s]}, client on ${CL_FLAVOR[$c]}, expecting $want:"
		transfer_between "$s" "$c" "$SIZE" 61 || ok=0
		grep -q "client: flush method $want\$" <<<"$out" || ok=0
		out+=$'\n'
	done
	cl_stop c d
	[ $ok = 1 ] && pass "debian13-vs-debian12" || fail "debian13-vs-debian12"
}

# out_of NAME ID: what ID printed on NAME so far
out_of() { cat "${CL_JOB[$1]}/q/$2.out" 2>/dev/null; }

# printed NAME ID REGEX [SECONDS]: wait until ID on NAME printed a line
# matching REGEX (60 s at most), or ended
printed() {
	local i=0 limit=$((${4:-60} * 10))
	until out_of "$1" "$2" | grep -qE -- "$3"; do
		i=$((i + 1))
		[ $i -lt $limit ] || return 1
		[ ! -e "${CL_JOB[$1]}/q/$2.rc" ] || { out_of "$1" "$2" | grep -qE -- "$3"; return; }
		sleep 0.1
	done
}

# give_key NAME: the log's key in NAME's /tmp, the guest's root's own (the
# example refuses a key file of another user, and the shared directories
# show the host's owner)
give_key() {
	cl_on "$1" -- bash -c "umask 077 && printf '$LOG_KEY' >/tmp/log.key"
}

# log_machines NAME WHY_SIW: what the replicated log's cases need: the
# example built ($ex) and e booted. Status 1 when the case NAME has been
# reported already: skipped on siw (for WHY_SIW), or failed
log_machines() {
	ex=$(cd "$builddir" && pwd)/examples/19-replicated-log
	if [ "$provider" = siw ]; then
		skip "$1" "siw: $2"
		return 1
	fi
	if [ ! -x "$ex/writer" ] || [ ! -x "$ex/replica" ]; then
		out="$ex/writer and replica are not built (libsodium, libpmem2)"
		fail "$1"
		return 1
	fi
	# e stays up from one of these cases to the next (the suite's end
	# stops it): each starts its replicas on a freshly formatted log
	[ -n "${CL_QPID[e]:-}" ] && kill -0 "${CL_QPID[e]}" 2>/dev/null && return 0
	cl_boot e || {
		fail "$1"
		return 1
	}
}

# new_replicas ID_A ID_E PORT: a replica with a new, empty log on a (job
# ID_A) and on e (job ID_E), on PORT; status 1 unless both are listening
new_replicas() {
	cl_start a "$1" --timeout 600 -- "$ex/replica" --key /tmp/log.key --format "$(cl_addr a)" "$3" /dev/dax0.0
	cl_start e "$2" --timeout 600 -- "$ex/replica" --key /tmp/log.key --format "$(cl_addr e)" "$3" /dev/dax0.0
	printed a "$1" "listening on" && printed e "$2" "listening on"
}

# ended_with_fewer JOB: the writer JOB on b ended with status 3 (fewer
# replicas), its output appended to $out; status 1 otherwise
ended_with_fewer() {
	run cl_wait b "$1" 300
	[ $? = 3 ] && return 0
	out+=$'\n'"the writer should have ended with status 3 (fewer replicas)"
	return 1
}

# log_digests WRITER_DIGEST R1_ID R2_ID: the replicas started as R1_ID on a
# and R2_ID on e stopped (SIGTERM); status 0 when each ended and printed
# the writer's digest last.
log_digests() {
	local w=$1 r1 r2 status=0
	cl_signal a "$2" TERM >/dev/null
	cl_signal e "$3" TERM >/dev/null
	run cl_wait a "$2" 30 || status=1
	run cl_wait e "$3" 30 || status=1
	r1=$(out_of a "$2" | sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' | tail -n 1)
	r2=$(out_of e "$3" | sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' | tail -n 1)
	out+=$'\n'"digests: writer $w, replica 1 $r1, replica 2 $r2"
	[ -n "$w" ] && [ "$w" = "$r1" ] && [ "$w" = "$r2" ] || status=1
	return $status
}

# writer_noticed JOB WHAT T0: the writer JOB (on b) reported replica 2 within
# the bound, counted as the library sees it: from the writer's last progress
# with that replica (its own clock, in its FAILED line) to the report. The
# host's time since T0, when WHAT was done, is shown beside it: it adds the
# switch's and the guests' delays, which the bound is not about.
writer_noticed() {
	local silent dt
	dt=$(elapsed "$3")
	silent=$(out_of b "$1" | sed -n 's/.*replica 2 .* FAILED: .*, \([0-9.]*\) s after it last made progress.*/\1/p' | head -n 1)
	out+=$'\n'"$2; the writer reported replica 2 ${silent:-?} s after its last progress there (bound $BOUND_S s + $BOUND_SLACK_S s), $dt s after the fault on the host's clock"
	[ -n "$silent" ] && awk -v t="$silent" -v l="$LIMIT" 'BEGIN { exit !(t <= l) }'
}

# examples/19-replicated-log on three machines: the writer on b, replicas on
# a and e. Replica 2's machine loses power in the middle of a run: the
# writer reports it within the bound and goes on with replica 1; booted
# again on the same NVDIMM, replica 2 holds every record it had made
# durable, checksums good; the next writer run catches it up, and the three
# logs end the same
case_replicated_log() {
	local ok=1 ex w r1 r2 t0 held before after
	local name=replicated-log-power-loss
	log_machines "$name" "a machine that vanishes is noticed by TCP's retransmission timeout (net.ipv4.tcp_retries2, about 15 minutes)" ||
		return
	w=$(cl_addr b) r1=$(cl_addr a):7419 r2=$(cl_addr e):7419
	give_key a && give_key b && give_key e || ok=0
	new_replicas r1 r2 7419 || ok=0
	cl_start b w1 --timeout 300 -- "$ex/writer" --key /tmp/log.key --new --log /dev/dax0.0 \
		--records 1000 --size 200 "$r1" "$r2"
	run cl_wait b w1 300 || ok=0
	before=$(out_of b w1 | sed -n 's/.*the log holds \([0-9]*\) records.*/\1/p' | tail -n 1)
	cl_start b w2 --timeout 300 -- "$ex/writer" --key /tmp/log.key --log /dev/dax0.0 --records 3000 \
		--size 200 --rate 1000 "$r1" "$r2"
	if printed b w2 "1200 of 3000 records acknowledged by 2 replicas"; then
		t0=$(now)
		cl_power_loss e
		printed b w2 "replica 2 .* FAILED" 30 || ok=0
		writer_noticed w2 "replica 2's machine lost power" "$t0" || ok=0
	else
		out+=$'\n'"the writer did not get far enough to cut the power under it"
		ok=0
	fi
	ended_with_fewer w2 || ok=0
	held=$(out_of b w2 | sed -n 's/.*replica 2 .* FAILED: .*; it holds \([0-9]*\) records of this run durably.*/\1/p')
	# replica 2's machine again, on the NVDIMM it had
	if cl_boot e && give_key e; then
		cl_start e r2b --timeout 600 -- "$ex/replica" --key /tmp/log.key "$(cl_addr e)" 7419 /dev/dax0.0
		printed e r2b "listening on" || ok=0
		after=$(out_of e r2b | sed -n 's/.*holds \([0-9]*\) records.*every checksum good.*/\1/p' | head -n 1)
		out+=$'\n'"replica 2 had $before records, made ${held:-?} more durable before the power loss, and holds ${after:-?} after it"
		[ -n "$before" ] && [ -n "$held" ] && [ -n "$after" ] && [ "$after" -ge $((before + held)) ] || ok=0
	else
		ok=0
	fi
	cl_start b w3 --timeout 300 -- "$ex/writer" --key /tmp/log.key --log /dev/dax0.0 --records 100 \
		--size 200 "$r1" "$r2"
	run cl_wait b w3 300 || ok=0
	w=$(out_of b w3 | sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' | tail -n 1)
	log_digests "$w" r1 r2b || ok=0
	[ $ok = 1 ] && pass "$name" || fail "$name"
}

# examples/19-replicated-log, the writer on b, replicas on a and e: the
# network between b and e is cut in the middle of a run. The writer
# reports replica 2 within the bound and goes on with replica 1. Healed
# once that writer has ended, replica 2 still holds the connection of a
# writer that sent no event: the next writer must get through to it
# (it proves the key, and the replica takes it as the one that is back),
# catch it up, and the three logs end the same.
case_replicated_log_partition() {
	local ok=1 ex r1 r2 t0 w
	local name=replicated-log-partition
	log_machines "$name" "a partition is noticed by TCP's retransmission timeout (net.ipv4.tcp_retries2, about 15 minutes)" ||
		return
	r1=$(cl_addr a):7420 r2=$(cl_addr e):7420
	give_key a && give_key b && give_key e || ok=0
	new_replicas p1 p2 7420 || ok=0
	cl_start b pw1 --timeout 300 -- "$ex/writer" --key /tmp/log.key --new --log /dev/dax0.0 \
		--records 3000 --size 200 --rate 1000 "$r1" "$r2"
	if printed b pw1 "1200 of 3000 records acknowledged by 2 replicas"; then
		t0=$(now)
		cl_cut b e
		printed b pw1 "replica 2 .* FAILED" 30 || ok=0
		writer_noticed pw1 "b and e cut apart" "$t0" || ok=0
	else
		out+=$'\n'"the writer did not get far enough to cut the network under it"
		ok=0
	fi
	ended_with_fewer pw1 || ok=0
	cl_heal b e
	cl_start b pw2 --timeout 300 -- "$ex/writer" --key /tmp/log.key --log /dev/dax0.0 --records 100 \
		--size 200 "$r1" "$r2"
	run cl_wait b pw2 300 || ok=0
	out_of b pw2 | grep -q "replica 2 .* lacks [0-9]* bytes of the log: they go first" || {
		out+=$'\n'"replica 2 was not caught up"
		ok=0
	}
	# how replica 2 learned that the first writer was gone
	if out_of e p2 | grep -q "proved the key while the connection"; then
		out+=$'\n'"replica 2 took the second writer as the first one back"
	elif out_of e p2 | grep -q "the writer is gone\|the writer disconnected"; then
		out+=$'\n'"replica 2 saw the first writer's connection end"
	fi
	w=$(out_of b pw2 | sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' | tail -n 1)
	log_digests "$w" p1 p2 || ok=0
	[ $ok = 1 ] && pass "$name" || fail "$name"
}

# examples/19-replicated-log, the writer on b, replicas on a and e:
# replica 2's process is stopped (SIGSTOP), so that e's kernel acknowledges
# everything the writer sends and nothing is answered, and then the network
# between b and e is cut. The writer's queue pair to e has nothing left to
# retransmit: only the library's probe of a silent GPSPM target notices
# (doc/persistence.md, "A target gone silent"), which must fail the writer's
# flushes with the transport's error within 1.25 times the connection's
# timeout of the cut (and BOUND_SLACK_S), not leave them to the writer's own
# 10 s.
case_replicated_log_silent() {
	local ok=1 ex r1 r2 t0 dt limit
	local name=replicated-log-silent-target
	log_machines "$name" "a partition is noticed by TCP's retransmission timeout (net.ipv4.tcp_retries2, about 15 minutes)" ||
		return
	limit=$(awk -v s="$BOUND_SLACK_S" 'BEGIN { print 1.25 + s }')
	r1=$(cl_addr a):7421 r2=$(cl_addr e):7421
	give_key a && give_key b && give_key e || ok=0
	new_replicas s1 s2 7421 || ok=0
	cl_start b sw --timeout 300 -- "$ex/writer" --key /tmp/log.key --new --log /dev/dax0.0 \
		--records 10000 --size 200 --rate 1000 "$r1" "$r2"
	if printed b sw "1000 of 10000 records acknowledged by 2 replicas"; then
		# the replica itself: cl_signal's process is the timeout around it
		cl_on e -- pkill -STOP -x replica >/dev/null
		# four times the probe time: the probes meanwhile are acknowledged
		sleep 1
		t0=$(now)
		cl_cut b e
		printed b sw "replica 2 .* FAILED" 30 || ok=0
		dt=$(elapsed "$t0")
		out+=$'\n'"replica 2's process stopped, then b and e cut apart: the writer reported replica 2 $dt s after the cut on the host's clock (bound 1.25 s + $BOUND_SLACK_S s)"
		awk -v t="$dt" -v l="$limit" 'BEGIN { exit !(t <= l) }' || ok=0
		out_of b sw | grep -q "replica 2 .* FAILED: an operation failed: transport retry counter exceeded" || {
			out+=$'\n'"the writer did not report replica 2 by the transport's error"
			ok=0
		}
	else
		out+=$'\n'"the writer did not get far enough to stop replica 2 under it"
		ok=0
	fi
	ended_with_fewer sw || ok=0
	cl_heal b e
	cl_on e -- pkill -KILL -x replica >/dev/null
	cl_signal a s1 TERM >/dev/null
	run cl_wait a s1 30 || ok=0
	cl_wait e s2 30 >/dev/null
	[ $ok = 1 ] && pass "$name" || fail "$name"
}

# Debian's librpma 1.x on one machine, this library on the other
case_interop() {
	local ok=1 crc src
	if [ ! -e "$DEBIAN_LIBRPMA" ]; then
		fail "interop-librpma-1x"
		return
	fi
	for side in client server; do
		port=$((port + 1))
		# over the build's RUNPATH: Debian's librpma.so.0 instead
		local senv=() cenv=() dir=${DEBIAN_LIBRPMA%/*}
		if [ $side = client ]; then
			cenv=(env LD_LIBRARY_PATH="$dir")
		else
			senv=(env LD_LIBRARY_PATH="$dir")
		fi
		out+="${out:+$'\n'}librpma 1.x as the $side:"
		cl_start a srv -- "${senv[@]}" "$X" server "$(cl_addr a)" $port "$SIZE" /dev/dax0.0
		run cl_on b --timeout 300 -- "${cenv[@]}" "$X" client "$(cl_addr a)" $port "$SIZE" 51
		crc=$?
		run cl_wait a srv 120
		src=$?
		[ $crc = 0 ] && [ $src = 0 ] || ok=0
		# the peers really were the two libraries
		grep -q "xfer $side: librpma 1.x" <<<"$out" || ok=0
	done
	[ $ok = 1 ] && pass "interop-librpma-1x" || fail "interop-librpma-1x"
}

cases=(ops_big ops_loss ops_delay ops_reorder killed_peer partition_poll partition_wait power_loss
	interop hetero mirror_loss replicated_log_partition replicated_log_silent replicated_log)
all=("${cases[@]}")
case_partition_poll() { case_partition poll; }
case_partition_wait() { case_partition wait; }
[ $# -gt 0 ] && all=("$@")
for c in "${all[@]}"; do
	declare -F "case_$c" >/dev/null || die "no case '$c': the cases are ${cases[*]}"
done

# the program for the Debian 13 machines, built in the Debian 13 root
XT=
XT_WHY=
if why=$("$here/../vm/build-in-root.sh" "$builddir" --quiet tests/cluster/cluster_xfer 2>&1); then
	XT=$(cd "$builddir" && pwd)/trixie-build/tests/cluster/cluster_xfer
else
	XT_WHY="cannot build cluster_xfer in the Debian 13 root: $why"
fi

echo "TAP version 13"
# 32 random bytes, as printf escapes: the key of the replicated log
LOG_KEY=$(head -c 40 /dev/urandom | od -An -v -tx1 | tr -s ' \n' ' ' | sed -e 's/ *$//' -e 's/ \([0-9a-f][0-9a-f]\)/\\x\1/g')
cl_init "$builddir" "$provider" a:host:pmem b:host:pmem c:trixie:pmem d:trixie e:host:pmem
cl_boot a b || {
	echo "Bail out! the machines did not boot"
	exit 1
}
t0=$(now)
for c in "${all[@]}"; do
	t=$(now)
	"case_$c"
	echo "# $c: $(elapsed "$t") s"
done
cl_stop a b c d e
echo "1..$n"
echo "# cluster over $provider: $n cases, $failed failed, $(elapsed "$t0") s"
[ $failed = 0 ]
