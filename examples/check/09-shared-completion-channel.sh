#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 09-shared-completion-channel: 08's scenario, with one completion channel
# per connection.
. "$(dirname "$0")/lib.sh"
ex=$BIN/09-shared-completion-channel
port=7409

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
has server "(one completion channel per connection)"
conclude
