"""The Python target of bench/kill_loop.py: bench/kill_target.c's ticks under
lapse.Profiler.

usage: python kill_target.py SIDE_FILE [TICK_US] [PATHS]

A Profiler(role="killed", snapshot_ms=$LAPSE_SNAPSHOT_MS) session; each tick is a
span "tick" holding one of PATHS spans "step%04d" that spins TICK_US microseconds,
and adds 1 to the counter "work"; after the span ends, the tick's number and end
time (CLOCK_MONOTONIC ns) go to SIDE_FILE, mapped shared, laid out as the C
target's.
"""
import mmap
import os
import struct
import sys
import time
import warnings

import lapse

RING = 65536


def main() -> None:
    side_path = sys.argv[1]
    tick_ns = (int(sys.argv[2]) if len(sys.argv) > 2 else 500) * 1000
    paths = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    size = (2 + RING) * 8
    fd = os.open(side_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.ftruncate(fd, size)
    side = mmap.mmap(fd, size, mmap.MAP_SHARED)
    # distinct names on purpose (a file of some size, as the C target's): not the
    # warning about names built from data
    warnings.filterwarnings("ignore", ".*distinct span names", RuntimeWarning)
    steps = [lapse.span(f"step{i:04d}") for i in range(paths)]
    tick = lapse.span("tick")
    struct.pack_into("<Q", side, 8, time.monotonic_ns())
    profiler = lapse.Profiler(role="killed", snapshot_ms=int(os.environ["LAPSE_SNAPSHOT_MS"]))
    profiler.start()
    print("ready", os.getpid(), profiler.file, flush=True)
    done = 0
    clock = time.monotonic_ns
    while True:
        with tick:
            with steps[done % paths]:
                until = clock() + tick_ns
                while clock() < until:
                    pass
            lapse.count("work", 1)
        struct.pack_into("<Q", side, 16 + 8 * (done % RING), clock())
        done += 1
        struct.pack_into("<Q", side, 0, done)


main()
