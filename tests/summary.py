#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Counts the test cases of a meson test run: each TAP line of a TAP test
(a cmocka case, an rdma test inside the VM) counts, and a plain test counts
once. Prints one line per suite and the closing line 'N passed, N failed,
N skipped'. Exits 1 when something failed.

usage: summary.py BUILDDIR[:LABEL]...   (LABEL tags the suites of that build)
"""
import json
import re
import subprocess
import sys
from collections import defaultdict

TAP = re.compile(r'^(not ok|ok)\b[^#]*(#\s*(SKIP|TODO)\b.*)?$', re.I)


def count(build, label, per_suite, failed_names):
    log = build + '/meson-logs/testlog.json'
    # testlog.json of older meson names neither suite nor protocol
    registered = {'%s / %s' % (t['suite'][0] if t['suite'] else '', t['name']): t
                  for t in json.loads(subprocess.run(
        ['meson', 'introspect', '--tests', build], check=True, capture_output=True,
        text=True).stdout)}
    for line in open(log):
        t = json.loads(line)
        info = registered.get(t['name']) or registered.get(
            next((k for k in registered if k.endswith(' / ' + t['name'])), ''), {})
        suite = (t.get('suite') or info.get('suite') or ['?'])[0].split(':')[-1] + label
        protocol = t.get('protocol') or info.get('protocol')
        counts = per_suite[suite]
        tap_lines = [m for m in (TAP.match(l.strip()) for l in (t.get('stdout') or '').splitlines()) if m]
        if protocol == 'tap' and tap_lines:
            for m in tap_lines:
                if m.group(3) and m.group(3).upper() == 'SKIP':
                    counts[2] += 1
                elif m.group(1) == 'ok':
                    counts[0] += 1
                else:
                    counts[1] += 1
            if t['result'] not in ('OK', 'SKIP', 'EXPECTEDFAIL') and not any(
                    m.group(1) == 'not ok' for m in tap_lines):
                counts[1] += 1  # e.g. crashed after its last TAP line
                failed_names.append(t['name'])
            elif any(m.group(1) == 'not ok' for m in tap_lines):
                failed_names.append(t['name'])
        else:
            if t['result'] in ('OK', 'EXPECTEDFAIL'):
                counts[0] += 1
            elif t['result'] == 'SKIP':
                counts[2] += 1
            else:
                counts[1] += 1
                failed_names.append(t['name'])


def main():
    per_suite = defaultdict(lambda: [0, 0, 0])
    failed_names = []
    for arg in sys.argv[1:]:
        build, _, label = arg.partition(':')
        count(build, '+' + label if label else '', per_suite, failed_names)
    total = [sum(c[i] for c in per_suite.values()) for i in range(3)]
    for suite, (p, f, s) in sorted(per_suite.items()):
        print('  %-14s %4d passed, %d failed, %d skipped' % (suite, p, f, s))
    if failed_names:
        print('failed: ' + ', '.join(sorted(set(failed_names))))
    print('%d passed, %d failed, %d skipped' % tuple(total))
    return 1 if total[1] else 0


if __name__ == '__main__':
    sys.exit(main())
