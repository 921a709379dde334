"""The DEVICE collector (src/collect/nvml.c) against a fake libnvidia-ml.so.1
(tests/fakes/fake_nvml.c, built into BUILD/fakes/nvml) that replays a script of
readings for the pid a test gives it: exact figures in the report, text and JSON;
no GPU section for a process the device never held; the library missing; nvmlInit
failing; a call failing mid-run; NVML_ERROR_NOT_FOUND (no new sample: measured 0);
NOT_SUPPORTED (this run's utilisation n/a, not 0%)."""

from __future__ import annotations

from conftest import clean_env, role_of, run_program, start_program

# BUSY OWN MEM per reading of device 0 (the fake's format). The first reading has a
# sample of 30%; the second none (NOT_FOUND: 0, measured); the third 60%; the fourth
# fails the device's utilisation call and has no per-process figure (NOT_SUPPORTED).
SCRIPT = "50 30 1000000\n70 - 2000000\n90 60 1500000\nE n 1000000\n"
INTERVAL_MS = 50
TRAIN_MS = 700  # the four readings fall in "train" (the first at 50 ms)


def gpu_env(lapse, tmp_path, role, script=SCRIPT, **extra):
    (tmp_path / "script").write_text(script)
    # the default features but ACTIVITY, which this machine may lack: DEVICE alone here
    return clean_env(LAPSE_RUN_DIR=str(tmp_path / "runs"), LAPSE_ROLE=role,
                     LAPSE_FEATURES="spans,timeline,cpu,io,memory,device",
                     LAPSE_DEVICE_INTERVAL_MS=str(INTERVAL_MS),
                     FAKE_NVML_SCRIPT=str(tmp_path / "script"),
                     LD_LIBRARY_PATH=str(lapse.build / "fakes" / "nvml"), **extra)


def run_as_target(lapse, env, train_ms=TRAIN_MS):
    """The program, told by the fake that it is the pid of the script (its own)."""
    cmd = f'FAKE_NVML_PID=$$ exec "{lapse.program("e2e_gpu_phases")}" {train_ms} 100'
    r = run_program(["sh", "-c", cmd], env)
    assert r.returncode == 0, r.stderr
    return r


def test_gpu_block_has_the_replayed_figures(lapse, tmp_path):
    env = gpu_env(lapse, tmp_path, "trainer")
    r = run_as_target(lapse, env)
    assert r.stdout == "missing: \n"
    doc = lapse.report_json(tmp_path / "runs")
    role = role_of(doc, "trainer")
    assert role["gpu_state"] == "measured"
    (gpu,) = role["gpu"]  # device 1 never held it: not there
    assert {k: gpu[k] for k in gpu if k not in ("pid", "host")} == {
        "device_index": 0, "device_name": "Fake GPU 0", "readings": 4,
        "interval_ms": INTERVAL_MS,
        "busy_pct": 70.0, "idle_pct": 30.0,      # (50 + 70 + 90) / 3: the fourth failed
        "this_run_pct": 30.0,                   # (30 + 0 + 60) / 3: NOT_FOUND is 0
        "vram_held_peak_bytes": 2000000,
        "uuid": "GPU-f0f0f0f0-0000-0000-0000-000000000000",  # the fake's device 0
        "uuid_error": None, "uuid_recorded": True,
        "vram_line": None, "torch_index": None,  # a C program: no torch line to join
        "vram_allocated_peak_bytes": None, "vram_reserved_peak_bytes": None,
        "by_phase": [{"phase": "train", "readings": 3, "this_run_pct": 30.0}]}
    assert doc["workers"][0]["missing"] == "" and doc["workers"][0]["absent"] == ""
    failed = [c for c in doc["caveats"] if c["kind"] == "gpu_failed"]
    assert len(failed) == 1 and failed[0]["count"] == 1, doc["caveats"]
    assert "nvmlDeviceGetUtilizationRates: Unknown Error (999)" in failed[0]["message"]

    text = lapse.run("report", tmp_path / "runs").stdout
    assert "Fake GPU 0 (device 0, pid" in text
    assert "busy 70.0%, idle 30.0%, this run 30.0%;" in text
    assert "VRAM held peak 2.0 MB; 4 readings, every 50.0ms" in text
    assert "    train                          30.0%  3 readings\n" in text
    assert "Fake GPU 1" not in text


