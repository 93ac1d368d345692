#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage (over RDMA, by compare.sh through tests/vm/run-in-vm.sh):
#   bench/guest-compare.sh OUTDIR ROUNDS full|quick|check
#
# Runs the comparison and leaves the raw output in OUTDIR/raw/ (one file per
# round and configuration) and callgrind's in OUTDIR/callgrind/:
#   perftest   ib_write_lat, ib_read_lat, ib_write_bw over rdma_cm (-R)
#   librpma    rpma-bench on Debian's librpma.so.0 (package librpma0)
#   ours       rpma-bench on this tree's librpma.so.0, librpma 1.x calls
#   ours-batch rpma-bench-ng on this tree's library, one doorbell per
#              write+flush (only when it was built with rpma_post_batch)
#   ours-gpspm rpma-bench-ng on this tree's library on both sides, the
#              persistent flush carried by GPSPM (the server's library
#              thread persists the range): write-lat only (librpma 1.x
#              has no GPSPM in the library: its baseline is `ours`)
# interleaved: every round runs each configuration once, in an order that
# rotates from round to round. Each rpma-bench client has a server of its
# own on the same library. `check` is the bench suite's quick test: five
# operations of every mode on this tree's library, taking completions in
# every way the programs can (and batched when built, and with GPSPM), no
# perftest and no callgrind.
#
# Environment: RPMA_BENCH_DIR (the directory of rpma-bench),
# RPMA_BENCH_OURS (the directory of this tree's librpma.so.0),
# RPMA_BENCH_DEBIAN (that of Debian's, /usr/lib/x86_64-linux-gnu),
# RPMA_BENCH_CALLGRIND=0 (no instruction counts), RPMA_TEST_ADDR and
# RPMA_TEST_DEVICE (set by run-in-vm.sh).

set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 OUTDIR ROUNDS full|quick|check" >&2; exit 2; }
out=$1
rounds=$2
profile=$3
bench=${RPMA_BENCH_DIR:?}
ours=$(readlink -f "${RPMA_BENCH_OURS:?}")
debian=${RPMA_BENCH_DEBIAN:-/usr/lib/x86_64-linux-gnu}
addr=${RPMA_TEST_ADDR:-192.0.2.1}
dev=${RPMA_TEST_DEVICE:-$(ls /sys/class/infiniband | head -n 1)}
callgrind=${RPMA_BENCH_CALLGRIND:-1}

case "$profile" in
full)
	lat_sizes=8,64,512,4k,32k,256k,1m
	tput_sizes=4k,16k,64k,256k,1m
	msg_sizes=8,64,512,4k
	seconds=1
	# perftest, fewer sizes (each is a new pair of processes): about as
	# many bytes per size as rpma-bench moves in its 1 s
	perf_lat_sizes=64,4k,256k
	perf_tput_sizes=4k,64k,1m
	perf_bytes=40000000
	;;
quick)
	lat_sizes=64,4k,64k
	tput_sizes=4k,64k
	msg_sizes=64
	seconds=0.3
	perf_lat_sizes=64,4k
	perf_tput_sizes=4k,64k
	perf_bytes=10000000
	;;
check)
	lat_sizes=64,4k
	tput_sizes=4k
	msg_sizes=64
	seconds=0
	callgrind=0
	;;
*) echo "unknown profile $profile" >&2; exit 2 ;;
esac

mkdir -p "$out/raw" "$out/callgrind"
port=7600
failed=0
note() { echo "compare: $*" >&2; }

# settle PORT: wait until something listens on PORT over rdma_cm
settle() {
	local _
	for _ in $(seq 300); do
		rdma res show cm_id 2>/dev/null | grep -q "state LISTEN .*:$1 " && return 0
		sleep 0.1
	done
	note "nothing listens on port $1 after 30 s"
	return 1
}

# expected_lib LIBDIR: the real path of librpma.so.0 there
expected_lib() { readlink -f "$1/librpma.so.0"; }

