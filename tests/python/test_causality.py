"""lapse.signal / lapse.wait_on from Python, in threads and in processes
(causal_scenario.py): the waits paired with their signals, the wait as a span
"wait:NAME", and the critical path through producer and consumer."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

import lapse
from conftest import report

HERE = pathlib.Path(__file__).parent
ROUNDS = 15


@pytest.mark.parametrize("mode", ["threads", "procs"])
def test_pairs_and_path(tmp_path, mode):
    r = subprocess.run([sys.executable, str(HERE / "causal_scenario.py"), mode, str(ROUNDS),
                        str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=HERE)
    assert r.returncode == 0, r.stdout + r.stderr
    who = {}
    for line in r.stdout.splitlines():
        name, pid, tid = line.split()
        who[name] = (int(pid), int(tid))
    (run,) = [d for d in tmp_path.iterdir() if d.is_dir()]
    doc = report(run)
    c = doc["causality"]
    n = 2 * ROUNDS
    assert (c["signals"], c["waits"], len(c["pairs"])) == (n, n, n)
    assert c["unmatched_waits"] == c["unconsumed_signals"] == c["dropped"] == 0
    assert [p["name"] for p in c["pairs"]] == ["batch", "ack"] * ROUNDS
    for p in c["pairs"]:
        src, dst = (who["producer"], who["consumer"]) if p["name"] == "batch" else \
            (who["consumer"], who["producer"])
        assert (p["signal_pid"], p["signal_tid"], p["wait_pid"], p["wait_tid"]) == (*src, *dst)
        assert p["signal_ns"] <= p["wait_end_ns"]
    # every wait but the consumer's first (it may start after the first batch) blocked
    assert all(p["blocking"] for p in c["pairs"][1:])
    cp = c["critical_path"]
    phases = {p["path"]: p for p in cp["phases"]}
    assert phases["produce"]["ns"] >= (ROUNDS - 1) * 2_000_000
    assert phases["consume"]["ns"] >= (ROUNDS - 1) * 1_000_000
    assert cp["processes"] == (2 if mode == "procs" else 1)
    assert sum(p["ns"] for p in cp["phases"]) + cp["wake_ns"] == cp["length_ns"]
    # the wait is a span, in the consumer's phases
    paths = {ph["path"] for role in doc["roles"] for ph in role["phases"]}
    assert "wait:batch" in paths and "wait:ack" in paths


def test_dormant_and_bad_names():
    """No session: both do nothing; a name that is not a str is a TypeError."""
    lapse.signal("x")
    with lapse.wait_on("x") as w:
        pass
    assert repr(w) == "lapse.wait_on('x')"
    with pytest.raises(TypeError):
        lapse.signal(3)
    with pytest.raises(TypeError):
        lapse.wait_on(None)
