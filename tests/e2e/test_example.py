"""The C example (examples/c/pipeline.c), as `make demo` runs it."""

from __future__ import annotations

from conftest import clean_env, phases_by_path, profile_env, role_of, run_program, stderr_lines

STEPS = 6  # per worker: a short run (the example's default is 40, about 2 s)


def check_pipeline_report(doc):
    assert doc["run"]["roles"].get("worker") == 3, doc["run"]["roles"]
    assert doc["run"]["roles"].get("driver") == 1, doc["run"]["roles"]
    worker = role_of(doc, "worker")
    assert worker["processes"] == 3
    phases = phases_by_path(worker)
    for path in ("step", "step/load", "step/compute", "step/compute/kernel", "step/write"):
        assert phases[path]["calls"] == 3 * STEPS, (path, phases.get(path))
    kernel_counters = {c["name"]: c for c in phases["step/compute/kernel"]["counters"]}
    assert kernel_counters["items"]["sum"] > 0
    assert {c["name"] for c in phases["step/load"]["counters"]} == {"bytes"}
    driver = phases_by_path(role_of(doc, "driver"))
    for path in ("setup", "dispatch", "gather"):
        assert driver[path]["calls"] == 1, (path, sorted(driver))
    assert all(w["final"] for w in doc["workers"]), doc["workers"]


def test_pipeline_under_lapse_profile(lapse, tmp_path):
    run_dir = tmp_path / "demo"
    r = run_program([lapse.program("example_pipeline"), STEPS], profile_env(run_dir, role="driver"))
    assert r.returncode == 0, r.stderr
    assert stderr_lines(r.stderr) == [], r.stderr
    assert "3 workers x 6 steps" in r.stdout, r.stdout
    check_pipeline_report(lapse.report_json(run_dir))
    text = lapse.run("report", run_dir)
    assert text.returncode == 0, text.stderr
    assert "worker" in text.stdout and "kernel" in text.stdout


def test_pipeline_starts_its_own_session(lapse, tmp_path):
    """Without LAPSE_PROFILE the example calls lapse_start itself (role "driver")."""
    run_dir = tmp_path / "own"
    r = run_program([lapse.program("example_pipeline"), STEPS], clean_env(LAPSE_RUN_DIR=str(run_dir)))
    assert r.returncode == 0, r.stderr
    assert stderr_lines(r.stderr) == [], r.stderr
    check_pipeline_report(lapse.report_json(run_dir))