# the server of the next run of tool or cg_run, and its options
server_bin=$bench/rpma-bench
server_args=()
server_gpspm() { server_bin=$bench/rpma-bench-ng server_args=(--flush gpspm); }
server_plain() { server_bin=$bench/rpma-bench server_args=(); }

# tool NAME LIBDIR BINARY [CLIENT ARGS...] > raw output: one rpma-bench
# client run against a server on the same library; checks that both
# loaded LIBDIR's librpma.so.0
tool() {
	local name=$1 libdir=$2 bin=$3 slog
	shift 3
	port=$((port + 1))
	slog=$(mktemp)
	LD_LIBRARY_PATH=$libdir timeout 900 "$server_bin" server --addr "$addr" --port $port \
		--connections 1 "${server_args[@]}" >"$slog" 2>&1 &
	local spid=$!
	settle $port || { kill $spid; wait $spid; cat "$slog"; rm -f "$slog"; return 1; }
	LD_LIBRARY_PATH=$libdir timeout 900 "$bin" client --addr "$addr" --port $port "$@"
	local crc=$?
	wait $spid
	local src=$?
	sed 's/^/server: /' "$slog"
	rm -f "$slog"
	echo "status client=$crc server=$src"
	[ $crc = 0 ] && [ $src = 0 ]
}

# check_lib FILE LIBDIR: both processes ran on LIBDIR's library
check_lib() {
	local want got
	want=$(expected_lib "$2")
	for got in $(sed -n 's/^\(server: \)\{0,1\}library path=\([^ ]*\).*/\2/p' "$1"); do
		if [ "$got" != "$want" ]; then
			note "$1: loaded $got instead of $want"
			return 1
		fi
	done
	[ "$(grep -c 'library path=' "$1")" = 2 ] || { note "$1: no library line"; return 1; }
}

have_batch=0
"$bench/rpma-bench-ng" capabilities | grep -q 'posts=[a-z,]*batch' && have_batch=1
have_gpspm=0
"$bench/rpma-bench-ng" capabilities | grep -q 'flushes=[a-z,-]*gpspm' && have_gpspm=1
gpspm_modes=write-lat
[ "$profile" = check ] && gpspm_modes=write-lat,write-tput,read-lat

common=(--lat-sizes "$lat_sizes" --tput-sizes "$tput_sizes" --msg-sizes "$msg_sizes"
	--seconds "$seconds")
[ "$profile" = check ] && common+=(--iters 5 --min-iters 1 --warmup 2)

run_config() { # ROUND CONFIG
	local f="$out/raw/r$1-$2.txt" rc=0
	local t0=$SECONDS
	{
		echo "run round=$1 config=$2"
		case "$2" in
		perftest) perftest_all ;;
		librpma) tool librpma "$debian" "$bench/rpma-bench" "${common[@]}" ;;
		ours) tool ours "$ours" "$bench/rpma-bench" "${common[@]}" ;;
		ours-batch) tool ours-batch "$ours" "$bench/rpma-bench-ng" "${common[@]}" --post batch ;;
		ours-gpspm)
			server_gpspm
			tool ours-gpspm "$ours" "$bench/rpma-bench-ng" "${common[@]}" --flush gpspm \
				--modes "$gpspm_modes"
			server_plain
			;;
		# the other ways of taking completions (the check profile)
		ours-event) tool ours "$ours" "$bench/rpma-bench" "${common[@]}" --wait event ;;
		ours-ng-poll) tool ours "$ours" "$bench/rpma-bench-ng" "${common[@]}" --wait poll-completion ;;
		ours-ng-wait) tool ours "$ours" "$bench/rpma-bench-ng" "${common[@]}" --wait completion ;;
		ours-untimed) tool ours "$ours" "$bench/rpma-bench" "${common[@]}" --wait event --untimed ;;
		esac
	} >"$f" 2>&1 || rc=1
	case "$2" in
	librpma) check_lib "$f" "$debian" || rc=1 ;;
	ours*) check_lib "$f" "$ours" || rc=1 ;;
	esac
	note "round $1 $2: $((SECONDS - t0)) s$([ $rc = 0 ] || echo ", FAILED (see $f)")"
	[ $rc = 0 ] || { failed=1; sed 's/^/  | /' "$f" | tail -n 20 >&2; }
}

