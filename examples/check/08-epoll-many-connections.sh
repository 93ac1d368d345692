#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 08-epoll-many-connections: clients overlap and come one after another;
# the one-threaded server serves them all and ends after the last.
. "$(dirname "$0")/lib.sh"
ex=$BIN/08-epoll-many-connections
port=7408

start server "$ex/server" "$ADDR" $port 4
if listening server; then
	start alice "$ex/client" "$ADDR" $port 20 alice
	start bob "$ex/client" "$ADDR" $port 15 bob
	start carol "$ex/client" "$ADDR" $port 10 carol
	# dave comes when carol is gone
	finish carol
	start dave "$ex/client" "$ADDR" $port 5 dave
fi
for c in alice bob carol dave; do ok $c; done
ok server
has alice "client alice: 20 rounds played"
has bob "client bob: 15 rounds played"
has carol "client carol: 10 rounds played"
has dave "client dave: 5 rounds played"
count server "(alice), round" 20
count server "(dave), round" 5
has server "(bob) stopped after 15 pongs"
count server "disconnected" 4
has server "server: client 4 connected"
has server "server: 4 clients served"
conclude
