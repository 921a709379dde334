"""Switches and sections: a feature switched off leaves no data of its kind in the file
and no section in the report; features with no collector are refused by name; a
block with nothing measured is one line, in text and JSON alike."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import lapse
from lapse import Feature, Profiler

from conftest import lapse_command, report

SCRIPT = textwrap.dedent("""
    import sys, time
    from lapse import phase, span

    with span("main"):
        time.sleep(0.05)  # past the process sampler's first reading, its baseline
        with open(sys.argv[1], "wb", buffering=0) as f:
            with phase("save", io=True):
                f.write(b"x" * 200_000)
        time.sleep(0.15)
""")


def lapse_run(tmp_path, *flags):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    runs = tmp_path / "runs"
    env = {**os.environ, "LAPSE_PROCESS_SAMPLE_MS": "20"}
    r = subprocess.run([lapse_command(), "run", "--no-python", "-o", str(runs), *flags,
                        str(script), str(tmp_path / "out.bin")],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    text = subprocess.run([lapse_command(), "report", str(runs)], capture_output=True, text=True,
                          timeout=60).stdout
    return report(runs), text


def counters_named(doc, prefix):
    return [c["name"] for role in doc["roles"] for ph in role["phases"] for c in ph["counters"]
            if c["name"].startswith(prefix)]


def test_all_on_has_every_kind(tmp_path):
    doc, text = lapse_run(tmp_path)
    role, worker = doc["roles"][0], doc["workers"][0]
    assert set(worker["features"]) >= {"spans", "cpu", "io", "memory"}
    assert role["spans_state"] == "measured" and role["io_state"] == "measured"
    assert role["memory_state"] == "measured"
    assert counters_named(doc, "io.") and counters_named(doc, "mem.")
    assert "DOMINANT PHASES" in text and "\nI/O  (" in text and "\nMEMORY" in text


def test_no_spans(tmp_path):
    doc, text = lapse_run(tmp_path, "--no-spans")
    role, worker = doc["roles"][0], doc["workers"][0]
    assert role["phases"] == [] and role["no_span_counters"] == []
    assert worker["span_calls"] == 0 and worker["cpu_sampler"] is None
    assert "DOMINANT PHASES" not in text and "share of" not in text
    assert "spans" not in worker["features"] and "cpu" not in worker["features"]
    assert role["spans_state"] == "not_collected"
    assert "imbalance" not in text and "no spans recorded" not in text
    assert "spans not collected" in text
    assert role["io_state"] == "measured"  # what was not switched off stays
    assert "while no phase was open" not in text  # no phases to compare with


def test_no_io(tmp_path):
    doc, text = lapse_run(tmp_path, "--no-io")
    role, worker = doc["roles"][0], doc["workers"][0]
    assert counters_named(doc, "io.") == []
    assert role["io"] is None and "\nI/O" not in text
    assert "io" not in worker["features"] and role["io_state"] == "not_collected"
    assert role["memory_state"] == "measured" and counters_named(doc, "mem.")


def test_no_memory(tmp_path):
    doc, text = lapse_run(tmp_path, "--no-memory")
    role, worker = doc["roles"][0], doc["workers"][0]
    assert worker["max_rss_kb"] == 0 and counters_named(doc, "mem.") == []
    mem = role["memory"]
    assert mem["peak_rss_getrusage_bytes"] is None and mem["peak_rss_sampled_bytes"] is None
    assert mem["growth_by_phase"] == [] and role["io"]["rss_peak_bytes"] is None
    assert "MEMORY" not in text
    assert "memory" not in worker["features"] and role["memory_state"] == "not_collected"
    assert role["io_state"] == "measured" and counters_named(doc, "io.")


def test_a_spans_only_profiler_has_no_memory_nor_io(tmp_path):
    with Profiler(features=Feature.SPANS, run_dir=tmp_path) as p:
        with p.phase("work", io=True):
            pass
    doc = report(tmp_path)
    role = doc["roles"][0]
    text = subprocess.run([lapse_command(), "report", str(tmp_path)], capture_output=True,
                          text=True, timeout=60).stdout
    assert "MEMORY" not in text and "\nI/O" not in text
    assert doc["workers"][0]["max_rss_kb"] == 0
    assert counters_named(doc, "io.") == [] and counters_named(doc, "mem.") == []
    assert role["memory_state"] == "not_collected" and role["io_state"] == "not_collected"


def test_io_measured_zero_is_one_line(tmp_path):
    import time

    with Profiler(features=Feature.SPANS | Feature.IO, run_dir=tmp_path, process_sample_ms=20):
        time.sleep(0.2)  # no byte read or written (lapse's own are left out)
    doc = report(tmp_path)
    role = doc["roles"][0]
    assert role["io"]["read_chars"] == 0 and role["io"]["write_chars"] == 0
    text = subprocess.run([lapse_command(), "report", str(tmp_path)], capture_output=True,
                          text=True, timeout=60).stdout
    lines = [ln for ln in text.splitlines() if ln.startswith("I/O")]
    assert "bytes moved" not in text and "read = read_chars" not in text
    assert len(lines) == 1 and "none measured" in lines[0], text
    assert role["io_state"] == "none_measured", role["io"]


def test_cpu_needs_spans(tmp_path):
    with pytest.raises(ValueError, match="SPANS"):
        Profiler(features=Feature.CPU | Feature.IO, run_dir=tmp_path)
    with pytest.raises(ValueError, match="MARKERS.*needs Feature.SPANS"):
        Profiler(features=Feature.MARKERS | Feature.IO, run_dir=tmp_path)
    assert Feature.DEFAULT == (Feature.SPANS | Feature.CPU | Feature.IO | Feature.MEMORY
                               | Feature.PYTHON | Feature.MARKERS | Feature.DEVICE
                               | Feature.ACTIVITY)
    assert lapse.profiler.NO_COLLECTOR == Feature(0)  # every feature has its collector


def test_python_samples_without_a_stack_are_one_line(tmp_path):
    """A recording of a process whose only thread sleeps (idle threads left out)."""
    target = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        out = tmp_path / "idle.lapse"
        import time

        time.sleep(0.3)  # past start-up
        r = subprocess.run([lapse_command(), "record", "--pid", str(target.pid), "-d", "0.3",
                            "-o", str(out)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    finally:
        target.kill()
        target.wait()
    doc = report(out)
    (samples,) = doc["python_samples"]
    assert samples["processes"] == []
    text = subprocess.run([lapse_command(), "report", str(out)], capture_output=True, text=True,
                          timeout=60).stdout
    lines = [ln for ln in text.splitlines() if "PYTHON SAMPLES" in ln]
    assert "recording   mode" not in text
    assert len(lines) == 1 and "no stack sampled" in lines[0], text
    assert samples["state"] == "none_measured"
