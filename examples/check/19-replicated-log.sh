#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# 19-replicated-log: a writer and two replicas, each with memory of its own,
# all holding the same pre-shared key.
#   pmem: replica 1 declares direct write to pmem, replica 2 offers GPSPM
#   only; every record acknowledged and the same log in all three places
#   (same digest); replica 2 killed mid-stream is reported, the writer
#   goes on with the other; restarted, the replica reads its log back with
#   every checksum good, and the next writer run catches it up; with
#   --stop-on-failure the writer stops instead; a writer with another key
#   is refused; a peer that is not a replica is turned away.
#   dram: the writer insists on durability unless told --ack visible; a
#   writer with another key is refused and says so, and the replica logs
#   it. Over one provider only (every_step, lib.sh), what does not depend
#   on it: key files that cannot be used stop both programs (status 2);
#   --allow lets in the writer's address and no other; a replica that
#   never answers (stopped) is given up after --timeout; a writer killed
#   mid-stream and a hundred bad peers in a row (not writers, another
#   key, another version, a forged PROVE, a HELLO left open, peers killed
#   in the handshake; those that examples/check/raw-peer plays go from one
#   process) are each logged, and the replica serves the next good writer.
. "$(dirname "$0")/lib.sh"
ex=$BIN/19-replicated-log
p1=7419 p2=7420 p3=7421 p4=7422
[ -x "$ex/replica" ] || skip "19-replicated-log was not built (libsodium, libpmem2)"

# the key of the writers and replicas, another one, and one that others can read
key=$WORK/log.key other=$WORK/other.key open_key=$WORK/open.key
(umask 077 && head -c 40 /dev/urandom >"$key" && head -c 40 /dev/urandom >"$other")
head -c 40 /dev/urandom >"$open_key" && chmod 644 "$open_key"

# digest NAME: the last digest NAME printed
digest() { sed -n 's/.*digest \([0-9a-f]*\).*/\1/p' "$WORK/$1.out" | tail -n 1; }
same_digest() { # NAME...: all printed the same last digest
	local d0 d n
	d0=$(digest "$1")
	[ -n "$d0" ] || { fail "$1 printed no digest"; return; }
	for n in "${@:2}"; do
		d=$(digest "$n")
		[ "$d" = "$d0" ] || fail "$n's digest ${d:-(none)} differs from $1's $d0"
	done
}

