"""phase(name, gpu_time=True): its GPU time beside its wall time, from torch.cuda.Event
pairs where torch has initialized CUDA (a stand-in torch here, whose events return
known elapsed times: the report holds them exactly); elsewhere the figure is missing
with the reason, never 0, and lapse never initializes CUDA."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types

import pytest

import lapse
from lapse import Profiler

from conftest import needs_torch


def fake_torch(elapsed_ms: list[float]) -> types.ModuleType:
    torch = types.ModuleType("torch")
    times = iter(elapsed_ms)

    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            assert enable_timing
            self.recorded = 0

        def record(self) -> None:
            self.recorded += 1

        def synchronize(self) -> None:
            assert self.recorded

        def elapsed_time(self, other: Event) -> float:
            assert self.recorded and other.recorded
            return next(times)

    torch.cuda = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True,
                                       Event=Event, synchronize=lambda: None)
    return torch


def role_phases(p: Profiler) -> tuple[dict, dict]:
    doc = p.result().to_dict()
    role = doc["roles"][0]
    return role, {ph["path"]: ph for ph in role["phases"]}


def test_gpu_time_from_torch_cuda_events(tmp_path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", fake_torch([2.5, 0.5, 4.0]))
    with Profiler(run_dir=tmp_path) as p:
        with lapse.phase("train"):
            for _ in range(2):
                with lapse.phase("step", gpu_time=True):
                    pass
            with p.phase("eval", gpu_time=True, sync=True):
                pass
    role, phases = role_phases(p)
    assert phases["train/step"]["gpu_time"] == {"ns": 3000000, "timed": 2, "untimed": 0,
                                                "mean_ns": 1500000}
    assert phases["train/eval"]["gpu_time"]["ns"] == 4000000
    assert phases["train"]["gpu_time"] is None
    assert role["gpu_time_missing"] is None


def test_without_torch_the_gpu_time_is_missing_with_why(tmp_path, monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    with Profiler(run_dir=tmp_path) as p:
        with lapse.phase("step", gpu_time=True):
            pass
    role, phases = role_phases(p)
    assert phases["step"]["gpu_time"] == {"ns": 0, "timed": 0, "untimed": 1, "mean_ns": None}
    assert role["gpu_time_missing"].startswith("torch is not imported")


def test_torch_without_cuda_initialized_is_left_uninitialized(tmp_path) -> None:
    needs_torch()
    # in a process of its own: a pytest process that imported torch would make every
    # child it forks start with torch's RSS (test_hostile_files bounds theirs)
    program = textwrap.dedent("""
        import json, sys
        import torch
        import lapse
        from lapse import Profiler
        with Profiler(run_dir=sys.argv[1]) as p:
            with lapse.phase("step", gpu_time=True, sync=True):
                pass
        role = p.result().to_dict()["roles"][0]
        step = [ph for ph in role["phases"] if ph["path"] == "step"][0]
        print(json.dumps([torch.cuda.is_initialized(), step["gpu_time"], role["gpu_time_missing"]]))
    """)
    out = subprocess.run([sys.executable, "-c", program, str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    initialized, gpu_time, why = json.loads(out.stdout.splitlines()[-1])
    assert initialized is False
    assert gpu_time["untimed"] == 1 and gpu_time["timed"] == 0
    assert why.startswith("CUDA is not initialized in this process")


def test_gpu_time_is_neither_io_nor_sampled() -> None:
    with pytest.raises(ValueError, match="timed on the GPU"):
        lapse.phase("x", io=True, gpu_time=True)
    with pytest.raises(ValueError, match="timed on the GPU"):
        lapse.phase("x", sample=0.5, gpu_time=True)
