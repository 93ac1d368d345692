#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Copies a static library with its references to allocation functions
renamed to the hooks of alloc_hooks.cpp (alloc_hooks.syms), for the unit
tests. Works on thin archives (which objcopy cannot copy): every member is
copied with objcopy, then archived again.

usage: alloc_rename.py OBJCOPY AR SYMS IN.a OUT.a
"""
import os
import subprocess
import sys
import tempfile


def main():
    objcopy, ar, syms, archive, out = sys.argv[1:6]
    members = subprocess.run([ar, 't', archive], check=True, capture_output=True,
                             text=True).stdout.split()
    if not members:
        sys.exit('alloc_rename: %s has no members' % archive)
    # ar lists the members of a thin archive as paths from here
    thin = open(archive, 'rb').read(8) == b'!<thin>\n'
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out))) as tmp:
        copies = []
        for i, m in enumerate(members):
            src = m
            if not thin:
                subprocess.run([ar, 'x', '--output', tmp, os.path.abspath(archive), m],
                               check=True)
                src = os.path.join(tmp, os.path.basename(m))
            dst = os.path.join(tmp, '%03d-%s' % (i, os.path.basename(m)))
            subprocess.run([objcopy, '--redefine-syms=' + syms, src, dst], check=True)
            copies.append(dst)
        if os.path.exists(out):
            os.unlink(out)
        subprocess.run([ar, 'rcs', out] + copies, check=True)


if __name__ == '__main__':
    main()
