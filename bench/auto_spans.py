"""Cost of automatic spans (Profiler(auto=...)), against references measured in the
same run.

    python bench/auto_spans.py [--quick]

Two modules written to a temporary folder, each `def f(): pass`: one chosen
(auto=), one not. Sessions with and without auto alternate; in each, ns per call
(minimum over repeats) of both modules' f. Prints what auto adds to a call of a
chosen function, what it adds to a function outside the chosen modules (0 is the
target), an active @span call for reference, and checks that the chosen function's
span counts every call exactly.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time
import warnings

import lapse
from lapse import Feature, Profiler, span

QUICK = "--quick" in sys.argv
N = 20_000 if QUICK else 100_000
REPEATS = 5 if QUICK else 7
ROUNDS = 2 if QUICK else 12


def best_ns_per_call(fn, n: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def main() -> None:
    folder = tempfile.mkdtemp(prefix="lapse-auto-bench-")
    for name in ("auto_chosen", "auto_other"):
        with open(os.path.join(folder, name + ".py"), "w") as out:
            out.write("def f():\n    pass\n")
    sys.path.insert(0, folder)
    chosen = importlib.import_module("auto_chosen")
    other = importlib.import_module("auto_other")

    @span
    def decorated() -> None:
        pass

    rows: dict[str, list[float]] = {k: [] for k in (
        "chosen, no auto", "chosen, auto", "other, no auto", "other, auto", "@span, no auto")}
    counted_ok = True
    run_dir = tempfile.mkdtemp(prefix="lapse-auto-run-")
    for r in range(ROUNDS):
        for auto in ((), ("auto_chosen",)) if r % 2 == 0 else (("auto_chosen",), ()):
            label = "auto" if auto else "no auto"
            with Profiler(run_dir=run_dir, role=f"r{r}{label[:2]}", features=Feature.SPANS,
                          max_spans=0, auto=auto) as p:
                time.sleep(0.05)  # the session's first write is over before anything is timed
                rows[f"chosen, {label}"].append(best_ns_per_call(chosen.f, N))
                rows[f"other, {label}"].append(best_ns_per_call(other.f, N))
                if not auto:
                    rows["@span, no auto"].append(best_ns_per_call(decorated, N))
            if auto:
                calls = p.result().stats()["f"].calls
                counted_ok &= calls == N * REPEATS
    lo = {k: min(v) for k, v in rows.items()}
    print(f"python {sys.version.split()[0]}, lapse {lapse.__version__}, "
          f"load {os.getloadavg()[0]:.1f}, {ROUNDS} rounds x {REPEATS} x {N} calls, ns per call (min)")
    for k, v in lo.items():
        print(f"  {k:<24} {v:8.1f}")
    added = lo["chosen, auto"] - lo["chosen, no auto"]
    outside = lo["other, auto"] - lo["other, no auto"]
    span_added = lo["@span, no auto"] - lo["chosen, no auto"]
    print(f"auto span, added per call:           {added:+8.1f} ns  (target <= 150)")
    print(f"function outside the chosen modules: {outside:+8.1f} ns  "
          f"({lo['other, auto'] / lo['other, no auto']:.2f} x; target 0)")
    print(f"active @span, added per call:        {span_added:+8.1f} ns  "
          f"(auto / @span {added / span_added:.2f} x)")
    print(f"calls counted exactly: {'yes' if counted_ok else 'NO'}")


if __name__ == "__main__":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        main()
