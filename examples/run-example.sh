#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: examples/run-example.sh EXAMPLE SERVER CLIENT [MESSAGE]
#
# Runs one example's server and client against each other on
# $RPMA_TEST_ADDR and shows both outputs. Meant to run where there is RDMA,
# e.g. in the test VM:
#   tests/vm/run-in-vm.sh BUILDDIR --pmem -- examples/run-example.sh \
#       04-write-flush BUILDDIR/examples/04-write-flush/{server,client}
#
# EXAMPLE is the example's directory name; it decides the server's
# arguments: 04-write-flush gets $RPMA_EXAMPLE_PMEM when set, else
# $RPMA_TEST_PMEM (the device DAX set up by run-in-vm.sh --pmem), else a
# temporary regular file. Passes (exit 0) when
# both programs succeed and the server printed the client's message.
# RPMA_EXAMPLE_PORT picks the port (7204).

set -u
[ $# -ge 3 ] || { echo "usage: $0 EXAMPLE SERVER CLIENT [MESSAGE]" >&2; exit 2; }
example=$1 server=$2 client=$3
message=${4:-"rpma-ng example message $$ at $(date +%T)"}
addr=${RPMA_TEST_ADDR:-}
port=${RPMA_EXAMPLE_PORT:-7204}
[ -n "$addr" ] || { echo "RPMA_TEST_ADDR is not set: no RDMA address to use"; exit 77; }

work=$(mktemp -d)
spid=
cleanup() {
	[ -z "$spid" ] || kill "$spid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

case "$example" in
04-write-flush)
	pmem=${RPMA_EXAMPLE_PMEM:-${RPMA_TEST_PMEM:-$work/pmem-file}}
	server_args=("$addr" "$port" "$pmem")
	;;
*)
	server_args=("$addr" "$port")
	;;
esac

echo "=== $example over ${RPMA_TEST_PROVIDER:-RDMA} on $addr:$port"
echo "\$ $(basename "$server") ${server_args[*]} &"
timeout 60 "$server" "${server_args[@]}" >"$work/server.out" 2>&1 &
spid=$!

# the server says when it listens
for _ in $(seq 300); do
	grep -q 'listening on' "$work/server.out" && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done

echo "\$ $(basename "$client") $addr $port \"$message\""
timeout 60 "$client" "$addr" "$port" "$message" >"$work/client.out" 2>&1
crc=$?
wait "$spid"
src=$?
spid=

echo "--- server output (status $src):"
sed 's/^/    /' "$work/server.out"
echo "--- client output (status $crc):"
sed 's/^/    /' "$work/client.out"

if [ $src != 0 ] || [ $crc != 0 ]; then
	echo "FAILED: server status $src, client status $crc"
	exit 1
fi
if ! grep -qF "\"$message\"" "$work/server.out"; then
	echo "FAILED: the server did not print the client's message"
	exit 1
fi
echo "PASSED: the server received the client's message"
