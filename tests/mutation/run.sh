#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Mutation testing of the library against its unit tests: every mutant of
# tests/mutation/mutants.txt is applied, one at a time, to a scratch copy
# of the tree, which is rebuilt and tested; a mutant the tests do not notice
# survives. The real src/ is never touched. See tests/mutation/README.md.
#
# usage: tests/mutation/run.sh [--only ID[,ID...]] [--list] [--timeout S]
#                              [--catalogue FILE] [SCRATCH_DIR]
#        SCRATCH_DIR defaults to build-mutation/ at the top of the tree.
#
# Prints one line per mutant, ends with "mutation: K of N killed, T timed
# out, E equivalent, S survived"; exits 0 when no mutant survived but those
# the catalogue lists as equivalent (with the reason) and none is in ERROR,
# 1 otherwise, 2 when the unmutated copy does not build or pass.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/mutate.py" "$@"
