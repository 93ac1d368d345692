#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-synopsis.py -- the SYNOPSIS of each function page shows the prototype
that include/librpma.h declares, and includes <librpma.h>.

The page's SYNOPSIS is turned into the text a reader sees (font macros
joined, escapes removed); the function's prototype must appear in it, the
same as in the header except for whitespace.

Usage: check-synopsis.py SOURCE_ROOT
Exit status 0 when every page matches, 1 otherwise.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manpages  # noqa: E402


def prototypes_in(text, name):
    """Declarations of name found in the text: from the start of the line
    that names the function up to the next ';'."""
    found = []
    for m in re.finditer(r'\b' + re.escape(name) + r'\s*\(', text):
        start = text.rfind('\n', 0, m.start()) + 1
        end = text.find(';', m.end())
        if end >= 0:
            found.append(text[start:end + 1])
    return found


def main():
    if len(sys.argv) != 2:
        print('usage: check-synopsis.py SOURCE_ROOT', file=sys.stderr)
        return 2
    root = sys.argv[1]
    functions = manpages.header_functions(os.path.join(root, 'include', 'librpma.h'))
    errors = []
    if not functions:
        errors.append('include/librpma.h: no function declarations found')

    for name, proto in sorted(functions.items()):
        rel = 'man3/%s.3' % name
        path = manpages.page_path(root, name)
        if not os.path.exists(path):
            errors.append('%s: missing' % rel)
            continue
        secs = manpages.sections(manpages.read(path))
        if 'SYNOPSIS' not in secs:
            errors.append('%s: no SYNOPSIS section' % rel)
            continue
        text = manpages.roff_to_text(secs['SYNOPSIS'])
        if '#include <librpma.h>' not in text:
            errors.append('%s: SYNOPSIS does not include <librpma.h>' % rel)
        want = manpages.normalize(proto)
        shown = [manpages.normalize(p) for p in prototypes_in(text, name)]
        if want in shown:
            continue
        if not shown:
            errors.append('%s: SYNOPSIS has no prototype of %s()' % (rel, name))
        else:
            errors.append('%s: SYNOPSIS prototype differs from include/librpma.h\n'
                          '    header: %s\n    page:   %s'
                          % (rel, ' '.join(proto.split()), ' '.join(shown[0].split())))

    for e in errors:
        print(e)
    print('%d prototypes checked: %s'
          % (len(functions), 'FAILED (%d problems)' % len(errors) if errors else 'ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
