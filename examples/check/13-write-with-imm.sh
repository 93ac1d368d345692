#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 13-write-with-imm: the server finds each word where the immediate value
# says it was written; on iWARP both programs must refuse with a clear
# message, and the check is skipped.
. "$(dirname "$0")/lib.sh"
ex=$BIN/13-write-with-imm
port=7413
word="alpha$$"

if is_iwarp; then
	run server "$ex/server" "$ADDR" $port
	run client "$ex/client" "$ADDR" $port
	for p in server client; do
		status_is $p 1
		has $p "iWARP has no immediate data, which this example is about"
	done
	conclude_skip "siw (iWARP) has no immediate data (both programs refuse it clearly)"
fi
start server "$ex/server" "$ADDR" $port
listening server && run client "$ex/client" "$ADDR" $port "$word" beta "gamma delta"
ok client
ok server
has server "wrote ${#word} bytes at offset 1024: \"$word\""
has server "wrote 4 bytes at offset 64: \"beta\""
has server "wrote 11 bytes at offset 2048: \"gamma delta\""
count client "client: wrote " 3
conclude
