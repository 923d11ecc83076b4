#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Times several commands side by side, interleaved (tests/bench/scale.sh).

    interleave.py RUNS WARMUP RAWFILE NAME CMD [NAME CMD]...

Each CMD is split into words as a shell would (shlex), and run with no shell,
stdout and stderr to /dev/null. Each round runs every command once, in an
order rotated from round to round, so that a change in the machine's load
hits all of them alike; WARMUP rounds first, not counted, then RUNS rounds.
For each run: the wall time (from spawn to reaping) and the CPU time of the
child (user and system, from wait4()'s rusage: every thread of it, and the
kernel's work done in its system calls, such as building a netlink dump).

Prints one line per command: NAME median_wall_s median_cpu_s median_user_s
median_sys_s (medians over RUNS). Each run goes to RAWFILE (NAME wall cpu
user sys). Exits 1 when a command fails (non-zero status, killed) or cannot
be started."""
import os
import shlex
import statistics
import sys
import time


def run_once(argv):
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, os.environ,
                              file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1),
                                            (os.POSIX_SPAWN_DUP2, devnull, 2)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
    finally:
        os.close(devnull)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        what = "killed by signal %d" % -code if code < 0 else "exited with %d" % code
        sys.exit("interleave: '%s' %s" % (shlex.join(argv), what))
    return wall, ru.ru_utime, ru.ru_stime


def main():
    if len(sys.argv) < 6 or (len(sys.argv) - 4) % 2:
        sys.exit(__doc__)
    runs, warmup, raw = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    if runs < 1 or warmup < 0:
        sys.exit("interleave: RUNS must be at least 1 and WARMUP at least 0")
    cmds = [(sys.argv[i], shlex.split(sys.argv[i + 1])) for i in range(4, len(sys.argv), 2)]
    res = {name: [] for name, _ in cmds}
    for r in range(warmup + runs):
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            wall, user, sys_ = run_once(argv)
            if r >= warmup:
                res[name].append((wall, user + sys_, user, sys_))
    with open(raw, "w") as f:
        for name, _ in cmds:
            for v in res[name]:
                f.write("%s %.6f %.6f %.6f %.6f\n" % ((name,) + v))
    for name, _ in cmds:
        med = [statistics.median(v[i] for v in res[name]) for i in range(4)]
        print("%s %.6f %.6f %.6f %.6f" % ((name,) + tuple(med)))


if __name__ == "__main__":
    main()
