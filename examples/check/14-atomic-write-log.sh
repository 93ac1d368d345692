#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 14-atomic-write-log: entries from several clients land in order, the
# server sees exactly the committed ones, and (pmem) a restarted server
# reads them back.
. "$(dirname "$0")/lib.sh"
ex=$BIN/14-atomic-write-log
port=7414

if [ "$MODE" = pmem ]; then
	pmem=$(pmem_area 2) || exit 77
	start server1 "$ex/server" --direct-write-to-pmem --clients 2 "$ADDR" $port "$pmem"
	if listening server1; then
		run alice "$ex/client" "$ADDR" $port "apple $$" "banana $$"
		run bob "$ex/client" "$ADDR" $port "cherry $$"
	fi
	ok alice
	ok bob
	ok server1
	has alice "appends are flushed to persistence"
	has server1 "client 2 disconnected"
	n=$(value server1 '.*server:   \([0-9]*\): cherry '"$$"'$')
	[ -n "$n" ] || fail "server1 does not show bob's entry"
	has server1 ": apple $$"
	has server1 "$((n - 2)): apple $$"
	has server1 "$((n - 1)): banana $$"

	# restarted, without the declaration: reads the same log back
	start server2 "$ex/server" --clients 1 "$ADDR" $port "$pmem"
	listening server2 && run carol "$ex/client" "$ADDR" $port "date $$"
	ok carol
	ok server2
	has server2 "found a log"
	has server2 "$n: cherry $$"
	has server2 "$((n + 1)): date $$"
	has server2 "the server persists the log after each client"
	has carol "appends are flushed to visibility"
else
	start server "$ex/server" --clients 1 "$ADDR" $port
	listening server && run alice "$ex/client" "$ADDR" $port "apple $$" "banana $$"
	ok alice
	ok server
	has server "the log is in DRAM"
	has server "no log found: started an empty one"
	has server "1: apple $$"
	has server "2: banana $$"
	has server "the log holds 2 entries"
fi
conclude
