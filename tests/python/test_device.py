"""Feature.DEVICE from Python: in DEFAULT, missing with the reason where NVML cannot
start (never an error), strict=True refusing to start naming it and why, and the GPU
block of a Profiler run against the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.c,
compiled here) with exact figures."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import lapse
from lapse import Feature, Profiler

from conftest import report

REPO = pathlib.Path(__file__).resolve().parents[2]


def no_nvml_here() -> bool:
    import ctypes.util

    return ctypes.util.find_library("nvidia-ml") is None


def test_device_is_in_default_and_missing_with_why(tmp_path):
    if not no_nvml_here():
        pytest.skip("this machine has an NVML: DEVICE runs")
    assert Feature.DEVICE in Feature.DEFAULT and Feature.DEVICE in lapse.profiler.COLLECTED_BY_DEFAULT
    assert Feature.DEVICE not in lapse.profiler.NO_COLLECTOR
    with Profiler(run_dir=tmp_path) as p:  # not an error
        pass
    assert Feature.DEVICE in p.missing
    assert p.missing_why[Feature.DEVICE].startswith("libnvidia-ml.so.1: cannot open shared object file")
    w = report(tmp_path)["workers"][0]
    assert "; device: libnvidia-ml.so.1" in "; " + w["absent"] and "device" not in w["features"]


def test_strict_refuses_to_start_without_nvml(tmp_path):
    if not no_nvml_here():
        pytest.skip("this machine has an NVML: DEVICE runs")
    with pytest.raises(RuntimeError, match=r"cannot run here: DEVICE \(DEVICE: libnvidia-ml\.so\.1"):
        Profiler(features=Feature.SPANS | Feature.DEVICE, run_dir=tmp_path, strict=True).start()
    assert not lapse._lapse.is_active()
    assert not list(tmp_path.rglob("*.lapse"))  # refused before the session started
    with Profiler(features=Feature.SPANS, run_dir=tmp_path, strict=True) as p:
        pass  # without DEVICE: nothing to refuse
    assert p.missing == Feature(0)


# In step with the fake's readings (its gate, FAKE_NVML_GATE=1): "train" is open before
# the gate opens, so the script's three readings all see it, and it closes after the
# third; "idle" lasts until the reading past the script (no target listed). Where NVML
# did not start (FAKE_NVML_INIT=fail) there is nothing to wait for.
PROGRAM = textwrap.dedent("""
    import ctypes, sys, time
    from lapse import Feature, Profiler

    def wait_readings(fake, n):
        for _ in range(10000):
            if fake.fake_nvml_readings() >= n:
                return
            time.sleep(0.001)
        sys.exit("the fake's readings did not come")

    with Profiler(features=Feature.SPANS | Feature.DEVICE, run_dir=sys.argv[1],
                  strict=sys.argv[2] == "strict") as p:
        fake = None if Feature.DEVICE in p.missing else ctypes.CDLL("libnvidia-ml.so.1")
        with p.phase("train"):
            if fake:
                fake.fake_nvml_open_gate()
                wait_readings(fake, fake.fake_nvml_lines())
        with p.phase("idle"):
            if fake:
                wait_readings(fake, fake.fake_nvml_lines() + 1)
    print(sorted(f.name for f in Feature if f in p.missing), {f.name: w for f, w in p.missing_why.items()})
""")


def run_with_fake(fake_nvml, tmp_path, strict="", **env):
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "script").write_text("50 30 1000000\n70 - 2000000\n90 60 1500000\n")
    full = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    full.update(LD_LIBRARY_PATH=str(fake_nvml), FAKE_NVML_SCRIPT=str(tmp_path / "script"),
                FAKE_NVML_GATE="1", LAPSE_DEVICE_INTERVAL_MS="50", **env)
    cmd = f'FAKE_NVML_PID=$$ exec "{sys.executable}" "{tmp_path / "prog.py"}" "{tmp_path / "runs"}" "{strict}"'
    return subprocess.run(["sh", "-c", cmd], env=full, capture_output=True, text=True, timeout=60)


def test_profiler_gpu_block_from_the_fake(fake_nvml, tmp_path):
    r = run_with_fake(fake_nvml, tmp_path, "strict")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[] {}\n"
    (gpu,) = report(tmp_path / "runs")["roles"][0]["gpu"]
    assert (gpu["device_name"], gpu["readings"], gpu["busy_pct"], gpu["this_run_pct"],
            gpu["vram_held_peak_bytes"]) == ("Fake GPU 0", 3, 70.0, 30.0, 2000000)
    assert gpu["by_phase"] == [{"phase": "train", "readings": 3, "this_run_pct": 30.0}]


def test_nvml_init_failing_is_missing_and_strict_names_it(fake_nvml, tmp_path):
    r = run_with_fake(fake_nvml, tmp_path, FAKE_NVML_INIT="fail")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "['DEVICE'] {'DEVICE': 'nvmlInit_v2: Driver Not Loaded (9)'}\n"
    r = run_with_fake(fake_nvml, tmp_path, "strict", FAKE_NVML_INIT="fail")
    assert r.returncode == 1
    assert "RuntimeError: lapse: strict=True and these collectors cannot run here: DEVICE " \
           "(DEVICE: nvmlInit_v2: Driver Not Loaded (9))" in r.stderr


def test_lapse_run_asks_for_device_and_no_device_leaves_it_out(tmp_path):
    if not no_nvml_here():
        pytest.skip("this machine has an NVML: DEVICE runs")
    from conftest import lapse_command

    (tmp_path / "t.py").write_text("x = 1\n")
    for switch, asked in (([], True), (["--no-device"], False)):
        out = tmp_path / ("asked" if asked else "off")
        r = subprocess.run([lapse_command(), "run", "-q", "--no-python", "-o", str(out), *switch,
                            str(tmp_path / "t.py")], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        (w,) = report(out)["workers"]
        assert ("; device: libnvidia-ml.so.1" in "; " + w["absent"]) == asked, w["absent"]
        assert "device" not in w["features"]
