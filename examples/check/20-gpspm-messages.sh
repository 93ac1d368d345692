#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 20-gpspm-messages: a GPSPM connection for the records and a plain one
# for the messages, between one client and one server: every record is
# in the server's memory when its message comes and is acknowledged, by
# polling and by the library's thread; at the end both close. The client
# killed mid-run: the server says which connection went down, brings the
# other down and ends with 1 within 10 s; (dram) the server killed: the
# client does the same; a request of the wrong kind is turned away.
. "$(dirname "$0")/lib.sh"
ex=$BIN/20-gpspm-messages
port=7421 # 7420 is 19's second replica

# normal NAME N: the server NAME verified and acknowledged N records and
# ended with both connections closed after the client's "done"
normal() {
	ok "$1"
	has "$1" "the GPSPM connection is up (session "
	has "$1" "the messages connection is up"
	has "$1" "the client is done: $2 records, each in memory when its message came"
	has "$1" "connection closed; closing the "
	has "$1" "both connections are down; $2 records verified and acknowledged, $2 flushes served"
	lacks "$1" "went down"
}

# ends_within NAME SECONDS: NAME ends by itself within SECONDS; says when
ends_within() {
	local prog t0 n=$(($2 * 10))
	program_of "$1"
	prog=$PROGRAM
	t0=$(date +%s%N)
	while [ -n "$prog" ] && kill -0 "$prog" 2>/dev/null; do
		n=$((n - 1))
		if [ $n -le 0 ]; then
			fail "$1 was still running $2 s after its peer was killed"
			return 1
		fi
		pause 0.1
	done
	finish "$1"
	echo "$1 ended $((($(date +%s%N) - t0) / 1000000)) ms after its peer was killed"
}

# killed NAME: NAME's peer was killed; NAME names the connection that went
# down, brings the other one down and ends with 1 within 10 s
killed() {
	ends_within "$1" 10 || return
	status_is "$1" 1
	has "$1" "connection went down ("
	has "$1" "connection down too"
	count "$1" "connection went down (" 1
	lacks "$1" "did not confirm its close"
}

if [ "$MODE" = pmem ]; then
	pmem=$(pmem_area 0) || exit 77
	srv=("$ex/server" "$ADDR" "$port" "$pmem")
	thread=("$ex/server" --thread "$ADDR" "$port" "$pmem")
else
	srv=("$ex/server" "$ADDR" "$port")
	thread=()
fi

# 1. the normal run: GPSPM served by polling, in the same loop as the messages
start server "${srv[@]}"
listening server && run client "$ex/client" "$ADDR" $port 250
ok client
has client "persistent flushes go by GPSPM"
has client "the messages connection is up"
count client "records persistent and acknowledged" 2
has client "250 records written, made persistent by GPSPM, announced and acknowledged"
normal server 250
has server "served while the server polls its CQ"
has server "record 1 is in memory: \"record 1, persistent before its message\"; ack 1"
has server "record 200 is in memory: \"record 200, persistent before its message\"; ack 200"

# 2. the same, the GPSPM requests served by the library's thread
if [ ${#thread[@]} -gt 0 ]; then
	start server2 "${thread[@]}"
	listening server2 && run client2 "$ex/client" "$ADDR" $port 300
	ok client2
	has client2 "300 records written, made persistent by GPSPM"
	normal server2 300
	has server2 "served by the library's thread"
fi

# 3. the client killed mid-run (by its PID): the server brings both down
start server3 "${srv[@]}"
listening server3 && start client3 "$ex/client" "$ADDR" $port 10000000
if wait_for server3 "record 200 is in memory" 60; then
	stop client3 KILL
	STATUS[client3]=killed
	killed server3
	lacks server3 "the client is done"
	has server3 "the client went away before it was done"
fi

if [ "$MODE" = dram ]; then
	# 4. the server killed mid-run: the client brings both down
	start server4 "${srv[@]}"
	listening server4 && start client4 "$ex/client" "$ADDR" $port 10000000
	if wait_for client4 "200 records persistent and acknowledged" 60; then
		stop server4 KILL
		STATUS[server4]=killed
		killed client4
		has client4 "records were acknowledged before that"
	fi

	# 5. a client of 15-gpspm sends no kind: turned away, not taken for GPSPM
	start server5 "${srv[@]}"
	listening server5 && run other "$BIN/15-gpspm/client" "$ADDR" $port 1
	status_is other 1
	wait_for server5 "turned away" 10
	run client5 "$ex/client" "$ADDR" $port 10
	ok client5
	normal server5 10
fi
conclude
