#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 04-write-flush: the message arrives, is flushed as deep as the server
# allows, and (pmem) survives a restart of the server.
. "$(dirname "$0")/lib.sh"
ex=$BIN/04-write-flush
port=7404
first="first message $$"
second="second message $$"

if [ "$MODE" = pmem ]; then
	pmem=$(pmem_area 0) || exit 77
	# declared direct write to pmem: the client flushes to persistence
	start server1 "$ex/server" --direct-write-to-pmem "$ADDR" $port "$pmem"
	listening server1 && run client1 "$ex/client" "$ADDR" $port "$first"
	ok client1
	ok server1
	has server1 "guarantee offered to the client: persistence (direct write to pmem)"
	has client1 "direct write to pmem: yes, flush type: persistent"
	has client1 "completion: op flush"
	has server1 "received and persisted: \"$first\""

	# nothing declared: visibility, the server persists; the first message is there
	start server2 "$ex/server" "$ADDR" $port "$pmem"
	listening server2 && run client2 "$ex/client" "$ADDR" $port "$second"
	ok client2
	ok server2
	has server2 "the memory already holds a message: \"$first\""
	has server2 "visibility only (the server persists the message itself)"
	has client2 "direct write to pmem: no, flush type: visibility"
	has server2 "received and persisted: \"$second\""
else
	start server "$ex/server" "$ADDR" $port
	listening server && run client "$ex/client" "$ADDR" $port "$first"
	ok client
	ok server
	has server "no pmem path given: using DRAM"
	has server "visibility only (DRAM: the message is lost when the server ends)"
	has client "flush type: visibility"
	has server "received: \"$first\""
fi
conclude
