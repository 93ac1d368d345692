#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/fresh/run.sh [--order demo-first|tests-first|both] [--keep]
#                           [--commit REV]
#
# README's two commands as a newcomer meets them: on a fresh Debian 12
# machine, as a user who is not root but may use sudo, from a fresh clone.
# For each order (both by default: ./demo.sh then ./test.sh, and
# ./test.sh then ./demo.sh):
#   1. makes a throwaway Debian 12 root with mmdebstrap (variant minbase,
#      plus sudo, git and ca-certificates: nothing of the project's), from
#      the Debian mirror this host's apt uses;
#   2. adds the user "newcomer", who may run anything through sudo;
#   3. clones this repository's REV (HEAD by default: what is committed,
#      not the work tree) into ~newcomer/rpma-ng;
#   4. runs README's two commands there, verbatim, as newcomer, in a login
#      shell, inside the root (chroot, private mount and PID namespaces:
#      whatever they leave running ends with them);
#   5. prints each command's exit status, time and last lines; the whole
#      outputs stay in the root's ~newcomer/*.log until it is removed.
# The roots are removed at the end unless --keep is given; the root of an
# order in which a command failed is kept, for its logs.
#
# It takes long (about an hour for both orders on 2 cores: two first
# ./test.sh runs) and is not part of ./test.sh. Needs root on this host
# (mmdebstrap, chroot, mounts; through sudo otherwise) and a few GB of disk
# under ${TMPDIR:-/var/tmp}.
#
# Exit status: 0 when every command succeeded, 1 otherwise, 2 on usage.

set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
order=both
keep=0
rev=HEAD
usage() { sed -n '3,4p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--order) [ $# -ge 2 ] || usage; order=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--commit) [ $# -ge 2 ] || usage; rev=$2; shift 2 ;;
	-h | --help) sed -n '3,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
done
case "$order" in
demo-first) orders=(demo-first) ;;
tests-first) orders=(tests-first) ;;
both) orders=(demo-first tests-first) ;;
*) usage ;;
esac

if [ "$(id -u)" != 0 ]; then
	exec sudo -- "$0" --order "$order" --commit "$rev" $([ "$keep" = 1 ] && echo --keep)
fi
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "fresh: $*"; }
die() { echo "fresh: error: $*" >&2; exit 1; }

commit=$(git -C "$top" rev-parse --verify "$rev^{commit}") || die "no commit $rev in $top"
if ! command -v mmdebstrap >/dev/null; then
	say "installing mmdebstrap"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap >/dev/null ||
		die "cannot install mmdebstrap"
fi

# the Debian 12 sources this host's apt uses (deb822 or one-line files)
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
	[ -f "$f" ] && grep -qs 'bookworm' "$f" && grep -qsE '/debian(-security)?/?( |$)' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || sources=(http://deb.debian.org/debian)

work=$(mktemp -d "${TMPDIR:-/var/tmp}/rpma-fresh.XXXXXX")
chmod 755 "$work"
say "commit $(git -C "$top" log -1 --format='%h %s' "$commit")"
say "work directory $work"

# in_fresh ROOT COMMAND: COMMAND (a bash script) as newcomer in a login
# shell inside ROOT, with /proc, /sys, /dev and a fresh /dev/shm; private
# mount and PID namespaces end every mount and process with it
in_fresh() {
	unshare --mount --pid --fork --kill-child --propagation private -- /bin/bash -c '
		set -e
		r=$1
		shift
		# the root a mount point of its own, as / is on a machine
		# (unshare --propagation needs it)
		mount --bind "$r" "$r"
		mount -t proc proc "$r/proc"
		mount -t sysfs sysfs "$r/sys"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
		exec chroot "$r" /usr/sbin/runuser -l newcomer -c "$1"' in_fresh "$@"
}

failed=0
report=()
for o in "${orders[@]}"; do
	root=$work/$o
	say "[$o] making a Debian 12 root in $root"
	t=$(date +%s)
	if ! mmdebstrap --variant=minbase --include=sudo,git,ca-certificates \
		bookworm "$root" "${sources[@]}" </dev/null >"$work/$o-mmdebstrap.log" 2>&1; then
		tail -n 20 "$work/$o-mmdebstrap.log" >&2
		die "mmdebstrap failed (log: $work/$o-mmdebstrap.log)"
	fi
	say "[$o] root made in $(($(date +%s) - t)) s"
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	# a machine resolves its own name (sudo asks)
	printf '127.0.1.1\t%s\n' "$(hostname)" >>"$root/etc/hosts"
	chroot "$root" /usr/sbin/useradd --create-home --shell /bin/bash newcomer
	echo 'newcomer ALL=(ALL:ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/newcomer"
	chmod 440 "$root/etc/sudoers.d/newcomer"
	# the clone: the committed state, owned by newcomer
	git clone -q --no-checkout "$top" "$root/home/newcomer/rpma-ng" || die "git clone failed"
	git -C "$root/home/newcomer/rpma-ng" checkout -q -B main "$commit" || die "git checkout failed"
	chroot "$root" chown -R newcomer:newcomer /home/newcomer/rpma-ng

	case "$o" in
	demo-first) cmds=(./demo.sh ./test.sh) ;;
	tests-first) cmds=(./test.sh ./demo.sh) ;;
	esac
	order_failed=0
	for c in "${cmds[@]}"; do
		log=$root/home/newcomer/${c#./}.log
		say "[$o] newcomer\$ cd ~/rpma-ng && $c   (output: $log)"
		t=$(date +%s)
		in_fresh "$root" "cd ~/rpma-ng && $c </dev/null >~/${c#./}.log 2>&1"
		rc=$?
		dt=$(($(date +%s) - t))
		line="[$o] $c: exit status $rc, $((dt / 60)) min $((dt % 60)) s"
		say "$line"
		tail -n 12 "$log" | sed 's/^/    | /'
		report+=("$line" "    last line: $(tail -n 1 "$log")")
		[ "$rc" = 0 ] || failed=1 order_failed=1
	done
	# a failed order's root stays, with its logs and build directories
	if [ "$keep" = 0 ] && [ "$order_failed" = 0 ]; then
		rm -rf --one-file-system "$root"
	fi
done

echo
say "summary (commit ${commit:0:12}, $(nproc) cores):"
printf '  %s\n' "${report[@]}"
if [ "$keep" = 0 ] && [ "$failed" = 0 ]; then
	rm -rf --one-file-system "$work"
else
	say "kept: $work"
fi
exit $failed
