#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the uncompressed ELF kernel found inside a compressed bzImage.

usage: extract-vmlinux.py BZIMAGE VMLINUX

Debian's amd64 kernels are XZ-compressed bzImages. QEMU can boot the bare
ELF image through the PVH entry note (CONFIG_PVH=y), which skips the
decompression done inside the guest: under TCG that is several seconds per
boot. XZ, then gzip and zstd (Debian 13's kernels; with the zstandard module
or else the zstd program) are tried; the first stream that decompresses to
an ELF image wins.
"""

import gzip
import lzma
import os
import shutil
import subprocess
import sys
import zlib


def zstd_program(data):
    """Decompress the first zstd frame of data with the zstd program, which
    complains about what follows the frame but writes the frame out."""
    out = subprocess.run(['zstd', '-dcq'], input=data, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=False).stdout
    if not out:
        raise ValueError('zstd wrote nothing')
    return out


def candidates(data):
    """Yield (name, offset, decompress function) for each stream start."""
    magics = [
        ('xz', b'\xfd7zXZ\x00', lambda b: lzma.LZMADecompressor(lzma.FORMAT_XZ).decompress(b)),
        ('gzip', b'\x1f\x8b\x08', lambda b: zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(b)),
    ]
    try:
        import zstandard  # optional

        magics.append(('zstd', b'\x28\xb5\x2f\xfd',
                       lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b)))
    except ImportError:
        if shutil.which('zstd'):
            magics.append(('zstd', b'\x28\xb5\x2f\xfd', zstd_program))
    for name, magic, fn in magics:
        pos = data.find(magic)
        while pos >= 0:
            yield name, pos, fn
            pos = data.find(magic, pos + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, 'rb') as f:
        data = f.read()
    for name, pos, fn in candidates(data):
        try:
            out = fn(data[pos:])
        except (lzma.LZMAError, zlib.error, gzip.BadGzipFile, EOFError, ValueError):
            continue
        except Exception:  # a stray match inside another stream
            continue
        if out[:4] == b'\x7fELF':
            tmp = dst + '.tmp'
            with open(tmp, 'wb') as f:
                f.write(out)
            os.replace(tmp, dst)
            print(f'{dst}: {len(out) // (1 << 20)} MiB ELF from a {name} stream at offset {pos}')
            return
    sys.exit(f'extract-vmlinux: no compressed ELF kernel found in {src}')


if __name__ == '__main__':
    main()
