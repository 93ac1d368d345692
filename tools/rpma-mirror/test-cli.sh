#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: test-cli.sh RPMA_MIRROR VERSION MAN_PAGE
#
# rpma-mirror's command line, on the host (no RDMA needed: every case ends
# before a device is opened, or where the lack of one is the expected
# trouble): help and version on standard output with status 0, strict
# sizes, the options of one mode refused in the other, the key file's
# rules, endpoints and ports, operands missing or too many, and status 2
# with a message that says what is wrong for every mistake; and the usage
# that --help prints names the forms and the options as rpma-mirror(1)'s
# SYNOPSIS and OPTIONS do.
set -u
mirror=$1
version=$2
page=$3
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

"$mirror" --make-key "$work/key" || fail "--make-key failed"
printf '%031d\n' 0 >"$work/short.key" && chmod 600 "$work/short.key"
head -c 40 /dev/urandom >"$work/open.key" && chmod 644 "$work/open.key"
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

# the usage and the manual page say the same
cases=$((cases + 1))
"$mirror" --help >"$work/help"
python3 - "$work/help" "$page" >"$work/compare" 2>&1 <<'PY' || fail "--help and $page differ: $(cat "$work/compare")"
import re, sys

help_text = open(sys.argv[1]).read().splitlines()
page = open(sys.argv[2]).read()


def plain(roff):
    """roff text as printed: fonts and escapes out, macro arguments joined"""
    m = re.match(r'^\.(B|BI|BR|I|IR|RB)\s+(.*)$', roff)
    if m:
        args = re.findall(r'"([^"]*)"|(\S+)', m.group(2))
        roff = ('' if m.group(1) != 'B' else ' ').join(a or b for a, b in args)
    roff = re.sub(r'\\f[BIRP]', '', roff).replace('\\-', '-').replace('\\&', '')
    return ' '.join(roff.split())


synopsis = page.split('.SH SYNOPSIS', 1)[1].split('\n.SH ', 1)[0]
synopsis = synopsis.replace('\\\n', ' ')
forms = [plain(line) for line in synopsis.splitlines()
         if line.strip() and not line.startswith('.')]
usage = [re.sub(r'^(usage:)?\s+', '', line) for line in help_text[:3]]
problems = []
if forms != usage:
    problems.append('the forms: --help says %s, SYNOPSIS says %s' % (usage, forms))

options_section = page.split('.SH OPTIONS', 1)[1].split('\n.SH ', 1)[0].splitlines()
in_page = {plain(options_section[i + 1]) for i, line in enumerate(options_section)
           if line == '.TP' and plain(options_section[i + 1]).startswith('-')}
in_help = {m.group(1) for line in help_text
           for m in [re.match(r'^\s+(-\S.*?)(?:\s{2,}|$)', line)] if m}
for o in sorted(in_help - in_page):
    problems.append('--help has "%s", OPTIONS does not' % o)
for o in sorted(in_page - in_help):
    problems.append('OPTIONS has "%s", --help does not' % o)
print('; '.join(problems))
sys.exit(1 if problems else 0)
PY

# mistakes: status 2 and a message
expect 2 err "-x is not an option" -- -x
expect 2 err "--chunk needs a value" -- "${k[@]}" --chunk
# the operands: each mistake says what is wrong, then the usage
expect 2 err "SOURCE and ADDR:PORT are missing" --
expect 2 err "usage:" --
expect 2 err "ADDR:PORT and TARGET are missing" -- --serve "${k[@]}"
expect 2 err "a client takes SOURCE and ADDR:PORT, and only $work/src was given" -- \
	"${k[@]}" "$work/src"
expect 2 err "usage:" -- "${k[@]}" "$work/src"
expect 2 err "--serve takes ADDR:PORT and TARGET, and only 192.0.2.1:7700 was given" -- \
	--serve "${k[@]}" 192.0.2.1:7700
expect 2 err "a client takes SOURCE and ADDR:PORT, not 3 operands (the first one too many: extra)" -- \
	"${k[@]}" "$work/src" 192.0.2.1:7700 extra
# ports: a number from 1 to 65535, checked before anything is opened
for bad in 99999 0 65536 http 77x -1 +7700; do
	expect 2 err "192.0.2.1:$bad: the port must be a number from 1 to 65535, not $bad" -- \
		"${k[@]}" "$work/src" "192.0.2.1:$bad"
done
expect 2 err "[2001:db8::1]:99999: the port must be a number from 1 to 65535" -- \
	--serve "${k[@]}" '[2001:db8::1]:99999' "$work/src"
expect 2 err "a key is needed on both sides" -- "$work/src" 192.0.2.1:7700
expect 2 err "--chunk is the client's option, not the server's" -- \
	--serve "${k[@]}" --chunk 4K 192.0.2.1:7700 "$work/src"
