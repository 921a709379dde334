"""The profiler never breaks the program it observes."""

from __future__ import annotations

import os

import pytest

from conftest import phases_by_path, profile_env, role_of, run_program, stderr_lines


def unwritable_dirs():
    yield pytest.param(lambda tmp: "/proc/nonexistent/runs", id="proc")
    yield pytest.param(lambda tmp: _file_as_dir(tmp), id="not-a-directory")
    yield pytest.param(lambda tmp: _read_only(tmp), id="read-only",
                       marks=pytest.mark.skipif(os.geteuid() == 0,
                                                reason="root writes into read-only directories"))


def _file_as_dir(tmp):
    f = tmp / "a-file"
    f.write_text("not a directory\n")
    return str(f / "runs")


def _read_only(tmp):
    d = tmp / "read-only"
    d.mkdir()
    d.chmod(0o500)
    return str(d / "runs")


@pytest.mark.parametrize("make_dir", unwritable_dirs())
def test_unwritable_run_dir(lapse, tmp_path, make_dir):
    run_dir = make_dir(tmp_path)
    state = tmp_path / "state"
    state.mkdir()
    r = run_program([lapse.program("e2e_workers"), state, 3, 1000, 2],
                    profile_env(run_dir, role="driver"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(" exit 0\n") == 2, r.stdout
    lines = stderr_lines(r.stderr)
    assert len(lines) == 1, f"expected one warning line, got:\n{r.stderr}"
    assert lines[0].startswith("lapse: warning"), lines
    assert (state / "w1.progress").read_text().strip() == "3"


def test_unmatched_ends_are_counted(lapse, tmp_path):
    r = run_program([lapse.program("e2e_unmatched")], profile_env(tmp_path / "runs", role="mismatch"))
    assert r.returncode == 0, r.stderr
    assert stderr_lines(r.stderr) == [], r.stderr
    expected = int(r.stdout.split()[-1])
    doc = lapse.report_json(tmp_path / "runs")
    (w,) = doc["workers"]
    assert w["final"] is True and w["end_reason"] == "exit", w
    assert w["unmatched_ends"] == expected, w
    caveats = [c for c in doc["caveats"] if c["kind"] == "unmatched_ends"]
    assert caveats, doc["caveats"]
    phases = phases_by_path(role_of(doc, "mismatch"))
    # what was well formed, or closed implicitly, is still measured once
    for path in ("outer", "outer/inner", "scoped", "scoped/leaked", "well_formed", "thread_ok"):
        assert path in phases and phases[path]["calls"] == 1, (path, sorted(phases))
    assert not any("never_begun" in p for p in phases), sorted(phases)
