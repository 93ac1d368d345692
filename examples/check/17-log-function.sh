#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 17-log-function: the library's messages go through the programs' own
# function, and each of the client's two mistakes is logged with its reason.
. "$(dirname "$0")/lib.sh"
port=7417
msg="logged $$"

start server "$BIN/17-log-function/server" "$ADDR" $port
listening server && run client "$BIN/17-log-function/client" "$ADDR" $port "$msg"
ok client
ok server
has server "server: the library's messages from level info up come here"
has server "server: [librpma info"
has client "client: 1. rpma_mr_reg() with no usage: Invalid argument"
has client "client: 2. a persistent flush: Not supported"
# the reasons, from the library, through the custom function
has client "client: [librpma error"
has client "rpma_mr_reg()] invalid argument"
has client "not registered for persistent flush"
has server "it wrote \"$msg\""
conclude
