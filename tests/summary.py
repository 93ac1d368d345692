#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Counts the test cases of the meson test runs of test.sh and prints the
closing line 'N passed, N failed, N skipped'. Exits 1 when anything failed.

What is counted, each once: every distinct test case. A case is a TAP line
of a TAP test (a cmocka case, an rdma program run in the VM), or a test
without TAP. The rdma and oracle programs run over rxe and siw and again on
Debian 13 (rdma-native), the reliability programs over rxe and siw: those runs are
one case per program, failed when any run
failed, passed when one passed and none failed, skipped when all were
skipped. Reruns in a build given with a LABEL (under a sanitizer) and the
VM harness's own smoke checks are not in the total: they get lines of
their own, where a failure still fails the run.

Each failed case is named, and under "why NAME:" come the comment lines
its run printed after its TAP line (before it when none follow) (at most WHY_LINES), or the end of
the output of a test without TAP: CI shows the end of the output.

The test logs are those of the builds named, BUILDDIR/meson-logs/testlog.json,
and with --jobs MANIFEST those of the jobs of tests/run-suites.py, which
lists them (BUILDDIR/meson-logs/run/jobs.json): a job that left no test log
is a failed case with the end of its output, and a suite that skipped
every case failed. Before the closing line, with --times FILE (lines
'PHASE SECONDS' written by test.sh), one line of time per phase, the
set-ups' times, and each suite's wall-clock and processor time (its runs
added up) and its share of the machine (each run's time times the cores
it keeps busy, over the machine's cores; the shares add up to about the
suites' phase) against its budget in tests/budgets, with a line naming the
suites over it.

usage: summary.py [--times FILE] [--jobs MANIFEST] [BUILDDIR[:LABEL]...]
       (LABEL: the build reruns tests, e.g. asan)
"""
import json
import os
import re
import sys
from collections import OrderedDict, defaultdict

TAP = re.compile(r'^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?([^#]*?)\s*(#\s*(SKIP|TODO)\b.*)?$', re.I)
# the runs of the VM's programs over a provider: the rdma and oracle suites',
# also on Debian 13 (rdma-native), and the reliability suite's
VM_RUN = re.compile(r'^(rdma|rdma-native|reliability|oracle)-(rxe|siw)$')
# where a program that several of those run is counted
HOME_SUITES = ('rdma', 'oracle', 'reliability')
# the harness's own checks: the boots retried, and rdma-core's tools run
# first in each boot of the rdma suite (smoke.sh)
SMOKE = re.compile(r'^rdma-smoke-')
# lines of the runs' outputs shown before the closing line
NOTE = re.compile(r'^mutation: [0-9]+ of|oracle_.*\] seed |^fuzz .* executions in')

PASS, FAIL, SKIP = 'passed', 'failed', 'skipped'
# lines of a failed case's output printed under its name, at most: CI
# shows the end of the output, and a failure seen once must say why there
# (a stall's report, tests/oracle, comes before a handful of closing lines)
WHY_LINES = 32


def suite_and_test(t):
    """a testlog entry's suite (the first one named) and test name"""
    # 'project:suite1+suite2 / test'
    head, _, test = t['name'].partition(' / ')
    return head.split(':')[-1].split('+')[0], test


def print_times(times_file, manifest):
    """the phases of test.sh, then each suite's time against its budget"""
    print('times:')
    for line in open(times_file):
        phase, _, seconds = line.strip().partition(' ')
        print('  %-14s %5s s' % (phase, seconds))
        if phase == 'suites' and manifest:
            # the set-ups, which ran beside the suites on the same cores
            for j in manifest['jobs']:
                if not j['suite']:
                    print('    %-12s %5.0f s' % (j['name'], j['seconds']))
    if not manifest:
        return
    # A suite's share of the machine: each run's wall-clock time times the
    # cores it keeps busy (tests/budgets), over the machine's cores. Side by
    # side on a full machine, the shares add up to the suites' phase.
    cores = manifest['cores']
    spent = OrderedDict((s, [0.0, 0.0, 0.0]) for s in manifest['budgets'])
    ran = set()
    for j in manifest['jobs']:
        if j['suite']:
            took = spent[j['suite']]
            took[0] += j['seconds']
            took[1] += j.get('cpu', 0.0)
            took[2] += j['seconds'] * min(j.get('cores', 1), cores) / cores
            ran.add(j['suite'])
    print('suites, side by side on %d cores:  wall    cpu  share  budget (tests/budgets)'
          % cores)
    over = []
    for suite, budget in manifest['budgets'].items():
        if suite not in ran:
            continue
        wall, cpu, share = spent[suite]
        mark = ''
        if share > budget:
            mark = '  over'
            over.append('%s (%.0f s of %d s)' % (suite, share, budget))
        print('  %-20s %6.0f s %5.0f s %4.0f s %5d s%s' % (suite, wall, cpu, share, budget, mark))
    print('  %-20s %6.0f s %5.0f s %4.0f s %5d s' % ('all', sum(t[0] for t in spent.values()),
                                                    sum(t[1] for t in spent.values()),
                                                    sum(t[2] for t in spent.values()),
                                                    sum(manifest['budgets'].values())))
    if over:
        print('over budget: ' + ', '.join(over))


def why(lines, at):
    """the comment lines after the TAP line lines[at] (cmocka and the VM's
    runners write a case's diagnosis there), or failing those, before it"""
    end = at + 1
    while end < len(lines) and lines[end].lstrip().startswith('#'):
        end += 1
    said = lines[at + 1:end]
    if not said:
        start = at
        while start > 0 and lines[start - 1].lstrip().startswith('#'):
            start -= 1
        said = lines[start:at]
    said = [l.strip() for l in said]
    if len(said) > WHY_LINES:
        said = said[:WHY_LINES // 2] + ['# ...'] + said[-(WHY_LINES // 2):]
    return said


def runs_of(testlog):
    """(suite, test, case, result, why) of every case of a meson test log;
    why: what the run printed about a failed case"""
    for line in open(testlog):
        t = json.loads(line)
        suite, test = suite_and_test(t)
        results = []
        lines = (t.get('stdout') or '').splitlines()
        tap = [(i, m) for i, m in ((i, TAP.match(l.strip())) for i, l in enumerate(lines)) if m]
        if tap:
            for i, m in tap:
                name = m.group(3).strip() or 'case %s' % (m.group(2) or '?')
                if m.group(5) and m.group(5).upper() == 'SKIP':
                    res = SKIP
                elif m.group(1).lower() == 'ok':
                    res = PASS
                else:
                    res = FAIL
                results.append((name, res, why(lines, i) if res == FAIL else []))
            # a test that crashed or bailed out after its last case line
            if t['result'] not in ('OK', 'SKIP', 'EXPECTEDFAIL') and \
                    not any(r == FAIL for _, r, _ in results):
                results.append(('(%s: %s)' % (test, t['result'].lower()), FAIL,
                                lines[-WHY_LINES:]))
        else:
            if t['result'] in ('OK', 'EXPECTEDFAIL'):
                res = PASS
            elif t['result'] == 'SKIP':
                res = SKIP
            else:
                res = FAIL
            said = (lines + (t.get('stderr') or '').splitlines())[-WHY_LINES:]
            results.append((None, res, said if res == FAIL else []))
        for case, res, said in results:
            yield suite, test, case, res, said


def merge(results):
    if FAIL in results:
        return FAIL
    if PASS in results:
        return PASS
    return SKIP


def logs_to_read(args, manifest):
    """(test log, label) of every run, and the failed cases of the jobs
    that left none: (suite, job, the end of its output)"""
    logs = [(b + '/meson-logs/testlog.json', label)
            for b, _, label in (a.partition(':') for a in args)]
    lost = []
    for j in manifest['jobs'] if manifest else ():
        if not j['suite']:
            continue
        if j['testlog'] and os.path.exists(j['testlog']):
            logs.append((j['testlog'], j['label'] or ''))
        else:
            try:
                with open(j['log'], errors='replace') as f:
                    said = [l.rstrip() for l in f.readlines()[-WHY_LINES:]]
            except OSError:
                said = []
            lost.append((j['suite'], j['name'], [j['why'] or 'not run'] + said))
    return logs, lost


def notes(manifest):
    """the lines of the runs' outputs worth a line of their own: the
    mutation score, the oracle's seeds, the fuzzers' executions"""
    for j in manifest['jobs'] if manifest else ():
        if not j['testlog']:
            continue
        try:
            with open(j['testlog'][:-len('.json')] + '.txt', errors='replace') as f:
                for line in f:
                    if NOTE.search(line.strip()):
                        yield line.strip()
        except OSError:
            pass


def main():
    # key -> (suite, [results]) for the distinct cases, in the order first seen
    distinct = OrderedDict()
    extra = defaultdict(lambda: [0, 0, 0])  # the lines not in the total
    runs = defaultdict(int)  # runs behind the distinct cases, per suite
    failed = []
    reasons = OrderedDict()  # a failed case -> the lines it printed
    order = {PASS: 0, FAIL: 1, SKIP: 2}
    args = sys.argv[1:]
    times_file = manifest = None
    while args[:1] in (['--times'], ['--jobs']):
        if args[0] == '--times':
            times_file = args[1]
        else:
            with open(args[1]) as f:
                manifest = json.load(f)
        args = args[2:]
    logs, lost = logs_to_read(args, manifest)
    per_suite = defaultdict(lambda: [0, 0, 0])
    for suite, job, said in lost:
        where = '%s (ran no test)' % job
        failed.append(where)
        reasons[where] = said
        per_suite[suite][order[FAIL]] += 1
    for testlog, label in logs:
        for suite, test, case, res, said in runs_of(testlog):
            where = '%s / %s' % (test, case) if case else test
            if res == FAIL:
                where += ' (%s)' % label if label else ''
                failed.append(where)
                reasons.setdefault(where, said)
            if label:
                extra['%s: %s again' % (label, suite)][order[res]] += 1
                continue
            if SMOKE.match(test) or (VM_RUN.match(test) and case == 'smoke.sh'):
                extra['%s: the VM harness\'s smoke checks' % suite][order[res]] += 1
                continue
            vm_run = VM_RUN.match(test)
            if vm_run and case:
                family = 'reliability' if vm_run.group(1) == 'reliability' else 'rdma'
                key = (family, case)
            else:
                key = (test, case)
            if key not in distinct:
                distinct[key] = ([], [])
            distinct[key][0].append(suite)
            distinct[key][1].append(res)

    for suites, results in distinct.values():
        # a program of the rdma or oracle suite rerun on Debian 13 counts in
        # its suite, whatever order the logs were read in
        suite = next((s for s in HOME_SUITES if s in suites), suites[0])
        per_suite[suite][order[merge(results)]] += 1
        runs[suite] += len(results)
    # a suite that ran and skipped every case proved nothing
    for suite, (p, f, s) in list(per_suite.items()):
        if p == 0 and f == 0 and s > 0:
            where = '%s (every case skipped)' % suite
            failed.append(where)
            reasons[where] = ['a suite that skips every case proves nothing: see its log']
            per_suite[suite][order[FAIL]] += 1
    for suite, (p, f, s) in sorted(per_suite.items()):
        n = p + f + s
        more = ' (%d runs)' % runs[suite] if runs[suite] > n else ''
        print('  %-14s %4d passed, %d failed, %d skipped%s' % (suite, p, f, s, more))
    if extra:
        print('not in the total:')
        for what, (p, f, s) in sorted(extra.items()):
            print('  %-34s %4d passed, %d failed, %d skipped' % (what, p, f, s))
    if manifest and manifest.get('absent'):
        print('not in this build (turned off by its options): ' + ', '.join(manifest['absent']))
    for line in notes(manifest):
        print(line)
    if failed:
        for where, said in reasons.items():
            print('why %s:' % where)
            for l in said:
                print('    ' + l)
        print('failed: ' + ', '.join(sorted(set(failed))))
    if times_file:
        print_times(times_file, manifest)
    total = [sum(c[i] for c in per_suite.values()) for i in range(3)]
    print('%d passed, %d failed, %d skipped' % tuple(total))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
