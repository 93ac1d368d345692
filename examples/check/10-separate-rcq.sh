#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 10-separate-rcq: every answer comes back right (the client checks each)
# with requests in flight on both CQs.
. "$(dirname "$0")/lib.sh"
port=7410

start server "$BIN/10-separate-rcq/server" "$ADDR" $port
listening server && run client "$BIN/10-separate-rcq/client" "$ADDR" $port 50
ok client
ok server
has client "50 requests, up to 4 in flight"
has client "all 50 answers right"
has server "answered 50 requests"
has server "closed the connection"
has client "the server closed the connection"
conclude
