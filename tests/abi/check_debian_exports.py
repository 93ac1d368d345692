#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every symbol Debian's librpma.so.0 exports, ours exports too, the same way.

usage: check_debian_exports.py LIBRARY

Debian's library is the one of package librpma0 (installed with librpma-dev
by ./test.sh); without it the test fails, since it could prove nothing.
For each dynamic symbol it defines, this library must define the same name,
of the same kind (function or object), under the same version node; the
two must have the same SONAME, and each version node Debian's library
defines must be defined here as well. Programs linked against Debian's
library then find everything they bound to.
"""
import os
import re
import subprocess
import sys

PACKAGE = 'librpma0'
SONAME = 'librpma.so.0'


def debian_library():
    """The path of librpma.so.0 in the installed librpma0 package, or None."""
    try:
        out = subprocess.run(['dpkg-query', '-L', PACKAGE], capture_output=True, text=True)
    except FileNotFoundError:
        return None
    if out.returncode != 0:
        return None
    for path in out.stdout.split():
        if os.path.basename(path) == SONAME and os.path.exists(path):
            return path
    return None


def dynamic_symbols(lib):
    """{name: (kind, version node)} of the symbols lib defines."""
    out = subprocess.run(['objdump', '-T', lib], check=True, capture_output=True,
                         text=True).stdout
    symbols = {}
    for line in out.splitlines():
        # address, 7 columns of flags, section, size, version node, name:
        # 0000000000012345 g    DF .text	0000000000000042  LIBRPMA_1.0 rpma_read
        m = re.match(r'^[0-9a-f]+ (.{7}) (\S+)\t[0-9a-f]+\s+\(?([^\s()]+)\)?\s+(\S+)$', line)
        if not m or m.group(2) == '*UND*':
            continue
        flags, section, node, name = m.groups()
        if section == '*ABS*' and name == node:
            continue  # the symbol that names a version node
        if flags[0] not in 'guw' and flags[1:2] != 'w':
            continue  # local
        symbols[name] = ('function' if 'F' in flags else 'object', node)
    return symbols


def private_headers(lib):
    out = subprocess.run(['objdump', '-p', lib], check=True, capture_output=True,
                         text=True).stdout
    soname = re.search(r'^\s*SONAME\s+(\S+)', out, flags=re.M)
    defs = re.search(r'Version definitions:\n(.*?)(?:\n\n|\Z)', out, flags=re.S)
    nodes = set()
    if defs:
        for line in defs.group(1).splitlines():
            fields = line.split()
            if len(fields) >= 4 and fields[1] != '0x01':  # 0x01: the file's own name
                nodes.add(fields[3])
    return (soname.group(1) if soname else None), nodes


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    ours = sys.argv[1]
    theirs = debian_library()
    if theirs is None:
        print('FAIL: Debian\'s %s is not installed (package %s; ./test.sh installs it '
              'with librpma-dev): nothing to compare with' % (SONAME, PACKAGE))
        return 1

    failures = []
    their_symbols = dynamic_symbols(theirs)
    our_symbols = dynamic_symbols(ours)
    if not their_symbols:
        failures.append('no symbol found in %s' % theirs)
    for name, (kind, node) in sorted(their_symbols.items()):
        mine = our_symbols.get(name)
        if mine is None:
            failures.append('%s (%s, %s) is not exported' % (name, kind, node))
        elif mine != (kind, node):
            failures.append('%s is a %s under %s here, a %s under %s in Debian\'s library'
                            % (name, mine[0], mine[1], kind, node))

    their_soname, their_nodes = private_headers(theirs)
    our_soname, our_nodes = private_headers(ours)
    if our_soname != their_soname:
        failures.append('SONAME %s, Debian\'s is %s' % (our_soname, their_soname))
    for node in sorted(their_nodes - our_nodes):
        failures.append('version node %s is not defined' % node)

    for f in failures:
        print('FAIL:', f)
    print('%s exports %d symbols under %s; %s exports %d: %s'
          % (theirs, len(their_symbols), ', '.join(sorted(their_nodes)) or 'no node', ours,
             len(our_symbols), 'FAILED (%d problems)' % len(failures) if failures else 'ok'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