# perftest over rdma_cm: one server and one client per size ------------------

# perf_one TOOL SIZE ITERS [ARGS...]: the client's output
perf_one() {
	local tool=$1 size=$2 iters=$3 slog
	shift 3
	port=$((port + 1))
	slog=$(mktemp)
	timeout 300 stdbuf -oL "$tool" -R -d "$dev" -p $port -n "$iters" -s "$size" "$@" >"$slog" 2>&1 &
	local spid=$!
	settle $port || { kill $spid; wait $spid; rm -f "$slog"; return 1; }
	timeout 300 stdbuf -oL "$tool" -R -d "$dev" -p $port -n "$iters" -s "$size" "$@" "$addr"
	local crc=$?
	wait $spid
	local src=$?
	[ $src = 0 ] || sed 's/^/server: /' "$slog"
	rm -f "$slog"
	return $((crc | src))
}

bytes() { # 4k -> 4096
	local s=$1
	case "$s" in
	*k) echo $((${s%k} * 1024)) ;;
	*m) echo $((${s%m} * 1048576)) ;;
	*) echo "$s" ;;
	esac
}

clamp() { # VALUE MIN MAX
	local v=$1
	[ "$v" -ge "$2" ] || v=$2
	[ "$v" -le "$3" ] || v=$3
	echo "$v"
}

# Rows: "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"
# and "#bytes #iterations BW_peak BW_average MsgRate[Mpps]"
perf_lat() { # MODE TOOL SIZE
	local size iters o
	size=$(bytes "$3")
	iters=$(clamp $((perf_bytes / 2 / size)) 20 1000)
	o=$(perf_one "$2" "$size" "$iters") || { echo "$o"; return 1; }
	awk -v m="$1" -v s="$size" '$1 == s && NF >= 9 && $2 ~ /^[0-9]+$/ {
		printf "result mode=%s size=%s iters=%s p50_us=%s p99_us=%s p999_us=%s avg_us=%s min_us=%s max_us=%s\n",
			m, $1, $2, $5, $8, $9, $6, $3, $4; found = 1 }
		END { exit !found }' <<<"$o" || { echo "$o"; return 1; }
}

perf_bw() { # SIZE
	local size iters o
	size=$(bytes "$1")
	iters=$(clamp $((perf_bytes / size)) 64 20000)
	# 64 writes outstanding, as rpma-bench's 4 flushes of 16 writes
	o=$(perf_one ib_write_bw "$size" "$iters" -t 64) || { echo "$o"; return 1; }
	# MsgRate x size: MB/s of 10^6 bytes, whatever unit perftest prints
	awk -v s="$size" '$1 == s && NF >= 5 && $2 ~ /^[0-9]+$/ {
		printf "result mode=perftest-write-bw size=%s iters=%s mb_s=%.2f bw_avg_reported=%s\n",
			$1, $2, $5 * $1, $4; found = 1 }
		END { exit !found }' <<<"$o" || { echo "$o"; return 1; }
}

