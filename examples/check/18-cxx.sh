#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 18-cxx: the C++ pair moves the message and flushes it as deep as the
# server says it may.
. "$(dirname "$0")/lib.sh"
ex=$BIN/18-cxx
port=7418
msg="from C++ $$"

if [ "$MODE" = pmem ]; then
	pmem=$(pmem_area 3) || exit 77
	start server1 "$ex/server" --direct-write-to-pmem "$ADDR" $port "$pmem"
	listening server1 && run client1 "$ex/client" "$ADDR" $port "$msg"
	ok client1
	ok server1
	has server1 "guarantee offered to the client: persistence (direct write to pmem)"
	has client1 "the server offers persistence"
	has client1 "completion: op flush, status success"
	has server1 "the client wrote: \"$msg\" (persisted)"

	start server2 "$ex/server" "$ADDR" $port "$pmem"
	listening server2 && run client2 "$ex/client" "$ADDR" $port "$msg 2"
	ok client2
	ok server2
	has server2 "visibility (the server persists the data itself)"
	has client2 "the server offers visibility only"
	has server2 "the client wrote: \"$msg 2\" (persisted)"
else
	start server "$ex/server" "$ADDR" $port
	listening server && run client "$ex/client" "$ADDR" $port "$msg"
	ok client
	ok server
	has server "no pmem path given: using DRAM"
	has client "the server offers visibility only"
	has client "wrote and flushed to visibility"
	has server "the client wrote: \"$msg\""
fi
conclude