if [ "$MODE" = dram ]; then
	if every_step; then
		# key files: refused before anything else, with the reason
		run nokey "$ex/replica" "$ADDR" $p1
		status_is nokey 2
		has nokey "--key FILE is required"
		run openkey "$ex/replica" --key "$open_key" "$ADDR" $p1
		status_is openkey 2
		has openkey "is open to its group or others (mode 644): chmod 600"
		run openkeyw "$ex/writer" --key "$open_key" "$ADDR:$p1"
		status_is openkeyw 2
		has openkeyw "is open to its group or others (mode 644)"
		(umask 077 && printf '%031d\n' 0 >"$WORK/short.key")
		run shortkey "$ex/replica" --key "$WORK/short.key" "$ADDR" $p1
		status_is shortkey 2
		has shortkey "has 31 bytes; a key has 32 to 1024"
		run nokeyfile "$ex/writer" --key "$WORK/none.key" "$ADDR:$p1"
		status_is nokeyfile 2
		has nokeyfile "cannot open the key file $WORK/none.key"
	fi

	start rep1 "$ex/replica" --key "$key" "$ADDR" $p1
	start rep2 "$ex/replica" --key "$key" "$ADDR" $p2
	listening rep1 && listening rep2
	# DRAM replicas cannot make a record durable: refused unless told
	run strict "$ex/writer" --key "$key" --records 10 "$ADDR:$p1" "$ADDR:$p2"
	status_is strict 1
	has strict "can make records visible, not durable"
	has strict "0 of 2 replicas usable"
	run writer "$ex/writer" --key "$key" --ack visible --records 500 --size 100 \
		"$ADDR:$p1" "$ADDR:$p2"
	ok writer
	has writer "no --log given: the writer's log is in DRAM"
	has writer "records reach visibility only"
	has writer "all 500 records acknowledged by all 2 replicas"
	# another key: the writer says so and sends nothing; the replica logs it
	run wrongkey "$ex/writer" --key "$other" --ack visible --records 10 "$ADDR:$p1"
	status_is wrongkey 1
	has wrongkey "replica 1 ($ADDR:$p1) holds another key"
	has wrongkey "0 of 1 replicas usable"
	lacks wrongkey "records acknowledged"
	wait_for rep1 "replica: refused $ADDR: it holds another key"
	stop rep1
	stop rep2
	ok rep1
	ok rep2
	has rep1 "holds 500 records"
	count rep1 "a writer connected from $ADDR" 2
	same_digest writer rep1 rep2
	# the rest is the command line and the handshake: as over the other
	# provider
	every_step || conclude

	# --allow: a replica that does not allow the writer's address refuses it
	# before it answers anything; one that allows it serves it
	start deny "$ex/replica" --key "$key" --allow 198.51.100.0/24 "$ADDR" $p3
	start admit "$ex/replica" --key "$key" --allow 2001:db8::/32 --allow "$ADDR/32" "$ADDR" $p4
	listening deny && listening admit
	run allowed "$ex/writer" --key "$key" --ack visible --records 20 "$ADDR:$p3" "$ADDR:$p4"
	ok allowed
	has allowed "replica 1 ($ADDR:$p3) turned us down"
	has allowed "replica 2 ($ADDR:$p4) is new"
	has allowed "all 20 records acknowledged by 1 replica"
	stop deny
	stop admit
	ok deny
	ok admit
	has deny "refused $ADDR: its address is outside every --allow rule"
	lacks deny "a writer connected"
	lacks admit "refused"
	has admit "holds 20 records"

	# a replica that never answers (stopped): each step of connecting
	# waits --timeout seconds at most, not the minutes the connection
	# manager retries
	start asleep "$ex/replica" --key "$key" "$ADDR" $p4
	listening asleep
	program_of asleep
	kill -STOP "$PROGRAM"
	t0=$(date +%s)
	run late "$ex/writer" --key "$key" --ack visible --records 1 --timeout 2 "$ADDR:$p4"
	waited=$(($(date +%s) - t0))
	kill -CONT "$PROGRAM"
	echo "# the writer gave up on a stopped replica after $waited s"
	status_is late 1
	has late "replica 1 ($ADDR:$p4) did not answer within 2 s (--timeout)"
	has late "0 of 1 replicas usable"
	[ "$waited" -le 10 ] || fail "the writer gave up on a silent replica after $waited s, not 2"
	stop asleep
	ok asleep

	# a good writer, then a writer killed mid-stream, then a hundred bad
	# peers in a row: the replica logs each and serves the next good writer
	wlog=$WORK/writer.log
	# (it lives through all of them: more than the 90 s a program gets)
	# the bad peers come from the good writers' address: exempt from
	# penalties here (tests/attack shows them from addresses of their own)
	LIMIT=240 start rep3 "$ex/replica" --key "$key" --penalty-exempt "$ADDR" "$ADDR" $p3
	listening rep3
	run good1 "$ex/writer" --key "$key" --new --log "$wlog" --ack visible --records 200 \
		"$ADDR:$p3"
	ok good1
	start killed "$ex/writer" --key "$key" --log "$wlog" --ack visible --records 5000 \
		--rate 1000 "$ADDR:$p3"
	if wait_for killed "500 of 5000 records acknowledged" 60; then
		stop killed KILL
		STATUS[killed]=killed
	fi
	# the replica saw it go and checked its log again (the third time)
	n=300
	while lines_with rep3 "every checksum good" && [ "$LINES_WITH" -lt 3 ] && [ $n -gt 0 ]; do
		pause 0.1
		n=$((n - 1))
	done
	count rep3 "every checksum good" 3
	count rep3 "a writer connected from $ADDR" 2

	# the handshake by hand, with the key (python3 computes the MACs): a
	# PROVE with a good challenge and a wrong MAC is refused, and so are
	# one whose MAC holds the key but binds other addresses (a relay's
	# from an address of its own) and one that binds another queue pair
	# (a relay's from the writer's address on a queue pair of its own);
	# with the right MAC it gets the descriptors, once: the same PROVE
	# again is refused
	magic=4c4f4757 # WRITER_MAGIC, little-endian
	label=rpma-replicated-log/6
	# ip16 ADDR: the address as the MAC binds it, 16 bytes in hex (an IPv4
	# one as ::ffff:a.b.c.d)
	ip16() {
		python3 -c 'import ipaddress, sys
a = ipaddress.ip_address(sys.argv[1])
if a.version == 4:
    a = ipaddress.IPv6Address("::ffff:" + str(a))
print(a.packed.hex())' "$1"
	}
	# both ends, raw-peer's and the replica's: here the same address
	ends="$(ip16 "$ADDR")$(ip16 "$ADDR")"
	elsewhere="$(ip16 192.0.2.99)$(ip16 "$ADDR")"
	# mac LABEL HEX...: HMAC-SHA-256 under the key over LABEL, its NUL
	# and the bytes, cut to 16 bytes (psk.h)
	mac() {
		python3 -c 'import hmac, hashlib, sys
key = open(sys.argv[1], "rb").read()
if key.endswith(b"\n"):
    key = key[:-2] if key.endswith(b"\r\n") else key[:-1]
msg = sys.argv[2].encode() + b"\0" + bytes.fromhex("".join(sys.argv[3:]))
print(hmac.new(key, msg, hashlib.sha256).hexdigest()[:32])' "$key" "$@"
	}
	# hello NAME NONCE: a HELLO that shows the key; its challenge, which
	# comes in the reject (no connection), in $challenge (not in a
	# subshell: it would run lib.sh's EXIT trap)
	hello() {
		run "$1" "$BIN/raw-peer" "$ADDR" $p3 \
			"${magic}06010000$2$(mac "$label/hello" "$2")" 0
		challenge=$(value "$1" '.*the answer: 4c4f47520601\(.*\)' | cut -c5-36)
		[ ${#challenge} = 32 ] || fail "the replica gave no challenge to $1"
	}
	# signed NAME CHALLENGE ENDS [QP_DELTA]: a PROVE of CHALLENGE that
	# raw-peer sends once it named its queue pair, its MAC over ENDS and
	# that number (plus QP_DELTA: another queue pair's); what it sent in
	# $signed_pdata
	signed() {
		local name=$1 qp= w pid n=300
		echo "\$ raw-peer $ADDR $p3 - 0   [$name]"
		mkfifo "$WORK/$name.in"
		timeout -k 5 "$LIMIT" "$BIN/raw-peer" "$ADDR" $p3 - 0 <"$WORK/$name.in" \
			>"$WORK/$name.out" 2>&1 &
		pid=$!
		exec {w}>"$WORK/$name.in"
		while [ -z "$qp" ] && [ $n -gt 0 ] && kill -0 $pid 2>/dev/null; do
			qp=$(value "$name" '^raw-peer: queue pair \([0-9]*\)$')
			[ -n "$qp" ] || pause 0.1
			n=$((n - 1))
		done
		if [ -n "$qp" ]; then
			qp=$(printf '%08x' $((qp + ${4:-0})))
			qp=${qp:6:2}${qp:4:2}${qp:2:2}${qp:0:2} # little-endian
			signed_pdata="${magic}06020000$2$(mac "$label/client" "$2" "$3" "$qp" \
				"${magic}06020000")"
			echo "$signed_pdata" >&"$w"
		fi
		exec {w}>&-
		wait $pid
		STATUS[$name]=$?
		[ -n "$qp" ] || fail "raw-peer named no queue pair for $name"
	}
	n1=$(head -c 16 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
	hello hello1 "$n1"
	c1=$challenge
	run badmac "$BIN/raw-peer" "$ADDR" $p3 \
		"${magic}06020000${c1}$(mac "$label/client" "$c1" "$ends" "${magic}0602")" 0
	status_is badmac 1
	wait_for rep3 "refused $ADDR: its proof does not match this replica's key and the"
	# mismatches N: until the replica logged N refusals of a proof, 5 s at most
	mismatches() {
		local n=50
		while lines_with rep3 "refused $ADDR: its proof does not match" &&
			[ "$LINES_WITH" -lt "$1" ] && [ $n -gt 0 ]; do
			pause 0.1
			n=$((n - 1))
		done
		[ "$LINES_WITH" = "$1" ] || fail "the replica did not log its refusal of the $2 PROVE"
	}
	signed relay "$c1" "$elsewhere"
	status_is relay 1
	mismatches 2 relayed
	signed relay_qp "$c1" "$ends" 1
	status_is relay_qp 1
	mismatches 3 "queue pair's"
	n2=$(head -c 16 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
	hello hello2 "$n2"
	c2=$challenge
	signed prove "$c2" "$ends"
	ok prove
	has prove "the answer: 4c4f47520602" # REPLICA_MAGIC, version 6, PROVE
	run replay "$BIN/raw-peer" "$ADDR" $p3 "$signed_pdata" 0
	status_is replay 1
	wait_for rep3 "refused $ADDR: its PROVE holds a challenge answered before"
	extra_refused=4 extra_connected=1

	# bad KIND CMD...: one bad peer, run to its end; its output in
	# $bad_out, its status in $bad_status
	bad() {
		local kind=$1 lines
		shift
		timeout -k 5 "$LIMIT" "$@" >"$WORK/$kind.out" 2>&1
		bad_status=$?
		mapfile -t lines <"$WORK/$kind.out"
		bad_out="${lines[*]}"
	}
	# expect KIND STATUS TEXT: bad peer $i, of KIND, ended so
	expect() {
		[ "$bad_status" = "$2" ] && [[ "$bad_out" == *"$3"* ]] && return
		unexpected=$((unexpected + 1))
		[ "$unexpected" -le 3 ] &&
			fail "bad peer $i ($1) exited with status $bad_status, expected $2 and \"$3\""
	}
	# raw KIND HEX SECONDS TEXT: a bad peer that raw-peer plays, turned
	# down with TEXT; they go one after another from one raw-peer process
	# after the others (in the VM a process costs more than a connection)
	raw_args=() raw_kind=() raw_i=() raw_text=()
	raw() {
		raw_args+=("$2" "$3") raw_kind+=("$1") raw_i+=("$i") raw_text+=("$4")
	}
	# 32 random bytes for each peer, in hex: its nonce or challenge, and MAC
	# (no process substitution: the VM has no /dev/fd)
	mapfile -t random <<<"$(head -c 3200 /dev/urandom | od -An -v -tx1 -w32 | tr -d ' ')"
	[ "${#random[@]}" = 100 ] || fail "no random bytes for the bad peers"
	t0=$(date +%s)
	unexpected=0
	for i in $(seq 100); do
		kind=hello
		case $((i % 10)) in
		0 | 5) kind=notwriter ;;
		1 | 6) kind=forged ;;
		3) kind=version2 ;;
		8) kind=nostep ;;
		4) if [ $((i % 20)) = 4 ]; then kind=otherkey; fi ;;
		9) if [ "$i" = 49 ]; then kind=silent; elif [ $((i % 20)) = 9 ]; then kind=killed; fi ;;
		esac
		case $kind in
		notwriter) # not a writer at all
			bad notwriter "$BIN/01-connection/client" "$ADDR" $p3 \
				"Hello, replica! I am not a writer, but let me in."
			expect notwriter 1 "cannot connect" ;;
		forged) # a PROVE with a challenge the replica never gave
			raw forged "${magic}06020000${random[i - 1]}" 0 "turned down" ;;
		hello) # a HELLO made without the key: answered in a reject, and logged
			raw hello "${magic}06010000${random[i - 1]}" 0 "the answer: 4c4f47520601" ;;
		version2) # a writer of protocol version 2
			raw version2 "${magic}02000000${random[i - 1]}" 0 "turned down" ;;
		nostep) # a step that does not exist
			raw nostep "${magic}06090000${random[i - 1]}" 0 "turned down" ;;
		otherkey) # a writer with another key
			bad otherkey "$ex/writer" --key "$other" --ack visible --records 1 "$ADDR:$p3"
			expect otherkey 1 "holds another key" ;;
		silent | killed) # a HELLO that would stay: it gets no connection to hold
			raw "$kind" "${magic}06010000${random[i - 1]}" 30 "the answer: 4c4f47520601" ;;
		esac
	done
	# the raw peers: "peer N: " before each line of the Nth, its last line
	# "peer N: status S"
	timeout -k 5 "$LIMIT" "$BIN/raw-peer" "$ADDR" $p3 "${raw_args[@]}" >"$WORK/raw.out" 2>&1 ||
		fail "raw-peer ended with status $? (${#raw_kind[@]} bad peers)"
	mapfile -t raw_lines <"$WORK/raw.out"
	k=0 bad_out=
	for line in "${raw_lines[@]}"; do
		case $line in
		"peer $((k + 1)): status "*)
			bad_status=${line##* } i=${raw_i[k]}
			expect "${raw_kind[k]}" 1 "${raw_text[k]}"
			k=$((k + 1)) bad_out= ;;
		"peer $((k + 1)): "*) bad_out+=" ${line#"peer $((k + 1)): "}" ;;
		esac
	done
	[ "$k" = "${#raw_kind[@]}" ] || fail "raw-peer told of $k of its ${#raw_kind[@]} bad peers"
	echo "# 100 bad peers in $(($(date +%s) - t0)) s; $unexpected ended unexpectedly"
	[ "$unexpected" = 0 ] || fail "$unexpected bad peers ended unexpectedly"
	kill -0 "${PID[rep3]:-}" 2>/dev/null || fail "the replica did not outlive the bad peers"

	run good2 "$ex/writer" --key "$key" --log "$wlog" --ack visible --records 100 "$ADDR:$p3"
	ok good2
	# the killed writer may have appended records that it did not send
	has good2 "all 100 records acknowledged by 1 replica"
	stop rep3
	ok rep3
	same_digest good2 rep3
	records=$(value good2 '.*the log holds \([0-9]*\) records.*')
	[ -n "$records" ] && [ "$records" -ge 800 ] ||
		fail "the writer's log holds ${records:-no} records, expected at least 800"
	has rep3 "holds $records records"
	# each bad peer logged with its reason
	count rep3 "refused $ADDR: it is not a log writer (its request does not start" 20
	count rep3 "refused $ADDR: its PROVE holds a challenge not given here" 20
	count rep3 "refused $ADDR: its PROVE holds a challenge answered before" 1
	count rep3 "refused $ADDR: its proof does not match this replica's key" 3
	count rep3 "refused $ADDR: it holds another key" 40
	count rep3 "refused $ADDR: it is a log writer of protocol version 2" 10
	count rep3 "refused $ADDR: its request is neither a HELLO nor a PROVE" 10
	count rep3 "refused $ADDR: it kept the connection of its HELLO open" 0
	count rep3 "replica: refused" $((100 + extra_refused))
	count rep3 "a writer connected from $ADDR" $((3 + extra_connected))
	conclude
