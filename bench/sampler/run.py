#!/usr/bin/env python3
"""bench/sampler: the external sampler against py-spy and Austin, side by side, in one run.

    python3 bench/sampler/run.py [BUILD_DIR] [--baseline OTHER_BUILD] [--parts 1,2,3,4,5]

BUILD_DIR (default build/) holds `lapse` and liblapse_tools.a. py-spy and Austin
(PyPI `py-spy`, `austin-dist`) are installed into BUILD_DIR/bench-venv for the
benchmark only (BENCH_NO_PEERS=1 skips them). The target is bench/sampler/deep.py
on BENCH_PYTHON (default: pyenv's newest 3.12): pure Python, a 50-frame stack, three
leaf functions.

With --baseline, parts 1 and 5 measure OTHER_BUILD (e.g. main's) beside BUILD_DIR, in
turn, in the same run: the paired before/after.

Prints:
  1. sampler CPU per pass on the 50-frame stack: back to back (sample_cost: reading
     only; also on a target with 201 threads, back to back and inside `lapse record` at
     100 Hz), and inside `lapse record` at 1 kHz (CLOCK_THREAD_CPUTIME_ID of the
     sampling thread over the passes: reading, aggregation, sleeping and waking);
  2. sustained rate: `lapse record` asked 1, 2, 5, 10, 20 kHz: achieved rate and
     late passes; the highest rate with < 1% late and >= 99% of the asked rate;
  3. target slowdown at 1 kHz: the target's own wall and CPU time for a fixed amount
     of work (BENCH_ROUNDS, default 6000: about 1.7 s; measured inside it, start-up
     excluded), over BENCH_REPEATS (default 10) rounds, each of one run unsampled,
     under lapse, a second unsampled run (the control), under py-spy (--nonblocking)
     and under Austin; each tool attaches to the parked target before its work starts;
     the target is pinned to the last CPU and py-spy and Austin to the others
     (taskset); lapse is not pinned: it reads on the target's CPU (so its cost lands
     on the target);
     the slowdown is the mean of the per-round ratios to the unsampled run with its
     95% confidence interval (the control's is the method's own noise), and also
     the median ratio and the ratio of the minima;
  4. agreement: lapse and py-spy (and Austin) attached to the same process at the
     same time at 1 kHz; self shares of py-spy's top-10 functions and the largest
     difference in percentage points;
  5. torn reads on call-heavy programs: pyperformance's raytrace, richards, deltablue,
     go, chaos and nbody (the pinned release, PYPERFORMANCE; BENCH_PROGRAMS to choose)
     run by pyperf_target.py for BENCH_TORN_SECONDS (default 3) of work, on each of
     pyenv's 3.11, 3.12 and 3.13 (BENCH_PYTHONS=a,b to choose): py-spy in its default
     (blocking) mode twice (A and B: the noise floor) and each lapse build once, each
     on its own run at 1 kHz; per program, passes, read errors as a share of them,
     the largest difference in self share over py-spy A's top 10 (functions by name:
     py-spy shows co_name), and lapse's CPU per pass.
Acceptance targets are printed beside each figure. The machine may be shared:
the load average is printed with the figures.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEEP = HERE / "deep.py"
DEPTH = 50


def find_python() -> str:
    if os.environ.get("BENCH_PYTHON"):
        return os.environ["BENCH_PYTHON"]
    found = sorted(pathlib.Path.home().glob(".pyenv/versions/3.12*/bin/python3.12"))
    return str(found[-1]) if found else shutil.which("python3")


def load() -> str:
    return open("/proc/loadavg").read().split()[0]


def start_deep(python: str) -> subprocess.Popen:
    p = subprocess.Popen([python, str(DEEP), str(DEPTH), "0"], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    return p


def stop(p: subprocess.Popen) -> None:
    p.kill()
    p.wait()


SUMMARY = re.compile(r"(\d+) passes in ([\d.]+) s, ([\d.]+) Hz achieved of ([\d.]+) asked, (\d+) late, "
                     r"(\d+) read errors.*sampler CPU ([\d.]+) us per pass")


MANY_THREADS = ("import threading, time\n"
                "ev = threading.Event()\n"
                "for i in range(200):\n"
                "    threading.Thread(target=ev.wait, name=f'w{i}', daemon=True).start()\n"
                "print('ready', flush=True)\n"
                "time.sleep(600)\n")


def lapse_record(build: pathlib.Path, *args, timeout=120) -> dict:
    r = subprocess.run([str(build / "lapse"), "record", *map(str, args)], capture_output=True, text=True,
                       timeout=timeout)
    m = SUMMARY.search(r.stderr)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"lapse record failed: {r.stderr}")
    passes, secs, achieved, asked, late, errors, cpu = m.groups()
    return {"passes": int(passes), "seconds": float(secs), "achieved": float(achieved), "asked": float(asked),
            "late": int(late), "errors": int(errors), "cpu_us": float(cpu)}


def build_sample_cost(build: pathlib.Path) -> pathlib.Path:
    exe = build / "sample_cost"
    src = HERE / "sample_cost.c"
    lib = build / "liblapse_tools.a"
    if not exe.exists() or exe.stat().st_mtime < max(src.stat().st_mtime, lib.stat().st_mtime):
        subprocess.run(["cc", "-O2", "-D_GNU_SOURCE", f"-I{REPO / 'src'}", "-o", str(exe), str(src), str(lib)],
                       check=True)
    return exe


PYSPY = "0.4.3"  # pinned: 0.4.1's blocking runs of one program on 3.13 disagreed by 10 points


def peers(build: pathlib.Path) -> dict[str, str]:
    if os.environ.get("BENCH_NO_PEERS"):
        return {}
    venv = build / "bench-venv"
    pyspy, austin = venv / "bin" / "py-spy", venv / "bin" / "austin"
    if not pyspy.exists() or not austin.exists():
        print(f"   installing py-spy and austin-dist into {venv} (for the benchmark only)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        # austin-dist 4 needs glibc 2.38; 3.x runs on older systems
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"py-spy=={PYSPY}", "austin-dist<4"],
                       check=True)
    out = {}
    if pyspy.exists():
        out["py-spy"] = str(pyspy)
    if austin.exists() and subprocess.run([str(austin), "--version"], capture_output=True).returncode == 0:
        out["austin"] = str(austin)
    return out


# ---- self shares from each tool's collapsed output ----

def shares_lapse(text: str) -> dict[str, float]:
    c: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        if len(frames) < 2:
            continue  # a thread with no Python frame
        fn = frames[-1].split(" (")[0]
        c[fn] = c.get(fn, 0) + float(n)
    return normalise(c)


def shares_pyspy(text: str) -> dict[str, float]:
    c: dict[str, float] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        stack, n = line.rsplit(" ", 1)
        fn = stack.split(";")[-1].split(" (")[0]
        c[fn] = c.get(fn, 0) + float(n)
    return normalise(c)


def shares_austin(text: str) -> dict[str, float]:
    c: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        if len(frames) < 3:
            continue
        parts = frames[-1].rsplit(":", 2)
        fn = parts[1] if len(parts) == 3 else frames[-1]
        c[fn] = c.get(fn, 0) + float(n)
    return normalise(c)


def normalise(c: dict[str, float]) -> dict[str, float]:
    total = sum(c.values())
    return {k: v / total for k, v in c.items()} if total else {}


# ---- the four parts ----

def part_cpu(builds, python):
    print("== 1. sampler CPU per pass, 50-frame stack (target: <= 20 us)"
          + ("; each build in turn, on the same targets" if len(builds) > 1 else ""))
    exes = {label: build_sample_cost(build) for label, build in builds.items()}
    tag = (lambda label: f"{label}, ") if len(builds) > 1 else (lambda label: "")
    p = start_deep(python)
    try:
        for i in range(3):
            for label, exe in exes.items():
                r = subprocess.run([str(exe), str(p.pid), "20000"], capture_output=True, text=True, check=True)
                print(f"   {tag(label)}back to back, run {i + 1}: {r.stdout.strip()}   (load {load()})")
        many = subprocess.Popen([python, "-c", MANY_THREADS], stdout=subprocess.PIPE, text=True)
        try:
            assert many.stdout.readline().strip() == "ready"
            for label, exe in exes.items():
                r = subprocess.run([str(exe), str(many.pid), "2000"], capture_output=True, text=True, check=True)
                print(f"   {tag(label)}back to back, 201 threads waiting on an Event (5 frames each): "
                      f"{r.stdout.strip()}")
            with tempfile.TemporaryDirectory() as d:
                for label, build in builds.items():
                    rec = lapse_record(build, "--pid", many.pid, "-r", 100, "-d", 2, "-o", f"{d}/x.txt")
                    print(f"   {tag(label)}lapse record at 100 Hz, the 201 threads: {rec['cpu_us']:.1f} us of "
                          f"sampling-thread CPU per pass ({rec['passes']} passes)   (load {load()})")
        finally:
            stop(many)
        exe = next(iter(exes.values()))
        for rate in (1000, 10000):
            wake = subprocess.run([str(exe), "--wake", str(rate), str(rate * 2)], capture_output=True, text=True,
                                  check=True).stdout
            wake_us = float(re.search(r"cpu_us_per_wake ([\d.]+)", wake).group(1))
            for label, build in builds.items():
                with tempfile.TemporaryDirectory() as d:
                    rec = lapse_record(build, "--pid", p.pid, "-r", rate, "-d", 3, "-o", f"{d}/x.txt")
                print(f"   {tag(label)}lapse record at {rate // 1000} kHz: {rec['cpu_us']:.1f} us of sampling-thread "
                      f"CPU per pass ({rec['passes']} passes, {rec['achieved']:.0f} Hz achieved, {rec['late']} "
                      f"late); a thread that only sleeps and wakes on that schedule: {wake_us:.1f} us per wake; "
                      f"difference {rec['cpu_us'] - wake_us:.1f} us   (load {load()})")
    finally:
        stop(p)
    print()


def part_rate(build, python):
    print("== 2. sustained rate (target: >= 10 kHz with < 1% late)")
    p = start_deep(python)
    best = best_late = None
    try:
        with tempfile.TemporaryDirectory() as d:
            for rate in (1000, 2000, 5000, 10000, 20000):
                rec = lapse_record(build, "--pid", p.pid, "-r", rate, "-d", 2, "-o", f"{d}/x.txt")
                late = rec["late"] / max(rec["passes"], 1)
                ok_late = late < 0.01
                ok = ok_late and rec["achieved"] >= 0.99 * rate
                best = rate if ok else best
                best_late = rate if ok_late else best_late
                print(f"   asked {rate:6d} Hz: achieved {rec['achieved']:8.1f} Hz "
                      f"({rec['achieved'] / rate * 100:5.1f}%), late {late * 100:5.2f}% "
                      f"({rec['late']}/{rec['passes']}), read errors {rec['errors']}, "
                      f"{rec['cpu_us']:.1f} us CPU per pass  late<1%: {'yes' if ok_late else 'no'}, "
                      f"achieved>=99%: {'yes' if rec['achieved'] >= 0.99 * rate else 'no'}   (load {load()})")
    finally:
        stop(p)
    print(f"   highest rate with < 1% late: {best_late if best_late else 'none of those asked'} Hz; "
          f"also achieving >= 99% of it: {best if best else 'none of those asked'} Hz")
    print()


# two-sided 95% Student t quantiles by degrees of freedom (1..30; larger: 2.0)
T95 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11,
       2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04]


def mean_ci(xs: list[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval."""
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, float("nan")
    t = T95[len(xs) - 2] if len(xs) - 1 <= len(T95) else 2.0
    return m, t * statistics.stdev(xs) / len(xs) ** 0.5


