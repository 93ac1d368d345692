#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 03-read-to-pmem: the text read lands in the client's memory and (pmem)
# is still there for the next client.
. "$(dirname "$0")/lib.sh"
ex=$BIN/03-read-to-pmem
port=7403
first="first text $$"
second="second text $$"

if [ "$MODE" = pmem ]; then
	pmem=$(pmem_area 0) || exit 77
	start server1 "$ex/server" "$ADDR" $port "$first"
	listening server1 && run client1 "$ex/client" "$ADDR" $port "$pmem"
	ok client1
	ok server1
	has client1 "read into pmem and persisted: \"$first\""
	start server2 "$ex/server" "$ADDR" $port "$second"
	listening server2 && run client2 "$ex/client" "$ADDR" $port "$pmem"
	ok client2
	ok server2
	has client2 "the pmem holds from an earlier run: \"$first\""
	has client2 "read into pmem and persisted: \"$second\""
else
	start server "$ex/server" "$ADDR" $port "$first"
	listening server && run client "$ex/client" "$ADDR" $port
	ok client
	ok server
	has client "no pmem path given: reading into DRAM"
	has client "read into DRAM: \"$first\""
fi
conclude
