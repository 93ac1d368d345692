#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check-format.py -- every C and C++ file of the repository follows .clang-format.

usage: check-format.py CLANG_FORMAT SOURCE_ROOT

The files: every C and C++ source and header (.c, .h, .cpp, .hpp) of the
repository -- the library, its headers, the examples, the tools, the
benchmark and the tests -- listed when the test runs, so that a new file
is checked without a change to meson.build:

- in a git tree whose top is SOURCE_ROOT: the files git knows of
  (git ls-files), untracked ones included unless .gitignore names them;
- otherwise (a release tarball, git missing or refusing the tree): the
  tree as it is walked, hidden directories skipped.

Either way, nothing inside a Meson build directory (one holding
meson-info/ or meson-private/): Meson writes C files of its own there.

The paths under EXCLUDED are left out. clang-format --dry-run --Werror
--style=file checks the others, each against the nearest .clang-format:
the repository's, or include/rpma/.clang-format for the parts of
rpma.hpp.

The last line says how many files were checked, how they were listed and
how many were left out. Exit status 0 when all of them are formatted, 1
otherwise, 2 on usage.
"""

import os
import subprocess
import sys

SUFFIXES = ('.c', '.h', '.cpp', '.hpp')
# Paths left out of the check: none. A generated or vendored file would go
# here, with the reason.
EXCLUDED = ()
# one file of each part: a listing that misses one of them is wrong
REQUIRED = (
    'include/librpma.h',
    'include/rpma.hpp',
    'src/conn.cpp',
    'examples/01-connection/server.c',
    'examples/18-cxx/client.cpp',
    'tools/rpma-mirror/rpma-mirror.c',
    'bench/rpma-bench.c',
    'tests/cxx/calls.cpp',
)


def git_files(root):
    """The files git knows of under root, or None when root is not the top of a git tree."""
    def git(*args):
        try:
            proc = subprocess.run(['git', '-C', root] + list(args),
                                  capture_output=True, text=True)
        except OSError:
            return None
        return proc.stdout if proc.returncode == 0 else None

    top = git('rev-parse', '--show-toplevel')
    if top is None or os.path.realpath(top.strip()) != os.path.realpath(root):
        return None
    listed = git('ls-files', '--cached', '--others', '--exclude-standard', '-z')
    if listed is None:
        return None
    # nothing from a build directory that .gitignore does not name
    build_dirs = {}

    def in_build_dir(path):
        parent = os.path.dirname(path)
        if not parent:
            return False
        if parent not in build_dirs:
            build_dirs[parent] = (is_build_dir(os.path.join(root, parent)) or
                                  in_build_dir(parent))
        return build_dirs[parent]

    return [f for f in listed.split('\0') if f and not in_build_dir(f)]


def is_build_dir(path):
    """Whether path is a Meson build directory, which holds C files of its own."""
    return (os.path.isdir(os.path.join(path, 'meson-info')) or
            os.path.isdir(os.path.join(path, 'meson-private')))


def walked_files(root):
    found = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith('.') and
                             not is_build_dir(os.path.join(dirpath, d)))
        for name in names:
            found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def main():
    if len(sys.argv) != 3:
        print('usage: check-format.py CLANG_FORMAT SOURCE_ROOT', file=sys.stderr)
        return 2
    clang_format, root = sys.argv[1], sys.argv[2]

    listed = git_files(root)
    how = 'listed by git'
    if listed is None:
        listed = walked_files(root)
        how = 'not a git tree: walked'
    candidates = sorted(f.replace(os.sep, '/') for f in set(listed)
                        if f.endswith(SUFFIXES) and os.path.isfile(os.path.join(root, f)))
    files = [f for f in candidates if not f.startswith(EXCLUDED)]
    left_out = len(candidates) - len(files)
    missing = [f for f in REQUIRED if f not in files]
    if missing:
        print('FAIL: not among the files found (%s): %s' % (how, ' '.join(missing)))
        return 1

    proc = subprocess.run([clang_format, '--dry-run', '--Werror', '--style=file'] + files,
                          cwd=root)
    if EXCLUDED:
        how += '; %d under %s left out' % (left_out, ' '.join(EXCLUDED))
    print('%d files checked with %s (%s): %s'
          % (len(files), clang_format, how, 'ok' if proc.returncode == 0 else 'FAILED'))
    return 0 if proc.returncode == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
