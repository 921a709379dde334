"""The work of the multiprocessing tests' child processes (importable by spawn)."""

from __future__ import annotations

import os
import signal

from lapse import Profiler, span

STEPS = 25


@span
def step(i: int) -> int:
    return i * 2


def work(index: int) -> int:
    with Profiler(role="worker"):  # adopts the session this child inherited
        total = 0
        with span("task"):
            for i in range(STEPS):
                total += step(i)
        return total


def work_without_profiler(index: int) -> int:
    total = 0
    with span("task"):
        for i in range(STEPS):
            total += step(i)
    return total


def work_raises(index: int) -> int:
    with span("task"):
        step(index)
        raise ValueError(f"worker {index} fails on purpose")


def work_killed(index: int) -> int:
    """Worker 0 is SIGKILLed inside its first span, long before a periodic snapshot."""
    if index != 0:
        return work(index)
    with Profiler(role="worker"):
        with span("task"):
            os.kill(os.getpid(), signal.SIGKILL)
    return 0
