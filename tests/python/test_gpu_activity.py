"""Feature.ACTIVITY from Python, against the fake libcupti (tests/fakes/fake_cupti.c,
compiled here): kernels launched inside Python spans are attributed to them, and
Profile.trace_report() shows the report model's GPU ACTIVITY BY SPAN."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

import lapse
from conftest import lapse_command
from lapse import Feature, Profiler


@pytest.fixture
def cupti_path(monkeypatch, fake_cupti):
    monkeypatch.setenv("LAPSE_CUPTI_PATH", fake_cupti)
    return fake_cupti


def launch_known_work(path: str) -> None:
    fake = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW)  # the one lapse loaded
    launch = fake.fake_cupti_launch
    launch.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64]
    with lapse.span("step"):
        with lapse.span("forward"):
            launch(b"gemm", 0, 7, 2_000_000)
            launch(b"gemm", 0, 7, 2_000_000)
        with lapse.span("backward"):
            launch(b"gemm_bw", 0, 7, 3_000_000)
    launch(b"outside", 0, 7, 1_000)


def test_python_spans_get_the_kernels_they_launched(tmp_path, cupti_path):
    with Profiler(features=Feature.SPANS | Feature.ACTIVITY, run_dir=tmp_path) as prof:
        assert Feature.ACTIVITY not in prof.missing
        launch_known_work(cupti_path)
    profile = prof.result()
    (role,) = profile.to_dict()["roles"]
    rows = [(s["path"], s["launched"], s["kernels"], s["kernel_gpu_ns"])
            for s in role["gpu_activity"]["by_span"]]
    assert rows == [("step/forward", "span", 2, 4_000_000),  # most GPU time first
                    ("step/backward", "span", 1, 3_000_000), (None, "no_span", 1, 1_000)]
    text = profile.trace_report()
    lines = text.splitlines()
    assert lines[:2] == ["role main", ""]
    assert lines[2] == ("GPU ACTIVITY BY SPAN  (CUPTI, 1 process: 4 kernels 7.0ms GPU time, "
                        "0 copies 0 B, 0 sets 0 B)")
    assert lines[4].split() == ["step/forward", "2", "4.0ms", "57.1%", "0", "0", "B", "gemm",
                                "4.0ms", "x2"]
    assert lines[5].split() == ["step/backward", "1", "3.0ms", "42.9%", "0", "0", "B", "gemm_bw",
                                "3.0ms", "x1"]
    assert lines[6].split()[:4] == ["(no", "span", "open)", "1"]
    assert "caveat" not in text


CHILD = """
import sys
import lapse
from lapse import Feature, Profiler
with Profiler(features=Feature.SPANS | Feature.ACTIVITY, run_dir=sys.argv[1]) as prof:
    with lapse.span("step"):
        pass
assert Feature.ACTIVITY in prof.missing, prof.missing
print(prof.missing_why[Feature.ACTIVITY])
print(prof.result().trace_report(), end="")
"""


def test_trace_report_says_when_there_is_no_gpu_activity(tmp_path):
    # a process of its own: one process loads one CUPTI, and the others here loaded the fake
    env = {**os.environ, "LAPSE_CUPTI_PATH": str(tmp_path / "none" / "libcupti.so")}
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "run")], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    why, *lines = r.stdout.splitlines()
    assert why.startswith(f"LAPSE_CUPTI_PATH={tmp_path}/none/libcupti.so cannot be loaded")
    assert lines[0] == "no GPU activity recorded"
    assert lines[1].startswith("caveat feature_missing: main pid ")
    assert "ran without what it was asked to collect: activity: LAPSE_CUPTI_PATH=" in lines[1]


def test_strict_fails_before_the_body_naming_why(tmp_path, monkeypatch, cupti_path):
    monkeypatch.setenv("FAKE_CUPTI_OTHER_SUBSCRIBER", "1")
    ran = []
    with pytest.raises(RuntimeError, match=r"strict=True .*: ACTIVITY \(ACTIVITY: another CUPTI subscriber"):
        with Profiler(features=Feature.SPANS | Feature.ACTIVITY, run_dir=tmp_path, strict=True):
            ran.append(1)
    assert ran == [] and not lapse._lapse.is_active()
    assert not list(tmp_path.rglob("*.lapse"))  # no file of a session that never ran


def test_lapse_run_has_no_activity_switch(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("import lapse\nwith lapse.span('x'):\n    pass\n")
    cmd = lapse_command()
    r = subprocess.run([cmd, "run", "--help"], capture_output=True, text=True, timeout=60)
    assert "--no-activity" in r.stdout
    r = subprocess.run([cmd, "run", "--no-activity", "-q", "-o", str(tmp_path / "runs"),
                        str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    (f,) = (tmp_path / "runs").rglob("*.lapse")
    doc = lapse.Profile.load(f).to_dict()
    assert "activity" not in doc["workers"][0]["features"]
    assert doc["workers"][0]["gpu_activity"] is None
