"""Live export (on_snapshot, deltas) and the process sampler's I/O and MEMORY blocks,
from real Python programs."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import warnings

import pytest

from lapse import Feature, Profiler

from conftest import lapse_command, phases, report


def _spin(phase_name: str, n: int, sleep_s: float = 0.0) -> None:
    import lapse

    for _ in range(n):
        with lapse.phase(phase_name):
            if sleep_s:
                time.sleep(sleep_s)


def test_deltas_subtract_histograms_and_leave_idle_phases_out(tmp_path):
    with Profiler(run_dir=tmp_path, install=True) as p:
        _spin("step", 41)  # fast calls: microseconds
        first = p.deltas()
        _spin("step", 5, sleep_s=0.004)  # slow calls only in the second interval
        _spin("other", 3)
        p.count("outside", 2)
        second = p.deltas()
        _spin("other", 2)
        third = p.deltas()
        fourth = p.deltas()
    assert first.phases["step"].calls == 41
    assert first.phases["step"].p50_ns < 1_000_000
    # the second interval's quantiles are those of its own 5 calls (>= 4 ms), not the
    # cumulative p50, which the 41 fast calls keep in microseconds
    s = second.phases["step"]
    assert s.calls == 5
    assert 4_000_000 <= s.p50_ns < 20_000_000 and s.p99_ns >= s.p50_ns
    assert s.mean_ns >= 4_000_000
    assert second.phases["other"].calls == 3
    assert second.outside == {"outside": 2}
    # idle in the interval: absent, not zero
    assert "step" not in third.phases and third.phases["other"].calls == 2
    assert dict(fourth.phases) == {}
    assert first.seq < second.seq < third.seq and second.start_ns == first.end_ns
    assert p.deltas() is None  # not active


def test_on_snapshot_intervals_add_up_to_every_call(tmp_path):
    got = []
    p = Profiler(run_dir=tmp_path, snapshot_ms=100)
    p.on_snapshot(got.append)
    with p:
        deadline = time.monotonic() + 0.8
        calls = 0
        while time.monotonic() < deadline:
            with p.phase("work"):
                time.sleep(0.002)
            calls += 1
        # two more intervals after the work: the second began after the first was
        # taken, so after the last call
        n0 = len(got)
        _wait_for(lambda: len(got) >= n0 + 2, "two intervals after the work")
    assert len(got) >= 5, len(got)
    assert [i.seq for i in got] == list(range(1, len(got) + 1))
    assert all(i.end_ns > i.start_ns for i in got)
    assert all(b.start_ns == a.end_ns for a, b in zip(got, got[1:]))
    # every completed call lands in exactly one interval (the last one at stop)
    assert sum(i.phases["work"].calls for i in got if "work" in i.phases) == calls
    assert "work" not in got[n0 + 1].phases  # idle in it: absent, not zero
    assert not any(t.name == "lapse-live" for t in threading.enumerate())


def _wait_for(cond, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_a_raising_callback_is_counted_and_never_stops_the_flush(tmp_path):
    seen = []

    def bad(interval):
        raise ValueError("boom")

    p = Profiler(run_dir=tmp_path, snapshot_ms=100)
    p.on_snapshot(bad)
    p.on_snapshot(seen.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with p:
            deadline = time.monotonic() + 20
            while len(seen) < 4 and time.monotonic() < deadline:  # periodic snapshots go on
                with p.phase("tick"):
                    time.sleep(0.02)
            seq_before_stop = p.result().workers[0].write_seq
    assert p.callback_errors == len(seen) >= 4
    assert seen[-1].callback_errors >= len(seen) - 1
    assert sum(1 for w in caught if "on_snapshot callback raised" in str(w.message)) == 1
    # the periodic writes went on, each one followed by both callbacks
    doc = report(p.file)
    assert doc["workers"][0]["write_seq"] > seq_before_stop
    outside = {c["name"]: c["sum"] for r in doc["roles"] for c in r["no_span_counters"]}
    assert outside["lapse.snapshot_callback_errors"] == p.callback_errors


def test_io_and_memory_blocks(tmp_path):
    data = tmp_path / "data.bin"
    with Profiler(run_dir=tmp_path / "run", features=Feature.SPANS | Feature.IO | Feature.MEMORY,
                  process_sample_ms=20, install=True) as p:
        with open(data, "wb", buffering=0) as f:
            time.sleep(0.05)
            f.write(b"x" * 300_000)  # no phase open
            time.sleep(0.1)
            with p.phase("save", io=True):
                time.sleep(0.05)
                f.write(b"y" * 500_000)
                time.sleep(0.05)
        with p.phase("alloc", io=True):
            block = b"\x01" * (64 << 20)  # allocated and touched
        time.sleep(0.05)
        del block
    doc = report(p.file)
    io = doc["roles"][0]["io"]
    assert io["interval_ms"] == 20 and io["unreadable_intervals"] == 0
    # Python itself writes nothing else; lapse's own writes are left out
    assert abs(io["write_chars"] - 800_000) <= 8_000, io
    assert abs(io["quiet_chars"] - 300_000) <= 0.01 * 300_000 + io["read_chars"], io
    assert io["phased_chars"] >= 500_000
    assert 0.3 < io["share_no_phase_open"] < 0.45
    mem = doc["roles"][0]["memory"]
    growth = {g["path"]: g["rss_growth_bytes"] for g in mem["growth_by_phase"]}
    assert abs(growth["alloc"] - (64 << 20)) < 0.05 * (64 << 20), growth
    assert mem["peak_rss_sampled_bytes"] >= 64 << 20
    assert mem["peak_rss_getrusage_bytes"] >= 64 << 20
    save = phases(doc)["save"]
    assert {c["name"]: c["sum"] for c in save["counters"]}["io.write_chars"] == 500_000

    text = subprocess.run([lapse_command(), "report", p.file], capture_output=True, text=True,
                          env={**os.environ, "LANG": "C.UTF-8", "LC_ALL": "", "LAPSE_ASCII": ""},
                          timeout=60).stdout
    assert "\nI/O  (process sampler, every 20.0ms, 1 process)" in text
    assert any(ch in text for ch in "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588")
    assert "while no phase was open:" in text
    assert "\nMEMORY\n" in text and "RSS growth by phase" in text
    ascii_text = subprocess.run([lapse_command(), "report", p.file], capture_output=True,
                                text=True, env={**os.environ, "LANG": "C", "LC_ALL": ""},
                                timeout=60).stdout
    spark = next(line for line in ascii_text.splitlines() if "bytes moved |" in line)
    assert spark.isascii() and any(ch in spark for ch in ".,:-=+*#")


def test_unreadable_intervals_count_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LAPSE_TEST_IO_FILE", str(tmp_path / "missing"))
    with Profiler(run_dir=tmp_path, features=Feature.SPANS | Feature.IO, process_sample_ms=20):
        time.sleep(0.15)
    io = report(tmp_path)["roles"][0]["io"]
    assert io["intervals"] == 0 and io["unreadable_intervals"] >= 5
    assert io["write_chars"] is None and io["share_no_phase_open"] is None  # not zero
    text = subprocess.run([lapse_command(), "report", str(tmp_path)], capture_output=True,
                          text=True, timeout=60).stdout
    assert "no interval could be read" in text
    caveats = [c for c in report(tmp_path)["caveats"] if c["kind"] == "io_unreadable"]
    assert len(caveats) == 1 and caveats[0]["count"] == io["unreadable_intervals"], caveats


def test_an_interval_from_the_start_agrees_with_the_text_and_json(tmp_path):
    """deltas() over the whole session (taken after the last call) holds what the
    report of its file says of every phase: calls, total, mean and counters as in the
    JSON, calls as in the text's DOMINANT PHASES rows, and the counters outside any
    span. The interval is computed in C (analyze/live_delta.h), the report from the
    file: two outputs that could disagree."""
    import re

    import lapse

    def work() -> None:
        with lapse.phase("inner"):
            lapse.count("items", 2)
            time.sleep(0.0002)

    with Profiler(run_dir=tmp_path) as p:
        threads = [threading.Thread(target=lambda: [_spin("step", 7) for _ in range(3)]) for _ in range(2)]
        for t in threads:
            t.start()
        for _ in range(30):
            with lapse.phase("step"):
                work()
        for t in threads:
            t.join()
        p.count("outside", 5)
        iv = p.deltas()
    doc = p.result().to_dict()
    (role,) = doc["roles"]
    phases = {ph["path"].replace("/", "."): ph for ph in role["phases"]}
    assert set(iv.phases) == set(phases) == {"step", "step.inner"}
    for path, d in iv.phases.items():
        ph = phases[path]
        assert (d.calls, d.total_ns, d.mean_ns) == (ph["calls"], ph["total_ns"], ph["mean_ns"])
        assert dict(d.counters) == {c["name"]: c["sum"] for c in ph["counters"]}
    assert iv.phases["step"].calls == 30 + 2 * 3 * 7
    outside = {c["name"]: c["sum"] for c in role["no_span_counters"]}
    assert outside["outside"] == iv.outside["outside"] == 5
    text = str(p.result())
    rows = {m.group(1).replace("/", "."): int(m.group(2).replace(",", ""))
            for m in re.finditer(r"^  (\S+)\s+([\d,]+)\s+\S+\s+\d+/\d+\s", text, re.M)}
    assert rows == {path: d.calls for path, d in iv.phases.items()}
