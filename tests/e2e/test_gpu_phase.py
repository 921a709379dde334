"""Phases with GPU time (LAPSE_GPU_TIME) in the report, text and JSON, against the
fake CUDA runtime (tests/fakes/fake_cudart.c) that returns known elapsed times: GPU
time beside wall time per path; a process that never used CUDA gets no context and
its phases' GPU time is missing with the reason (n/a, never 0)."""

from __future__ import annotations

from conftest import phases_by_path, profile_env, role_of, run_program, stderr_lines


def run(lapse, tmp_path, *args, **env):
    r = run_program([lapse.program("e2e_gpu_phase"), *args],
                    profile_env(tmp_path / "run", role="m", **env))
    assert r.returncode == 0 and stderr_lines(r.stderr) == [], r.stderr
    return r.stdout.strip().splitlines()[-1]


def test_gpu_time_beside_wall_time(lapse, tmp_path):
    last = run(lapse, tmp_path, str(lapse.build), "use", FAKE_CUDART_ELAPSED_MS="2,3,4,10")
    assert last == "contexts=1"
    doc = lapse.report_json(tmp_path / "run")
    role = role_of(doc, "m")
    phases = phases_by_path(role)
    assert phases["train/step"]["gpu_time"] == {"ns": 9000000, "timed": 3, "untimed": 0,
                                                "mean_ns": 3000000}
    assert phases["train/eval"]["gpu_time"] == {"ns": 10000000, "timed": 1, "untimed": 0,
                                                "mean_ns": 10000000}
    assert phases["train"]["gpu_time"] is None
    assert role["gpu_time_missing"] is None
    text = lapse.run("report", tmp_path / "run")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index("GPU TIME BY PHASE (CUDA events at each entry and exit, beside wall time)")
    block = [line.split() for line in lines[at + 2:at + 4]]
    assert [(b[0], b[1], b[-2], b[-1]) for b in block] == [
        ("train/eval", "1", "10.0ms", "10.0ms"), ("train/step", "3", "9.0ms", "3.0ms")], lines[at:at + 5]


def test_a_process_that_never_used_cuda_gets_no_context_and_no_figure(lapse, tmp_path):
    last = run(lapse, tmp_path, str(lapse.build))  # runtime loaded, CUDA never used
    assert last == "contexts=0"
    doc = lapse.report_json(tmp_path / "run")
    role = role_of(doc, "m")
    step = phases_by_path(role)["train/step"]
    assert step["gpu_time"] == {"ns": 0, "timed": 0, "untimed": 3, "mean_ns": None}
    assert role["gpu_time_missing"] == "no CUDA context on this thread: the program has not used CUDA here"
    text = lapse.run("report", tmp_path / "run").stdout
    assert "(3 entries without GPU time: not in its GPU figures)" in text
    assert "no GPU time: no CUDA context on this thread" in text
    assert " 0ns" not in text.split("GPU TIME BY PHASE")[1]


def test_no_cuda_runtime_at_all(lapse, tmp_path):
    assert run(lapse, tmp_path, "-") == "contexts=0"
    role = role_of(lapse.report_json(tmp_path / "run"), "m")
    assert role["gpu_time_missing"].startswith("the program has not loaded the CUDA runtime")
    assert phases_by_path(role)["train/eval"]["gpu_time"]["untimed"] == 1


def test_no_gpu_phase_no_gpu_block(lapse, tmp_path):
    r = run_program([lapse.program("e2e_markers")], profile_env(tmp_path / "run", role="m"))
    assert r.returncode == 0, r.stderr
    assert "GPU TIME" not in lapse.run("report", tmp_path / "run").stdout
    role = role_of(lapse.report_json(tmp_path / "run"), "m")
    assert all(p["gpu_time"] is None for p in role["phases"]) and role["gpu_time_missing"] is None
