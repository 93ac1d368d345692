#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 16-completion-api: the timeout, the batches and the busy poll all give
# what they should, and every chunk arrived.
. "$(dirname "$0")/lib.sh"
port=7416

start server "$BIN/16-completion-api/server" "$ADDR" $port
listening server && run client "$BIN/16-completion-api/client" "$ADDR" $port
ok client
ok server
has client "1. rpma_cq_wait_completion() on an empty CQ: \"No next completion available\" after"
has client "2. 32 writes completed"
has client "3. the flush completed (op RPMA_OP_FLUSH)"
has server "all 32 chunks hold what was written"
conclude
