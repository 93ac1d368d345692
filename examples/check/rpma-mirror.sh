#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rpma-mirror (tools/rpma-mirror), checked with the examples; BINDIR/../tools
# holds it and its test peer. Every copy must end with the digest the
# server computes over its own memory.
#   both modes: a file is mirrored.
#   pmem: the target is a device DAX. A copy interrupted by SIGINT (130)
#   resumes; with --direct-write-to-pmem the flushes are reads.
#   dram: the target is a plain file (made durable with msync). What does
#   not depend on the target's memory: the copy compared (--verify-only:
#   the same, then one byte changed: status 1 and the offset named),
#   mirrored again (only the changed chunk goes); a wrong key (the client
#   stops at the server's proof), 4 bad clients and a client of another
#   program refused and logged while the server goes on serving; an IPv6
#   endpoint in brackets. What a peer without the key tries (every kind
#   of bad client, replays, relays, floods) is the attack suite's
#   (tests/attack).
# What does not depend on the provider runs over one only (every_step,
# lib.sh):
#   pmem: a device DAX as the source; bad input: a missing source, a target
#   too small, a peer that is no mirror server, nobody there, a missing
#   target.
#   dram: -q, a progress bar on a terminal, --json; a client killed
#   mid-copy, then a good client; a server that
#   never answers (stopped), given up after 10 s; --allow; a host name.
. "$(dirname "$0")/lib.sh"
tool=$BIN/../tools/rpma-mirror
port=7700
to=$ADDR:$port

(umask 077 && head -c 40 /dev/urandom >"$WORK/key" && head -c 40 /dev/urandom >"$WORK/other.key")
mirror=("$tool/rpma-mirror" -k "$WORK/key")
peer=("$tool/test-peer" -k "$WORK/key")

# served N [SERVER]: until the server has seen N clients go (and printed the digest)
served() {
	local i
	for ((i = 0; i < 300; i++)); do
		lines_with "${2:-server}" 'the client disconnected'
		[ "$LINES_WITH" -ge "$1" ] && return 0
		pause 0.1
	done
	fail "${2:-server} did not see client $1 go"
}
# refusals [SERVER]: how many refusals the server logged
refusals() { lines_with "${1:-server}" ": refused $ADDR: " && echo "$LINES_WITH"; }
mib() { head -c $(($2 << 20)) /dev/urandom >"$WORK/$1"; }

# output_steps: what the client prints: nothing with -q, a progress bar on
# a terminal, one JSON object with --json (served 5 to 7)
output_steps() {
	run quiet "${mirror[@]}" -q --verify-only "$WORK/src" "$to"
	ok quiet
	[ -s "$WORK/quiet.out" ] && fail "-q printed something"
	served 5

	# 3b. on a terminal: a progress bar with the rate and the time left
	# (script(1) gives the client one; --limit makes the copy last 3 s)
	run tty script -qec "$(printf '%q ' "${mirror[@]}" --fresh --limit 4M "$WORK/src" "$to")" /dev/null
	ok tty
	has tty "copying   ["
	has tty "/s  ETA "
	has tty "100%  12.0 MiB of 12.0 MiB"
	has tty "mirrored 12.0 MiB: 12 chunks sent"

	# 4. --json: one object, its fields as they are
	run json "${mirror[@]}" --json --verify-only "$WORK/src" "$to"
	ok json
	served 7
	theirs=$(sed -n 's/.*: digest \([0-9a-f]\{64\}\)$/\1/p' "$WORK/server.out" | tail -n 1)
	python3 - "$WORK/json.out" "$theirs" <<'EOF' || fail "the --json summary is not what it must be"
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("{")][-1]
j = json.loads(line)
want = {"result": "same", "bytes": 12 << 20, "chunk": 1 << 20, "chunks": 12,
        "differing_chunks": 0, "first_difference": None, "exit_status": 0,
        "flush_method": "gpspm", "digest": sys.argv[2]}
bad = {k: (j.get(k), v) for k, v in want.items() if j.get(k) != v}
if bad:
    sys.exit("--json: %r" % bad)
EOF
}

