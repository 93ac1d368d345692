#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: make-case.sh OUTPUT COMMAND...
#
# Writes OUTPUT, an executable script that runs COMMAND (one interop case:
# tests/interop/run-pair.sh and its arguments), so that tests/vm/run-suite.sh
# can run the case like any test program, under the case's name.
set -eu
out=$1
shift
{
	echo '#!/bin/sh'
	echo '# one interop case, written by tests/interop/make-case.sh'
	printf 'exec'
	for a in "$@"; do
		printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"
	done
	echo
} >"$out.tmp"
chmod +x "$out.tmp"
mv "$out.tmp" "$out"
