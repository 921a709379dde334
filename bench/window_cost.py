"""What a backend window (Profiler(backend=, backend_window=, window_phase=)) costs a
span, against the same span without one, measured in the same run.

    python bench/window_cost.py [--quick]

Prints ns per `with span(...)` (minimum over repeats, loop overhead subtracted) for:
no window (the reference); a window waiting to open, for a span of another name and
for one of its phase (counted); and a window that has closed (its phase's spans then
pay the hook's call and one load). The backend is a no-op stand-in, so that only
lapse's counting is timed, not torch's or VizTracer's.
"""

from __future__ import annotations

import sys
import tempfile
import time

import lapse
from lapse import Feature, Profiler, _backend

N = 100_000
REPEATS = 21


def best_ns_per_op(loop, n: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter_ns()
        loop(n)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def empty(n: int) -> None:
    for _ in range(n):
        pass


def spans_of(name: str):
    s = lapse.span(name)

    def loop(n: int) -> None:
        for _ in range(n):
            with s:
                pass
    return loop


class NoBackend:
    def open(self) -> None:
        pass

    def close(self) -> str:
        return ""


def measure(n: int, window: tuple[int, int] | None, name: str) -> float:
    options = {} if window is None else {"backend": "torch", "backend_window": window,
                                         "window_phase": "iteration"}
    with tempfile.TemporaryDirectory() as run_dir:
        with Profiler(features=Feature.SPANS, run_dir=run_dir, max_spans=0, **options):
            with lapse.span("iteration"):  # entry 1: a window of (1, 2) opens
                pass
            with lapse.span("iteration"):  # entry 2: ... and closes
                pass
            return best_ns_per_op(spans_of(name), n) - best_ns_per_op(empty, n)


def main() -> None:
    n = N // 10 if "--quick" in sys.argv else N
    _backend.runner = lambda backend: NoBackend()
    _backend.unavailable = lambda backend: None
    rows = [("no window (reference)", None, "iteration"),
            ("window waiting, another span", (10**12, 10**12 + 1), "other"),
            ("window waiting, its phase (counted)", (10**12, 10**12 + 1), "iteration"),
            ("window closed, its phase", (1, 2), "iteration")]
    results = [(label, measure(n, window, name)) for label, window, name in rows]
    reference = results[0][1]
    print(f"Python {sys.version.split()[0]}, {n} spans, best of {REPEATS}")
    for label, ns in results:
        print(f"  {label:40s} {ns:7.1f} ns/span  {ns - reference:+6.1f} ns  x{ns / reference:.2f}")


if __name__ == "__main__":
    main()
