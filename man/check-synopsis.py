#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-synopsis.py -- the SYNOPSIS of each function page shows the prototype
that include/librpma.h declares, and includes <librpma.h>; a struct or an
enum that a SYNOPSIS spells out is the header's.

The page's SYNOPSIS is turned into the text a reader sees (font macros
joined, escapes removed); the function's prototype must appear in it, the
same as in the header except for whitespace. Every definition of a struct
or an enum in a SYNOPSIS of any page must list the members of the header's
definition, in its order, with the same types.

Usage: check-synopsis.py SOURCE_ROOT
Exit status 0 when every page matches, 1 otherwise.
"""

import glob
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

    types = manpages.header_type_bodies(os.path.join(root, 'include', 'librpma.h'))
    shown_types = 0
    for path in sorted(glob.glob(os.path.join(root, 'man', 'man3', '*.3'))):
        rel = 'man3/' + os.path.basename(path)
        secs = manpages.sections(manpages.read(path))
        text = manpages.roff_to_text(secs.get('SYNOPSIS', []))
        for (kind, name), members in sorted(manpages.type_bodies(text).items()):
            shown_types += 1
            want = types.get((kind, name))
            if want is None:
                errors.append('%s: SYNOPSIS defines %s %s, which include/librpma.h does not'
                              % (rel, kind, name))
            elif members != want:
                errors.append('%s: SYNOPSIS %s %s differs from include/librpma.h\n'
                              '    header: %s\n    page:   %s'
                              % (rel, kind, name, '; '.join(want), '; '.join(members)))

    for e in errors:
        print(e)
    print('%d prototypes and %d struct and enum definitions checked: %s'
          % (len(functions), shown_types,
             'FAILED (%d problems)' % len(errors) if errors else 'ok'))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
