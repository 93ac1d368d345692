#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: run-pair.sh PORT [--imm] -- SERVER_COMMAND... -- CLIENT_COMMAND...
#
# One interop case, run where the RDMA device is (inside the test VM, by
# tests/vm/run-suite.sh): starts the server and the client, each command
# given --addr $RPMA_TEST_ADDR --port PORT --sync DIR (DIR a fresh
# directory both see), under a time limit, and waits for both. A command
# may start with `env NAME=VALUE...` (LD_LIBRARY_PATH for a drop-in run).
#
# --imm  the case sends immediate data: skipped over siw, which has none.
#
# Exit status: 0 when both exited 0, 77 (skip, reason last) when the case
# cannot run on this device, 1 otherwise. Both programs' output is printed,
# each line prefixed by its role, and the verdict last.

set -u
usage() { echo "usage: $0 PORT [--imm] -- SERVER_COMMAND... -- CLIENT_COMMAND..." >&2; exit 2; }
[ $# -ge 1 ] || usage
port=$1
shift
imm=0
if [ "${1:-}" = --imm ]; then imm=1; shift; fi
[ "${1:-}" = -- ] || usage
shift
server=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do server+=("$1"); shift; done
[ "${1:-}" = -- ] || usage
shift
client=("$@")
[ ${#server[@]} -gt 0 ] && [ ${#client[@]} -gt 0 ] || usage

limit=${RPMA_INTEROP_TIMEOUT:-60}
# Which librpma.so.0 a side loads is the case's choice alone (a drop-in
# side says LD_LIBRARY_PATH in its command); `meson test` sets one for the
# build tree, and the VM forwards it.
unset LD_LIBRARY_PATH

if [ -z "${RPMA_TEST_ADDR:-}" ]; then
	echo "RPMA_TEST_ADDR is not set: no RDMA device to test on"
	exit 77
fi
if [ "$imm" = 1 ] && [ "${RPMA_TEST_PROVIDER:-}" = siw ]; then
	echo "siw (soft iWARP) carries no immediate data: iWARP has none"
	exit 77
fi

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
common=(--addr "$RPMA_TEST_ADDR" --port "$port" --sync "$dir")

timeout -k 5 "$limit" "${server[@]}" "${common[@]}" >"$dir/server.log" 2>&1 &
server_pid=$!
timeout -k 5 "$limit" "${client[@]}" "${common[@]}" >"$dir/client.log" 2>&1
client_rc=$?
if [ "$client_rc" != 0 ]; then
	# a server waiting for a client that failed would wait out its limit
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.2
	done
	kill "$server_pid" 2>/dev/null
fi
wait "$server_pid"
server_rc=$?

for role in server client; do
	echo "--- $role"
	cat "$dir/$role.log"
done
if [ "$server_rc" = 0 ] && [ "$client_rc" = 0 ]; then
	echo "pass: both ends checked every byte"
	exit 0
fi
describe() {
	case $2 in
	0) ;;
	124 | 137) echo "the $1 timed out after $limit s" ;;
	*) echo "the $1 failed (status $2)" ;;
	esac
}
echo "$(describe server "$server_rc") $(describe client "$client_rc")" | sed 's/^ //; s/ $//'
exit 1
