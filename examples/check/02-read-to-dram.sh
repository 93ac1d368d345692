#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 02-read-to-dram: the client reads exactly the server's text.
. "$(dirname "$0")/lib.sh"
port=7402
text="text for the reader $$"

start server "$BIN/02-read-to-dram/server" "$ADDR" $port "$text"
listening server && run client "$BIN/02-read-to-dram/client" "$ADDR" $port
ok client
ok server
has client "read $((${#text} + 1)) bytes from the server's DRAM: \"$text\""
has server "client disconnected"
conclude
