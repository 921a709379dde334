"""wait% in `lapse diff`: on each side that has it, and the change where both do."""

from __future__ import annotations

import json
import subprocess
import time

from lapse import Feature, Profiler

from conftest import lapse_command


def _run(run_dir, cpu: bool, sleep_share: float) -> None:
    # 1 ms ticks for 0.8 s: enough for a figure (docs/report.md, wait%)
    features = Feature.SPANS | (Feature.CPU if cpu else Feature.SPANS)
    with Profiler(run_dir=run_dir, features=features) as p:
        for _ in range(200):
            with p.phase("step"):
                end = time.perf_counter() + 0.004 * (1 - sleep_share)
                while time.perf_counter() < end:
                    pass
                time.sleep(0.004 * sleep_share)


def _diff(a, b, *args) -> subprocess.CompletedProcess:
    return subprocess.run([lapse_command(), "diff", str(a), str(b), *args], capture_output=True,
                          text=True, timeout=60)


def test_diff_shows_wait_on_both_sides(tmp_path, monkeypatch):
    monkeypatch.setenv("LAPSE_CPU_SAMPLE_MS", "1")
    _run(tmp_path / "a", cpu=True, sleep_share=1.0)
    _run(tmp_path / "b", cpu=True, sleep_share=0.0)
    doc = json.loads(_diff(tmp_path / "a", tmp_path / "b", "--json").stdout)
    row = next(r for r in doc["rows"] if r["path"] == "step")
    # A only sleeps, B only computes (a loaded machine steals some CPU from B)
    assert row["wait_share_a"] > 0.8 and row["wait_share_b"] < row["wait_share_a"] - 0.3, row
    assert abs(row["wait_share_delta"] - (row["wait_share_b"] - row["wait_share_a"])) < 1e-3
    text = _diff(tmp_path / "a", tmp_path / "b").stdout
    assert "    wait ~" in text and "ticks of the CPU sampler" in text
    assert row["ticks_a"] > 0 and row["ticks_b"] > 0 and 0 <= row["wait_ticks_b"] <= row["ticks_b"]


def test_diff_wait_is_null_where_a_side_lacks_it(tmp_path, monkeypatch):
    monkeypatch.setenv("LAPSE_CPU_SAMPLE_MS", "1")
    _run(tmp_path / "a", cpu=True, sleep_share=1.0)
    _run(tmp_path / "b", cpu=False, sleep_share=1.0)
    doc = json.loads(_diff(tmp_path / "a", tmp_path / "b", "--json").stdout)
    row = next(r for r in doc["rows"] if r["path"] == "step")
    assert row["wait_share_a"] > 0.8
    assert row["wait_share_b"] is None and row["wait_share_delta"] is None
    assert "    wait ~" not in _diff(tmp_path / "a", tmp_path / "b").stdout