fi
# bash leaves a block whose expansion fails (an unset variable) and goes
# on with the next command: here, not a pass
if [ "$MODE" = dram ]; then
	fail "the dram checks broke off before their end (see the shell's message above)"
	conclude
fi

log=$(pmem_area 0) || exit 77
pm1=$(pmem_area 1) || exit 77
pm2=$(pmem_area 2) || exit 77

# 1. two fresh replicas, a new log
start rep1 "$ex/replica" --key "$key" --direct-write-to-pmem --format "$ADDR" $p1 "$pm1"
start rep2 "$ex/replica" --key "$key" --format "$ADDR" $p2 "$pm2"
listening rep1 && listening rep2
run first "$ex/writer" --key "$key" --new --log "$log" --records 300 --size 256 \
	"$ADDR:$p1" "$ADDR:$p2"
ok first
has first "replica 1 ($ADDR:$p1) is new"
has first "replica 1 ($ADDR:$p1): records reach persistence there by a read after the writes"
has first "replica 2 ($ADDR:$p2): records reach persistence there by GPSPM"
has rep2 "persistence by GPSPM"
has first "all 300 records acknowledged by all 2 replicas"
wait_for rep2 "holds 300 records"
same_digest first rep1 rep2

# 2. replica 2 is killed mid-stream: reported, the writer goes on (the
# stream lasts 6 s, time enough for the kill to land in it on a busy host)
start second "$ex/writer" --key "$key" --log "$log" --records 3000 --size 256 --rate 500 \
	"$ADDR:$p1" "$ADDR:$p2"
