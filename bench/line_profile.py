#!/usr/bin/env python3
"""bench/line_profile.py: lapse.LineProfiler against line_profiler 5.x, side by side, in one run.

    python3 bench/line_profile.py [BUILD_DIR]        (default build/)

For each of pyenv's CPython 3.11, 3.12 and 3.13 (BENCH_PYTHONS=a,b to choose) a venv
BUILD_DIR/bench-lines-venv-X.Y gets line_profiler (PyPI, LINE_PROFILER_VERSION) and
this checkout's lapse package (pip install .). In that interpreter, on call-heavy
programs written to a temporary project folder (recursive fib, a loop of method calls
that allocate, a generator pipeline), each program runs REPS times (BENCH_REPS,
default 9) without a profiler, under lapse.LineProfiler (the project folder) and under
line_profiler (every function of the program's module added; its default core:
sys.monitoring on 3.12+, its C trace function on 3.11), in turn. Printed, per program:
the minimum CPU time of each (the thread's: waiting for a CPU on a shared machine is
nobody's cost), the line events (hits counted by lapse, and by
line_profiler: they must agree), ns per line event ((profiled - bare) / events),
slowdown (profiled / bare), and lapse's cost over line_profiler's
((lapse - bare) / (line_profiler - bare)). Target: <= 0.5.

Then a known program (a 30 ms sleep, a computed line, a call of a function that
sleeps 20 ms) bare (each statement timed with perf_counter_ns: the truth) and under
both profilers, 2 x REPS times each in turn: the minimum time of each line (the least
disturbed by other load) and lapse's difference to line_profiler. Target: within 10%
on every line.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

LINE_PROFILER_VERSION = os.environ.get("LINE_PROFILER_VERSION", "5.1.0")
REPO = pathlib.Path(__file__).resolve().parent.parent

WORK = '''\
import time


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


class Point:
    def __init__(self, x):
        self.x = x

    def moved(self, d):
        return Point(self.x + d)


def methods(n):
    p = Point(0)
    for _ in range(n):
        p = p.moved(1)
    return p.x


def numbers(n):
    for i in range(n):
        yield i * 2


def pipeline(n):
    total = 0
    for v in numbers(n):
        total += v
    return total


def sleepy():
    time.sleep(0.02)


def known():
    time.sleep(0.03)
    sum(range(50000))
    sleepy()
'''
_SOURCE = WORK.splitlines()
KNOWN_LINES = {label: _SOURCE.index(f"    {text}") + 1 for label, text in (
    ("sleep 30 ms", "time.sleep(0.03)"), ("sum(range(50000))", "sum(range(50000))"),
    ("sleepy(): 20 ms inside", "sleepy()"))}

CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import work
from lapse import LineProfiler as LapseProfiler
import line_profiler

reps = int(sys.argv[2])
programs = {"fib(23)": lambda: work.fib(23), "methods(100000)": lambda: work.methods(100000),
            "pipeline(150000)": lambda: work.pipeline(150000)}
lp = line_profiler.LineProfiler()
lp.add_module(work)


def lp_events():
    return sum(h for lines in lp.get_stats().timings.values() for _, h, _ in lines)


def run(mode, fn):
    # the thread's CPU time: on a shared machine, time spent waiting for a CPU is not
    # the profiler's
    clock = time.thread_time
    if mode == "bare":
        t = clock(); fn(); return clock() - t, 0
    if mode == "lapse":
        p = LapseProfiler(root=sys.argv[1])
        p.clear()
        t = clock()
        with p:
            fn()
        t = clock() - t
        return t, sum(l.hits for f in p.get_stats() for l in f.lines)
    lp_before = lp_events()
    t = clock()
    lp.enable_by_count(); fn(); lp.disable_by_count()
    t = clock() - t
    return t, lp_events() - lp_before


out = {"python": sys.version.split()[0], "line_profiler": line_profiler.__version__,
       "programs": {}, "known": {}}
for name, fn in programs.items():
    best = {"bare": 1e9, "lapse": 1e9, "line_profiler": 1e9}
    events = {}
    for _ in range(reps):
        for mode in best:
            t, n = run(mode, fn)
            best[mode] = min(best[mode], t)
            if n:
                events[mode] = n
    out["programs"][name] = {"s": best, "events": events}

lines = [int(x) for x in sys.argv[3].split(",")]
per = {"lapse": {n: [] for n in lines}, "line_profiler": {n: [] for n in lines},
       "bare": {n: [] for n in lines}}
for _ in range(2 * reps):
    # the same three statements timed with perf_counter_ns, no profiler: the truth
    t0 = time.perf_counter_ns(); time.sleep(0.03)
    t1 = time.perf_counter_ns(); sum(range(50000))
    t2 = time.perf_counter_ns(); work.sleepy()
    t3 = time.perf_counter_ns()
    for n, ns in zip(lines, (t1 - t0, t2 - t1, t3 - t2)):
        per["bare"][n].append(ns)
    p = LapseProfiler(root=sys.argv[1]); p.clear()
    with p:
        work.known()
    got = {l.lineno: l.time_ns for f in p.get_stats() if f.name == "known" for l in f.lines}
    for n in lines:
        per["lapse"][n].append(got.get(n, 0))
    k = line_profiler.LineProfiler(); k.add_function(work.known)
    k.enable_by_count(); work.known(); k.disable_by_count()
    st = k.get_stats()
    got = {ln: t * st.unit * 1e9 for key, v in st.timings.items() if key[2] == "known" for ln, _, t in v}
    for n in lines:
        per["line_profiler"][n].append(got.get(n, 0))
out["known"] = {who: {n: min(v) for n, v in d.items()} for who, d in per.items()}
print(json.dumps(out))
'''


def pythons() -> list[str]:
    chosen = os.environ.get("BENCH_PYTHONS")
    if chosen:
        return chosen.split(",")
    found = []
    for v in ("3.11", "3.12", "3.13"):
        for p in sorted(pathlib.Path.home().glob(f".pyenv/versions/{v}*/bin/python{v}")):
            found.append(str(p))
            break
    return found


def venv_for(python: str, build: pathlib.Path) -> pathlib.Path:
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    venv = build / f"bench-lines-venv-{version}"
    if not (venv / "bin" / "python").exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run(pip + [f"line_profiler=={LINE_PROFILER_VERSION}"], check=True)
    subprocess.run(pip + [str(REPO)], check=True)
    return venv


def report(r: dict) -> None:
    print(f"== CPython {r['python']}, line_profiler {r['line_profiler']}")
    print(f"{'program':<16} {'bare cpu ms':>11} {'lapse':>7} {'lp':>7} {'events':>9} "
          f"{'lapse ns/ev':>11} {'lp ns/ev':>9} {'lapse x':>8} {'lp x':>6} {'cost ratio':>10}")
    for name, p in r["programs"].items():
        s, ev = p["s"], p["events"]
        n = ev.get("lapse", 0)
        if ev.get("lapse") != ev.get("line_profiler"):
            print(f"  (events disagree: lapse {ev.get('lapse')}, line_profiler "
                  f"{ev.get('line_profiler')})")
        lapse_ns = (s["lapse"] - s["bare"]) / n * 1e9 if n else float("nan")
        lp_ns = (s["line_profiler"] - s["bare"]) / n * 1e9 if n else float("nan")
        ratio = (s["lapse"] - s["bare"]) / (s["line_profiler"] - s["bare"])
        print(f"{name:<16} {s['bare'] * 1e3:>11.1f} {s['lapse'] * 1e3:>7.1f} "
              f"{s['line_profiler'] * 1e3:>7.1f} {n:>9} {lapse_ns:>11.1f} {lp_ns:>9.1f} "
              f"{s['lapse'] / s['bare']:>8.2f} {s['line_profiler'] / s['bare']:>6.2f} "
              f"{ratio:>10.2f}  {'ok' if ratio <= 0.5 else 'ABOVE 0.5'}")
    print(f"known program, minimum per line:  {'bare ms':>8} {'lapse ms':>9} {'lp ms':>8} "
          f"{'lapse-lp':>8}")
    for label, n in KNOWN_LINES.items():
        a, b = r["known"]["lapse"][str(n)], r["known"]["line_profiler"][str(n)]
        bare = r["known"]["bare"][str(n)]
        diff = (a - b) / b if b else float("nan")
        print(f"  line {n} {label:<24} {bare / 1e6:>8.2f} {a / 1e6:>9.2f} {b / 1e6:>8.2f} "
              f"{diff * 100:>+7.1f}%  {'ok' if abs(diff) <= 0.10 else 'OUTSIDE 10%'}")
    print()


def main() -> int:
    build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "build").resolve()
    build.mkdir(parents=True, exist_ok=True)
    reps = os.environ.get("BENCH_REPS", "9")
    print(f"load: {open('/proc/loadavg').read().split()[:3]}")
    with tempfile.TemporaryDirectory() as project:
        (pathlib.Path(project) / ".git").mkdir()
        (pathlib.Path(project) / "work.py").write_text(WORK)
        for python in pythons():
            venv = venv_for(python, build)
            r = subprocess.run([str(venv / "bin" / "python"), "-c", CHILD, project, reps,
                                ",".join(str(n) for n in KNOWN_LINES.values())],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"== {python}: the benchmark failed:\n{r.stderr}")
                return 1
            report(json.loads(r.stdout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