expect 2 err "--json is the client's option" -- --serve "${k[@]}" --json 192.0.2.1:7700 "$work/src"
expect 2 err "--once is the server's option" -- "${k[@]}" --once "$work/src" 192.0.2.1:7700
expect 2 err "--allow is the server's option" -- "${k[@]}" --allow 192.0.2.0/24 "$work/src" 192.0.2.1:7700
expect 2 err "--penalty-exempt is the server's option" -- "${k[@]}" --penalty-exempt 192.0.2.1 "$work/src" 192.0.2.1:7700
expect 2 err "--penalty-exempt takes ADDR or ADDR/PREFIX" -- --serve "${k[@]}" --penalty-exempt 192.0.2.0/33 192.0.2.1:7700 "$work/src"
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

# the key file: a regular file, 32 to 1024 bytes, closed to group and others
expect 2 err "the key file $work/open.key is open to its group or others (mode 644): chmod 600" -- \
	-k "$work/open.key" "$work/src" 192.0.2.1:7700
expect 2 err "the key in $work/short.key has 31 bytes; a key has 32 to 1024" -- \
	-k "$work/short.key" "$work/src" 192.0.2.1:7700
# a FIFO is refused at once (opened without blocking, checked on the descriptor)
mkfifo -m 600 "$work/fifo.key"
cases=$((cases + 1))
timeout 10 "$mirror" -k "$work/fifo.key" "$work/src" 192.0.2.1:7700 >"$work/out" 2>"$work/err"
[ $? = 2 ] && grep -qF "the key file $work/fifo.key is not a regular file" "$work/err" ||
	fail "a FIFO as the key file: $(cat "$work/err")"
# the server reads its key the same way, before anything else
cases=$((cases + 1))
timeout 10 "$mirror" -k "$work/fifo.key" --serve 192.0.2.1:7700 "$work/src" >"$work/out" 2>"$work/err"
[ $? = 2 ] && grep -qF "the key file $work/fifo.key is not a regular file" "$work/err" ||
	fail "a FIFO as the server's key file: $(cat "$work/err")"
expect 2 err "the key in $work/short.key has 31 bytes; a key has 32 to 1024" -- \
	--serve -k "$work/short.key" 192.0.2.1:7700 "$work/src"
# --make-key: 64 hexadecimal digits and a newline, mode 600, never over a file
cases=$((cases + 1))
[ "$(stat -c %a "$work/key")" = 600 ] || fail "--make-key made mode $(stat -c %a "$work/key")"
grep -qxE '[0-9a-f]{64}' "$work/key" && [ "$(wc -c <"$work/key")" = 65 ] ||
	fail "--make-key wrote: $(od -c "$work/key" | head -3)"
(umask 0 && "$mirror" --make-key "$work/key2") || fail "--make-key under umask 0 failed"
cases=$((cases + 1))
[ "$(stat -c %a "$work/key2")" = 600 ] || fail "--make-key under umask 0 made mode $(stat -c %a "$work/key2")"
cmp -s "$work/key" "$work/key2" && fail "two keys made are the same"
cp "$work/key" "$work/key.before"
expect 2 err "cannot make the key file $work/key: File exists (a key file is never overwritten)" -- \
	--make-key "$work/key"
cmp -s "$work/key" "$work/key.before" || fail "--make-key changed an existing file"
expect 2 err "--make-key needs a value" -- --make-key
expect 2 err "has more than 1024 bytes" -- -k "$work/long.key" "$work/src" 192.0.2.1:7700
expect 2 err "cannot open the key file $work/none.key" -- -k "$work/none.key" "$work/src" 192.0.2.1:7700
expect 2 err "is not a regular file" -- -k "$work" "$work/src" 192.0.2.1:7700
ln -s "$work/key" "$work/link.key"
expect 2 err "the key file $work/link.key is a symbolic link" -- -k "$work/link.key" "$work/src" 192.0.2.1:7700
# one trailing newline (or CRLF) is not part of the key: 15 bytes and a
# newline are too few, 16 and CRLF are enough
printf '%031d\n' 0 >"$work/nl.key" && chmod 600 "$work/nl.key"
expect 2 err "the key in $work/nl.key has 31 bytes" -- -k "$work/nl.key" "$work/src" 192.0.2.1:7700
printf '%032d\r\n' 0 >"$work/crlf.key" && chmod 600 "$work/crlf.key"
expect 2 err "cannot open $work/none" -- -k "$work/crlf.key" "$work/none" 192.0.2.1:7700

# what parses goes on to the work itself: strict sizes with suffixes, an
# IPv6 endpoint in brackets, and a missing source is trouble (2)
expect 2 err "cannot open $work/none: No such file or directory" -- \
	"${k[@]}" --chunk 64M --window 16 --limit 1G "$work/none" '[2001:db8::1]:7700'
expect 2 err "cannot open the target $work/none" -- \
	--serve "${k[@]}" --allow 192.0.2.0/24 --allow 2001:db8::/32 --once '[2001:db8::1]:7700' "$work/none"

echo "$cases cases, $failures failed"
[ "$failures" -eq 0 ]