def test_a_cpu_only_sibling_gets_no_gpu_section(lapse, tmp_path):
    env = gpu_env(lapse, tmp_path, "trainer")
    cmd = f'FAKE_NVML_PID=$$ exec "{lapse.program("e2e_gpu_phases")}" {TRAIN_MS} 100'
    target = start_program(["sh", "-c", cmd], env)
    sibling_env = dict(gpu_env(lapse, tmp_path, "loader"), FAKE_NVML_PID=str(target.pid))
    sib = run_program([lapse.program("e2e_gpu_phases"), TRAIN_MS, 100], sibling_env)
    out, err = target.communicate(timeout=30)
    assert target.returncode == 0 and sib.returncode == 0, (err, sib.stderr)
    doc = lapse.report_json(tmp_path / "runs")
    assert role_of(doc, "trainer")["gpu_state"] == "measured"
    loader = role_of(doc, "loader")
    assert loader["gpu_state"] == "not_collected" and loader["gpu"] == []
    text = lapse.run("report", tmp_path / "runs").stdout
    assert text.count("\nGPU  (NVML") == 1


def test_without_the_library_device_is_absent_not_a_caveat(lapse, tmp_path):
    env = gpu_env(lapse, tmp_path, "main")
    del env["LD_LIBRARY_PATH"]
    r = run_as_target(lapse, env, train_ms=50)
    assert r.stdout.startswith("missing: device: libnvidia-ml.so.1: cannot open shared object file")
    doc = lapse.report_json(tmp_path / "runs")
    w = doc["workers"][0]
    assert w["missing"] == "" and w["absent"].startswith("device: libnvidia-ml.so.1: ")
    assert "device" not in w["features"]
    assert role_of(doc, "main")["gpu_state"] == "not_collected"
    assert [c for c in doc["caveats"] if c["kind"] in ("feature_missing", "gpu_failed")] == []


def test_nvml_init_failing_is_missing_with_why(lapse, tmp_path):
    env = gpu_env(lapse, tmp_path, "main", FAKE_NVML_INIT="fail")
    r = run_as_target(lapse, env, train_ms=50)
    assert r.stdout == "missing: device: nvmlInit_v2: Driver Not Loaded (9)\n"
    doc = lapse.report_json(tmp_path / "runs")
    assert doc["workers"][0]["missing"] == "device: nvmlInit_v2: Driver Not Loaded (9)"
    (c,) = [c for c in doc["caveats"] if c["kind"] == "feature_missing"]
    assert "device: nvmlInit_v2: Driver Not Loaded (9)" in c["message"]
    assert role_of(doc, "main")["gpu_state"] == "not_collected"


def test_this_run_never_read_is_na_not_zero(lapse, tmp_path):
    env = gpu_env(lapse, tmp_path, "main", script="45 n 4096\n60 n 8192\n")
    run_as_target(lapse, env)
    doc = lapse.report_json(tmp_path / "runs")
    (gpu,) = role_of(doc, "main")["gpu"]
    assert (gpu["readings"], gpu["busy_pct"], gpu["this_run_pct"], gpu["by_phase"]) == \
        (2, 52.5, None, [])
    assert "this run n/a;" in lapse.run("report", tmp_path / "runs").stdout
    assert [c for c in doc["caveats"] if c["kind"] == "gpu_failed"] == []


def test_gpu_by_phase_follows_the_phases_open_at_each_reading(lapse, tmp_path):
    # "load" is open at readings 1-2, "train" at 3-5, nothing at 6 (the program
    # switches in step with the fake's count of readings)
    script = "50 10 1000\n50 20 1000\n50 60 1000\n50 80 1000\n50 - 1000\n50 40 1000\n"
    env = gpu_env(lapse, tmp_path, "main", script=script, FAKE_NVML_GATE="1")
    cmd = f'FAKE_NVML_PID=$$ exec "{lapse.program("e2e_gpu_phases")}" sync 2 3'
    r = run_program(["sh", "-c", cmd], env)
    assert r.returncode == 0, r.stderr
    (gpu,) = role_of(lapse.report_json(tmp_path / "runs"), "main")["gpu"]
    assert (gpu["readings"], gpu["this_run_pct"]) == (6, 35.0)  # 210 / 6
    assert gpu["by_phase"] == [{"phase": "train", "readings": 3, "this_run_pct": 46.6667},
                               {"phase": "load", "readings": 2, "this_run_pct": 15.0}]
    text = lapse.run("report", tmp_path / "runs").stdout
    assert "    train                          46.7%  3 readings\n" \
           "    load                           15.0%  2 readings\n" in text
