#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 05-messages-ping-pong: every ping gets its pong, then the stop ends both.
. "$(dirname "$0")/lib.sh"
port=7405

start server "$BIN/05-messages-ping-pong/server" "$ADDR" $port
listening server && run client "$BIN/05-messages-ping-pong/client" "$ADDR" $port 5 alice
ok client
ok server
count client "client alice: round " 5
has client "client alice: 5 rounds played"
count server "server: alice, round " 5
has server "server: alice stopped after 5 pongs"
has server "client disconnected"
conclude
