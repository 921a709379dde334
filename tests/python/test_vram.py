"""VRAM allocated / reserved peak from torch in the GPU block: a stand-in `torch`
package on PYTHONPATH in a subprocess (it shadows a real torch there only) whose
torch.cuda reports known peaks and uuids for two devices and logs every call. lapse
reads torch only where the program imported it and CUDA is initialised; the report
shows, per device, the largest peak read, and `-` for NVML's figures (no NVML here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import lapse_command, report

MB = 1000 * 1000

TORCH_INIT = """
from . import cuda
"""

# torch.cuda: state in module globals the program changes; every call logged.
TORCH_CUDA = """
import os

calls = []
initialized = os.environ.get("FAKE_CUDA_INIT") == "1"
fail = os.environ.get("FAKE_CUDA_RAISE") == "1"
allocated = [int(os.environ.get("FAKE_ALLOC0", "256000000")), 0]
reserved = [300_000_000, 0]
uuids = os.environ.get("FAKE_CUDA_UUIDS", "GPU-1111aaaa-0000-0000-0000-000000000000,"
                       "GPU-2222bbbb-0000-0000-0000-000000000000").split(",")


class _Props:
    def __init__(self, i):
        self.name = "Fake H200"
        self.uuid = uuids[i]


def is_initialized():
    calls.append("is_initialized")
    return initialized


def is_available():
    calls.append("is_available")
    return initialized


def device_count():
    calls.append("device_count")
    return 2


def get_device_properties(i):
    calls.append("get_device_properties")
    return _Props(i)


def max_memory_allocated(i):
    calls.append("max_memory_allocated")
    if fail:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    return allocated[i]


def max_memory_reserved(i):
    calls.append("max_memory_reserved")
    return reserved[i]


def reset_peak_memory_stats(i):
    calls.append("reset_peak_memory_stats")
