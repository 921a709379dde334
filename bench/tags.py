"""Cost of an opted-out tagged span against a dormant span, in the same run.

    python bench/tags.py [--quick]

A tag registered with lapse.register_opt_in_tag and not enabled makes its spans
dormant inside an active session. Sessions (SPANS only) alternate with no session, in many short rounds (a busy
machine slows whole rounds);
each row is the minimum ns per operation over repeats, loop overhead not
subtracted (both sides carry it). Target: opted-out / dormant <= 1.2.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import lapse
from lapse import Feature, Profiler, span

QUICK = "--quick" in sys.argv
N = 20_000 if QUICK else 100_000
REPEATS = 5 if QUICK else 7
ROUNDS = 2 if QUICK else 12


def settle() -> None:
    """After a session starts or stops, its threads' work (the first or final write)
    ends before anything is timed."""
    time.sleep(0.05)


def best(loop) -> float:
    out = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter_ns()
        loop(N)
        out = min(out, (time.perf_counter_ns() - t0) / N)
    return out


def main() -> None:
    lapse.register_opt_in_tag("benchlib")
    plain, tagged = span("work"), span("work", tag="benchlib")

    @span
    def f_plain() -> None:
        pass

    @span("f_tagged", tag="benchlib")
    def f_tagged() -> None:
        pass

    def with_loop(s):
        def loop(n: int) -> None:
            for _ in range(n):
                with s:
                    pass
        return loop

    def call_loop(fn):
        def loop(n: int) -> None:
            for _ in range(n):
                fn()
        return loop

    rows: dict[str, list[float]] = {k: [] for k in (
        "with span, dormant", "with span, opted out", "@span call, dormant",
        "@span call, opted out", "with span, active")}
    run_dir = tempfile.mkdtemp(prefix="lapse-tags-bench-")
    for r in range(ROUNDS):
        settle()
        rows["with span, dormant"].append(best(with_loop(plain)))
        rows["@span call, dormant"].append(best(call_loop(f_plain)))
        with Profiler(run_dir=run_dir, role=f"r{r}", features=Feature.SPANS, max_spans=0):
            settle()
            rows["with span, opted out"].append(best(with_loop(tagged)))
            rows["@span call, opted out"].append(best(call_loop(f_tagged)))
            rows["with span, active"].append(best(with_loop(plain)))
    lo = {k: min(v) for k, v in rows.items()}
    print(f"python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}, "
          f"{ROUNDS} rounds x {REPEATS} x {N}, ns per operation (min, loop included)")
    for k, v in lo.items():
        print(f"  {k:<24} {v:8.1f}")
    print(f"opted-out with span / dormant:  {lo['with span, opted out'] / lo['with span, dormant']:.2f} x "
          "(target <= 1.2)")
    print(f"opted-out @span call / dormant: {lo['@span call, opted out'] / lo['@span call, dormant']:.2f} x "
          "(target <= 1.2)")


if __name__ == "__main__":
    main()
