"""wait% against the truth: phases that alternate spinning and sleeping for 0.2, 0.5,
2, 5, 20 and 50 ms, in C (tests/e2e/e2e_wait_phases.c) and in Python
(bench/wait_phases.py, under a default Profiler()), on one thread and on several.

    python3 bench/wait_accuracy.py [BUILD_DIR] [--seconds S] [--period MS]

BUILD_DIR (default build) holds `lapse` and `e2e_wait_phases`; the Python runs use
this interpreter's `lapse` package (skipped when it has none). Each run prints, per
phase, the truth (1 - the thread's CPU time / wall time, read by the program at
each entry and exit), the wait% the report shows (`-`: too few ticks), the ticks
behind it and the error in points; then the largest error, and what the sampler
cost: its CPU per tick, per tick and thread, and how many ticks came late. The last
C run is the multi-threaded one again with LAPSE_CPU_SAMPLER_RT=0 (a sampler thread
without real-time priority, as where the process may not have it).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def run(cmd: list[str], build: pathlib.Path, period: str, extra: dict[str, str],
        python: bool = False) -> None:
    """Runs one program: C from the environment (LAPSE_PROFILE=1), Python with its
    own Profiler() (given the run directory), and prints its table."""
    with tempfile.TemporaryDirectory() as d:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
        env.update(LAPSE_CPU_SAMPLE_MS=period, **extra)
        if not python:
            env.update(LAPSE_PROFILE="1", LAPSE_RUN_DIR=d, LAPSE_ROLE="phases")
        out = subprocess.run(cmd + [d] if python else cmd, env=env, capture_output=True,
                             text=True, timeout=600)
        if out.returncode != 0:
            print(f"  failed ({out.returncode}): {out.stderr.strip()[-500:]}")
            return
        truth = {}
        for line in out.stdout.splitlines():
            path, *values = line.split()
            if path != "file":
                truth[path] = 1 - int(values[2]) / int(values[1])
        rep = subprocess.run([str(build / "lapse"), "report", d, "--json"], capture_output=True,
                             text=True, timeout=120)
        doc = json.loads(rep.stdout)
    phases = {p["path"]: p for r in doc["roles"] for p in r["phases"]}
    print(f"  {'phase':18s} {'truth':>6s} {'shown':>6s} {'ticks':>6s} {'error':>6s}")
    worst, shown_n = 0.0, 0
    for path, want in truth.items():
        ph = phases[path]
        shown = ph["wait_share"]
        cell = "-" if shown is None else f"{100 * shown:.1f}"
        err = "" if shown is None else f"{100 * (shown - want):+.1f}"
        if shown is not None:
            shown_n += 1
            worst = max(worst, abs(shown - want))
        ticks = ph.get("ticks", "n/a")  # n/a: a lapse from before wait% had ticks
        print(f"  {path:18s} {100 * want:6.1f} {cell:>6s} {ticks:>6} {err:>6s}")
    s = doc["workers"][0].get("cpu_sampler")
    print(f"  shown {shown_n} of {len(truth)}; largest error {100 * worst:.1f} points")
    if s and s["ticks"]:
        print(f"  sampler: {s['ticks']} ticks, {s['cpu_ns'] / s['ticks'] / 1000:.1f} us CPU per "
              f"tick ({doc['workers'][0]['threads']} threads known to lapse), {s['late_ticks']} "
              f"late (>= 200 us), real-time priority: {'yes' if s['realtime'] else 'no'}")


def main() -> int:
    args = sys.argv[1:]
    seconds, period = "4", "1"
    if "--seconds" in args:
        i = args.index("--seconds")
        seconds = args[i + 1]
        del args[i:i + 2]
    if "--period" in args:
        i = args.index("--period")
        period = args[i + 1]
        del args[i:i + 2]
    build = pathlib.Path(args[0] if args else HERE.parent / "build").resolve()
    program = build / "e2e_wait_phases"
    if not program.exists() or not (build / "lapse").exists():
        print(f"wait_accuracy: {program} or {build / 'lapse'} is missing: build first", file=sys.stderr)
        return 1
    print(f"== wait_accuracy: CPU sampler every {period} ms (jittered), {seconds} s per run, "
          f"{os.cpu_count()} CPUs, load {open('/proc/loadavg').read().split()[0]}")
    for threads in (1, 4):
        print(f"\n-- C, {threads} thread{'s' if threads > 1 else ''}")
        run([str(program), str(threads), seconds], build, period, {})
    try:
        import lapse  # noqa: F401
        has_python = True
    except ImportError:
        has_python = False
    for threads in (1, 3):
        print(f"\n-- Python {sys.version.split()[0]}, {threads} thread{'s' if threads > 1 else ''}")
        if not has_python:
            print("  skipped: no lapse package for this interpreter")
            continue
        run([sys.executable, str(HERE / "wait_phases.py"), str(threads), seconds], build, period,
            {}, python=True)
    print("\n-- C, 4 threads, LAPSE_CPU_SAMPLER_RT=0 (no real-time priority asked)")
    run([str(program), "4", seconds], build, period, {"LAPSE_CPU_SAMPLER_RT": "0"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
