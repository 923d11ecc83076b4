#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A receiver of sd_notify(3) messages, as systemd's NOTIFY_SOCKET is.

  sd_notify.py ADDR OUT

Receives datagrams on the unix socket ADDR (@name: an abstract socket) and
appends each to OUT, one line per message ("\\n" inside as "|"); creates
OUT.bound once it listens. Runs until killed.
"""
import socket
import sys

addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
open(out + ".bound", "w").close()
with open(out, "a") as f:
    while True:
        d = s.recv(4096)
        f.write(d.decode(errors="replace").replace("\n", "|") + "\n")
        f.flush()
