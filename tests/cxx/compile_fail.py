#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
compile_fail.py -- a translation unit that must not compile, and why.

Each source under compile_fail/ holds a mistake that rpma.hpp refuses at
compile time: the first line after its `#else` (a temporary passed where
an object must outlive the call, a view taken from a temporary, ...). With
-DRPMA_CONTROL the mistake is replaced by the right way to write it. The
test passes only when
  1. the control compiles, with every warning as an error: the source is
     sound, and nothing but the mistake can make the other build fail;
  2. the source as it is does not compile;
  3. one of the errors is on the line of the mistake and calls a function
     deleted, and its diagnostic (the error and its notes) matches the
     `expect:` regular expression of the source, which names the function.

usage: compile_fail.py SOURCE -- COMPILER [ARGUMENTS...]
"""

import os
import re
import subprocess
import sys


def compile_source(command, source, *extra):
    proc = subprocess.run(command + list(extra) + [source], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=dict(os.environ, LC_ALL='C'))
    return proc.returncode, proc.stdout.decode('utf-8', 'replace')


def diagnostics(output):
    """The diagnostics of the output: each error line with the lines after it.
    An error line says "error:"; a mere "error" may be a file name (the note
    of a function deleted in rpma/error.hpp belongs to the error before it)."""
    blocks = []
    for line in output.splitlines():
        if re.search(r'\berror:', line) or not blocks:
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks


def main():
    if len(sys.argv) < 4 or sys.argv[2] != '--':
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source, command = sys.argv[1], sys.argv[3:]
    text = open(source).read()
    expect = re.search(r'^ \* expect: (.+)$', text, re.M)
    lines = text.splitlines()
    mistake = next((i + 2 for i, line in enumerate(lines) if line.startswith('#else')), None)
    if expect is None or mistake is None:
        print('%s: no "expect:" line or no #else' % source)
        return 1
    wanted = re.compile(expect.group(1))
    name = os.path.basename(source)

    code, output = compile_source(command, source, '-DRPMA_CONTROL')
    if code != 0:
        print(output)
        print('FAIL: the control (-DRPMA_CONTROL) of %s does not compile' % name)
        return 1

    code, output = compile_source(command, source)
    print(output)
    if code == 0:
        print('FAIL: %s compiled: line %d was accepted' % (name, mistake))
        return 1

    at_mistake = re.compile(r'%s:%d:' % (re.escape(name), mistake))
    for block in diagnostics(output):
        first = block[0]
        if at_mistake.search(first) and 'deleted' in first and \
                wanted.search('\n'.join(block)):
            print('PASS: %s refused at line %d: %s' % (name, mistake, first.strip()))
            return 0
    print('FAIL: no error at %s:%d about a deleted function matching "%s"'
          % (name, mistake, wanted.pattern))
    return 1


if __name__ == '__main__':
    sys.exit(main())
