#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 15-gpspm: with no direct write to pmem declared, the client's persistent
# flushes go by GPSPM and complete in order; the server's persist function
# is called once for each, served by polling and by the library's thread;
# (pmem) what was flushed is still there for the next server.
. "$(dirname "$0")/lib.sh"
ex=$BIN/15-gpspm
port=7415

# served: NAME N BYTES: the server served N flushes of BYTES bytes in all
served() { has "$1" "client disconnected; $2 flushes served, $3 bytes persisted"; }

if [ "$MODE" = pmem ]; then
	pmem=$(pmem_area 0) || exit 77
	start server1 "$ex/server" "$ADDR" $port "$pmem"
	listening server1 && run client1 "$ex/client" "$ADDR" $port 40 "first $$"
	ok client1
	ok server1
	has server1 "served while the server polls its CQ"
	has client1 "direct write to pmem: no; persistent flushes go by GPSPM"
	has client1 "40 lines written and persisted, in order"
	served server1 40 $((40 * 64))
	has server1 "now: the memory holds 40 lines, the last: \"line 40 of 40: first $$\""

	start server2 "$ex/server" --thread "$ADDR" $port "$pmem"
	listening server2 && run client2 "$ex/client" "$ADDR" $port 100 "second $$"
	ok client2
	ok server2
	has server2 "at start: the memory holds 40 lines, the last: \"line 40 of 40: first $$\""
	has server2 "served by the library's thread"
	has client2 "persistent flushes go by GPSPM"
	has client2 "100 lines written and persisted, in order"
	served server2 100 $((100 * 64))
	has server2 "now: the memory holds 100 lines, the last: \"line 100 of 100: second $$\""
	# never more flushes in flight than the server takes requests (8)
	most=$(value client2 '.*up to \([0-9]*\) flushes in flight.*')
	[ -n "$most" ] && [ "$most" -ge 1 ] && [ "$most" -le 8 ] ||
		fail "the client had ${most:-no number of} flushes in flight, expected 1 to 8"
else
	start server "$ex/server" "$ADDR" $port
	listening server && run client "$ex/client" "$ADDR" $port 10 "dram $$"
	ok client
	ok server
	has server "no pmem path given: using DRAM"
	has client "persistent flushes go by GPSPM"
	served server 10 640
	has server "now: the memory holds 10 lines, the last: \"line 10 of 10: dram $$\""
fi
conclude
