#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-render.py -- the pages format without a single warning.

  mandoc: `mandoc -T lint -W warning PAGE` must print nothing and succeed;
  groff:  `groff -man -ww -z PAGE` must print nothing and succeed, and the
          page formatted for an 80-column terminal must have no line wider
          than 80 columns (a SYNOPSIS line that would stick out).

Usage: check-render.py mandoc|groff PROGRAM PAGE...
An empty PROGRAM means the tool was not found: the test is skipped (77).
"""

import os
import subprocess
import sys

SKIP = 77
WIDTH = 80


def run(argv, cwd):
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=dict(os.environ, LC_ALL='C.UTF-8'))
    return proc.returncode, proc.stdout.decode('utf-8', 'replace'), \
        proc.stderr.decode('utf-8', 'replace')


def check_mandoc(program, page):
    code, out, err = run([program, '-T', 'lint', '-W', 'warning', page], os.path.dirname(page))
    msgs = (out + err).strip()
    if code != 0 or msgs:
        return ['%s: mandoc -T lint -W warning (exit %d):\n%s' % (page, code, msgs)]
    return []


def check_groff(program, page):
    problems = []
    code, out, err = run([program, '-man', '-ww', '-z', page], os.path.dirname(page))
    msgs = (out + err).strip()
    if code != 0 or msgs:
        problems.append('%s: groff -man -ww -z (exit %d):\n%s' % (page, code, msgs))
    # the man(1) layout for MANWIDTH=80: line length 80 minus the margins
    code, out, err = run([program, '-man', '-Tutf8', '-P-cbou', '-rLL=%dn' % (WIDTH - 2),
                          '-rIN=7n', page], os.path.dirname(page))
    for number, line in enumerate(out.splitlines(), 1):
        if len(line) > WIDTH:
            problems.append('%s: line %d of the formatted page is %d columns wide:\n%s'
                            % (page, number, len(line), line))
    return problems


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ('mandoc', 'groff'):
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    tool, program, pages = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not program:
        print('%s not found: skipped' % tool)
        return SKIP
    check = check_mandoc if tool == 'mandoc' else check_groff
    problems = []
    for page in pages:
        if not os.path.exists(page):
            problems.append('%s: missing' % page)
            continue
        problems += check(program, os.path.abspath(page))
    for p in problems:
        print(p)
    print('%d pages checked with %s: %s'
          % (len(pages), tool, 'FAILED (%d problems)' % len(problems) if problems else 'ok'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
