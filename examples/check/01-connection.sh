#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 01-connection: both greetings cross in the private data.
. "$(dirname "$0")/lib.sh"
port=7401
greeting="hello from client $$"

start server "$BIN/01-connection/server" "$ADDR" $port
listening server && run client "$BIN/01-connection/client" "$ADDR" $port "$greeting"
ok client
ok server
has server "the client says: \"$greeting\""
has client "the server says: \"Hello, client! (server pid"
has server "the client disconnected"
has client "disconnected"

# nobody listens on the next port: a clear refusal, not a hang
run refused "$BIN/01-connection/client" "$ADDR" 7400
status_is refused 1
has refused "cannot connect to $ADDR:7400: "
conclude
