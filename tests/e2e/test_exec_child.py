"""A child started by exec joins its parent's run through the environment alone."""

from __future__ import annotations

from conftest import clean_env, phases_by_path, role_of, run_program


def test_exec_child_joins_the_run(lapse, tmp_path):
    runs = tmp_path / "runs"
    r = run_program([lapse.program("e2e_exec_child"), runs], clean_env())
    assert r.returncode == 0, r.stderr
    run_dirs = list(runs.iterdir())
    assert len(run_dirs) == 1, run_dirs  # one run id: the child did not start its own
    doc = lapse.report_json(runs)
    assert doc["run"]["roles"] == {"parent": 1, "child": 1}, doc["run"]
    assert phases_by_path(role_of(doc, "child"))["child_step"]["calls"] == 7
    assert phases_by_path(role_of(doc, "parent"))["spawn_child"]["calls"] == 1
    assert all(w["final"] for w in doc["workers"]), doc["workers"]
