#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of the fuzz targets (corpus/<target>/<seed>): the
descriptors in both forms, librpma's (21 and 1 bytes) and the versioned one
with a trailer, and private data as applications pack it. The files are
committed; run this again after changing a form, and commit the result.

usage: make_corpus.py [CORPUS_DIR]   (default: corpus/ beside this script)
"""
import os
import struct
import sys

# The versioned forms (doc/wire-format.md): a region descriptor is the 21
# librpma bytes, then [magic][version][flush methods][crc8 of bytes 0..23];
# a peer configuration is [direct write][magic][version][flags][depth]
# [crc8 of bytes 0..4]. CRC-8: polynomial 0x07, initial value 0.
TRAILER_MAGIC = 0xD7
TRAILER_VERSION = 1
METHOD_READ_AFTER_WRITE = 1 << 0
METHOD_GPSPM = 1 << 1
METHOD_NATIVE_VISIBILITY = 1 << 2
METHOD_NATIVE_PERSISTENT = 1 << 3
PEER_CFG_GPSPM = 1 << 0

USAGE_READ_SRC, USAGE_READ_DST, USAGE_WRITE_SRC, USAGE_WRITE_DST = 1, 2, 4, 8
USAGE_FLUSH_VISIBILITY, USAGE_FLUSH_PERSISTENT, USAGE_SEND, USAGE_RECV = 16, 32, 64, 128


def crc8(data):
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xff if crc & 0x80 else (crc << 1) & 0xff
    return crc


def trailer(head, version=TRAILER_VERSION):
    """head, then the magic, version, payload and CRC of a versioned form"""
    return head + bytes([crc8(head)])


def versioned_mr(body, methods, version=TRAILER_VERSION):
    return trailer(body + bytes([TRAILER_MAGIC, version, methods]))


def versioned_peer_cfg(direct_write, flags, depth):
    return trailer(bytes([direct_write, TRAILER_MAGIC, TRAILER_VERSION, flags, depth]))


def mr(addr, length, rkey, usage):
    return struct.pack('<QQIB', addr, length, rkey, usage)


def seeds():
    rw = USAGE_READ_SRC | USAGE_WRITE_DST
    flush = rw | USAGE_FLUSH_VISIBILITY | USAGE_FLUSH_PERSISTENT
    region = mr(0x7f5a3c200000, 512 << 20, 0x1234, flush)
    all_methods = (METHOD_READ_AFTER_WRITE | METHOD_GPSPM | METHOD_NATIVE_VISIBILITY |
                   METHOD_NATIVE_PERSISTENT)
    yield 'mr_descriptor', 'librpma-21-rw', mr(0x7f0000200000, 4096, 0x5151, rw)
    yield 'mr_descriptor', 'librpma-21-flush', region
    yield 'mr_descriptor', 'librpma-21-every-usage', mr(1, 1, 1, 0xff)
    yield 'mr_descriptor', 'librpma-21-huge', mr(2**64 - 4096, 2**64 - 1, 2**32 - 1, flush)
    yield 'mr_descriptor', 'librpma-21-no-usage', mr(0x1000, 4096, 7, 0)
    yield 'mr_descriptor', 'librpma-24-padded', region + b'\0\0\0'
    yield 'mr_descriptor', 'short-20', region[:20]
    yield 'mr_descriptor', 'versioned-25-raw', versioned_mr(region, METHOD_READ_AFTER_WRITE)
    yield 'mr_descriptor', 'versioned-25-gpspm', versioned_mr(region, METHOD_GPSPM)
    yield 'mr_descriptor', 'versioned-25-native', \
        versioned_mr(region, METHOD_NATIVE_VISIBILITY | METHOD_NATIVE_PERSISTENT)
    yield 'mr_descriptor', 'versioned-25-all', versioned_mr(region, all_methods)
    yield 'mr_descriptor', 'versioned-25-unknown-methods', versioned_mr(region, 0xf0)
    yield 'mr_descriptor', 'versioned-25-bad-crc', versioned_mr(region, all_methods)[:-1] + b'\0'
    yield 'mr_descriptor', 'versioned-25-version-2', versioned_mr(region, METHOD_GPSPM, 2)
    yield 'mr_descriptor', 'versioned-26-padded', versioned_mr(region, all_methods) + b'\0'

    yield 'peer_cfg_descriptor', 'librpma-1-false', b'\0'
    yield 'peer_cfg_descriptor', 'librpma-1-true', b'\1'
    yield 'peer_cfg_descriptor', 'librpma-1-other', b'\x80'
    yield 'peer_cfg_descriptor', 'librpma-4-padded', b'\1\0\0\0'
    yield 'peer_cfg_descriptor', 'versioned-6-no-gpspm', versioned_peer_cfg(0, 0, 0)
    yield 'peer_cfg_descriptor', 'versioned-6-gpspm', versioned_peer_cfg(1, PEER_CFG_GPSPM, 16)
    yield 'peer_cfg_descriptor', 'versioned-6-gpspm-depth-0', \
        versioned_peer_cfg(0, PEER_CFG_GPSPM, 0)
    yield 'peer_cfg_descriptor', 'versioned-6-every-flag', versioned_peer_cfg(1, 0xff, 255)
    yield 'peer_cfg_descriptor', 'versioned-6-bad-crc', \
        versioned_peer_cfg(1, PEER_CFG_GPSPM, 16)[:-1] + b'\xff'

    # GPSPM messages (see fuzz_gpspm_message.cpp): requests and answers, cut
    # short, of another magic, version or type, and with a region after them
    # for the range check
    def gpspm(mtype, slot, seq, rest=b'', magic=0x5047, version=1):
        return struct.pack('<HBBII', magic, version, mtype, slot, seq) + rest
    request = gpspm(1, 3, 7, struct.pack('<IQQ', 0x1234, 0x7f5a3c200000, 4096))
    answer = gpspm(2, 3, 7, bytes([0, 0, 0, 0]))
    yield 'gpspm_message', 'request-32', request
    yield 'gpspm_message', 'request-64-slot', request + bytes(32)
    yield 'gpspm_message', 'request-in-region', request + struct.pack('<QQ', 0x7f5a3c200000, 1 << 20)
    yield 'gpspm_message', 'request-overflowing', \
        gpspm(1, 0, 0, struct.pack('<IQQ', 1, 2**64 - 8, 16)) + struct.pack('<QQ', 2**64 - 4096, 4096)
    yield 'gpspm_message', 'request-short-31', request[:31]
    yield 'gpspm_message', 'answer-16', answer
    yield 'gpspm_message', 'answer-out-of-range', gpspm(2, 1, 2, bytes([3, 0, 0, 0]))
    yield 'gpspm_message', 'answer-short-13', answer[:13]
    yield 'gpspm_message', 'header-12', gpspm(1, 0, 0)
    yield 'gpspm_message', 'other-magic', gpspm(1, 3, 7, magic=0x4750) + bytes(20)
    yield 'gpspm_message', 'version-2', gpspm(1, 3, 7, version=2) + bytes(20)
    yield 'gpspm_message', 'atomic-write-32', \
        gpspm(3, 3, 7, struct.pack('<IQ', 0x1234, 0x7f5a3c200040) + b'commit01')
    yield 'gpspm_message', 'atomic-write-short-31', gpspm(3, 3, 7) + bytes(19)
    yield 'gpspm_message', 'type-4', gpspm(4, 3, 7) + bytes(20)
    yield 'gpspm_message', 'empty', b''

    # private data: what applications put there
    item = lambda b: bytes([len(b)]) + b  # the rdma tests' items: a length byte, the bytes
    yield 'private_data', 'empty', b''
    yield 'private_data', 'mr-21', region
    yield 'private_data', 'mr-and-peer-cfg-22', region + b'\1'
    yield 'private_data', 'mr-and-peer-cfg-24', region + b'\1\0\0'
    yield 'private_data', 'versioned-mr-and-peer-cfg-31', \
        versioned_mr(region, all_methods) + versioned_peer_cfg(1, PEER_CFG_GPSPM, 32)
    yield 'private_data', 'items', item(region) + item(b'\1')
    yield 'private_data', 'connect-56', bytes(range(56))
    yield 'private_data', 'accept-196', bytes((i * 7) & 0xff for i in range(196))
    yield 'private_data', 'max-255', b'\xff' * 255


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), 'corpus')
    for target, name, data in seeds():
        d = os.path.join(top, target)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
