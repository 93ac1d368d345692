#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# rpma-mirror (tools/rpma-mirror), checked with the examples; BINDIR/../tools
# holds it. Every copy must end with the digest the server computes over
# its own memory.
#   pmem: the target is a device DAX. A file is mirrored, compared
#   (--verify-only, the same, then one byte changed), mirrored again (only
#   the changed chunk goes), interrupted by SIGINT and resumed; a device DAX
#   is mirrored; with --direct-write-to-pmem the flushes are reads. Bad
#   input: a missing source, a target too small, a peer that is no mirror
#   server, nobody there, a client that is no mirror client, a missing
#   target: each a clear message and a non-zero exit, never "mirrored".
#   dram: the target is a plain file (made durable with msync).
. "$(dirname "$0")/lib.sh"
mirror=$BIN/../tools/rpma-mirror/rpma-mirror
port=7700
to=$ADDR:$port

# digest_ok NAME: NAME's digest is the one the server printed last
digest_ok() {
	local mine theirs
	mine=$(value "$1" '.*digest \([0-9a-f]*\) on both sides.*')
	theirs=$(sed -n 's/.*: digest \([0-9a-f]*\)$/\1/p' "$WORK/$2.out" | tail -n 1)
	[ -n "$mine" ] && [ "$mine" = "$theirs" ] ||
		fail "$1's digest ${mine:-(none)} is not the server's ${theirs:-(none)}"
}
# served N: until the server has seen N clients go (and printed the digest)
served() {
	local i
	for i in $(seq 300); do
		[ "$(grep -c 'the client disconnected' "$WORK/server.out")" -ge "$1" ] && return 0
		sleep 0.1
	done
	fail "the server did not see client $1 go"
}
mib() { head -c $(($2 << 20)) /dev/urandom >"$WORK/$1"; }

mib src 12
if [ "$MODE" = pmem ]; then
	target=$(pmem_area 1) || exit 77
	devsrc=$(pmem_area 2) || exit 77
else
	target=$WORK/target
	truncate -s 32M "$target"
fi

start server "$mirror" --serve "$to" "$target"
wait_for server "serving $target" || conclude

# 1. a copy, checked
run copy1 "$mirror" "$WORK/src" "$to"
ok copy1
has server "the clients' flushes persist by GPSPM"
has copy1 "persistent by GPSPM"
has copy1 "mirrored 12.0 MiB: 12 chunks sent, 0 already there"
served 1
digest_ok copy1 server

# 2. compared: the same; one byte changed: one chunk differs
run same "$mirror" --verify-only "$WORK/src" "$to"
ok same
has same "the target holds the same 12.0 MiB"
# one bit of the byte at 5 MiB flipped
byte=$(od -An -tu1 -j $((5 << 20)) -N 1 "$WORK/src" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 1)))" |
	dd of="$WORK/src" bs=1 seek=$((5 << 20)) conv=notrunc status=none
run differs "$mirror" --verify-only "$WORK/src" "$to"
status_is differs 4
has differs "differs from $WORK/src in 1 of 12 chunks"
served 3

# 3. mirrored again: only that chunk goes
run copy2 "$mirror" "$WORK/src" "$to"
ok copy2
has copy2 "1 chunk sent, 11 already there"
served 4
digest_ok copy2 server

if [ "$MODE" = dram ]; then
	stop server
	ok server
	has server "stopped by signal 15"
	# a plain file is no pmem: the declaration is ignored, and said so
	start declared "$mirror" --serve --direct-write-to-pmem --once "$ADDR:$((port + 1))" \
		"$target"
	wait_for declared "serving $target"
	has declared "is not persistent memory: --direct-write-to-pmem ignored"
	has declared "persist by GPSPM"
	stop declared
	ok declared
	conclude
fi

# 4. interrupted (SIGINT) while copying, then resumed
mib big 24
# at 1 MiB/s: 24 s, time enough for the signal to land in it on a busy host
start slow "$mirror" --verbose --limit 1 "$WORK/big" "$to"
if wait_for slow "copying: 20%" 60; then
	stop slow INT
fi
status_is slow 3
has slow "interrupted by signal 2"
has slow "NOT mirrored"
lacks slow "mirrored 24.0 MiB"
served 5
run resumed "$mirror" "$WORK/big" "$to"
ok resumed
again=$(value resumed '.*sent, \([0-9]*\) already there.*')
[ -n "$again" ] && [ "$again" -ge 4 ] && [ "$again" -lt 24 ] ||
	fail "the resumed copy found ${again:-no} chunks already there, expected 4 to 23"
served 6
digest_ok resumed server

# 5. a device DAX as the source
run dax "$mirror" --chunk 4M "$devsrc" "$to"
ok dax
has dax "mirrored 124.0 MiB"
served 7
digest_ok dax server

# 6. bad input: clear messages, non-zero, nothing called mirrored
run nosrc "$mirror" "$WORK/not-there" "$to"
status_is nosrc 1
has nosrc "cannot open $WORK/not-there: No such file or directory"
truncate -s 200M "$WORK/huge"
run toobig "$mirror" "$WORK/huge" "$to"
status_is toobig 1
has toobig "is smaller than $WORK/huge (200.0 MiB): nothing copied"
start other "$BIN/01-connection/server" "$ADDR" $((port + 1))
listening other && run stranger "$mirror" "$WORK/src" "$ADDR:$((port + 1))"
status_is stranger 1
has stranger "is not an rpma-mirror server"
run nobody "$mirror" "$WORK/src" "$ADDR:$((port + 2))"
status_is nobody 1
has nobody "$ADDR:$((port + 2))"
run intruder "$BIN/01-connection/client" "$ADDR" $port
status_is intruder 1
wait_for server "turned down a peer that is not an rpma-mirror client"
run notarget "$mirror" --serve "$ADDR:$((port + 2))" "$WORK/not-there"
status_is notarget 1
has notarget "cannot open the target $WORK/not-there"
for n in nosrc toobig stranger nobody; do lacks $n "mirrored"; done
stop server
ok server

# 7. declared direct write to pmem: the flushes are reads after the writes
start direct "$mirror" --serve --direct-write-to-pmem --once "$to" "$target"
wait_for direct "serving $target" && run copy3 "$mirror" --fresh "$WORK/src" "$to"
ok copy3
ok direct
has direct "persist by reads after the writes (direct write to pmem)"
has copy3 "persistent by a read after the writes"
has copy3 "mirrored 12.0 MiB: 12 chunks sent"
digest_ok copy3 direct
conclude
