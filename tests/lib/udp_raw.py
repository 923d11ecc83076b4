#!/usr/bin/env python3
"""UDP datagrams written raw (AF_PACKET) out of a device, counted by the sender.

The tests that need traffic whose every packet they can account for send it
out of one end of a veth pair and count it with filters on the other end's
ingress (tests/daemon/aggregate.sh, churn.sh):

  udp_raw.py DEV DPORT:SIZE:COUNT...
      COUNT datagrams to each DPORT, in order;
  udp_raw.py DEV --for SECONDS --rate PPS DPORT:SIZE...
      for SECONDS, PPS datagrams a second in all, round robin over the DPORTs.

SIZE is the length of the IP packet (at least 28): what a filter on the
peer's ingress counts as bytes (the Ethernet header is pulled before the
ingress hook). The frames are IPv4 198.51.100.2:40000 -> 198.51.100.1:DPORT
to the broadcast MAC address.

A datagram that the device refuses (ENOBUFS: the peer's backlog is full, and
the frame was dropped before its ingress) is not counted, and sent again with
counts, skipped with --for. Prints one JSON object:
{"DPORT": {"packets": N, "bytes": N}, ...}.
"""
import errno
import json
import socket
import struct
import sys
import time


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    return ~(s + (s >> 16)) & 0xFFFF


def frame(dport, size):
    if not 28 <= size <= 1500:
        raise SystemExit("udp_raw.py: IP packet size %d is not within 28..1500" % size)
    udp = struct.pack("!HHHH", 40000, dport, size - 20, 0) + b"x" * (size - 28)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, size, 1, 0, 64, 17, 0,
                     socket.inet_aton("198.51.100.2"), socket.inet_aton("198.51.100.1"))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01\x08\x00" + ip + udp


def send(s, buf):
    """True when the device took the frame, False on ENOBUFS."""
    try:
        s.send(buf)
        return True
    except OSError as e:
        if e.errno != errno.ENOBUFS:
            raise
        return False


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    dev, args = argv[0], argv[1:]
    seconds = rate = None
    if args[0] == "--for":
        seconds, rate, args = float(args[1]), float(args[3]), args[4:]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    specs = [[int(x) for x in a.split(":")] for a in args]
    out = {}
    for sp in specs:
        out.setdefault(str(sp[0]), {"packets": 0, "bytes": 0})
    frames = [(str(sp[0]), sp[1], frame(sp[0], sp[1])) for sp in specs]

    def sent(key, size):
        out[key]["packets"] += 1
        out[key]["bytes"] += size

    if seconds is None:
        for (key, size, buf), sp in zip(frames, specs):
            for _ in range(sp[2]):
                while not send(s, buf):
                    time.sleep(0.001)
                sent(key, size)
    else:
        start = time.monotonic()
        n = 0
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= seconds:
                break
            due = int(elapsed * rate)
            if n >= due:
                time.sleep(min(0.002, seconds - elapsed))
                continue
            while n < due:
                key, size, buf = frames[n % len(frames)]
                n += 1
                if send(s, buf):
                    sent(key, size)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
