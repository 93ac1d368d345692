#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-format.py -- the library and its installed headers follow .clang-format.

usage: check-format.py CLANG_FORMAT SOURCE_ROOT

The files: every C and C++ source and header (.c, .h, .cpp, .hpp) under
include/ and src/, listed when the test runs -- the files git knows of,
untracked ones included, in a git tree; the directories as they are
otherwise -- so that a new file is checked without a change to
meson.build. clang-format --dry-run --Werror --style=file checks them, each
against the nearest .clang-format: the repository's, or
include/rpma/.clang-format for the parts of rpma.hpp.

The last line says how many files were checked. Exit status 0 when all of
them are formatted, 1 otherwise, 2 on usage.
"""

import os
import subprocess
import sys

DIRECTORIES = ('include', 'src')
SUFFIXES = ('.c', '.h', '.cpp', '.hpp')
# what the check has covered from the start: never fewer than these
REQUIRED = ('include/librpma.h', 'include/rpma.hpp', 'src/conn.cpp')


def git_files(root):
    try:
        proc = subprocess.run(['git', '-C', root, 'ls-files', '--cached', '--others',
                               '--exclude-standard', '-z', '--'] + list(DIRECTORIES),
                              capture_output=True, text=True)
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    return [f for f in proc.stdout.split('\0') if f]


def walked_files(root):
    found = []
    for top in DIRECTORIES:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def main():
    if len(sys.argv) != 3:
        print('usage: check-format.py CLANG_FORMAT SOURCE_ROOT', file=sys.stderr)
        return 2
    clang_format, root = sys.argv[1], sys.argv[2]

    listed = git_files(root)
    if listed is None:
        listed = walked_files(root)
    files = sorted(f for f in set(listed)
                   if f.endswith(SUFFIXES) and os.path.isfile(os.path.join(root, f)))
    missing = [f for f in REQUIRED if f not in files]
    if missing:
        print('FAIL: not among the files found: %s' % ' '.join(missing))
        return 1

    proc = subprocess.run([clang_format, '--dry-run', '--Werror', '--style=file'] + files,
                          cwd=root)
    print('%d files checked with %s: %s'
          % (len(files), clang_format, 'ok' if proc.returncode == 0 else 'FAILED'))
    return 0 if proc.returncode == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