if wait_for second "300 of 3000 records acknowledged by 2 replicas" 60; then
	stop rep2 KILL
	STATUS[rep2]=killed
fi
finish second
status_is second 3
has second "replica 2 ($ADDR:$p2) FAILED"
has second "all 3000 records acknowledged, by 1 of the 2 replicas"
has second "holds 3300 records"
lacks second "STOPPED"

# 3. restarted, replica 2 checks what it had; the next run catches it up
start rep2b "$ex/replica" --key "$key" "$ADDR" $p2 "$pm2"
listening rep2b
has rep2b "every checksum good"
kept=$(value rep2b '.*holds \([0-9]*\) records.*')
[ -n "$kept" ] && [ "$kept" -ge 600 ] && [ "$kept" -lt 3300 ] ||
	fail "the restarted replica holds ${kept:-no} records, expected 600 to 3299"
run third "$ex/writer" --key "$key" --log "$log" --records 100 "$ADDR:$p1" "$ADDR:$p2"
ok third
has third "replica 2 ($ADDR:$p2) lacks "
has third "replica 1 ($ADDR:$p1) is up to date"
has third "all 100 records acknowledged by all 2 replicas"
wait_for rep2b "holds 3400 records"
wait_for rep1 "holds 3400 records"
same_digest third rep1 rep2b

