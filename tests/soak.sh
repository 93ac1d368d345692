#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs VM suites again and again, in one boot each, and prints, for each
# case, how many runs failed and which (tests/soak.py says how).
#
# usage: tests/soak.sh BUILDDIR [--runs N] TEST[:CASE[,CASE...]]...
#   e.g. tests/soak.sh build --runs 20 oracle-rxe oracle-siw
#        tests/soak.sh build --runs 10 cluster-rxe:hetero,replicated_log
set -euo pipefail
exec python3 "$(dirname "$0")/soak.py" "$@"
