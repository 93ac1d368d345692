#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An Ethernet switch between QEMU processes, over unix datagram sockets.

usage: l2switch.py DIR NAME...          run the switch
       l2switch.py --ctl DIR COMMAND...  send it COMMAND, print the answer

Each guest NAME of a cluster has a NIC made with

    -netdev dgram,id=n0,local.type=unix,local.path=DIR/NAME.sock,
            remote.type=unix,remote.path=DIR/switch.sock

so that every frame it sends arrives here as one datagram from DIR/NAME.sock,
and every datagram sent to DIR/NAME.sock is a frame it receives. The switch
learns which port each source MAC address is behind and forwards a frame to
that port, or to every other port when the destination is unknown or a
broadcast. Nothing leaves the host: the sockets are files in DIR.

A partition is made here, not in the guests, so that neither side can see
it: the control socket DIR/ctl.sock takes datagrams

    cut A B      drop every frame between A and B, both ways
    heal A B     forward them again
    heal         forward everything again
    stats        answer with the frames forwarded and dropped per port

and answers each with "ok" (or the statistics, or "error: ...") to the
sender's address. The switch runs until it gets SIGTERM.
"""

import os
import select
import signal
import socket
import struct
import sys


def ctl_client(directory, command):
    """Send one control command and print the answer (status 1: an error)."""
    path = os.path.join(directory, "ctl-client.%d.sock" % os.getpid())
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    try:
        s.settimeout(10)
        s.sendto(" ".join(command).encode(), os.path.join(directory, "ctl.sock"))
        answer = s.recv(65536).decode(errors="replace")
    finally:
        s.close()
        os.unlink(path)
    print(answer)
    return 1 if answer.startswith("error") else 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--ctl":
        return ctl_client(sys.argv[2], sys.argv[3:])
    if len(sys.argv) < 3:
        sys.stderr.write("usage: l2switch.py DIR NAME...\n")
        return 2
    directory = sys.argv[1]
    names = sys.argv[2:]
    port_of_path = {os.path.join(directory, n + ".sock"): n for n in names}
    path_of_port = {n: p for p, n in port_of_path.items()}

    def bind(name):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            os.unlink(path)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(path)
        return s

    data = bind("switch.sock")
    # A unix datagram socket queues only net.unix.max_dgram_qlen (10)
    # datagrams: a send waits for room, as a switch's buffer would, but
    # never more than 20 ms, so that a guest that stopped reading (killed,
    # or stuck) loses frames instead of stopping the whole segment.
    # Receiving never waits (MSG_DONTWAIT).
    data.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 20000))
    ctl = bind("ctl.sock")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    mac_table = {}  # MAC (6 bytes) -> port name
    cut = set()  # frozenset({A, B}) of ports that cannot reach each other
    forwarded = {n: 0 for n in names}
    dropped = {n: 0 for n in names}

    def send(frame, port):
        if frozenset((src_port, port)) in cut:
            dropped[src_port] += 1
            return
        try:
            data.sendto(frame, path_of_port[port])
            forwarded[src_port] += 1
        except (BlockingIOError, ConnectionRefusedError, FileNotFoundError):
            # the guest is not up (yet, or any more), or does not read: a
            # frame lost
            dropped[src_port] += 1

    def control(message):
        words = message.split()
        if not words:
            return "error: empty command"
        if words[0] in ("cut", "heal") and len(words) == 3:
            a, b = words[1], words[2]
            if a not in path_of_port or b not in path_of_port:
                return "error: unknown machine"
            pair = frozenset((a, b))
            if words[0] == "cut":
                cut.add(pair)
            else:
                cut.discard(pair)
            return "ok"
        if words == ["heal"]:
            cut.clear()
            return "ok"
        if words == ["stats"]:
            return " ".join("%s:%d/%d" % (n, forwarded[n], dropped[n]) for n in names)
        return "error: unknown command"

    ready = os.path.join(directory, "switch.ready")
    with open(ready, "w"):
        pass
    while True:
        readable, _, _ = select.select([data, ctl], [], [])
        if ctl in readable:
            message, sender = ctl.recvfrom(4096)
            answer = control(message.decode(errors="replace"))
            if sender:
                try:
                    ctl.sendto(answer.encode(), sender)
                except OSError:
                    pass
        if data not in readable:
            continue
        while True:
            try:
                frame, sender = data.recvfrom(65536, socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            src_port = port_of_path.get(sender)
            if src_port is None or len(frame) < 14:
                continue
            dst, src = frame[0:6], frame[6:12]
            if not src[0] & 1:
                mac_table[src] = src_port
            port = None if dst[0] & 1 else mac_table.get(dst)
            if port is not None:
                if port != src_port:
                    send(frame, port)
            else:
                for port in names:
                    if port != src_port:
                        send(frame, port)


if __name__ == "__main__":
    sys.exit(main())