def pinning() -> tuple[list[str], list[str]]:
    """taskset prefixes putting the target on the last CPU and the sampler on the
    others (none on a single CPU or without taskset)."""
    n = os.cpu_count() or 1
    if n < 2 or not shutil.which("taskset"):
        return [], []
    return ["taskset", "-c", str(n - 1)], ["taskset", "-c", f"0-{n - 2}"]


def attached_run(python: str, rounds: str, sampler: list[str] | None, pin: bool = True) -> tuple[float, float] | None:
    """One timed run of the target: started and parked, the sampler (a command with
    {pid} in it, or None) attached, then the rounds; the target's own wall and CPU
    time for them. None when the sampler did not stay attached."""
    pin_target, pin_sampler = pinning()
    t = subprocess.Popen([*pin_target, python, str(DEEP), str(DEPTH), "--rounds", rounds, "--go"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    q = None
    try:
        assert t.stdout.readline().strip() == "ready"
        if sampler:
            q = subprocess.Popen([*(pin_sampler if pin else []), *(a.replace("{pid}", str(t.pid)) for a in sampler)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # attached, and past its start-up
        if q and q.poll() is not None:
            print(f"   {pathlib.Path(sampler[0]).name} ended before the run: {q.stderr.read()[-300:]!r}")
            return None
        t.stdin.write("go\n")
        t.stdin.flush()
        m = re.search(r"rounds \d+ in ([\d.]+) s, cpu ([\d.]+) s", t.stdout.readline())
        t.stdin.close()
        t.wait(timeout=60)
        if q:
            q.wait(timeout=60)
        return (float(m.group(1)), float(m.group(2))) if m else None
    finally:
        for p in (t, q):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def part_slowdown(build, python, tools):
    repeats = int(os.environ.get("BENCH_REPEATS", "10"))
    rounds = os.environ.get("BENCH_ROUNDS", "6000")
    pin_target, _ = pinning()
    print(f"== 3. target slowdown at 1 kHz (target: <= 1% and not above py-spy's); {repeats} rounds of runs, "
          f"{rounds} rounds of work each; every tool attached to a parked target before its timed work starts"
          + (f"; target on CPU {pin_target[-1]}, py-spy and Austin on the others, lapse where it places "
             "itself (on the target's CPU: its reads run while the target waits)" if pin_target else "; not pinned"))
    with tempfile.TemporaryDirectory() as d:
        cmds = {"unsampled": None,
                "lapse": [str(build / "lapse"), "record", "--pid", "{pid}", "-r", "1000", "--format", "collapsed",
                          "-o", f"{d}/l.txt"],
                "control": None}
        if "py-spy" in tools:
            cmds["py-spy"] = [tools["py-spy"], "record", "--pid", "{pid}", "--nonblocking", "-r", "1000",
                              "--format", "raw", "-o", f"{d}/p.txt"]
        if "austin" in tools:
            cmds["austin"] = [tools["austin"], "-p", "{pid}", "-i", "1ms", "-o", f"{d}/a.txt"]
        runs = {k: [] for k in cmds}  # per round: (wall, cpu) or None
        for i in range(repeats):
            for k, cmd in cmds.items():
                runs[k].append(attached_run(python, rounds, cmd, pin=k != "lapse"))
    print("   'control' is a second unsampled run in each round: its figures are the noise of this method")
    for label, idx in (("CPU", 1), ("wall", 0)):
        base = [r[idx] if r else None for r in runs["unsampled"]]
        ok = [b for b in base if b]
        spread = (max(ok) - min(ok)) / min(ok)
        print(f"   target {label} time, unsampled: min {min(ok):.3f} s, median {statistics.median(ok):.3f} s, "
              f"spread {spread * 100:.1f}%")
        for k in cmds:
            if k == "unsampled":
                continue
            ratios = [r[idx] / b - 1 for r, b in zip(runs[k], base) if r and b]
            if not ratios:
                print(f"      {k:9s}: no run completed")
                continue
            m, ci = mean_ci(ratios)
            mins = min(r[idx] for r in runs[k] if r) / min(ok) - 1
            print(f"      {k:9s}: {m * 100:+.2f}% +/- {ci * 100:.2f} (mean of {len(ratios)} paired ratios, 95% CI), "
                  f"median {statistics.median(ratios) * 100:+.2f}%, of the minima {mins * 100:+.2f}%; "
                  f"rounds {' '.join(f'{x * 100:+.1f}' for x in ratios)}")
    print(f"   (load {load()})")
    print()


def part_agreement(build, python, tools):
    print("== 4. self-time agreement with py-spy (target: top-10 within 2 percentage points); "
          "all attached to one process at 1 kHz for 5 s")
    p = start_deep(python)
    try:
        with tempfile.TemporaryDirectory() as d:
            procs = {"lapse": subprocess.Popen([str(build / "lapse"), "record", "--pid", str(p.pid), "-r", "1000",
                                                "-d", "5", "--format", "collapsed", "-o", f"{d}/l.txt"],
                                               stderr=subprocess.PIPE, text=True)}
            if "py-spy" in tools:
                procs["py-spy"] = subprocess.Popen([tools["py-spy"], "record", "--pid", str(p.pid), "--nonblocking",
                                                    "-r", "1000", "-d", "5", "--format", "raw", "-o", f"{d}/p.txt"],
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if "austin" in tools:
                procs["austin"] = subprocess.Popen([tools["austin"], "-p", str(p.pid), "-i", "1ms", "-x", "5",
                                                    "-o", f"{d}/a.txt"], stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.PIPE, text=True)
            for k, q in procs.items():
                q.wait(timeout=60)
            sh = {"lapse": shares_lapse(pathlib.Path(f"{d}/l.txt").read_text())}
            if "py-spy" in tools:
                sh["py-spy"] = shares_pyspy(pathlib.Path(f"{d}/p.txt").read_text())
            if "austin" in tools and pathlib.Path(f"{d}/a.txt").exists():
                sh["austin"] = shares_austin(pathlib.Path(f"{d}/a.txt").read_text())
    finally:
        stop(p)
    if "py-spy" not in sh:
        print("   py-spy not available: no comparison")
        return
    top = sorted(sh["py-spy"], key=lambda f: -sh["py-spy"][f])[:10]
    cols = [k for k in ("py-spy", "lapse", "austin") if k in sh]
    print("   function      " + "".join(f"{c:>9s}" for c in cols) + "   lapse - py-spy")
    worst = 0.0
    for f in top:
        diff = (sh["lapse"].get(f, 0) - sh["py-spy"][f]) * 100
        worst = max(worst, abs(diff))
        print(f"   {f[:13]:13s} " + "".join(f"{sh[c].get(f, 0) * 100:8.1f}%" for c in cols) + f"   {diff:+6.2f} pp")
    print(f"   largest difference over py-spy's top 10: {worst:.2f} percentage points   (load {load()})")
    print()


# ---- 5. torn reads on call-heavy third-party programs ----

PYPERFORMANCE = "1.14.0"  # pinned: the programs (and so the figures) are this release's
PROGRAMS = ("raytrace", "richards", "deltablue", "go", "chaos", "nbody")
TARGET = HERE / "pyperf_target.py"


def pyperformance_benchmarks(build: pathlib.Path) -> pathlib.Path | None:
    venv = build / "bench-venv"
    found = sorted(venv.glob("lib/python3*/site-packages/pyperformance/data-files/benchmarks"))
    if not found:
        print(f"   installing pyperformance=={PYPERFORMANCE} into {venv} (its benchmarks' source only)", flush=True)
        if not (venv / "bin" / "pip").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", f"pyperformance=={PYPERFORMANCE}"],
                       check=True)
        found = sorted(venv.glob("lib/python3*/site-packages/pyperformance/data-files/benchmarks"))
    return found[-1] if found else None


def pythons_for_torn() -> list[str]:
    if os.environ.get("BENCH_PYTHONS"):
        return os.environ["BENCH_PYTHONS"].split(",")
    out = []
    for v in ("3.11", "3.12", "3.13"):
        found = sorted(pathlib.Path.home().glob(f".pyenv/versions/{v}.*/bin/python{v}"))
        exe = str(found[-1]) if found else shutil.which(f"python{v}")
        if exe:
            out.append(exe)
    return out


def short_name(fn: str) -> str:
    """py-spy names a frame by co_name, lapse by co_qualname: compare the last part."""
    return fn.rsplit(".", 1)[-1]


def sampled_run(python: str, benchmarks: pathlib.Path, name: str, seconds: float, sampler: list[str]) -> str:
    """One run of a pyperformance benchmark with `sampler` ({pid} in it) attached just
    after its work starts (attached to the parked target, py-spy's blocking reads count
    some parked passes as running); the sampler's stderr. Target and sampler are not
    pinned: each tool places itself."""
    t = subprocess.Popen([python, str(TARGET), str(benchmarks), name, str(seconds)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    q = None
    try:
        assert t.stdout.readline().strip() == "ready"
        t.stdin.write("go\n")
        t.stdin.flush()
        q = subprocess.Popen([a.replace("{pid}", str(t.pid)) for a in sampler], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        t.stdout.readline()
        t.stdin.close()
        t.wait(timeout=120)
        return q.communicate(timeout=120)[1]
    finally:
        for p in (t, q):
            if p and p.poll() is None:
                p.kill()
                p.wait()


def top10_delta(ref: dict[str, float], other: dict[str, float]) -> float:
    top = sorted(ref, key=lambda f: -ref[f])[:10]
    return max(abs(other.get(f, 0) - ref[f]) for f in top) * 100


def part_torn(build: pathlib.Path, builds: dict[str, pathlib.Path], tools: dict[str, str]):
    seconds = float(os.environ.get("BENCH_TORN_SECONDS", "3"))
    programs = os.environ.get("BENCH_PROGRAMS", ",".join(PROGRAMS)).split(",")
    print(f"== 5. torn reads on call-heavy programs: pyperformance {PYPERFORMANCE}'s {', '.join(programs)}, "
          f"{seconds:g} s of work each at 1 kHz, each tool on its own run, in the order py-spy A, "
          f"{', '.join(builds)}, py-spy B (target: read errors < 1% of passes, top-10 self shares within 2 pp "
          "of blocking py-spy)")
    if "py-spy" not in tools:
        print("   py-spy not available: no comparison")
        return
    benchmarks = pyperformance_benchmarks(build)
    if benchmarks is None:
        print("   pyperformance not available: skipped")
        return
    print(f"   py-spy {PYSPY} in its default (blocking) mode; 'noise' is py-spy B against py-spy A, each lapse "
          "against py-spy A: the largest difference in self share over A's top 10 functions (by name)")
    for python in pythons_for_torn():
        v = subprocess.run([python, "-c", "import platform; print(platform.python_version())"], capture_output=True,
                           text=True).stdout.strip()
        for name in programs:
            sh, stats = {}, {}
            with tempfile.TemporaryDirectory() as d:
                def pyspy(run):
                    sampled_run(python, benchmarks, name, seconds,
                                [tools["py-spy"], "record", "--pid", "{pid}", "-r", "1000", "--format", "raw",
                                 "-o", f"{d}/p{run}.txt"])
                    sh[run] = pyspy_short(pathlib.Path(f"{d}/p{run}.txt").read_text())
                pyspy("A")
                for label, build in builds.items():
                    err = sampled_run(python, benchmarks, name, seconds,
                                      [str(build / "lapse"), "record", "--pid", "{pid}", "-r", "1000", "--format",
                                       "collapsed", "-o", f"{d}/l.txt"])
                    m = SUMMARY.search(err)
                    if not m:
                        print(f"   {label}: lapse record failed: {err[-300:]!r}")
                        continue
                    sh[label] = lapse_short(pathlib.Path(f"{d}/l.txt").read_text())
                    stats[label] = (int(m.group(1)), int(m.group(6)), float(m.group(7)))
                pyspy("B")
            line = f"   {v:7s} {name:9s} noise {top10_delta(sh['A'], sh['B']):5.2f} pp"
            both = {f: (sh["A"].get(f, 0) + sh["B"].get(f, 0)) / 2 for f in set(sh["A"]) | set(sh["B"])}
            for label, (passes, errors, cpu) in stats.items():
                line += (f" | {label}: {passes:5d} passes, read errors {errors / max(passes, 1) * 100:5.2f}%, "
                         f"top-10 delta {top10_delta(sh['A'], sh[label]):5.2f} pp (to A and B's mean "
                         f"{top10_delta(both, sh[label]):4.2f}), {cpu:5.1f} us CPU/pass")
            print(line + f"   (load {load()})", flush=True)
    print()


def pyspy_short(text: str) -> dict[str, float]:
    return merge_short(shares_pyspy(text))


def lapse_short(text: str) -> dict[str, float]:
    return merge_short(shares_lapse(text))


def merge_short(sh: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in sh.items():
        out[short_name(k)] = out.get(short_name(k), 0) + v
    return out


def main():
    ap = argparse.ArgumentParser(description="the external sampler against py-spy and Austin")
    ap.add_argument("build", nargs="?", default=str(REPO / "build"), help="the build to measure (default build/)")
    ap.add_argument("--baseline", metavar="BUILD", help="another build (e.g. main's) measured beside it, "
                    "in the same run, in parts 1 and 5")
    ap.add_argument("--parts", default="1,2,3,4,5", help="which parts to run (default 1,2,3,4,5)")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    builds = {"lapse": build}
    if args.baseline:
        builds = {"baseline": pathlib.Path(args.baseline).resolve(), "lapse": build}
    for b in builds.values():
        if not (b / "lapse").exists():
            sys.exit(f"bench/sampler: {b}/lapse is missing: build first")
    parts = {p.strip() for p in args.parts.split(",")}
    python = find_python()
    v = subprocess.run([python, "-c", "import platform; print(platform.python_version())"], capture_output=True,
                       text=True).stdout.strip()
    print(f"== bench/sampler: CPython {v} ({python}), {os.cpu_count()} CPUs, load {load()}")
    if args.baseline:
        print(f"   baseline: {builds['baseline']}")
    tools = peers(build)
    print(f"   peers: {', '.join(f'{k} ({v})' for k, v in tools.items()) or 'none'}")
    print()
    if "1" in parts:
        part_cpu(builds, python)
    if "2" in parts:
        part_rate(build, python)
    if "3" in parts:
        part_slowdown(build, python, tools)
    if "4" in parts:
        part_agreement(build, python, tools)
    if "5" in parts:
        part_torn(build, builds, tools)


if __name__ == "__main__":
    main()
