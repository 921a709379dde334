"""Bad input to `lapse report`: one clear line and the documented exit status."""

from __future__ import annotations


def test_missing_path(lapse, tmp_path):
    missing = tmp_path / "no-such-run"
    r = lapse.run("report", missing)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert str(missing) in r.stderr or missing.name in r.stderr, r.stderr
    assert r.stdout == ""


def test_missing_path_json(lapse, tmp_path):
    r = lapse.run("report", tmp_path / "no-such-run", "--json")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_directory_without_lapse_files(lapse, tmp_path):
    (tmp_path / "empty").mkdir()
    r = lapse.run("report", tmp_path / "empty")
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_unknown_flag(lapse, workers_run):
    r = lapse.run("report", workers_run.run_dir, "--no-such-flag")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.strip(), "a usage error says why"


def test_help(lapse):
    r = lapse.run("report", "--help")
    assert r.returncode == 0, (r.returncode, r.stderr)
    assert "report" in r.stdout
    assert "--json" in r.stdout


def test_unknown_command(lapse):
    r = lapse.run("no-such-command")
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_help_claims_only_supported_languages(lapse):
    """`lapse --help` names a language only where the project ships its binding:
    C/C++ (include/lapse.h), Python (python/lapse), Fortran (a fortran/ module)."""
    from conftest import REPO
    r = lapse.run("--help")
    assert r.returncode == 0, r.stderr
    for language, binding in (("Fortran", REPO / "fortran"), ("Rust", REPO / "rust"),
                              ("Julia", REPO / "julia")):
        if language in r.stdout:
            assert binding.is_dir(), f"--help names {language}, which lapse does not support"
