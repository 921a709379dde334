"""Cost of lapse's Python annotations, against references measured in the same run.

    python bench/py_overhead.py [--quick]

Prints ns per call (minimum over repeats, loop overhead subtracted) and ratios:
a direct call; a dormant decorated call; an active decorator, a call of timed code
(what the decorator runs on 3.11, and on 3.12+ past 32 nested timed calls) and an
active `with span(...)` (SPANS only); count(); and, as the in-run reference, a
minimal pure-Python span (a context-variable path, time.perf_counter_ns, a dict
update).
"""

from __future__ import annotations

import contextvars
import sys
import tempfile
import time

import lapse
import lapse._lapse as core
from lapse import Feature, Profiler, count, span

N = 100_000
REPEATS = 21


def best_ns_per_op(loop, n: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter_ns()
        loop(n)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def f() -> None:
    pass


@span
def decorated() -> None:
    pass


def timed() -> None:
    pass


timed.__code__ = core._timed_code(timed.__code__, core._span_marks("timed"))


# the minimal pure-Python span used as the reference
_path: contextvars.ContextVar[str] = contextvars.ContextVar("path", default="")
_totals: dict[str, list[int]] = {}


class PySpan:
    __slots__ = ("name", "token", "start")

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> PySpan:
        self.token = _path.set(_path.get() + "." + self.name)
        self.start = time.perf_counter_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        elapsed = time.perf_counter_ns() - self.start
        key = _path.get()
        _path.reset(self.token)
        entry = _totals.get(key)
        if entry is None:
            _totals[key] = [1, elapsed]
        else:
            entry[0] += 1
            entry[1] += elapsed


def loop_empty(n: int) -> None:
    for _ in range(n):
        pass


def loop_direct(n: int) -> None:
    for _ in range(n):
        f()


def loop_decorated(n: int) -> None:
    for _ in range(n):
        decorated()


def loop_timed(n: int) -> None:
    for _ in range(n):
        timed()


def loop_with_span(n: int) -> None:
    for _ in range(n):
        with span("block"):
            pass


def loop_phase(n: int) -> None:
    for _ in range(n):
        with lapse.phase("block"):
            pass


def loop_sampled(n: int) -> None:
    for _ in range(n):
        with lapse.phase("sampled_block", sample=0.01):
            pass


def loop_count(n: int) -> None:
    for _ in range(n):
        count("items", 1)


def loop_reference(n: int) -> None:
    for _ in range(n):
        with PySpan("block"):
            pass


def interleaved(loops: dict[str, object], n: int) -> dict[str, float]:
    """ns per op of each loop, minimum over REPEATS rounds; each round runs every
    loop once, so that a slow moment of this shared VM hits them all alike."""
    best = {name: float("inf") for name in loops}
    for _ in range(REPEATS):
        for name, loop in loops.items():
            t0 = time.perf_counter_ns()
            loop(n)  # type: ignore[operator]
            best[name] = min(best[name], (time.perf_counter_ns() - t0) / n)
    return best


def phase_by_features(n: int) -> dict[str, float]:
    """ns per active `with lapse.phase(...)` under a wall-only session and under one
    with the CPU sampler (wait%) and the process sampler: sessions alternate, one
    at a time, minimum over the rounds."""
    configs = {"wall": Feature.SPANS,
               "wait": Feature.SPANS | Feature.CPU,
               "wait+io": Feature.SPANS | Feature.CPU | Feature.IO | Feature.MEMORY}
    best = {name: float("inf") for name in configs}
    empty = float("inf")
    with tempfile.TemporaryDirectory() as run_dir:
        for _ in range(7):
            for name, features in configs.items():
                with Profiler(run_dir=run_dir, max_spans=0, features=features):
                    for _ in range(3):
                        t0 = time.perf_counter_ns()
                        loop_empty(n)
                        empty = min(empty, (time.perf_counter_ns() - t0) / n)
                        t0 = time.perf_counter_ns()
                        loop_phase(n)
                        best[name] = min(best[name], (time.perf_counter_ns() - t0) / n)
    return {name: ns - empty for name, ns in best.items()}


def main() -> None:
    global N
    if "--quick" in sys.argv:
        N = 20_000
    dormant_loops = {"empty": loop_empty, "direct": loop_direct, "dormant": loop_decorated,
                     "dormant_with": loop_with_span, "reference": loop_reference}
    d = interleaved(dormant_loops, N)
    empty = d["empty"]
    direct = d["direct"] - empty
    dormant = d["dormant"] - empty
    dormant_with = d["dormant_with"] - empty
    reference = d["reference"] - empty
    with tempfile.TemporaryDirectory() as run_dir:
        with Profiler(run_dir=run_dir, max_spans=0, features=Feature.SPANS):
            a = interleaved({"empty": loop_empty, "decorator": loop_decorated,
                             "timed": loop_timed, "with": loop_with_span, "phase": loop_phase,
                             "sampled": loop_sampled, "count": loop_count}, N)
    active_decorator = a["decorator"] - a["empty"]
    active_timed = a["timed"] - a["empty"]
    active_with = a["with"] - a["empty"]
    active_phase = a["phase"] - a["empty"]
    sampled = a["sampled"] - a["empty"]
    counted = a["count"] - a["empty"]
    v = sys.version_info
    print(f"lapse {lapse.__version__} on Python {v.major}.{v.minor}.{v.micro} "
          f"({sys.executable}); ns per call, min of {REPEATS} x {N}, loop overhead "
          f"({empty:.1f} ns) subtracted")
    rows = [
        ("direct call of def f(): pass", direct, None),
        ("dormant @span call", dormant, f"{dormant / direct:.2f} x direct"),
        ("dormant `with span(...)`", dormant_with, None),
        ("active @span call (SPANS)", active_decorator,
         f"+{active_decorator - direct:.1f} ns over direct; {(active_decorator - direct) / reference:.3f} x reference"),
        ("active timed code call (SPANS)", active_timed, f"+{active_timed - direct:.1f} ns over direct"),
        ("active `with span(...)` (SPANS)", active_with, f"{active_with / reference:.3f} x reference"),
        ("active `with lapse.phase(...)`", active_phase, f"{active_phase / reference:.3f} x reference"),
        ("active phase(sample=0.01), per entry", sampled, None),
        ("count() on an open span", counted, None),
        ("reference: pure-Python span", reference, None),
    ]
    for label, ns, note in rows:
        print(f"  {label:<36} {ns:8.1f}   {note or ''}")
    target = 1.6  # the plain function itself, on every version
    print("acceptance:")
    print(f"  dormant decorated <= {target} x direct: "
          f"{'PASS' if dormant / direct <= target else 'FAIL'} ({dormant / direct:.2f} x)")
    added = active_decorator - direct
    print(f"  active decorator adds <= 60 ns and <= 0.15 x reference: "
          f"{'PASS' if added <= 60 and added / reference <= 0.15 else 'FAIL'} "
          f"({added:.1f} ns, {added / reference:.3f} x)")
    limit = "<= 150 ns and " if v < (3, 12) else ""
    ok = active_with / reference <= 0.3 and (v >= (3, 12) or active_with <= 150)
    print(f"  active with-span {limit}<= 0.3 x reference: {'PASS' if ok else 'FAIL'} "
          f"({active_with:.1f} ns, {active_with / reference:.3f} x)")
    print(f"  count() <= 60 ns: {'PASS' if counted <= 60 else 'FAIL'} ({counted:.1f} ns)")
    by = phase_by_features(N)
    extra = by["wait"] - by["wall"]
    print(f"  phase with wait% (CPU sampler) <= wall-only phase + 100 ns: "
          f"{'PASS' if extra <= 100 else 'FAIL'} ({by['wall']:.1f} -> {by['wait']:.1f} ns, "
          f"{extra:+.1f} ns; with the process sampler too: {by['wait+io']:.1f} ns)")


if __name__ == "__main__":
    main()