# ipv6_step: an IPv6 address in brackets, on the test VM's own interface
# (never a host's: over a host's device the caller does not call it); each
# provider routes it its own way
ipv6_step() {
	dev=$(ip -o -4 addr show | awk -v a="$ADDR" '$4 ~ "^"a"/" { print $2; exit }')
	v6=2001:db8::7a
	if [ -z "$dev" ] || ! ip -6 addr replace "$v6/64" dev "$dev" nodad; then
		fail "cannot give ${dev:-the RDMA interface} the address $v6"
	else
		sleep 1 # the device's GID table learns the address
		start six "${mirror[@]}" --serve --once --allow 2001:db8::/32 \
			"[$v6]:$((port + 4))" "$target"
		wait_for six "serving $target (32.0 MiB) on [$v6]:$((port + 4))" &&
			run bysix "${mirror[@]}" --fresh "$WORK/src" "[$v6]:$((port + 4))"
		ok bysix
		has bysix "mirrored 12.0 MiB: 12 chunks sent"
		has six "$v6 mirrors 12.0 MiB"
		ok six
		digest_ok bysix six
	fi
}

# pmem_only_steps: a device DAX as the source; bad input, with clear
# messages, status 2, nothing called mirrored (stops the server)
pmem_only_steps() {
	# 11. a device DAX as the source
	run dax "${mirror[@]}" --chunk 4M "$devsrc" "$to"
	ok dax
	has dax "mirrored 124.0 MiB"
	wait_for server "the client disconnected; the first 124.0 MiB" 30
	digest_ok dax server

	# 12. bad input: clear messages, status 2, nothing called mirrored
	run nosrc "${mirror[@]}" "$WORK/not-there" "$to"
	status_is nosrc 2
	has nosrc "cannot open $WORK/not-there: No such file or directory"
	truncate -s 200M "$WORK/huge"
	run toobig "${mirror[@]}" "$WORK/huge" "$to"
	status_is toobig 2
	has toobig "is smaller than $WORK/huge (200.0 MiB): nothing copied"
	start other "$BIN/01-connection/server" "$ADDR" $((port + 1))
	listening other && run stranger "${mirror[@]}" "$WORK/src" "$ADDR:$((port + 1))"
	status_is stranger 2
	has stranger "is not an rpma-mirror server"
	run nobody "${mirror[@]}" "$WORK/src" "$ADDR:$((port + 2))"
	status_is nobody 2
	has nobody "$ADDR:$((port + 2))"
	run notarget "${mirror[@]}" --serve "$ADDR:$((port + 2))" "$WORK/not-there"
	status_is notarget 2
	has notarget "cannot open the target $WORK/not-there"
	for n in nosrc toobig stranger nobody; do lacks $n "mirrored"; done
	stop server
	ok server
}

mib src 12
if [ "$MODE" = pmem ]; then
	target=$(pmem_area 1) || exit 77
	devsrc=$(pmem_area 2) || exit 77
else
	target=$WORK/target
	truncate -s 32M "$target"
fi

# The server serves every step up to 12, not one: on a loaded host those
# take longer than one program's limit (LIMIT, 90 s), and a server stopped
# by it fails the steps after. Its limit is the check's own (the suite
# stops a check after 300 s), less time to clean up.
# The bad clients of step 5 come from the address of the good ones: exempt
# from penalties here (tests/attack shows them from addresses of their own)
LIMIT=270 start server "${mirror[@]}" --serve --penalty-exempt "$ADDR" "$to" "$target"
wait_for server "serving $target" || conclude

# 1. a copy, checked
run copy1 "${mirror[@]}" "$WORK/src" "$to"
ok copy1
has server "to clients with the key; the clients' flushes persist by GPSPM"
has copy1 "persistent by GPSPM"
has copy1 "mirrored 12.0 MiB: 12 chunks sent, 0 already there"
served 1
digest_ok copy1 server

