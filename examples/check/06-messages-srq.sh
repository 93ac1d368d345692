#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 06-messages-srq: the ping-pong with the server's receives on an SRQ; more
# rounds than receives posted, so the slots are reused.
. "$(dirname "$0")/lib.sh"
port=7406

start server "$BIN/06-messages-srq/server" "$ADDR" $port
listening server && run client "$BIN/06-messages-srq/client" "$ADDR" $port 10 bob
ok client
ok server
has server "4 receives posted on the SRQ"
count client "client bob: round " 10
has client "client bob: 10 rounds played"
count server "server: bob, round " 10
has server "(SRQ slot 3)"
has server "server: bob stopped after 10 pongs"
conclude
