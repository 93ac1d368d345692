#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The exported dynamic symbols, the version script and the header agree.

usage: check_symbols.py LIBRARY MAP HEADER

- every function declared in the header is exported, and nothing else is;
- each exported symbol carries the version node the map gives it;
- LIBRPMA_1.0 holds exactly the 84 functions of librpma 1.x and the
  extensions live in a later node.
"""
import re
import subprocess
import sys

LIBRPMA_1X_COUNT = 84


def parse_map(path):
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    nodes = {}
    for node, body in re.findall(r'(\w[\w.]*)\s*\{(.*?)\}', text, flags=re.S):
        glob = body.split('local:')[0]
        glob = glob.replace('global:', '')
        nodes[node] = {s.strip() for s in glob.split(';') if s.strip()}
    return nodes


def parse_header(path):
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    text = re.sub(r'\btypedef\b[^;]*;', '', text)  # rpma_log_function is a type
    return set(re.findall(r'\b(rpma_\w+)\s*\(', text))


def exported(lib):
    out = subprocess.run(['objdump', '-T', lib], check=True, capture_output=True,
                         text=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 7 or '*UND*' in line or not fields[-1].startswith('rpma_'):
            continue
        symbols[fields[-1]] = fields[-2]
    return symbols


def main():
    lib, map_path, header = sys.argv[1:4]
    nodes = parse_map(map_path)
    declared = parse_header(header)
    symbols = exported(lib)
    failures = []

    in_map = {s: n for n, syms in nodes.items() for s in syms}
    if set(symbols) != set(in_map):
        failures.append('exported but not in the map: %s; in the map but not exported: %s' %
                        (sorted(set(symbols) - set(in_map)), sorted(set(in_map) - set(symbols))))
    if declared != set(symbols):
        failures.append('declared but not exported: %s; exported but not declared: %s' %
                        (sorted(declared - set(symbols)), sorted(set(symbols) - declared)))
    for sym, node in sorted(symbols.items()):
        if in_map.get(sym) != node:
            failures.append('%s is versioned %s, the map says %s' % (sym, node, in_map.get(sym)))
    if len(nodes.get('LIBRPMA_1.0', ())) != LIBRPMA_1X_COUNT:
        failures.append('LIBRPMA_1.0 holds %d symbols, not %d' %
                        (len(nodes.get('LIBRPMA_1.0', ())), LIBRPMA_1X_COUNT))
    soname = subprocess.run(['objdump', '-p', lib], check=True, capture_output=True,
                            text=True).stdout
    if not re.search(r'SONAME\s+librpma\.so\.0\s*$', soname, flags=re.M):
        failures.append('SONAME is not librpma.so.0')

    for f in failures:
        print('FAIL:', f)
    print('%d symbols exported, %d declared, nodes %s' %
          (len(symbols), len(declared), {n: len(s) for n, s in nodes.items()}))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
