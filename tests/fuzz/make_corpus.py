#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of the fuzz targets (corpus/<target>/<seed>): the
descriptors in both forms, librpma's (21 and 1 bytes) and the versioned one
with a trailer, private data as applications pack it, and the pre-shared key
handshake of rpma-mirror and the replicated log. The files are
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
# The handshake versions the tools speak (MIRROR_VERSION of
# tools/rpma-mirror/mirror_wire.h, PROTOCOL_VERSION of
# examples/19-replicated-log/log_wire.h): seeds of another version reach
# only the readers' first refusal
MIRROR_VERSION = 5
LOG_VERSION = 6

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

    # the pre-shared key handshake (fuzz_psk.c): a first byte chooses the part
    def allow(arg):
        return b'\0' + arg.encode()
    for name, arg in [('ipv4-net', '192.0.2.0/24'), ('ipv6-net', '2001:db8::/32'),
                      ('ipv4-host', '192.0.2.7'), ('ipv6-host', '2001:db8::7'),
                      ('mapped', '::ffff:192.0.2.7/128'), ('prefix-0', '0.0.0.0/0'),
                      ('prefix-33', '192.0.2.0/33'), ('prefix-129', '2001:db8::/129'),
                      ('prefix-leading-zeros', '192.0.2.0/00024'), ('prefix-empty', '192.0.2.0/'),
                      ('prefix-sign', '192.0.2.0/+24'), ('prefix-space', '192.0.2.0/ 24'),
                      ('prefix-huge', '192.0.2.0/99999999999999999999'), ('no-host', '/24'),
                      ('scope', 'fe80::1%eth0/64'),
                      ('host-45', 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255'),
                      ('host-too-long', '0' * 60 + '/8'),
                      ('hostname', 'localhost/8')]:
        yield 'psk', 'allow-' + name, allow(arg)
    v4_rule, v6_rule = bytes([192, 0, 2, 0]) + bytes(12), bytes.fromhex('20010db8') + bytes(12)
    peer = bytes([192, 0, 2, 7]) + bytes(12)
    # [1][rule: IPv6 bit, prefix][peer's family][how the peer is made][rule address][peer]
    yield 'psk', 'allowed-ipv4-in', b'\1' + bytes([24 << 1, 0, 0]) + v4_rule + peer
    yield 'psk', 'allowed-ipv4-near', b'\1' + bytes([24 << 1, 0, 0x23]) + v4_rule + peer
    yield 'psk', 'allowed-mapped', b'\1' + bytes([32 << 1, 1, 0x09]) + v4_rule + peer
    yield 'psk', 'allowed-ipv6', b'\1' + bytes([(32 << 1) | 1, 1, 0x01]) + v6_rule + v6_rule
    yield 'psk', 'allowed-other-family', b'\1' + bytes([0, 2, 0]) + v4_rule + peer
    # [2][answer length][where its MAC lies][a byte in it][a byte outside][the answer]
    def answer_mac(length, mac_at, body):
        return b'\2' + struct.pack('<HHBB', length, mac_at, 5, 77) + body
    yield 'psk', 'answer-mirror-71', answer_mac(71, 24, bytes(range(71)))
    yield 'psk', 'answer-log-79', answer_mac(79, 32, bytes(range(79)))
    yield 'psk', 'answer-16', answer_mac(16, 0, b'\xff' * 16)
    yield 'psk', 'answer-255', answer_mac(255, 239, bytes(255))
    yield 'psk', 'answer-256', answer_mac(256, 24, bytes(40))
    yield 'psk', 'answer-mac-past-end', answer_mac(40, 25, bytes(40))
    yield 'psk', 'answer-15', answer_mac(15, 0, bytes(15))
    # [3][what to change][client's nonce][challenge][request]
    yield 'psk', 'proofs-mirror', b'\3\x11' + bytes(range(16)) + bytes(range(16, 32)) + \
        b'RPMAMIRR' + bytes([MIRROR_VERSION, 2, 0, 0]) + struct.pack('<IQ', 1 << 20, 1 << 30)
    yield 'psk', 'proofs-no-request', b'\3\x80' + bytes(range(32))
    # [4][0: every slot taken][nonce][a challenge the peer makes up][each slot's time to live]
    yield 'psk', 'challenges-two', b'\4\1' + bytes(range(32))
    yield 'psk', 'challenges-full', b'\4\0' + bytes(range(32)) + bytes(range(1, 65))
    yield 'psk', 'challenges-full-one-expired', b'\4\0' + bytes(range(32)) + \
        bytes(range(64, 59, -1)) + b'\0' + bytes(range(58, 0, -1))
    yield 'psk', 'challenges-full-same-time', b'\4\0' + bytes(range(32)) + b'\x80' * 64

    # rpma-mirror (fuzz_mirror_wire.c, tools/rpma-mirror/mirror_wire.h)
    def mirror_head(step, version=MIRROR_VERSION, magic=b'RPMAMIRR'):
        return magic + bytes([version, step])
    def mirror_request(step, chunk=1 << 20, length=1 << 30, flags=0, version=MIRROR_VERSION):
        return mirror_head(step, version) + bytes([flags, 0]) + \
            struct.pack('<IQ', chunk, length) + bytes(range(16)) + bytes(range(100, 116))
    yield 'mirror_wire', 'hello-56', mirror_request(1)
    yield 'mirror_wire', 'prove-56', mirror_request(2, flags=1)
    yield 'mirror_wire', 'prove-chunk-min', mirror_request(2, chunk=4096)
    yield 'mirror_wire', 'prove-chunk-max', mirror_request(2, chunk=64 << 20)
    yield 'mirror_wire', 'prove-chunk-small', mirror_request(2, chunk=4095)
    yield 'mirror_wire', 'prove-chunk-big', mirror_request(2, chunk=(64 << 20) + 1)
    yield 'mirror_wire', 'request-step-3', mirror_request(3)
    yield 'mirror_wire', 'request-version-2', mirror_request(1, version=2)
    yield 'mirror_wire', 'request-cut-55', mirror_request(1)[:55]
    yield 'mirror_wire', 'request-head-10', mirror_head(1)
    yield 'mirror_wire', 'request-other-magic', b'RPMAMIRX' + mirror_request(1)[8:]
    challenge = mirror_head(3) + bytes(6) + bytes(range(16)) + bytes(range(64, 96))
    yield 'mirror_wire', 'challenge-64', challenge
    yield 'mirror_wire', 'challenge-padded-196', challenge + bytes(132)
    yield 'mirror_wire', 'challenge-cut-63', challenge[:63]
    mr_desc = versioned_mr(region, all_methods)
    pcfg_desc = versioned_peer_cfg(1, PEER_CFG_GPSPM, 16)
    def mirror_region(mr_size, pcfg_size, descriptors):
        return mirror_head(4) + bytes([mr_size, pcfg_size]) + bytes(4) + \
            struct.pack('<Q', 1 << 30) + bytes(range(200, 216)) + descriptors
    answer = mirror_region(len(mr_desc), len(pcfg_desc), mr_desc + pcfg_desc)
    yield 'mirror_wire', 'region-71', answer
    yield 'mirror_wire', 'region-padded-196', answer + bytes(196 - len(answer))
    yield 'mirror_wire', 'region-197', answer + bytes(197 - len(answer))
    yield 'mirror_wire', 'region-cut-70', answer[:70]
    yield 'mirror_wire', 'region-sizes-255', mirror_region(255, 255, bytes(156))
    yield 'mirror_wire', 'region-head-40', mirror_region(0, 0, b'')
    yield 'mirror_wire', 'region-version-2', mirror_head(4, 2) + answer[10:]

    # the replicated log (fuzz_log_wire.c, examples/19-replicated-log/log_wire.h)
    WRITER, REPLICA = 0x57474f4c, 0x52474f4c
    def writer(step, version=LOG_VERSION, magic=WRITER):
        return struct.pack('<IBBH', magic, version, step, 0) + bytes(range(16)) + \
            bytes(range(50, 66))
    yield 'log_wire', 'hello-40', writer(1)
    yield 'log_wire', 'prove-40', writer(2)
    yield 'log_wire', 'prove-padded-56', writer(2) + bytes(16)
    yield 'log_wire', 'request-version-3', writer(1, version=3)
    yield 'log_wire', 'request-step-3', writer(3)
    yield 'log_wire', 'request-replica-magic', writer(1, magic=REPLICA)
    yield 'log_wire', 'request-cut-39', writer(1)[:39]
    replica_hello = struct.pack('<IBBH', REPLICA, LOG_VERSION, 1, 0) + bytes(range(16)) + \
        bytes(range(64, 96))
    yield 'log_wire', 'replica-hello-56', replica_hello
    yield 'log_wire', 'replica-hello-version-3', struct.pack('<IBBH', REPLICA, 3, 1, 0) + \
        replica_hello[8:]
    yield 'log_wire', 'replica-hello-cut-55', replica_hello[:55]
    yield 'log_wire', 'replica-magic-4', struct.pack('<I', REPLICA)
    def replica_answer(mr_size, pcfg_size, descriptors, version=LOG_VERSION, step=2):
        return struct.pack('<IBBBBQQQ', REPLICA, version, step, mr_size, pcfg_size,
                           0x1234, 4096, 64 << 20) + bytes(range(200, 216)) + descriptors
    answer = replica_answer(len(mr_desc), len(pcfg_desc), mr_desc + pcfg_desc)
    yield 'log_wire', 'replica-answer-79', answer
    yield 'log_wire', 'replica-answer-padded-196', answer + bytes(196 - len(answer))
    yield 'log_wire', 'replica-answer-cut-78', answer[:78]
    yield 'log_wire', 'replica-answer-sizes-255', replica_answer(255, 255, bytes(148))
    # descriptors that the bytes hold, but no connection carries
    yield 'log_wire', 'replica-answer-past-196', replica_answer(120, 40, bytes(162))
    yield 'log_wire', 'replica-answer-version-3', replica_answer(25, 6, mr_desc + pcfg_desc, 3)
    yield 'log_wire', 'replica-answer-head-48', replica_answer(0, 0, b'')


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
