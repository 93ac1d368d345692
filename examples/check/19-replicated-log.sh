#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 19-replicated-log: a writer and two replicas, each with memory of its own.
#   pmem: replica 1 declares direct write to pmem, replica 2 offers GPSPM
#   only; every record acknowledged and the same log in all three places
#   (same digest); replica 2 killed mid-stream is reported, the writer
#   goes on with the other; restarted, the replica reads its log back with
#   every checksum good, and the next writer run catches it up; with
#   --stop-on-failure the writer stops instead; a peer that is not a
#   replica is turned away.
#   dram: the writer insists on durability unless told --ack visible.
. "$(dirname "$0")/lib.sh"
ex=$BIN/19-replicated-log
p1=7419 p2=7420

# digest NAME: the last digest NAME printed
digest() { sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' "$WORK/$1.out" | tail -n 1; }
same_digest() { # NAME...: all printed the same last digest
	local d0 d n
	d0=$(digest "$1")
	[ -n "$d0" ] || { fail "$1 printed no digest"; return; }
	for n in "${@:2}"; do
		d=$(digest "$n")
		[ "$d" = "$d0" ] || fail "$n's digest ${d:-(none)} differs from $1's $d0"
	done
}

if [ "$MODE" = dram ]; then
	start rep1 "$ex/replica" "$ADDR" $p1
	start rep2 "$ex/replica" "$ADDR" $p2
	listening rep1 && listening rep2
	# DRAM replicas cannot make a record durable: refused unless told
	run strict "$ex/writer" --records 10 "$ADDR:$p1" "$ADDR:$p2"
	status_is strict 1
	has strict "can make records visible, not durable"
	has strict "0 of 2 replicas usable"
	run writer "$ex/writer" --ack visible --records 500 --size 100 "$ADDR:$p1" "$ADDR:$p2"
	ok writer
	has writer "no --log given: the writer's log is in DRAM"
	has writer "records reach visibility only"
	has writer "all 500 records acknowledged by all 2 replicas"
	stop rep1
	stop rep2
	ok rep1
	ok rep2
	has rep1 "holds 500 records"
	same_digest writer rep1 rep2
	conclude
fi

log=$(pmem_area 0) || exit 77
pm1=$(pmem_area 1) || exit 77
pm2=$(pmem_area 2) || exit 77

# 1. two fresh replicas, a new log
start rep1 "$ex/replica" --direct-write-to-pmem --format "$ADDR" $p1 "$pm1"
start rep2 "$ex/replica" --format "$ADDR" $p2 "$pm2"
listening rep1 && listening rep2
run first "$ex/writer" --new --log "$log" --records 300 --size 256 "$ADDR:$p1" "$ADDR:$p2"
ok first
has first "replica 1 ($ADDR:$p1) is new"
has first "replica 1 ($ADDR:$p1): records reach persistence there by a read after the writes"
has first "replica 2 ($ADDR:$p2): records reach persistence there by GPSPM"
has rep2 "persistence by GPSPM"
has first "all 300 records acknowledged by all 2 replicas"
wait_for rep2 "holds 300 records"
same_digest first rep1 rep2

# 2. replica 2 is killed mid-stream: reported, the writer goes on (the
# stream lasts 6 s, time enough for the kill to land in it on a busy host)
start second "$ex/writer" --log "$log" --records 3000 --size 256 --rate 500 \
	"$ADDR:$p1" "$ADDR:$p2"
if wait_for second "300 of 3000 records acknowledged by 2 replicas" 60; then
	stop rep2 KILL
	STATUS[rep2]=killed
fi
finish second
status_is second 3
has second "replica 2 ($ADDR:$p2) FAILED"
has second "all 3000 records acknowledged, by 1 of the 2 replicas"
has second "holds 3300 records"
lacks second "STOPPED"

# 3. restarted, replica 2 checks what it had; the next run catches it up
start rep2b "$ex/replica" "$ADDR" $p2 "$pm2"
listening rep2b
has rep2b "every checksum good"
kept=$(value rep2b '.*holds \([0-9]*\) records.*')
[ -n "$kept" ] && [ "$kept" -ge 600 ] && [ "$kept" -lt 3300 ] ||
	fail "the restarted replica holds ${kept:-no} records, expected 600 to 3299"
run third "$ex/writer" --log "$log" --records 100 "$ADDR:$p1" "$ADDR:$p2"
ok third
has third "replica 2 ($ADDR:$p2) lacks "
has third "replica 1 ($ADDR:$p1) is up to date"
has third "all 100 records acknowledged by all 2 replicas"
wait_for rep2b "holds 3400 records"
wait_for rep1 "holds 3400 records"
same_digest third rep1 rep2b

# 4. --stop-on-failure: the writer stops when replica 2 goes (a stream of
# 20 s that the kill cuts short)
start fourth "$ex/writer" --log "$log" --records 10000 --rate 500 --stop-on-failure \
	"$ADDR:$p1" "$ADDR:$p2"
if wait_for fourth "1000 of 10000 records acknowledged" 60; then
	stop rep2b KILL
	STATUS[rep2b]=killed
fi
finish fourth
status_is fourth 1
has fourth "replica 2 ($ADDR:$p2) FAILED"
has fourth "STOPPED"
stop rep1
ok rep1
# what the writer stopped with is on replica 1 too, all of it checked
has rep1 "every checksum good"
same_digest fourth rep1

# 5. a peer that is not a replica
start other "$BIN/01-connection/server" "$ADDR" $p2
listening other && run wrong "$ex/writer" --log "$log" --records 1 "$ADDR:$p2"
status_is wrong 1
has wrong "replica 1 ($ADDR:$p2) is not a log replica"
has wrong "not starting"
conclude
