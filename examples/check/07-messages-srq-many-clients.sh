#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 07-messages-srq-many-clients: three clients play at once through one SRQ;
# each gets its own answers (the client checks every pong's value).
. "$(dirname "$0")/lib.sh"
ex=$BIN/07-messages-srq-many-clients
port=7407

start server "$ex/server" "$ADDR" $port 3
if listening server; then
	start alice "$ex/client" "$ADDR" $port 7 alice
	start bob "$ex/client" "$ADDR" $port 9 bob
	start carol "$ex/client" "$ADDR" $port 8 carol
fi
for c in alice bob carol; do ok $c; done
ok server
has alice "client alice: 7 rounds played"
has bob "client bob: 9 rounds played"
has carol "client carol: 8 rounds played"
count server "server: alice (queue pair" 8
count server "server: bob (queue pair" 10
has server "carol (queue pair"
has server "stopped after 8 pongs"
has server "all 3 clients stopped"
has server "all 3 clients disconnected"
conclude
