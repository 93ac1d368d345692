#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-render.py -- the pages format without a single warning.

  mandoc: `mandoc -T lint -W warning PAGE` must print nothing and succeed;
  groff:  `groff -man -ww -z PAGE` must print nothing and succeed; the
          page formatted for an 80-column terminal must have no line wider
          than 80 columns (a SYNOPSIS line that would stick out; examples,
          which are not filled, are written for 80 columns); formatted for
          terminals of 64, 80 and 132 columns, it must have no line that
          ends in a hyphen after something that is not a letter or a digit,
          such as "(-": a \\% inside a word, as in "(\\%word", marks a
          place to hyphenate, not a word that must not be; and no \\% of
          the source may stand inside a word.

Usage: check-render.py mandoc|groff PROGRAM PAGE...
An empty PROGRAM means the tool was not found: the test is skipped (77).
"""

import os
import re
import subprocess
import sys

SKIP = 77
# the terminal widths the pages are formatted for: a narrow one, man(1)'s
# default, a wide one; a bad break shows only where a line happens to end
WIDTHS = (64, 80, 132)
WIDTH = 80
# what groff -Tutf8 prints for a hyphen, its own at a break or the text's
HYPHENS = '\u2010-'
# \% after something printed: inside a word, a hyphenation point. Fonts,
# \& and the like print nothing, so a \% after them still starts a word.
INNER_NO_HYPHEN = re.compile(r'(?:^|[^\\])(?:\\\\)*[^\s\\](\\%)')


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
    for number, line in enumerate(open(page, encoding='utf-8').read().splitlines(), 1):
        if line.startswith('.\\"'):
            continue
        if INNER_NO_HYPHEN.search(line):
            problems.append('%s:%d: \\%% inside a word, where it marks a place to '
                            'hyphenate; put it before the word:\n%s' % (page, number, line))
    return problems


def check_groff_layout(program, pages):
    """The pages formatted at each width, all in one run of groff a width
    (a run per page costs ten times as much), told apart by their header
    and footer lines, the lines not indented that end in NAME(SECTION) (a
    long name's header overlaps the title, so nothing else is sure)."""
    problems = []
    # longest first: rpma_mr_get_descriptor_size(3) ends in ...descriptor_size(3)
    titles = sorted((('%s(%s)' % tuple(os.path.basename(p).rsplit('.', 1)),
                      os.path.basename(p)) for p in pages), key=lambda t: -len(t[0]))
    for width in WIDTHS:
        # the man(1) layout for MANWIDTH=width: line length width minus the margins
        code, out, err = run([program, '-man', '-Tutf8', '-P-cbou', '-rLL=%dn' % (width - 2),
                              '-rIN=7n'] + pages, os.path.dirname(pages[0]))
        if code != 0:
            problems.append('groff -man -Tutf8 at %d columns (exit %d):\n%s'
                            % (width, code, err.strip()))
            continue
        page, number = '?', 0
        for line in out.splitlines():
            if line[:1] not in ('', ' '):
                this = next((name for title, name in titles if line.endswith(title)), None)
                if this is not None and this != page:
                    page, number = this, 0
            number += 1
            if width == WIDTH and len(line) > width:
                problems.append('%s: at %d columns, line %d of the formatted page is %d '
                                'columns wide:\n%s' % (page, width, number, len(line), line))
            text = line.rstrip()
            if len(text) >= 2 and text[-1] in HYPHENS and not text[-2].isalnum():
                problems.append('%s: at %d columns, line %d of the formatted page ends in '
                                '"%s":\n%s' % (page, width, number, text[-2:], line))
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
    found = []
    for page in pages:
        if not os.path.exists(page):
            problems.append('%s: missing' % page)
            continue
        found.append(os.path.abspath(page))
        problems += check(program, found[-1])
    if tool == 'groff' and found:
        problems += check_groff_layout(program, found)
    for p in problems:
        print(p)
    print('%d pages checked with %s: %s'
          % (len(pages), tool, 'FAILED (%d problems)' % len(problems) if problems else 'ok'))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
