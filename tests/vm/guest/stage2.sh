#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Stage 2 of the test VM: PID 1 on the host's userspace (see init.sh).
# usage (by init.sh): stage2.sh JOBDIR
#
# JOBDIR/conf   shell assignments: PROVIDER (rxe|siw|none), PMEM (0|1),
#               PMEM_KIND (legacy: memmap= e820 pmem; nvdimm: QEMU's
#               emulated NVDIMM, described by ACPI NFIT), PMEM_COUNT (how
#               many separate areas: one region each), TIMEOUT (s), CWD,
#               ADDR; for a cluster guest (tests/vm/cluster.sh) also NIC=1
#               (the device goes on the virtio NIC eth0, ADDR/24, instead of
#               a dummy netdev), PMEM_KEPT=1 (the NVDIMM already holds a
#               device DAX namespace from an earlier boot: keep it as it
#               is) and AGENT=1 (serve commands, below)
# JOBDIR/env    exports forwarded from the host
# JOBDIR/cmd    the command (a bash script)
# Results: JOBDIR/ready (made when the command starts: the boot went well),
#          JOBDIR/result (RC=, T_BOOT=, T_READY=, T_END= guest uptimes),
#          JOBDIR/setup.log (what the RDMA/pmem set-up printed).
# The command's stdout goes to /dev/hvc0 and its stderr to /dev/hvc1, which
# QEMU forwards to its own stdout and stderr.
# With AGENT=1 there is no JOBDIR/cmd: the guest runs every script the host
# drops into JOBDIR/q as N.cmd (renamed to N.run when taken), each in the
# background, with its stdout in N.out, its stderr in N.err and its exit
# status written last to N.rc, until a script named stop.cmd appears.

JOB=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
# Under TCG every new process costs ~0.1-0.2 s: the set-up below sticks to
# bash builtins where it can and starts as few programs as possible.
uptime_s() {
	local up _
	read -r up _ </proc/uptime
	echo "$up"
}
T_BOOT=$(uptime_s)

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}

# raw: no "\n" -> "\r\n" conversion, no echo
exec 3>/dev/hvc0 4>/dev/hvc1
for t in /dev/hvc0 /dev/hvc1; do
	stty -F "$t" raw -echo 2>/dev/null
done

PROVIDER=rxe PMEM=0 PMEM_KIND=legacy PMEM_COUNT=1 TIMEOUT=600 CWD=/ ADDR=192.0.2.1
NIC=0 PMEM_KEPT=0 AGENT=0
SILENT_NET=198.51.100.0/24 SILENT_ADDR=198.51.100.1
. "$JOB/conf"

ulimit -l unlimited # memory registration pins pages
ulimit -n 65536
ulimit -c 0

log() { echo "rpma-vm guest: $*"; }

# a descriptor that never has data: `read -t` on it is a builtin sleep
# (process substitution needs /dev/fd, which only udev would have made)
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
exec 7<> <(:)
nap() { read -r -t "${1:-0.02}" -u 7 _; }

# wait_for SECONDS TEST... : poll until TEST succeeds
wait_for() {
	local n=$(($1 * 50))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		nap
	done
}

file_has() { # FILE WORD
	local line
	[ -r "$1" ] || return 1
	read -r line <"$1" 2>/dev/null || return 1
	[[ "$line" == *"$2"* ]]
}
port_active() { file_has "/sys/class/infiniband/$1/ports/1/state" ACTIVE; }
# the IPv4-mapped GID of ADDR shows up in the port's GID table
has_gid() {
	local g line want
	printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ADDR//./ }
	for g in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		read -r line <"$g" 2>/dev/null && [ "$line" = "$want" ] && return 0
	done
	return 1
}

