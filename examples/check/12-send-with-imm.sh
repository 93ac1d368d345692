#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 12-send-with-imm: the immediate values arrive with their messages; on
# iWARP both programs must refuse with a clear message, and the check is
# skipped.
. "$(dirname "$0")/lib.sh"
ex=$BIN/12-send-with-imm
port=7412
msg="imm $$"

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
listening server && run client "$ex/client" "$ADDR" $port "$msg"
ok client
ok server
has server "message 1: ${#msg} bytes \"$msg\", immediate data $(printf '0x%08x' ${#msg})"
has server "message 2: 0 bytes \"\", immediate data 0xfeedf00d"
has server "message 3: ${#msg} bytes \"$msg\", no immediate data"
count client "client: sent " 3
conclude