# What the client compares and sends again, what it prints and how the
# server refuses bad clients does not depend on the target's memory: in
# dram mode only, which runs over both providers.
if [ "$MODE" = dram ]; then
	# 2. compared: the same; one byte changed: status 1, the byte named
	run same "${mirror[@]}" --verify-only "$WORK/src" "$to"
	ok same
	has same "the target holds the same 12.0 MiB"
	# one bit of the byte at 5 MiB + 77 flipped
	at=$(((5 << 20) + 77))
	byte=$(od -An -tu1 -j $at -N 1 "$WORK/src" | tr -d ' ')
	printf "\\$(printf '%03o' $((byte ^ 1)))" |
		dd of="$WORK/src" bs=1 seek=$at conv=notrunc status=none
	run differs "${mirror[@]}" --verify-only "$WORK/src" "$to"
	status_is differs 1
	has differs "differs from $WORK/src at byte $at (chunk 5); 1 of 12 chunks differ"
	served 3

	# 3. mirrored again: only that chunk goes; -q says nothing
	run copy2 "${mirror[@]}" "$WORK/src" "$to"
	ok copy2
	has copy2 "1 chunk sent, 11 already there"
	served 4
	digest_ok copy2 server
	every_step && output_steps
	# 5. bad clients (the attack suite, tests/attack, tries every kind of
	# the test peer's and floods): a client whose server holds another key
	# stops at its proof, a client of another program is refused with a
	# reason in the server's log, and the server goes on
	run wrongkey "$tool/rpma-mirror" -k "$WORK/other.key" "$WORK/src" "$to"
	status_is wrongkey 2
	has wrongkey "the server at $to holds another key: nothing sent"
	lacks wrongkey "mirrored"
	before=$(refusals)
	run knocks "${peer[@]}" "$to" mix 4
	ok knocks
	has knocks "4 knocks, 4 answered as they must be"
	[ $(($(refusals) - before)) -eq 4 ] ||
		fail "the server logged $(($(refusals) - before)) refusals for 4 bad clients"
	has server "refused $ADDR: not an rpma-mirror client"
	has server "refused $ADDR: an rpma-mirror client of another version"
	run intruder "$BIN/01-connection/client" "$ADDR" $port
	status_is intruder 1
	# and then a good client
	run after "${mirror[@]}" --verify-only "$WORK/src" "$to"
	ok after
	has after "the target holds the same 12.0 MiB"
fi

