#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 11-separate-rcq-shared-channel: every answer comes back right (the client checks each)
# with both CQs on one completion channel.
. "$(dirname "$0")/lib.sh"
port=7411

start server "$BIN/11-separate-rcq-shared-channel/server" "$ADDR" $port
listening server && run client "$BIN/11-separate-rcq-shared-channel/client" "$ADDR" $port 50
ok client
ok server
has client "50 requests, up to 4 in flight"
has client "all 50 answers right"
has server "answered 50 requests"
has server "closed the connection"
has client "the server closed the connection"
has server "two CQs, one completion channel"
conclude
