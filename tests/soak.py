#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs VM suites again and again, to find the failures that come once in
many runs, and prints, for each case, how many runs failed and which.

usage: tests/soak.sh BUILDDIR [--runs N] TEST[:CASE[,CASE...]]...

TEST is the name of a test of the build's Meson suites over real RDMA
(`meson test -C BUILDDIR --list`): oracle-rxe, rdma-native-siw,
cluster-rxe and so on. Its command is taken as Meson registered it, with
its environment, and its list is given N times (10 by default), so that
the runs go in one boot of the test VM:

- a suite of programs (tests/vm/run-suite.sh: rdma, oracle, rdma-native,
  interop, reliability, the examples' checks) gets its program list N
  times over; CASEs keep only the programs of those names;
- the cluster (tests/cluster/run.sh) gets its case list N times over; CASEs
  name the cases (all of them by default).

Programs that draw a seed (the oracle) draw a new one each run. Each
test's output goes to BUILDDIR/meson-logs/soak/TEST.log; its TAP lines are
counted per case, by the name each line gives, and a run that ended before
all its cases ran counts the missing ones as failed. Last comes one line
per case that failed, with the runs that failed (the case's first, second,
... run), then 'soak: N passed, N failed, N skipped'. Exit status 0 when
nothing failed, 1 otherwise, 2 for bad usage.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import OrderedDict

TAP = re.compile(r'^(not ok|ok)\b\s*\d*\s*(?:-\s*)?([^#]*?)\s*(#\s*(SKIP)\b.*)?$', re.I)
RUN_SUITE = 'run-suite.sh'
CLUSTER = 'cluster/run.sh'
# the cluster's cases, when none are named (tests/cluster/run.sh)
CLUSTER_CASES_LINE = re.compile(r'^cases=\(([^)]*)\)', re.M)


def fail_usage(why):
    print(f'soak: {why}', file=sys.stderr)
    sys.exit(2)


def registered_tests(builddir):
    out = subprocess.run(['meson', 'introspect', '--tests', builddir],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        fail_usage(f'meson introspect --tests {builddir} failed: {out.stderr.strip()}')
    return {t['name']: t for t in json.loads(out.stdout)}


def case_name(program):
    """A program's case name, as run-suite.sh prints it: its file name."""
    return os.path.basename(program)


def suite_command(test, names, runs):
    """
    The command of a run-suite.sh test with its programs runs times over
    (those of names only, when given), and the cases of one run.
    """
    cmd = list(test['cmd'])
    # runner, BUILDDIR, PROVIDER, then options, then the programs
    i = 3
    while i < len(cmd) and cmd[i].startswith('--'):
        i += 2 if cmd[i] == '--flavor' else 1
    programs = cmd[i:]
    if names:
        unknown = set(names) - {case_name(p) for p in programs}
        if unknown:
            fail_usage(f'{test["name"]} runs no program named {", ".join(sorted(unknown))}')
        programs = [p for p in programs if case_name(p) in names]
    return cmd[:i] + programs * runs, [case_name(p) for p in programs]


def cluster_command(test, names, runs):
    """The command of the cluster with its cases runs times over."""
    cmd = list(test['cmd'])
    cases = names
    if not cases:
        with open(cmd[0]) as f:
            found = CLUSTER_CASES_LINE.search(f.read().replace('\\\n', ' '))
        if not found:
            fail_usage(f'cannot read the cases of {cmd[0]}')
        cases = found.group(1).split()
    # a case of a cluster run may be named more than once (run.sh runs them in turn)
    return cmd[:3] + cases * runs, list(cases)


def soak(builddir, test, names, runs, logdir):
    """Runs test's list runs times over; its case -> list of verdicts, and the log."""
    if RUN_SUITE in test['cmd'][0]:
        cmd, cases = suite_command(test, names, runs)
    elif test['cmd'][0].endswith(CLUSTER):
        cmd, cases = cluster_command(test, names, runs)
    else:
        fail_usage(f'{test["name"]} is not a suite of programs over real RDMA nor the cluster')
    env = dict(os.environ)
    env.update(test.get('env') or {})
    log_path = os.path.join(logdir, test['name'] + '.log')
    started = time.monotonic()
    print(f'soak: {test["name"]}: {len(cases)} cases, {runs} runs in one boot; '
          f'its output in {log_path}', flush=True)
    with open(log_path, 'w') as log:
        rc = subprocess.call(cmd, cwd=test.get('workdir') or builddir, env=env, stdout=log,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    # by the names the TAP lines give (a cluster case may print another)
    verdicts = OrderedDict()
    seen = 0
    with open(log_path, errors='replace') as log:
        for line in log:
            m = TAP.match(line.strip())
            if not m:
                continue
            seen += 1
            verdict = 'skipped' if m.group(4) else \
                'passed' if m.group(1).lower() == 'ok' else 'failed'
            verdicts.setdefault(m.group(2).strip(), []).append(verdict)
    # a run that ended early (a crash, a bail out) did not run the rest
    missing = runs * len(cases) - seen
    if missing > 0:
        verdicts['(cases that never ran)'] = ['failed'] * missing
    secs = time.monotonic() - started
    print(f'soak: {test["name"]}: ended with status {rc} after {secs:.0f} s', flush=True)
    return verdicts


def main():
    ap = argparse.ArgumentParser(prog='tests/soak.sh',
                                 description='runs VM suites again and again, in one boot')
    ap.add_argument('builddir')
    ap.add_argument('--runs', type=int, default=10, metavar='N',
                    help='runs of each test (default 10)')
    ap.add_argument('tests', nargs='+', metavar='TEST[:CASE[,CASE...]]')
    args = ap.parse_args()
    if args.runs < 1:
        fail_usage('--runs must be at least 1')
    registered = registered_tests(args.builddir)
    logdir = os.path.join(args.builddir, 'meson-logs', 'soak')
    os.makedirs(logdir, exist_ok=True)
    totals = {'passed': 0, 'failed': 0, 'skipped': 0}
    lines = []
    for spec in args.tests:
        name, _, case_list = spec.partition(':')
        if name not in registered:
            fail_usage(f'no test {name} in {args.builddir} (meson test -C {args.builddir} '
                       f'--list)')
        names = [c for c in case_list.split(',') if c]
        verdicts = soak(args.builddir, registered[name], names, args.runs, logdir)
        for case, seen in verdicts.items():
            for v in seen:
                totals[v] += 1
            failed_runs = [str(i + 1) for i, v in enumerate(seen) if v == 'failed']
            if failed_runs:
                lines.append(f'{name} / {case}: failed {len(failed_runs)} of {len(seen)} '
                             f'(runs {", ".join(failed_runs)})')
            elif all(v == 'skipped' for v in seen):
                lines.append(f'{name} / {case}: skipped in every run')
    for line in lines:
        print(line)
    print(f'soak: {totals["passed"]} passed, {totals["failed"]} failed, '
          f'{totals["skipped"]} skipped')
    return 1 if totals['failed'] else 0


if __name__ == '__main__':
    sys.exit(main())