perftest_all() {
	local s rc=0
	echo "library path=perftest"
	for s in ${perf_lat_sizes//,/ }; do perf_lat perftest-write-lat ib_write_lat "$s" || rc=1; done
	for s in ${perf_lat_sizes//,/ }; do perf_lat perftest-read-lat ib_read_lat "$s" || rc=1; done
	for s in ${perf_tput_sizes//,/ }; do perf_bw "$s" || rc=1; done
	return $rc
}

# the rounds ------------------------------------------------------------------
configs=(perftest librpma ours)
[ "$profile" = check ] && configs=(ours ours-event ours-ng-poll ours-ng-wait ours-untimed)
[ $have_batch = 1 ] && configs+=(ours-batch)
[ $have_gpspm = 1 ] && configs+=(ours-gpspm)
note "configurations: ${configs[*]}; $rounds round(s), profile $profile"
n=${#configs[@]}
for ((r = 1; r <= rounds; r++)); do
	for ((i = 0; i < n; i++)); do
		run_config $r "${configs[(i + r - 1) % n]}"
	done
done

# instruction counts ------------------------------------------------------------
# The client under callgrind (the provider and every other library of the
# process included); two runs that differ only in the number of operations,
# so that set-up and tear-down cancel in the difference. Completions are
# taken with the completion channel, so that no busy poll is counted.
cg_run() { # NAME LIBDIR BINARY OPS [ARGS...]
	local name=$1 libdir=$2 bin=$3 ops=$4 f
	shift 4
	f="$out/callgrind/$name-$ops"
	port=$((port + 1))
	LD_LIBRARY_PATH=$libdir timeout 600 "$server_bin" server --addr "$addr" --port $port \
		--connections 1 "${server_args[@]}" >"$f.server.txt" 2>&1 &
	local spid=$!
	settle $port || { kill $spid; wait $spid; return 1; }
	LD_LIBRARY_PATH=$libdir timeout 600 valgrind --tool=callgrind --callgrind-out-file="$f.out" \
		"$bin" client --addr "$addr" --port $port --untimed --iters "$ops" "$@" \
		>"$f.txt" 2>"$f.valgrind.txt"
	local crc=$?
	wait $spid
	local src=$?
	[ $crc = 0 ] && [ $src = 0 ] || { note "callgrind $name $ops: client $crc server $src"; return 1; }
	cat "$f.txt" "$f.server.txt" >"$f.both.txt"
	case "$name" in
	librpma*) check_lib "$f.both.txt" "$debian" ;;
	*) check_lib "$f.both.txt" "$ours" ;;
	esac
}

cg_pair() { # NAME LIBDIR BINARY OPS1 OPS2 ARGS...
	local name=$1 libdir=$2 bin=$3 n1=$4 n2=$5 t0=$SECONDS
	shift 5
	cg_run "$name" "$libdir" "$bin" "$n1" "$@" && cg_run "$name" "$libdir" "$bin" "$n2" "$@" ||
		failed=1
	echo "callgrind name=$name ops1=$n1 ops2=$n2 args=$*" >>"$out/callgrind/runs.txt"
	note "callgrind $name: $((SECONDS - t0)) s"
}

if [ "$callgrind" = 1 ]; then
	: >"$out/callgrind/runs.txt"
	lat=(--modes write-lat --lat-sizes 64 --warmup 20 --wait event)
	tput=(--modes write-tput --tput-sizes 4k --warmup 4 --wait event)
	cg_pair librpma-write64 "$debian" "$bench/rpma-bench" 50 300 "${lat[@]}"
	cg_pair ours-write64 "$ours" "$bench/rpma-bench" 50 300 "${lat[@]}"
	cg_pair ours-completion-write64 "$ours" "$bench/rpma-bench-ng" 50 300 \
		--modes write-lat --lat-sizes 64 --warmup 20 --wait completion
	[ $have_batch = 1 ] && cg_pair ours-batch-write64 "$ours" "$bench/rpma-bench-ng" 50 300 \
		"${lat[@]}" --post batch
	cg_pair librpma-pipe4k "$debian" "$bench/rpma-bench" 10 40 "${tput[@]}"
	cg_pair ours-pipe4k "$ours" "$bench/rpma-bench" 10 40 "${tput[@]}"
	[ $have_batch = 1 ] && cg_pair ours-batch-pipe4k "$ours" "$bench/rpma-bench-ng" 10 40 \
		"${tput[@]}" --post batch
	if [ $have_gpspm = 1 ]; then
		server_gpspm
		cg_pair ours-gpspm-write64 "$ours" "$bench/rpma-bench-ng" 50 300 "${lat[@]}" \
			--flush gpspm
		server_plain
	fi
fi

exit $failed
