#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
headers_alone.py -- each part of rpma.hpp compiles alone, and rpma.hpp
includes every part.

usage: headers_alone.py INCLUDE_DIR -- COMPILER ARGS...

The parts are the headers INCLUDE_DIR/rpma/*.hpp, listed when the test
runs, so that a new one is checked without a change to meson.build. Each
is compiled (COMPILER ARGS -I INCLUDE_DIR -fsyntax-only) in a translation
unit that includes it twice and nothing else: it includes what it uses,
and its include guard holds. INCLUDE_DIR/rpma.hpp must include each of
them, as "rpma/NAME.hpp".

Each failure is printed with the compiler's messages; the last line says
"N headers compiled alone: ok" or how many problems there were. Exit
status 0 when everything holds, 1 otherwise, 2 on usage.
"""

import glob
import os
import re
import subprocess
import sys

UMBRELLA_INCLUDE = re.compile(r'^\s*#\s*include\s+"rpma/([^"]+)"', re.M)


def main():
    args = sys.argv[1:]
    if '--' not in args or args.index('--') != 1 or len(args) < 3:
        print('usage: headers_alone.py INCLUDE_DIR -- COMPILER ARGS...', file=sys.stderr)
        return 2
    include_dir, compiler = args[0], args[2:]

    parts = sorted(os.path.basename(p)
                   for p in glob.glob(os.path.join(include_dir, 'rpma', '*.hpp')))
    errors = []
    if not parts:
        errors.append('no header in %s' % os.path.join(include_dir, 'rpma'))

    with open(os.path.join(include_dir, 'rpma.hpp')) as f:
        included = set(UMBRELLA_INCLUDE.findall(f.read()))
    for name in parts:
        if name not in included:
            errors.append('rpma.hpp does not include "rpma/%s"' % name)
    for name in sorted(included - set(parts)):
        errors.append('rpma.hpp includes "rpma/%s", which is not in %s'
                      % (name, os.path.join(include_dir, 'rpma')))

    for name in parts:
        source = '#include <rpma/%s>\n#include <rpma/%s>\n' % (name, name)
        argv = compiler + ['-I' + include_dir, '-fsyntax-only', '-x', 'c++', '-']
        proc = subprocess.run(argv, input=source, capture_output=True, text=True)
        if proc.returncode != 0:
            errors.append('rpma/%s does not compile alone:\n%s' % (name, proc.stderr))

    for e in errors:
        print(e)
    print('%d headers compiled alone: %s'
          % (len(parts), 'FAILED (%d problems)' % len(errors) if errors else 'ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
