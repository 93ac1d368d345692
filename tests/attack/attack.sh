#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/attack/attack.sh BINDIR [dram]
#
# What a peer without rpma-mirror's key can do to its server, tried over
# real RDMA (README.md here): BINDIR holds flood, BINDIR/../../tools the
# tool and its test peer. It runs as an example's check does
# (examples/check/lib.sh: RPMA_TEST_ADDR, RPMA_TEST_PROVIDER, PASSED,
# FAILED or a reason to skip). RPMA_ATTACK_PROVE_MS: how long a client with
# the key may wait to be let in while the flood goes on (2000 ms).
#
#   a. a server of an 8 MiB target of random bytes
#   b. a client with the key lets its REGION answer leak (rkey, address)
#   c. the test peer's bad clients, each refused and logged (over one
#      provider: their refusal is the server's logic), and a HELLO answered
#      in a reject (over both: RoCE's reject and iWARP's carry the answer
#      each their way)
#   d. a small flood that holds the leaked descriptor, from an address of
#      its own, gets no connection, and its address is penalized: refused
#      unread
#   e. a flood from four more addresses, each penalized in turn;
#      meanwhile clients with the key are let in (timed) and a real copy
#      succeeds, and then the flood stops (SIGINT)
#   f. the flood let in nothing, the server still serves, the target holds
#      the copy and, past it, what it held before
#   g. the server stops on SIGINT
#   h. the replicated log's replica (examples/19-replicated-log), over one
#      provider: a garbage flood from an address of its own gets that
#      address penalized, and a writer with the key is served meanwhile
# shellcheck source-path=SCRIPTDIR source=../../examples/check/lib.sh
. "$(dirname "$0")/../../examples/check/lib.sh"
[ "$MODE" = dram ] || skip "the attack suite runs in dram mode only"
tool=$BIN/../../tools/rpma-mirror
flood=$BIN/flood
port=7800
to=$ADDR:$port
prove_ms=${RPMA_ATTACK_PROVE_MS:-2000}
mirror=("$tool/rpma-mirror" -k "$WORK/key")
t_start=${EPOCHREALTIME/[.,]/}
peer=("$tool/test-peer" -k "$WORK/key")