# 4. --stop-on-failure: the writer stops when replica 2 goes (a stream of
# 20 s that the kill cuts short)
start fourth "$ex/writer" --key "$key" --log "$log" --records 10000 --rate 500 \
	--stop-on-failure "$ADDR:$p1" "$ADDR:$p2"
if wait_for fourth "1000 of 10000 records acknowledged" 60; then
	stop rep2b KILL
	STATUS[rep2b]=killed
fi
finish fourth
status_is fourth 1
has fourth "replica 2 ($ADDR:$p2) FAILED"
has fourth "STOPPED"

# 5. a writer with another key gets nothing from replica 1, which goes on
run wrongkey "$ex/writer" --key "$other" --log "$log" --records 1 "$ADDR:$p1"
status_is wrongkey 1
has wrongkey "replica 1 ($ADDR:$p1) holds another key"
wait_for rep1 "replica: refused $ADDR: it holds another key"
stop rep1
ok rep1
# what the writer stopped with is on replica 1 too, all of it checked
has rep1 "every checksum good"
same_digest fourth rep1

# 6. a peer that is not a replica
start other "$BIN/01-connection/server" "$ADDR" $p2
listening other && run wrong "$ex/writer" --key "$key" --log "$log" --records 1 "$ADDR:$p2"
status_is wrong 1
has wrong "replica 1 ($ADDR:$p2) is not a log replica"
has wrong "not starting"
conclude
