#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
compile_fail.py -- translation units that must not compile, and why.

Each source under compile_fail/ holds a mistake that rpma.hpp refuses at
compile time: the first line after its `#else` (a temporary passed where
an object must outlive the call, a view taken from a temporary, ...). With
-DRPMA_CONTROL the mistake is replaced by the right way to write it. A
source passes only when
  1. its control compiles, with every warning as an error: the source is
     sound, and nothing but the mistake can make the other build fail;
  2. the source as it is does not compile;
  3. one of the errors is on the line of the mistake and calls a function
     deleted, and its diagnostic (the error and its notes) matches the
     `expect:` regular expression of the source, which names the function.

The sources are compiled together, each in a namespace of its own inside
one translation unit after rpma.hpp (whose include guard makes each
source's own #include of it empty): once as controls, once as they are,
the compiler told to report every error. Parsing rpma.hpp and the standard
headers once, not twice per source, is what makes this fast. When the
controls do not compile together, each is compiled alone, to name the one
at fault. One TAP line per source: "compile-fail-PREFIXNAME".

usage: compile_fail.py [--prefix P] SOURCE... -- COMPILER [ARGUMENTS...]
"""

import os
import re
import subprocess
import sys
import tempfile


def compile_text(command, text, *extra):
    with tempfile.NamedTemporaryFile('w', suffix='.cpp', delete=False) as f:
        f.write(text)
        path = f.name
    try:
        proc = subprocess.run(command + list(extra) + [path], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=dict(os.environ, LC_ALL='C'))
    finally:
        os.unlink(path)
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


def unit(sources):
    """one translation unit holding every source, each in its namespace"""
    text = '#include <rpma.hpp>\n'
    for i, s in enumerate(sources):
        text += 'namespace rpma_compile_fail_%d {\n#include "%s"\n}\n' % (i, s['path'])
    return text


def main():
    args = sys.argv[1:]
    prefix = ''
    if args[:1] == ['--prefix']:
        prefix, args = args[1], args[2:]
    if '--' not in args or args.index('--') == 0 or args[-1] == '--':
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    split = args.index('--')
    paths, command = args[:split], args[split + 1:]
    # the compiler reports every error: clang stops at 20 by default
    if 'clang' in os.path.basename(command[0]):
        command = command + ['-ferror-limit=0']
    else:
        command = command + ['-fmax-errors=0']

    sources = []
    for path in paths:
        path = os.path.abspath(path)
        text = open(path).read()
        expect = re.search(r'^ \* expect: (.+)$', text, re.M)
        lines = text.splitlines()
        mistake = next((i + 2 for i, line in enumerate(lines) if line.startswith('#else')), None)
        sources.append({'path': path, 'name': os.path.splitext(os.path.basename(path))[0],
                        'expect': re.compile(expect.group(1)) if expect else None,
                        'mistake': mistake, 'verdict': None})

    print('TAP version 13')
    print('1..%d' % len(sources))
    for s in sources:
        if s['expect'] is None or s['mistake'] is None:
            s['verdict'] = ['%s: no "expect:" line or no #else' % s['path']]

    ready = [s for s in sources if s['verdict'] is None]
    code, output = compile_text(command, unit(ready), '-DRPMA_CONTROL')
    if code != 0:
        # which control is at fault: each alone
        for s in ready:
            code, alone = compile_text(command, unit([s]), '-DRPMA_CONTROL')
            if code != 0:
                s['verdict'] = alone.splitlines() + [
                    'the control (-DRPMA_CONTROL) of %s does not compile' % s['path']]
        ready = [s for s in ready if s['verdict'] is None]

    code, output = compile_text(command, unit(ready))
    blocks = diagnostics(output)
    for s in ready:
        at_mistake = re.compile(r'%s:%d:' % (re.escape(s['path']), s['mistake']))
        found = None
        for block in blocks:
            first = block[0]
            if at_mistake.search(first) and 'deleted' in first and \
                    s['expect'].search('\n'.join(block)):
                found = first.strip()
                break
        if found:
            s['verdict'] = 'refused at line %d: %s' % (s['mistake'], found)
        else:
            mine = [l for b in blocks for l in b if s['path'] in b[0]]
            s['verdict'] = mine + ['no error at %s:%d about a deleted function matching "%s"'
                                   % (s['path'], s['mistake'], s['expect'].pattern)]

    failed = 0
    for n, s in enumerate(sources, 1):
        name = 'compile-fail-%s%s' % (prefix, s['name'])
        if isinstance(s['verdict'], str):
            print('ok %d - %s' % (n, name))
            print('# ' + s['verdict'])
        else:
            failed += 1
            print('not ok %d - %s' % (n, name))
            for line in s['verdict']:
                print('# ' + line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
