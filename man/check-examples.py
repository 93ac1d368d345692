#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-examples.py -- the code of the manual compiles.

Every block (.EX to .EE) of the EXAMPLES section of every page is a complete
function or program: turned back from roff into source, it must compile on
its own against include/librpma.h with -Wall -Wextra -Werror (C, or C++17
when it includes <rpma.hpp>). The pages of the main set-up and data-path
functions must have such a section.

Usage: check-examples.py SOURCE_ROOT PAGE... [-- COMPILER ARGUMENTS...]
The C and C++ compilers come from $CC and $CXX (default cc and c++).
Exit status 0 when every block compiles, 1 otherwise.
"""

import os
import re
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manpages  # noqa: E402

# the pages that must show how the function is used
REQUIRED = [
    'rpma_atomic_write', 'rpma_conn_next_event', 'rpma_conn_req_connect',
    'rpma_conn_req_new', 'rpma_cq_get_completion', 'rpma_cq_wait_completion',
    'rpma_ep_listen', 'rpma_flush', 'rpma_mr_reg', 'rpma_peer_new', 'rpma_read',
    'rpma_recv', 'rpma_send', 'rpma_write',
]

WARNINGS = ['-Wall', '-Wextra', '-Werror']

ESCAPES = [
    ('\\&', ''), ('\\%', ''), ('\\-', '-'), ('\\(aq', "'"), ('\\(dq', '"'),
    ('\\(ti', '~'), ('\\(ha', '^'), ('\\ ', ' '),
]


def unescape(line):
    """The source text of one line of an .EX block."""
    line = re.sub(r'\\f(\[[^\]]*\]|\(..|.)', '', line)
    # \e last but at once: "\e-" is a backslash and a hyphen
    parts = line.split('\\e')
    for old, new in ESCAPES:
        parts = [p.replace(old, new) for p in parts]
    return '\\'.join(parts)


def blocks(page_text):
    """The source of each .EX block of the EXAMPLES section."""
    secs = manpages.sections(page_text)
    found = []
    current = None
    for line in secs.get('EXAMPLES', []):
        if line.startswith('.EX'):
            current = []
        elif line.startswith('.EE'):
            if current is not None:
                found.append('\n'.join(current) + '\n')
            current = None
        elif current is not None:
            if line.startswith('.\\"'):
                continue
            current.append(unescape(line))
    return found


def compile_block(source, cplusplus, root, extra):
    if cplusplus:
        compiler = shlex.split(os.environ.get('CXX', 'c++'))
        lang = ['-x', 'c++', '-std=c++17']
    else:
        compiler = shlex.split(os.environ.get('CC', 'cc'))
        lang = ['-x', 'c', '-std=gnu11']
    argv = compiler + lang + ['-c', '-o', os.devnull, '-O2'] + WARNINGS + \
        ['-I' + os.path.join(root, 'include')] + extra + ['-']
    proc = subprocess.run(argv, input=source, capture_output=True, text=True)
    return proc.returncode, proc.stderr


def main():
    args = sys.argv[1:]
    extra = []
    if '--' in args:
        extra = args[args.index('--') + 1:]
        args = args[:args.index('--')]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 2
    root, pages = args[0], args[1:]

    errors = []
    count = 0
    with_examples = set()
    for page in pages:
        name = os.path.basename(page)
        for number, source in enumerate(blocks(manpages.read(page)), 1):
            count += 1
            with_examples.add(re.sub(r'\.\d$', '', name))
            cplusplus = name.endswith('.hpp.7') or '<rpma.hpp>' in source
            code, messages = compile_block(source, cplusplus, root, extra)
            if code != 0:
                listing = ''.join('%4d  %s\n' % (i, l)
                                  for i, l in enumerate(source.splitlines(), 1))
                errors.append('%s: example %d does not compile:\n%s%s'
                              % (name, number, listing, messages))
    for name in REQUIRED:
        if name not in with_examples:
            errors.append('%s.3: no example (an .EX block under EXAMPLES)' % name)

    for e in errors:
        print(e)
    print('%d examples in %d pages compiled: %s'
          % (count, len(with_examples),
             'FAILED (%d problems)' % len(errors) if errors else 'ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