DEV=
rdma_pmem_up() {
	local mod='' type='' mods=()
	case "$PROVIDER" in
	rxe) mod=rdma_rxe type=rxe DEV=rxe0 ;;
	siw) mod=siw type=siw DEV=siw0 ;;
	none) ;;
	*) log "unknown provider $PROVIDER"; return 1 ;;
	esac
	# dummy's default numdummies=1 creates dummy0 on load
	[ -n "$mod" ] && mods+=(rdma_ucm dummy "$mod")
	[ "$NIC" = 1 ] && mods+=(virtio_net sch_netem)
	if [ "$PMEM" = 1 ]; then
		case "$PMEM_KIND" in
		nvdimm) mods+=(nfit nd_pmem dax_pmem device_dax) ;;
		*) mods+=(nd_e820 nd_pmem dax_pmem device_dax) ;;
		esac
	fi
	if [ ${#mods[@]} -gt 0 ]; then
		modprobe -a "${mods[@]}" || { log "cannot load ${mods[*]}"; return 1; }
	fi
	local nd_pids=() i
	if [ "$PMEM" = 1 ]; then
		# one region, and one namespace, per area
		for ((i = 0; i < PMEM_COUNT; i++)); do
			wait_for 10 test -e /sys/bus/nd/devices/namespace$i.0 ||
				{ log "no emulated pmem ($PMEM_KIND: no namespace$i.0)"; return 1; }
			# a kept NVDIMM comes up as device DAX by itself: its info
			# block says so; making the namespace again could lose data
			if [ "$PMEM_KEPT" != 1 ] && [ ! -e /dev/dax$i.0 ]; then
				ndctl create-namespace -f -e namespace$i.0 -m devdax >/dev/null &
				nd_pids+=($!)
			fi
		done
	fi
	local netdev=dummy0
	if [ -n "$mod" ] && [ "$NIC" = 1 ]; then
		# a machine of a cluster: its own address on the shared segment
		netdev=eth0
		wait_for 10 test -e /sys/class/net/eth0 || { log "no eth0"; return 1; }
		ip -batch - <<<"addr add $ADDR/24 dev eth0"$'\n'"link set eth0 up" || return 1
	elif [ -n "$mod" ]; then
		# rdma_cm does not resolve routes on lo: a dummy netdev carries ADDR
		local cmds="addr add $ADDR/32 dev dummy0"$'\n'"link set dummy0 up"
		[ -e /sys/class/net/dummy0 ] || cmds="link add dummy0 type dummy"$'\n'"$cmds"
		ip -batch - <<<"$cmds" || return 1
	fi
	if [ -n "$mod" ]; then
		# an address nobody answers for, on a link that asks (ARP): resolving
		# it can only time out (rpma_conn_cfg_set_timeout)
		ip -batch - <<<"link add dummy1 type dummy"$'\n'"link set dummy1 arp on up"$'\n'"route add $SILENT_NET dev dummy1" ||
			return 1
		rdma link add "$DEV" type "$type" netdev "$netdev" || return 1
		wait_for 10 port_active "$DEV" || { log "$DEV port not active"; return 1; }
		if [ "$type" = rxe ]; then
			wait_for 10 has_gid "$DEV" || { log "$DEV has no GID for $ADDR"; return 1; }
		fi
	fi
	for i in "${nd_pids[@]}"; do
		wait "$i" || { log "ndctl create-namespace failed"; return 1; }
	done
	if [ "$PMEM" = 1 ]; then
		for ((i = 0; i < PMEM_COUNT; i++)); do
			wait_for 10 test -c /dev/dax$i.0 || { log "no /dev/dax$i.0"; return 1; }
		done
	fi
	return 0
}

# serve: the agent of a cluster guest (AGENT=1, see the top). Each script
# runs in the background so that a server and a client, or a program and
# the command that kills it, can run at once; the status goes to N.rc
# last, through a rename, so that the host never reads half of it.
serve() {
	local q=$JOB/q f n idle=0
	mkdir -p "$q"
	while :; do
		idle=$((idle + 1))
		for f in "$q"/*.cmd; do
			[ -e "$f" ] || continue
			idle=0
			n=${f##*/}
			n=${n%.cmd}
			[ "$n" = stop ] && return 0
			mv "$f" "$q/$n.run" || continue
			(
				/bin/bash "$q/$n.run" >"$q/$n.out" 2>"$q/$n.err" </dev/null
				echo $? >"$q/$n.rc.tmp"
				mv "$q/$n.rc.tmp" "$q/$n.rc"
			) &
		done
		# each look at the directory costs the guest about 5 ms: every
		# 20 ms while commands come, every 100 ms after a second without
		# one (the programs it started run meanwhile, and the other
		# guest, on the same two cores, gets the time)
		if [ $idle -lt 50 ]; then nap; else nap 0.1; fi
	done
}

RC=125
if rdma_pmem_up >"$JOB/setup.log" 2>&1; then
	T_READY=$(uptime_s)
	# the boot went well: from here on the host retries nothing
	: >"$JOB/ready"
	(
		[ -r "$JOB/env" ] && . "$JOB/env"
		export RPMA_TEST_ADDR=$ADDR RPMA_TEST_PROVIDER=$PROVIDER
		[ -n "$DEV" ] && export RPMA_TEST_DEVICE=$DEV RPMA_TEST_SILENT_ADDR=$SILENT_ADDR
		if [ "$PMEM" = 1 ]; then
			export RPMA_TEST_PMEM=/dev/dax0.0
			all=/dev/dax0.0
			for ((i = 1; i < PMEM_COUNT; i++)); do all="$all /dev/dax$i.0"; done
			export RPMA_TEST_PMEM_ALL=$all
		fi
		cd "$CWD" 2>/dev/null || cd /
		if [ "$AGENT" = 1 ]; then
			export -f serve nap
			export JOB
			exec timeout -k 5 "$TIMEOUT" /bin/bash -c serve
		fi
		exec timeout -k 5 "$TIMEOUT" /bin/bash "$JOB/cmd"
	) </dev/null >&3 2>&4
	RC=$?
	[ $RC = 124 ] && echo "rpma-vm guest: the command timed out after $TIMEOUT s" >&4
else
	T_READY=$(uptime_s)
	{
		log "RDMA/pmem set-up in the guest failed:"
		sed 's/^/  /' "$JOB/setup.log"
	} >&4
fi
T_END=$(uptime_s)
# the host reads it after QEMU has exited
printf 'RC=%s\nT_BOOT=%s\nT_READY=%s\nT_END=%s\n' "$RC" "$T_BOOT" "$T_READY" "$T_END" >"$JOB/result"
poweroff_now
