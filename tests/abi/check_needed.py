#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""librpma.so.0 needs what librpma 1.x needed, and nothing more.

usage: check_needed.py OBJDUMP LIBRARY B_SANITIZE

The NEEDED entries of the library's dynamic section (objdump -p) must be
libc.so.6, libibverbs.so.1 and librdmacm.so.1, each once, and nothing
else: Debian's librpma0 needs those three, and a C program that swaps in
this library must get no other run-time library with it. Not libstdc++
(the library is C++ but calls nothing of the C++ runtime, src/runtime.hpp),
not libgcc_s, not the dynamic loader by name (its thread-local variable is
initial-exec, src/err.cpp), not libpmem2 (only the examples and tools use
it). A build with sanitizers may add their run-time libraries. No dynamic
symbol may come from the C++ runtime either (a GLIBCXX_ or CXXABI_
version).
"""
import re
import subprocess
import sys

NEEDED = ['libc.so.6', 'libibverbs.so.1', 'librdmacm.so.1']
SANITIZER_RUNTIMES = re.compile(r'^lib(asan|ubsan|tsan|lsan)\.so\.\d+$')
CXX_RUNTIME_VERSION = re.compile(r'\b(GLIBCXX|CXXABI)_[\d.]+')


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    objdump, lib, sanitize = sys.argv[1:4]
    headers = subprocess.run([objdump, '-p', lib], check=True, capture_output=True,
                             text=True).stdout
    needed = [line.split()[1] for line in headers.splitlines()
              if line.split()[:1] == ['NEEDED']]
    problems = []
    for name in needed:
        if name in NEEDED:
            continue
        if sanitize != 'none' and SANITIZER_RUNTIMES.match(name):
            continue
        problems.append('needs %s, which librpma 1.x did not' % name)
    for name in NEEDED:
        if needed.count(name) != 1:
            problems.append('NEEDED names %s %d times, not once' % (name, needed.count(name)))
    symbols = subprocess.run([objdump, '-T', lib], check=True, capture_output=True,
                             text=True).stdout
    for line in symbols.splitlines():
        if CXX_RUNTIME_VERSION.search(line):
            problems.append('binds to the C++ runtime: %s' % ' '.join(line.split()[-2:]))
    print('%s NEEDED: %s' % (lib, ', '.join(needed)))
    for p in problems:
        print('FAIL: ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
