#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The allocation-failure tests fail every allocation of the library: that
holds only if every allocation goes through a hook. Checks the library's
objects as the unit tests link them (alloc_rename.py applied): no reference
to an allocation function is left that was not renamed to a hook, the
library uses no allocator the hooks cannot fail (operator new, which
would also make librpma.so.0 need libstdc++, getline, std::string, ...),
and at least one hook is used.

usage: check_alloc_hooks.py NM SYMS HOOKED.a
"""
import re
import subprocess
import sys

# allocating functions and what to do instead
NOT_HOOKABLE = {
    '_Znwm': 'operator new: use make() of src/runtime.hpp',
    '_Znam': 'operator new[]: use make_array() of src/runtime.hpp',
    '_ZnwmSt11align_val_t': 'operator new: use make() of src/runtime.hpp',
    '_ZnamSt11align_val_t': 'operator new[]: use make_array() of src/runtime.hpp',
    '_ZnwmRKSt9nothrow_t': 'operator new: use make() of src/runtime.hpp',
    '_ZnamRKSt9nothrow_t': 'operator new[]: use make_array() of src/runtime.hpp',
    '_ZnwmSt11align_val_tRKSt9nothrow_t': 'operator new: use make() of src/runtime.hpp',
    '_ZnamSt11align_val_tRKSt9nothrow_t': 'operator new[]: use make_array() of src/runtime.hpp',
    'valloc': 'obsolete: use posix_memalign',
    'pvalloc': 'obsolete: use posix_memalign',
    'getline': 'allocates behind the caller',
    'getdelim': 'allocates behind the caller',
    'open_memstream': 'allocates behind the caller',
    'open_wmemstream': 'allocates behind the caller',
    'wcsdup': 'add a hook to alloc_hooks.syms and alloc_hooks.cpp',
    '__strdup': 'add a hook to alloc_hooks.syms and alloc_hooks.cpp',
    '__strndup': 'add a hook to alloc_hooks.syms and alloc_hooks.cpp',
    'scandir': 'allocates behind the caller',
    'realpath': 'may allocate behind the caller',
    'canonicalize_file_name': 'allocates behind the caller',
    'get_current_dir_name': 'allocates behind the caller',
    'tempnam': 'allocates behind the caller',
    'backtrace_symbols': 'allocates behind the caller',
}
# libstdc++ code that allocates with the throwing operator new
NOT_HOOKABLE_PATTERNS = [
    (re.compile(r'^_ZNSt7__cxx1112basic_string|^_ZNSs'), 'std::string allocates with a throwing new'),
    (re.compile(r'^_ZSt17__throw_bad_alloc|^_ZSt28__throw_bad_array_new_length'),
     'a standard container allocates with a throwing new'),
    (re.compile(r'^_ZSt2[0-9]_Rb_tree_|^_ZSt18_Rb_tree_'), 'std::map or std::set allocates with a throwing new'),
    (re.compile(r'^_ZNSt8__detail15_List_node_base'), 'std::list allocates with a throwing new'),
    (re.compile(r'^_ZSt20__throw_length_error'), 'a standard container allocates with a throwing new'),
]


def main():
    nm, syms, archive = sys.argv[1:4]
    renamed = {}
    for line in open(syms):
        line = line.split('#')[0].split()
        if len(line) == 2:
            renamed[line[0]] = line[1]
    out = subprocess.run([nm, '-u', archive], check=True, capture_output=True,
                         text=True).stdout
    undefined = sorted({l.split()[-1] for l in out.splitlines()
                        if l.strip() and not l.endswith(':')})
    problems = []
    for sym in undefined:
        if sym in renamed:
            problems.append('%s: still referenced, not renamed to %s' % (sym, renamed[sym]))
        elif sym in NOT_HOOKABLE:
            problems.append('%s: %s' % (sym, NOT_HOOKABLE[sym]))
        else:
            for pattern, why in NOT_HOOKABLE_PATTERNS:
                if pattern.search(sym):
                    problems.append('%s: %s' % (sym, why))
    hooks = sorted(s for s in undefined if s in renamed.values())
    if not hooks:
        problems.append('no reference to any hook: the renaming did not happen')
    for p in problems:
        print('not hooked: ' + p)
    print('the library allocates through: ' + ', '.join(hooks))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
