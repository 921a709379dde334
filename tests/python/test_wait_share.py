"""wait% of Python phases: within 10 points of the truth, or `-` (null) when too few
ticks saw it; collected by a default Profiler() (issue 10, section 2).

bench/wait_phases.py runs threads that alternate spinning and sleeping phases of
0.2, 0.5, 2, 5, 20 and 50 ms under Profiler() with its default features, and
measures the truth itself: each thread's CPU clock (time.thread_time_ns) at the
entry and exit of each phase. With three threads the spinning ones also wait for
the GIL, off CPU, which the truth counts too. The CPU sampler runs at 1 ms."""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import phases, report

PROGRAM = pathlib.Path(__file__).resolve().parents[2] / "bench" / "wait_phases.py"
SECONDS = 8
Z = 3.0


def enough_ticks(ticks: int, wait: int) -> bool:
    """docs/report.md: shown when the Wilson score interval at 3 standard deviations
    lies within 8 points of the share on both sides."""
    if ticks == 0:
        return False
    n, p = float(ticks), wait / ticks
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return centre + half - p <= 0.08 + 1e-12 and p - (centre - half) <= 0.08 + 1e-12


@pytest.mark.parametrize("threads", [1, 3])
def test_wait_share_of_python_phases(tmp_path, threads):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    env["LAPSE_CPU_SAMPLE_MS"] = "1"
    r = subprocess.run([sys.executable, str(PROGRAM), str(threads), str(SECONDS), str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    truth = {}
    for line in r.stdout.splitlines():
        path, *values = line.split()
        if path != "file":
            truth[path] = 1 - int(values[2]) / int(values[1])
    doc = report(tmp_path)
    got = phases(doc)
    assert doc["workers"][0]["cpu_sampler"]["ticks"] > 0  # the default Profiler() has wait%
    table, wrong = [], []
    for path, want in sorted(truth.items()):
        ph = got[path]
        ticks, wait, shown = ph["ticks"], ph["wait_ticks"], ph["wait_share"]
        table.append(f"{path:18s} truth {100 * want:5.1f}  shown "
                     f"{'-' if shown is None else f'{100 * shown:5.1f}'}  ticks {ticks}")
        assert (shown is not None) == enough_ticks(ticks, wait), (path, ticks, wait, shown)
        if shown is not None and abs(shown - want) > 0.10:
            wrong.append(path)
    text = "\n".join(table)
    assert not wrong, f"wait% more than 10 points off the truth for {wrong}:\n{text}"
    # not vacuous: the whole round, and most sleeping phases (about 100% off CPU),
    # have enough ticks
    assert got["work"]["wait_share"] is not None, text
    sleeping = [path for path in truth if "/sleep_" in path]
    assert sum(got[path]["wait_share"] is not None for path in sleeping) >= 4, text