if [ "$MODE" = dram ] && every_step; then
	# 6. (none: a HELLO is answered in a reject, so no client holds the
	# server after its hello)
	# 7. a client killed mid-copy; then a good one finishes the copy
	mib big 24
	start killed "${mirror[@]}" --verbose --limit 2M "$WORK/big" "$to"
	if wait_for killed "copying: 20%" 60; then
		stop killed KILL
	fi
	status_is killed 137
	wait_for server "; the first 24.0 MiB of $target" 30
	run resumed "${mirror[@]}" "$WORK/big" "$to"
	ok resumed
	again=$(value resumed '.*sent, \([0-9]*\) already there.*')
	[ -n "$again" ] && [ "$again" -ge 4 ] && [ "$again" -lt 24 ] ||
		fail "the copy after the kill found ${again:-no} chunks already there, expected 4 to 23"
	digest_ok resumed server
	stop server
	ok server
	has server "stopped by signal 15"

	# 7b. a server that never answers (stopped): the client gives up after
	# 10 s, not the minutes the connection manager retries. It waits while
	# step 8 goes on.
	truncate -s 16M "$WORK/asleep-target"
	start asleep "${mirror[@]}" --serve "$ADDR:$((port + 3))" "$WORK/asleep-target"
	wait_for asleep "serving $WORK/asleep-target"
	program_of asleep
	asleep_program=$PROGRAM
	kill -STOP "$asleep_program"
	t0=$(date +%s)
	# shellcheck disable=SC2016 # expanded by sh: when the client ended
	start late sh -c '"$@"; s=$?; date +%s >"$0"; exit $s' "$WORK/late.end" \
		"${mirror[@]}" "$WORK/src" "$ADDR:$((port + 3))"

	# 8. --allow: a peer outside every rule is refused before anything is said
	start allow_other "${mirror[@]}" --serve --once --allow 198.51.100.0/24 \
		--allow 2001:db8::/32 "$ADDR:$((port + 1))" "$target"
	wait_for allow_other "from the --allow addresses"
	run outside "${mirror[@]}" "$WORK/src" "$ADDR:$((port + 1))"
	status_is outside 2
	has outside "turned us down"
	wait_for allow_other "refused $ADDR: not an address --allow lets in"
	stop allow_other
	ok allow_other
	start allow_me "${mirror[@]}" --serve --once --allow "$ADDR/32" \
		"$ADDR:$((port + 2))" "$target"
	wait_for allow_me "from the --allow addresses" &&
		run inside "${mirror[@]}" "$WORK/src" "$ADDR:$((port + 2))"
	ok inside
	has inside "mirrored 12.0 MiB"
	ok allow_me
	digest_ok inside allow_me

	# a plain file is no pmem: the declaration is ignored, and said so
	start declared "${mirror[@]}" --serve --direct-write-to-pmem --once \
		"$ADDR:$((port + 5))" "$target"
	wait_for declared "serving $target"
	has declared "is not persistent memory: --direct-write-to-pmem ignored"
	has declared "persist by GPSPM"
	stop declared
	ok declared

	# 7b's client, given up
	finish late
	ended=$(date +%s)
	read -r ended 2>/dev/null <"$WORK/late.end"
	waited=$((ended - t0))
	kill -CONT "$asleep_program"
	echo "# the client gave up on a stopped server after $waited s"
	status_is late 2
	has late "$ADDR:$((port + 3)) did not answer within 10 s"
	lacks late "mirrored"
	[ "$waited" -le 20 ] || fail "the client gave up on a silent server after $waited s, not 10"
	stop asleep
	ok asleep

	# 9. a host name, and an IPv6 address in brackets (the test VM's own
	# /etc/hosts and interface: never a host's)
	if [ "$PROVIDER" = host ]; then
		echo "not run on a host's own device: naming the target in /etc/hosts and" \
			"an IPv6 address on its interface"
		conclude
	fi
	if ! grep -q 'mirror-target.example.org' /etc/hosts 2>/dev/null; then
		echo "$ADDR mirror-target.example.org" >>/etc/hosts ||
			fail "cannot name the target in /etc/hosts"
	fi
	start named "${mirror[@]}" --serve --once "mirror-target.example.org:$((port + 3))" \
		"$target"
	wait_for named "serving $target" &&
		run byname "${mirror[@]}" --verify-only "$WORK/src" "mirror-target.example.org:$((port + 3))"
	ok byname
	has byname "the target holds the same 12.0 MiB"
	ok named
	ipv6_step
	conclude
fi

if [ "$MODE" = dram ]; then
	stop server
	ok server
	ipv6_step
	conclude
fi

# 10. interrupted (SIGINT) while copying: 130; then resumed
mib big 24
# at 1 MiB/s: 24 s, time enough for the signal to land in it on a busy host
start slow "${mirror[@]}" --verbose --limit 1M "$WORK/big" "$to"
if wait_for slow "copying: 20%" 60; then
	stop slow INT
fi
status_is slow 130
has slow "interrupted by signal 2"
has slow "NOT mirrored"
lacks slow "mirrored 24.0 MiB"
wait_for server "the client disconnected; the first 24.0 MiB" 30
run resumed "${mirror[@]}" "$WORK/big" "$to"
ok resumed
again=$(value resumed '.*sent, \([0-9]*\) already there.*')
[ -n "$again" ] && [ "$again" -ge 4 ] && [ "$again" -lt 24 ] ||
	fail "the resumed copy found ${again:-no} chunks already there, expected 4 to 23"
digest_ok resumed server

if every_step; then
	pmem_only_steps
else
	stop server
	ok server
fi

# 13. declared direct write to pmem: the flushes are reads after the writes
start direct "${mirror[@]}" --serve --direct-write-to-pmem --once "$to" "$target"
wait_for direct "serving $target" && run copy3 "${mirror[@]}" --fresh "$WORK/src" "$to"
ok copy3
ok direct
has direct "persist by reads after the writes (direct write to pmem)"
has copy3 "persistent by a read after the writes"
has copy3 "mirrored 12.0 MiB: 12 chunks sent"
digest_ok copy3 direct
conclude
