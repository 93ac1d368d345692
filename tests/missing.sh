#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: tests/missing.sh REASON
#        tests/missing.sh --write FILE REASON
#
# Stands in for a test whose part was not built or cannot run here (a
# library, a tool or the test VM was missing when the build was
# configured, and no option turned that part off): prints the reason,
# as TAP's "Bail out!" so that a TAP test shows it too, and fails. The
# test stays in `meson test --list` and says why, instead of vanishing.
#
# --write FILE REASON: writes FILE, an executable script that does the
# same whatever arguments it is given: a stand-in for a program that is
# run with the arguments of another (the test VM's runners, a check of
# the examples suite).

set -eu

if [ "${1:-}" = --write ]; then
	[ $# -eq 3 ] || { echo "usage: $0 --write FILE REASON" >&2; exit 2; }
	self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
	# REASON in single quotes, each of its own quotes spelled '\''
	quoted=$(printf '%s' "$3" | sed "s/'/'\\\\''/g")
	printf '#!/bin/sh\nexec "%s" '\''%s'\''\n' "$self" "$quoted" >"$2"
	chmod +x "$2"
	exit 0
fi

[ $# -eq 1 ] || { echo "usage: $0 REASON" >&2; exit 2; }
echo "Bail out! $1"
exit 1
