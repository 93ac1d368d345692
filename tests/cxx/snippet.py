#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
snippet.py -- the C++ example of a document compiles as it is printed.

  readme: the first ```cpp block of the "## C++" section of README.md;
  man:    the .EX/.EE block of the EXAMPLE section of a man page, its roff
          escapes undone (any escape it does not know fails the test).

The example is written to a file of its own and compiled, with every
warning as an error, as a translation unit by itself: it includes what it
needs.

usage: snippet.py readme|man DOCUMENT -- COMPILER [ARGUMENTS...]
"""

import os
import re
import subprocess
import sys
import tempfile

ROFF_ESCAPES = {r'\-': '-', r'\e': '\\', r'\(aq': "'", r'\(dq': '"', r'\&': ''}


def from_readme(text):
    lines = text.splitlines()
    section = next(i for i, line in enumerate(lines) if line.startswith('## C++'))
    start = next(i for i in range(section, len(lines)) if lines[i].strip() == '```cpp')
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == '```')
    return '\n'.join(lines[start + 1:end]) + '\n'


def from_man(text):
    lines = text.splitlines()
    section = next(i for i, line in enumerate(lines) if line.startswith('.SH EXAMPLE'))
    start = next(i for i in range(section, len(lines)) if lines[i] == '.EX')
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == '.EE')
    code = '\n'.join(lines[start + 1:end]) + '\n'
    code = re.sub(r'\\\(aq|\\\(dq|\\[-e&]', lambda m: ROFF_ESCAPES[m.group(0)], code)
    if '\\' in code.replace('\\n', ''):
        raise ValueError('a roff escape that snippet.py does not know:\n' + code)
    return code


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ('readme', 'man') or sys.argv[3] != '--':
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    kind, document, command = sys.argv[1], sys.argv[2], sys.argv[4:]
    text = open(document).read()
    try:
        code = from_readme(text) if kind == 'readme' else from_man(text)
    except (StopIteration, ValueError) as err:
        print('%s: no C++ example found (%s)' % (document, err or 'missing marker'))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, 'snippet.cpp')
        with open(source, 'w') as f:
            f.write(code)
        proc = subprocess.run(command + ['-c', '-o', os.devnull, source],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for number, line in enumerate(code.splitlines(), 1):
        print('%3d  %s' % (number, line))
    print(proc.stdout.decode('utf-8', 'replace'))
    if proc.returncode != 0:
        print('FAIL: the example of %s does not compile' % document)
        return 1
    print('PASS: the example of %s compiles' % document)
    return 0


if __name__ == '__main__':
    sys.exit(main())