"""


def standin(tmp_path) -> str:
    root = tmp_path / "standin"
    (root / "torch").mkdir(parents=True)
    (root / "torch" / "__init__.py").write_text(TORCH_INIT)
    (root / "torch" / "cuda.py").write_text(TORCH_CUDA)
    return str(root)


def run_program(tmp_path, body: str, env: dict[str, str] | None = None,
                nvml=None) -> tuple[dict, str, list]:
    """Runs body inside `with Profiler(...) as p:` in a subprocess with the stand-in
    first on its path; its report (JSON, text) and the calls torch.cuda saw. nvml: the
    fake NVML's folder, its target that subprocess (FAKE_NVML_PID)."""
    run = tmp_path / "run"
    calls = tmp_path / "calls.json"
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import json, sys, time
        import lapse
        from lapse import Profiler

        def readings(n):
            # waits until lapse has read max_memory_allocated n more times (a snapshot's)
            cuda = sys.modules["torch"].cuda
            want = cuda.calls.count("max_memory_allocated") + n
            deadline = time.monotonic() + 20
            while cuda.calls.count("max_memory_allocated") < want and time.monotonic() < deadline:
                time.sleep(0.01)
            assert cuda.calls.count("max_memory_allocated") >= want, "no reading"

        with Profiler(run_dir=sys.argv[1], snapshot_ms=50) as p:
            with lapse.phase("step"):
        """) + textwrap.indent(textwrap.dedent(body), " " * 8) + textwrap.dedent("""
        torch = sys.modules.get("torch")
        json.dump(torch.cuda.calls if torch else None, open(sys.argv[2], "w"))
        print("program done")
        """))
    e = dict(os.environ, PYTHONPATH=standin(tmp_path), **(env or {}))
    cmd = [sys.executable, str(prog), str(run), str(calls)]
    if nvml is not None:
        e.update(LD_LIBRARY_PATH=str(nvml), LAPSE_DEVICE_INTERVAL_MS="50")
        cmd = ["sh", "-c", 'FAKE_NVML_PID=$$ exec "$0" "$@"', *cmd]
    out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "program done" in out.stdout
    assert "Traceback" not in out.stderr, out.stderr
    doc = report(run)
    text = subprocess.run([lapse_command(), "report", str(run)], capture_output=True, text=True,
                          check=True).stdout
    return doc, text, json.load(open(calls))


def test_peaks_per_device_in_text_and_json(tmp_path) -> None:
    doc, text, calls = run_program(tmp_path, """
        import torch
        readings(1)
        torch.cuda.allocated[1], torch.cuda.reserved[1] = 64_000_000, 80_000_000
    """, {"FAKE_CUDA_INIT": "1"})
    role = doc["roles"][0]
    assert role["gpu_state"] == "measured" and role["gpu"] == []  # no NVML here
    assert role["vram_state"] == "measured"
    vram = {v["torch_index"]: v for v in role["vram"]}
    assert vram[0]["allocated_peak_bytes"] == 256 * MB and vram[0]["reserved_peak_bytes"] == 300 * MB
    assert vram[1]["allocated_peak_bytes"] == 64 * MB and vram[1]["reserved_peak_bytes"] == 80 * MB
    assert vram[0]["uuid"] == "GPU-1111aaaa-0000-0000-0000-000000000000"
    assert vram[0]["device_name"] == "Fake H200" and vram[0]["processes"] == 1
    for v in vram.values():  # NVML's figures: unknown, not 0
        assert v["busy_pct"] is None and v["vram_held_peak_bytes"] is None
        assert v["join"] == "no_nvml" and v["nvml_line"] is None
    assert role["vram_resets"] == 0 and role["vram_error"] is None
    assert "VRAM held peak -; VRAM allocated (peak) 256.0 MB; VRAM reserved (peak) 300.0 MB" in text
    assert "VRAM held peak -; VRAM allocated (peak) 64.0 MB; VRAM reserved (peak) 80.0 MB" in text
    assert "cuda:1 Fake H200 (GPU-2222bbbb-0000-0000-0000-000000000000, pid" in text
    assert "busy -, idle -, this run -" in text
    assert "not joined to NVML: no NVML reading of the role's devices on" in text
    assert "reset_peak_memory_stats" not in calls


# NVML's devices (the fake): 0 "GPU-1111aaaa-...", which the process is not on, and 1,
# the process's; torch sees NVML's 1 as its cuda:0 (CUDA_VISIBLE_DEVICES=1,...), in its
# own spelling (str(props.uuid): no "GPU-" prefix), and a cuda:1 NVML has no line for.
JOIN_ENV = {"FAKE_CUDA_INIT": "1", "FAKE_NVML_DEVICE": "1",
            "FAKE_NVML_UUID0": "GPU-1111aaaa-0000-0000-0000-000000000000",
            "FAKE_NVML_UUID1": "GPU-2222bbbb-0000-0000-0000-000000000000",
            "FAKE_CUDA_UUIDS": "2222bbbb-0000-0000-0000-000000000000,"
                               "9999cccc-0000-0000-0000-000000000000"}
JOIN_BODY = """
    import torch
    torch.cuda.allocated[1], torch.cuda.reserved[1] = 64_000_000, 80_000_000
    readings(1)
    time.sleep(0.5)  # the fake's three readings of NVML's device 1
