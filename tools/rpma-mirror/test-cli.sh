#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: test-cli.sh RPMA_MIRROR VERSION
#
# rpma-mirror's command line, on the host (no RDMA needed: every case ends
# before a device is opened, or where the lack of one is the expected
# trouble): help and version on standard output with status 0, strict
# sizes, the options of one mode refused in the other, the key file's
# rules, endpoints, and status 2 with a message for every mistake.
set -u
mirror=$1
version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 cases=0

fail() {
	echo "FAILED: $*"
	failures=$((failures + 1))
}

# expect STATUS STREAM TEXT -- ARGS...: rpma-mirror ARGS exits with STATUS
# and prints TEXT (a fixed string) on STREAM (out or err)
expect() {
	local status=$1 stream=$2 text=$3 got
	shift 4
	cases=$((cases + 1))
	"$mirror" "$@" >"$work/out" 2>"$work/err"
	got=$?
	[ "$got" = "$status" ] || fail "rpma-mirror $* exited with $got, expected $status"
	grep -qF -- "$text" "$work/$stream" ||
		fail "rpma-mirror $* did not print \"$text\" on std$stream: $(cat "$work/$stream")"
}

(umask 077 && head -c 32 /dev/urandom >"$work/key")
printf 'too short\n' >"$work/short.key" && chmod 600 "$work/short.key"
head -c 32 /dev/urandom >"$work/open.key" && chmod 644 "$work/open.key"
head -c 2000 /dev/zero >"$work/long.key" && chmod 600 "$work/long.key"
echo data >"$work/src"
k=(-k "$work/key")

# help and version: standard output, status 0, nothing on standard error
for h in -h --help; do
	expect 0 out "usage: rpma-mirror [options] -k KEYFILE SOURCE ADDR:PORT" -- $h
	[ -s "$work/err" ] && fail "$h wrote to standard error"
done
for v in -V --version; do
	expect 0 out "rpma-mirror (rpma-ng) $version" -- $v
done

# mistakes: status 2 and a message
expect 2 err "-x is not an option" -- -x
expect 2 err "--chunk needs a value" -- "${k[@]}" --chunk
expect 2 err "usage:" -- "${k[@]}" "$work/src"
expect 2 err "a key is needed on both sides" -- "$work/src" 192.0.2.1:7700
expect 2 err "--chunk is the client's option, not the server's" -- \
	--serve "${k[@]}" --chunk 4K 192.0.2.1:7700 "$work/src"
expect 2 err "--json is the client's option" -- --serve "${k[@]}" --json 192.0.2.1:7700 "$work/src"
expect 2 err "--once is the server's option" -- "${k[@]}" --once "$work/src" 192.0.2.1:7700
expect 2 err "--allow is the server's option" -- "${k[@]}" --allow 192.0.2.0/24 "$work/src" 192.0.2.1:7700
for bad in 8x 0 17 -1 " 8" 0x8 8K; do
	expect 2 err "--window takes 1 to 16, not $bad" -- "${k[@]}" --window "$bad" "$work/src" 192.0.2.1:7700
done
for bad in 1M5 2K 128M 1.5M 1MB "" M -4K 18446744073709551615K; do
	expect 2 err "--chunk takes 4K to 64M, not $bad" -- "${k[@]}" --chunk "$bad" "$work/src" 192.0.2.1:7700
done
for bad in 0 1.5M 10Q fast; do
	expect 2 err "--limit takes bytes a second" -- "${k[@]}" --limit "$bad" "$work/src" 192.0.2.1:7700
done
for bad in 300.1.1.1 192.0.2.0/33 2001:db8::/129 host.example.org 192.0.2.0/ /24 192.0.2.0/2x; do
	expect 2 err "--allow takes ADDR or ADDR/PREFIX" -- --serve "${k[@]}" --allow "$bad" 192.0.2.1:7700 "$work/src"
done
for bad in 2001:db8::1:7700 '[2001:db8::1]7700' '[2001:db8::1]:' '[]:7700' 192.0.2.1 :7700 192.0.2.1:; do
	expect 2 err "is not ADDR:PORT" -- "${k[@]}" "$work/src" "$bad"
done

# the key file: a regular file, 16 to 1024 bytes, closed to group and others
expect 2 err "the key file $work/open.key is open to its group or others (mode 644): chmod 600" -- \
	-k "$work/open.key" "$work/src" 192.0.2.1:7700
expect 2 err "the key in $work/short.key has 9 bytes; a key has 16 to 1024" -- \
	-k "$work/short.key" "$work/src" 192.0.2.1:7700
expect 2 err "has more than 1024 bytes" -- -k "$work/long.key" "$work/src" 192.0.2.1:7700
expect 2 err "cannot open the key file $work/none.key" -- -k "$work/none.key" "$work/src" 192.0.2.1:7700
expect 2 err "is not a regular file" -- -k "$work" "$work/src" 192.0.2.1:7700
ln -s "$work/key" "$work/link.key"
expect 2 err "the key file $work/link.key is a symbolic link" -- -k "$work/link.key" "$work/src" 192.0.2.1:7700
# one trailing newline (or CRLF) is not part of the key: 15 bytes and a
# newline are too few, 16 and CRLF are enough
printf '%015d\n' 0 >"$work/nl.key" && chmod 600 "$work/nl.key"
expect 2 err "the key in $work/nl.key has 15 bytes" -- -k "$work/nl.key" "$work/src" 192.0.2.1:7700
printf '%016d\r\n' 0 >"$work/crlf.key" && chmod 600 "$work/crlf.key"
expect 2 err "cannot open $work/none" -- -k "$work/crlf.key" "$work/none" 192.0.2.1:7700

# what parses goes on to the work itself: strict sizes with suffixes, an
# IPv6 endpoint in brackets, and a missing source is trouble (2)
expect 2 err "cannot open $work/none: No such file or directory" -- \
	"${k[@]}" --chunk 64M --window 16 --limit 1G "$work/none" '[2001:db8::1]:7700'
expect 2 err "cannot open the target $work/none" -- \
	--serve "${k[@]}" --allow 192.0.2.0/24 --allow 2001:db8::/32 --once '[2001:db8::1]:7700' "$work/none"

echo "$cases cases, $failures failed"
[ "$failures" -eq 0 ]
