"""Python threads that alternate spinning and sleeping phases of 0.2, 0.5, 2, 5, 20
and 50 ms under a default Profiler(), and measure the truth themselves: their CPU
clock (time.thread_time_ns) and CLOCK_MONOTONIC at the entry and exit of each phase.
The Python twin of tests/e2e/e2e_wait_phases.c, run by bench/wait_accuracy.py and
tests/python/test_wait_share.py.

    python bench/wait_phases.py THREADS SECONDS RUN_DIR

Prints one line per path, summed over the threads: <path> <entries> <wall ns> <cpu ns>,
then "file <the session's .lapse file>".
"""

from __future__ import annotations

import sys
import threading
import time

import lapse
from lapse import Profiler

LENGTHS_MS = ("0.2", "0.5", "2", "5", "20", "50")


def phase_loop(truth: dict[str, list[int]], lock: threading.Lock, deadline: float) -> None:
    mine: dict[str, list[int]] = {}

    def phase(name: str, spin: bool, seconds: float) -> None:
        with lapse.phase(name):
            w0, c0 = time.monotonic_ns(), time.thread_time_ns()
            if spin:
                end = time.perf_counter() + seconds
                while time.perf_counter() < end:
                    pass
            else:
                time.sleep(seconds)
            c1, w1 = time.thread_time_ns(), time.monotonic_ns()
        acc = mine.setdefault(f"work/{name}", [0, 0, 0])
        acc[0] += 1
        acc[1] += w1 - w0
        acc[2] += c1 - c0

    while time.monotonic() < deadline:
        for ms in LENGTHS_MS:
            seconds = float(ms) / 1000
            with lapse.phase("work"):
                w0, c0 = time.monotonic_ns(), time.thread_time_ns()
                for _ in range(max(1, round(50 / float(ms)))):
                    phase(f"spin_{ms}ms", True, seconds)
                    phase(f"sleep_{ms}ms", False, seconds)
                c1, w1 = time.thread_time_ns(), time.monotonic_ns()
            acc = mine.setdefault("work", [0, 0, 0])
            acc[0] += 1
            acc[1] += w1 - w0
            acc[2] += c1 - c0
    with lock:
        for path, values in mine.items():
            total = truth.setdefault(path, [0, 0, 0])
            for i, v in enumerate(values):
                total[i] += v


def main() -> int:
    if len(sys.argv) != 4:
        print("usage: wait_phases.py THREADS SECONDS RUN_DIR", file=sys.stderr)
        return 2
    threads, seconds, run_dir = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    truth: dict[str, list[int]] = {}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    with Profiler(run_dir=run_dir, role="phases") as p:  # the default features
        workers = [threading.Thread(target=phase_loop, args=(truth, lock, deadline))
                   for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    for path, (entries, wall, cpu) in sorted(truth.items()):
        print(path, entries, wall, cpu)
    print("file", p.file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