"""


def nvml_script(tmp_path) -> dict[str, str]:
    (tmp_path / "script").write_text("50 30 1000000\n70 - 2000000\n90 60 1500000\n")
    return {"FAKE_NVML_SCRIPT": str(tmp_path / "script")}


def test_torch_line_joins_nvml_by_uuid_not_by_index(fake_nvml, tmp_path) -> None:
    doc, text, _ = run_program(tmp_path, JOIN_BODY, dict(JOIN_ENV, **nvml_script(tmp_path)),
                               nvml=fake_nvml)
    role = doc["roles"][0]
    (gpu,) = role["gpu"]  # NVML's device 1 only: 0 never listed the process
    assert (gpu["device_index"], gpu["uuid"], gpu["readings"], gpu["busy_pct"],
            gpu["this_run_pct"], gpu["vram_held_peak_bytes"]) == (
        1, "GPU-2222bbbb-0000-0000-0000-000000000000", 3, 70.0, 30.0, 2000000)
    vram = {v["torch_index"]: v for v in role["vram"]}
    assert gpu["vram_line"] == role["vram"].index(vram[0]) and gpu["torch_index"] == 0
    assert (gpu["vram_allocated_peak_bytes"], gpu["vram_reserved_peak_bytes"]) == (256 * MB, 300 * MB)
    v = vram[0]
    assert (v["join"], v["nvml_line"], v["busy_pct"], v["idle_pct"], v["this_run_pct"],
            v["vram_held_peak_bytes"]) == ("uuid", 0, 70.0, 30.0, 30.0, 2000000)
    u = vram[1]  # no NVML line has its uuid: a line of its own
    assert (u["join"], u["nvml_line"], u["busy_pct"], u["vram_held_peak_bytes"]) == (
        "no_match", None, None, None)
    host = doc["workers"][0]["host"]
    assert ("    VRAM held peak 2.0 MB; 3 readings, every 50.0ms\n"
            "    torch cuda:0 (joined by uuid 2222bbbb-0000-0000-0000-000000000000): "
            "VRAM allocated (peak) 256.0 MB; VRAM reserved (peak) 300.0 MB\n") in text
    assert "cuda:0 Fake H200" not in text  # one line, NVML's
    assert "cuda:1 Fake H200 (9999cccc-0000-0000-0000-000000000000, pid" in text
    assert f"    not joined to NVML: no NVML device of {host} has its uuid\n" in text


def test_a_failing_uuid_call_leaves_its_device_unjoinable(fake_nvml, tmp_path) -> None:
    env = dict(JOIN_ENV, FAKE_NVML_UUID1="fail", **nvml_script(tmp_path))
    doc, text, _ = run_program(tmp_path, JOIN_BODY, env, nvml=fake_nvml)
    role = doc["roles"][0]
    (gpu,) = role["gpu"]
    assert (gpu["device_index"], gpu["uuid"], gpu["uuid_error"], gpu["vram_line"]) == (
        1, None, "nvmlDeviceGetUUID: Unknown Error (999)", None)
    assert gpu["readings"] == 3 and gpu["busy_pct"] == 70.0  # its figures still read
    vram = {v["torch_index"]: v for v in role["vram"]}
    for v in vram.values():
        assert (v["join"], v["join_why"], v["nvml_line"], v["busy_pct"]) == (
            "nvml_uuid_unknown", "nvmlDeviceGetUUID: Unknown Error (999)", None, None)
    assert "    uuid unknown (nvmlDeviceGetUUID: Unknown Error (999)): no torch line can join it\n" in text
    assert "cuda:0 Fake H200 (2222bbbb-0000-0000-0000-000000000000, pid" in text
    assert ("not joined to NVML: a device NVML read on {} has no uuid (nvmlDeviceGetUUID: "
            "Unknown Error (999))".format(doc["workers"][0]["host"])) in text


def test_a_program_without_torch_has_no_gpu_block(tmp_path) -> None:
    doc, text, calls = run_program(tmp_path, "time.sleep(0.2)\n", {"FAKE_CUDA_INIT": "1"})
    role = doc["roles"][0]
    assert calls is None  # torch was never imported: by lapse neither
    assert role["gpu_state"] == "not_collected" and role["vram_state"] == "not_collected"
    assert role["vram"] == [] and "\nGPU" not in text


def test_cuda_not_initialised_only_is_initialized_is_called(tmp_path) -> None:
    doc, text, calls = run_program(tmp_path, """
        import torch
        time.sleep(0.3)
    """)
    role = doc["roles"][0]
    assert calls and set(calls) == {"is_initialized"}
    assert role["gpu_state"] == "not_collected" and role["vram"] == [] and "\nGPU" not in text


def test_a_reset_of_the_peak_stats_keeps_the_largest_peak_read(tmp_path) -> None:
    doc, text, calls = run_program(tmp_path, """
        import torch
        readings(2)  # 256 MB read
        torch.cuda.reset_peak_memory_stats(0)
        torch.cuda.allocated[0], torch.cuda.reserved[0] = 10_000_000, 20_000_000
        readings(2)  # the reset read
        torch.cuda.allocated[0] = 100_000_000
    """, {"FAKE_CUDA_INIT": "1"})
    role = doc["roles"][0]
    v = role["vram"][0]
    assert v["allocated_peak_bytes"] == 256 * MB and v["reserved_peak_bytes"] == 300 * MB
    assert role["vram_resets"] >= 1
    assert "torch's peak stats were reset" in text


def test_calls_that_raise_are_recorded_not_raised(tmp_path) -> None:
    doc, text, calls = run_program(tmp_path, """
        import torch
        readings(1)
    """, {"FAKE_CUDA_INIT": "1", "FAKE_CUDA_RAISE": "1"})
    role = doc["roles"][0]
    assert role["vram_state"] == "unreadable" and role["vram"] == []
    assert role["gpu_state"] == "unreadable"
    assert role["vram_error"] == ("torch.cuda.max_memory_allocated(0): RuntimeError: CUDA error: "
                                  "an illegal memory access was encountered")
    assert "a reading failed: torch.cuda.max_memory_allocated(0): RuntimeError" in text


def test_a_role_shows_its_largest_process_peak_not_a_sum(tmp_path) -> None:
    """Two worker processes on the same device (uuid): one line, the larger peak."""
    child = tmp_path / "child.py"
    child.write_text(textwrap.dedent("""
        import sys, time
        import torch
        from lapse import Profiler
        with Profiler(role="worker"):
            time.sleep(0.1)
    """))
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(f"""
        import os, subprocess, sys
        from lapse import Profiler
        with Profiler(run_dir=sys.argv[1], role="main"):
            for alloc in ("100000000", "150000000"):
                subprocess.run([sys.executable, {str(child)!r}], check=True,
                               env=dict(os.environ, FAKE_ALLOC0=alloc))
    """))
    run = tmp_path / "run"
    e = dict(os.environ, PYTHONPATH=standin(tmp_path), FAKE_CUDA_INIT="1")
    out = subprocess.run([sys.executable, str(prog), str(run)], env=e, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = report(run)
    roles = {r["role"]: r for r in doc["roles"]}
    assert roles["main"]["gpu_state"] == "not_collected"  # it never imported torch
    (v,) = roles["worker"]["vram"]
    assert v["processes"] == 2 and v["allocated_peak_bytes"] == 150 * MB
    assert v["reserved_peak_bytes"] == 300 * MB


def test_a_process_killed_keeps_its_last_snapshots_reading(tmp_path) -> None:
    """SIGKILL: no stop, no exit; the file is the last periodic snapshot's, which holds
    the reading taken after the snapshot before it."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import os, signal, sys, time
        import torch
        from lapse import Profiler
        p = Profiler(run_dir=sys.argv[1], snapshot_ms=50).start()
        cuda = torch.cuda
        while cuda.calls.count("max_memory_allocated") < 4:  # two readings of two devices
            time.sleep(0.01)
        time.sleep(0.3)  # a snapshot since
        os.kill(os.getpid(), signal.SIGKILL)
    """))
    run = tmp_path / "run"
    e = dict(os.environ, PYTHONPATH=standin(tmp_path), FAKE_CUDA_INIT="1")
    out = subprocess.run([sys.executable, str(prog), str(run)], env=e, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == -9, out.stderr
    role = report(run)["roles"][0]
    assert role["vram"][0]["allocated_peak_bytes"] == 256 * MB


def test_at_exit_without_stop_the_final_write_has_a_last_reading(tmp_path) -> None:
    """A Profiler never stopped: the reading at exit (atexit, before the C layer's
    final write) carries a peak reached after the last snapshot."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import sys
        import torch
        from lapse import Profiler
        Profiler(run_dir=sys.argv[1], snapshot_ms=600000).start()
        torch.cuda.allocated[0] = 512_000_000
    """))
    run = tmp_path / "run"
    e = dict(os.environ, PYTHONPATH=standin(tmp_path), FAKE_CUDA_INIT="1")
    out = subprocess.run([sys.executable, str(prog), str(run)], env=e, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = report(run)
    assert doc["workers"][0]["end_reason"] == "exit"
    assert doc["roles"][0]["vram"][0]["allocated_peak_bytes"] == 512 * MB