# gid_learned HEX: until rxe's GID table holds the IPv4 address whose
# last 32 bits are HEX (c000:0269: 192.0.2.105), 5 s at most; siw needs no
# GID
gid_learned() {
	local i gids
	[ "$PROVIDER" = rxe ] || return 0
	for ((i = 0; i < 50; i++)); do
		gids=$(cat /sys/class/infiniband/"${RPMA_TEST_DEVICE:-rxe0}"/ports/1/gids/* 2>/dev/null)
		[[ $gids == *"ffff:$1"* ]] && return 0
		pause 0.1
	done
}
# refusals: how many refusals of ADDR the server logged, in REFUSALS
refusals() {
	lines_with server ": refused $ADDR: "
	REFUSALS=$LINES_WITH
}
# refused_once KIND BEFORE: the server logged one more refusal than BEFORE
# (it logs before it rejects, but a line may be late in the file)
refused_once() {
	local i
	for ((i = 0; i < 50; i++)); do
		refusals
		[ "$REFUSALS" -gt "$2" ] && break
		pause 0.1
	done
	[ "$REFUSALS" -eq $(($2 + 1)) ] ||
		fail "the server logged $((REFUSALS - $2)) refusals for $1, expected 1"
}
# flood_read NAME: what the flood NAME printed, read without a process
# (a fork costs tens of ms in the test VM): ACCEPTED[kind], ANSWERED[kind]
# (-1 when it printed no line of that kind), RATE
declare -A ACCEPTED ANSWERED
flood_read() {
	local line lines kind
	ACCEPTED=([hello]=-1 [garbage]=-1) ANSWERED=([hello]=-1 [garbage]=-1) RATE=
	mapfile -t lines 2>/dev/null <"$WORK/$1.out"
	for line in "${lines[@]}"; do
		if [[ $line =~ ^(hello|garbage):\ [0-9]+\ requests,\ [0-9]+\ rejected\ \(([0-9]+)\ with\ an\ answer\),\ ([0-9]+)\ accepted ]]; then
			kind=${BASH_REMATCH[1]}
			ANSWERED[$kind]=${BASH_REMATCH[2]} ACCEPTED[$kind]=${BASH_REMATCH[3]}
		elif [[ $line =~ ^rate:\ (.*) ]]; then
			RATE=${BASH_REMATCH[1]}
		fi
	done
}
# flood_clean NAME: the flood NAME let nothing in, and reached the server
flood_clean() {
	local kind
	flood_read "$1"
	has "$1" "writes landed: 0, reads answered: 0"
	lacks "$1" "LET IN"
	for kind in hello garbage; do
		[ "${ACCEPTED[$kind]}" = 0 ] ||
			fail "$1: ${ACCEPTED[$kind]} $kind requests accepted (-1: no line of them)"
	done
	[ "${ANSWERED[hello]}" -gt 0 ] || fail "$1: no HELLO was answered: the flood did not reach the server"
	[ "${ANSWERED[garbage]}" = 0 ] ||
		fail "$1: the server answered ${ANSWERED[garbage]} garbage requests"
}
# ms_since T: milliseconds since T (microseconds, as t_start), in MS (no fork)
ms_since() { MS=$(((${EPOCHREALTIME/[.,]/} - $1) / 1000)); }
# step TEXT: where the check is, and when
step() {
	ms_since "$t_start"
	echo "# $* (at $((MS / 1000)).$((MS % 1000 / 100)) s)"
}
# sha_of_rest FILE: the SHA-256 of FILE past its first 4 MiB
sha_of_rest() { tail -c +$(((4 << 20) + 1)) "$1" | sha256sum | cut -d' ' -f1; }

target=$WORK/target
head -c 8M /dev/urandom >"$target"
head -c 4M /dev/urandom >"$WORK/src"
rest_before=$(sha_of_rest "$target")

(umask 077 && head -c 40 /dev/urandom >"$WORK/key")

step a. the server
# The floods come from addresses of their own, given to the RDMA interface
# when ADDR is the test VM's (never a host's interface): 192.0.2.105 for
# the small one, 101 to 104 for the big one. Without them they come from
# ADDR, as the clients with the key do, which the server is then told
# never to penalize.
small=()
sources=()
exempt=()
dev=$(ip -o -4 addr show | awk -v a="$ADDR" '$4 ~ "^"a"/" { print $2; exit }')
if [ "$PROVIDER" = host ] || [[ $ADDR != 192.0.2.* ]] || [ -z "$dev" ]; then
	echo "# the floods come from $ADDR alone, exempt from penalties: more addresses are" \
		"given only to the test VM's interface for 192.0.2.0/24 (ADDR is $ADDR," \
		"provider $PROVIDER)"
	exempt=(--penalty-exempt "$ADDR")
else
	for i in 101 102 103 104 105; do
		ip addr replace "192.0.2.$i/32" dev "$dev" || fail "cannot give $dev the address 192.0.2.$i"
	done
	small=(-s 192.0.2.105)
	sources=(-s 192.0.2.101 -s 192.0.2.102 -s 192.0.2.103 -s 192.0.2.104)
	gid_learned c000:0269 # 192.0.2.105, the last given
fi
# a. the server, its limit the check's own (the suite stops a check after
# 300 s), less time to clean up
LIMIT=270 start server "${mirror[@]}" --serve "${exempt[@]}" "$to" "$target"
wait_for server "serving $target" || conclude

step b. the leak
# b. what a peer that watched one valid session holds: the region's
# descriptor
run leak "${peer[@]}" "$to" leak
ok leak
rkey=$(value leak '^leak: rkey \(0x[0-9a-f]*\) .*')
raddr=$(value leak '^leak: .* raddr \(0x[0-9a-f]*\) .*')
if [ -z "$rkey" ] || [ -z "$raddr" ]; then
	fail "test-peer leak printed no descriptor"
fi

step c. bad clients
# c. the test peer's bad clients: each answered as it must be, and each
# refusal logged; a HELLO is answered in a reject, never let in
kinds=(hello)
every_step && kinds=(bad-magic old-version no-challenge wrong-mac replay relay relay-qp hello)
for kind in "${kinds[@]}"; do
	refusals
	before=$REFUSALS
	run "$kind" "${peer[@]}" "$to" "$kind"
	ok "$kind"
	[ "$kind" = hello ] || refused_once "$kind" "$before"
done
has hello "hello: a challenge in the reject, no connection"
if every_step; then
	has bad-magic "bad-magic: refused"
	has relay "relay: refused"
	has relay-qp "relay-qp: refused"
	has server "refused $ADDR: not an rpma-mirror client"
	has server "refused $ADDR: an rpma-mirror client of another version"
	has server "refused $ADDR: a challenge answered before"
	has server "refused $ADDR: it does not hold the key (or relays a proof made for other addresses or another queue pair)"
fi

step d. a small flood
# d. a small flood that holds the leaked descriptor: no connection, so
# nothing written or read with it; its address is soon refused unread
# (after c: what the flood leaves in flight the server logs as refusals,
# which c counts)
if [ -n "$rkey" ]; then
	run probe "$flood" "${small[@]}" --hello 4 --garbage 4 --seconds 2 --rkey "$rkey" \
		--raddr "$raddr" "$ADDR" "$port"
	ok probe
	flood_clean probe
	if [ ${#small[@]} -gt 0 ]; then
		wait_for server "penalty for ${small[1]}: 10 answers but a connection within 10 s: its requests are refused unread for 10 s"
	fi
fi

step e. the flood
# e. the flood, 64 HELLOs and 200 garbage requests in flight at once: four
# processes (siw maps about 70 queue pairs a process), one from each of
# the four more addresses; the clients with the key meanwhile come from
# ADDR. It goes on until the copy has ended (SIGINT), 60 s at most.
# Attackers send from machines of their own; here they share the guest's
# processors with the server and the clients. At nice 6 (a weight of 272
# against 1024 at nice 0) the four weigh together about what one process
# of the server's priority does: the flood gets the processor time of one
# more program, not of four.
floods=()
for i in 1 2 3 4; do
	from=()
	[ ${#sources[@]} -eq 0 ] || from=("${sources[@]:$((2 * i - 2)):2}")
	start "flood$i" nice -n 6 "$flood" "${from[@]}" --hello 16 --garbage 50 --seconds 60 \
		--rkey "${rkey:-0}" --raddr "${raddr:-0}" "$ADDR" "$port"
	floods+=("flood$i")
done
for f in "${floods[@]}"; do
	wait_for "$f" "flood: " 10
done
pause 0.5
run prove "${peer[@]}" "$to" prove 3
ok prove
times=()
mapfile -t lines <"$WORK/prove.out"
for line in "${lines[@]}"; do
	[[ $line =~ ^prove:\ let\ in\ after\ ([0-9]+)\ ms ]] && times+=("${BASH_REMATCH[1]}")
done
[ ${#times[@]} = 3 ] || fail "test-peer prove 3 was let in ${#times[@]} times, not 3"
t_copy=${EPOCHREALTIME/[.,]/}
run copy "${mirror[@]}" "$WORK/src" "$to"
ms_since "$t_copy"
echo "# the copy under the flood took $MS ms"
ok copy
has copy "mirrored 4.0 MiB"
digest_ok copy server
# all told to stop first, then waited for: each ends what it has in flight
for f in "${floods[@]}"; do
	program_of "$f"
	if [ -z "$PROGRAM" ] || ! kill -INT "$PROGRAM" 2>/dev/null; then
		fail "$f ended before the copy did: the copy was not made under it"
	fi
done
for f in "${floods[@]}"; do
	finish "$f"
done
echo "# let in under the flood after ${times[*]} ms (the limit: $prove_ms ms," \
	"RPMA_ATTACK_PROVE_MS)"
for t in "${times[@]}"; do
	if ! [[ $t =~ ^[0-9]+$ ]] || [ "$t" -gt "$prove_ms" ]; then
		fail "a client with the key was let in after ${t:-(never)} ms under the flood, more than $prove_ms ms"
	fi
done

step f. what the flood left
# f. the flood let nothing in; the server went on; the target holds the
# copy, and past it what it held before
flood_read probe
echo "# the small flood: $RATE"
for f in "${floods[@]}"; do
	ok "$f"
	flood_clean "$f"
	echo "# $f: $RATE"
done
# each address of the flood was penalized; none of the key's clients' was
for s in "${sources[@]}"; do
	[ "$s" = -s ] || has server "penalty for $s: "
done
lacks server "penalty for $ADDR: "
program_of server
[ -n "$PROGRAM" ] || fail "the server ended during the flood"
cmp -n $((4 << 20)) "$WORK/src" "$target" || fail "the target's first 4 MiB are not the copy's source"
[ "$(sha_of_rest "$target")" = "$rest_before" ] || fail "the target changed past the copy"

step g. the end
# g. the server stops on SIGINT, in order
stop server INT
ok server
has server "stopped by signal 2"

step h. the replica
# h. the replicated log's replica takes the same penalties (psk.h): a
# garbage flood from 192.0.2.106 gets that address penalized, logged
# once, and a writer with the key from ADDR is served under it. Over one
# provider: what differs between them is the mirror's (e).
log=$BIN/../../examples/19-replicated-log
if ! every_step; then
	:
elif [ ! -x "$log/replica" ] || [ ${#small[@]} -eq 0 ]; then
	echo "# h. skipped: ${log}/replica is not built (-Dexamples=false), or the" \
		"floods have no address of their own"
else
	ip addr replace 192.0.2.106/32 dev "$dev" || fail "cannot give $dev the address 192.0.2.106"
	gid_learned c000:026a # 192.0.2.106
	start replica "$log/replica" --key "$WORK/key" "$ADDR" $((port + 3))
	wait_for replica "listening on" || conclude
	start rflood nice -n 6 "$flood" -s 192.0.2.106 --hello 0 --garbage 64 --seconds 60 \
		"$ADDR" $((port + 3))
	wait_for rflood "flood: " 10
	pause 1
	run writer "$log/writer" --key "$WORK/key" --ack visible --records 20 "$ADDR:$((port + 3))"
	ok writer
	has writer "all 20 records acknowledged"
	program_of rflood
	if [ -z "$PROGRAM" ] || ! kill -INT "$PROGRAM" 2>/dev/null; then
		fail "the replica's flood ended before the writer did"
	fi
	finish rflood
	ok rflood
	has rflood "writes landed: 0, reads answered: 0"
	flood_read rflood
	[ "${ACCEPTED[garbage]}" = 0 ] ||
		fail "the replica accepted ${ACCEPTED[garbage]} garbage requests (-1: no line of them)"
	echo "# the replica's flood: $RATE"
	has replica "replica: penalty for 192.0.2.106: 10 answers but a connection within 10 s"
	lacks replica "penalty for $ADDR:"
	has replica "a writer connected from $ADDR"
	stop replica INT
fi
conclude
