#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-layers.py -- the library's modules keep to their layers.

usage: check-layers.py SOURCE_ROOT

doc/design.md, section Modules, has a table: layer, module, files, what
it owns. This reads that table and every file of src/, and fails (exit
status 1, one line per fault) when:
  - a file of src/ is in no module, or in two, or the table names a file
    that is not there;
  - a file includes ("...") a header of a module of a higher layer;
  - the modules' includes form a cycle;
  - a file of src/ is longer than MAX_LINES lines.
The last line says how many files and includes were checked. Exit status 2
on usage or when the table cannot be found.
"""

import os
import re
import sys

MAX_LINES = 600
SUFFIXES = ('.c', '.h', '.cpp', '.hpp')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_table(design):
    """{file: (layer, module)} from the Modules table of doc/design.md."""
    try:
        text = open(design, encoding='utf-8').read()
    except OSError as err:
        print(f'cannot read {design}: {err}')
        sys.exit(2)
    start = text.find('\n### Modules')
    if start < 0:
        print(f'{design}: no "### Modules" section')
        sys.exit(2)
    files = {}
    faults = []
    for line in text[start:].splitlines():
        if line.startswith('## '):
            break
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        layer, module = int(cells[0]), cells[1]
        for name in cells[2].split():
            if name in files:
                faults.append(f'{design}: {name} is in modules {files[name][1]} and {module}')
            files[name] = (layer, module)
    if not files:
        print(f'{design}: the Modules table lists no file')
        sys.exit(2)
    return files, faults


def find_cycle(edges):
    """One cycle of the module graph as a list, or None."""
    state = {}
    stack = []

    def visit(node):
        state[node] = 'open'
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 'open':
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 'done'
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2])
        return 2
    root = sys.argv[1]
    src = os.path.join(root, 'src')
    table, faults = read_table(os.path.join(root, 'doc', 'design.md'))

    sources = []
    for dirpath, _, names in os.walk(src):
        for name in names:
            if name.endswith(SUFFIXES):
                sources.append(os.path.relpath(os.path.join(dirpath, name), src))
    sources.sort()

    for name in sorted(set(table) - set(sources)):
        faults.append(f'doc/design.md names src/{name}, which is not there')

    edges = {}
    includes = 0
    for name in sources:
        if name not in table:
            faults.append(f'src/{name} is in no module of doc/design.md (Modules)')
            continue
        layer, module = table[name]
        text = open(os.path.join(src, name), encoding='utf-8').read()
        lines = text.count('\n')
        if lines > MAX_LINES:
            faults.append(f'src/{name} has {lines} lines, more than {MAX_LINES}')
        edges.setdefault(module, set())
        for header in INCLUDE.findall(text):
            includes += 1
            if header not in table:
                if header in sources:
                    continue  # reported above
                faults.append(f'src/{name} includes "{header}", no file of src/')
                continue
            their_layer, their_module = table[header]
            if their_module == module:
                continue
            if their_layer > layer:
                faults.append(f'src/{name} ({module}, layer {layer}) includes {header} '
                              f'({their_module}, layer {their_layer}): a layer up')
            edges[module].add(their_module)

    cycle = find_cycle(edges)
    if cycle:
        faults.append('the modules include each other: ' + ' -> '.join(cycle))

    for fault in faults:
        print(fault)
    modules = len({m for _, m in table.values()})
    print(f'{len(sources)} files of {modules} modules, {includes} includes checked: '
          + ('ok' if not faults else f'{len(faults)} faults'))
    return 1 if faults else 0


if __name__ == '__main__':
    sys.exit(main())
