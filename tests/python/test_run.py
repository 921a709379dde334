"""`lapse run` on a script and on a module, and Profiler.run: one target, one run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from lapse import Profiler

from conftest import lapse_command, phases, report

SCRIPT = textwrap.dedent("""
    import sys
    from lapse import span

    @span
    def step(i):
        return i * 2

    with span("main"):
        total = sum(step(i) for i in range(int(sys.argv[1])))
    print("total", total)
    sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
""")


def test_lapse_run_script(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    runs = tmp_path / "runs"
    r = subprocess.run([lapse_command(), "run", "-o", str(runs), "--role", "trainer", str(script),
                        "25"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "total 600" in r.stdout
    assert "TRAINER" in r.stderr  # the report, on stderr
    got = phases(report(runs))
    assert got["main"]["calls"] == 1
    assert got["main/step"]["calls"] == 25


def test_lapse_run_passes_the_exit_status_through(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    r = subprocess.run([lapse_command(), "run", "-q", "-o", str(tmp_path / "runs"), str(script),
                        "3", "7"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 7, r.stderr
    assert phases(report(tmp_path / "runs"))["main/step"]["calls"] == 3


def test_lapse_run_module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "job.py").write_text(SCRIPT)
    r = subprocess.run([lapse_command(), "run", "-q", "-o", str(tmp_path / "runs"), "-m",
                        "pkg.job", "4"], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert phases(report(tmp_path / "runs"))["main/step"]["calls"] == 4


def test_lapse_run_errors(tmp_path):
    r = subprocess.run([lapse_command(), "run", str(tmp_path / "missing.py")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "no such file" in r.stderr
    r = subprocess.run([lapse_command(), "run", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "lapse run" in r.stdout


def test_profiler_run(tmp_path, monkeypatch):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    argv = sys.argv[:]
    profile = Profiler.run(str(script), ["5"], run_dir=tmp_path / "runs", role="inline")
    assert sys.argv == argv  # restored
    stats = profile.stats()
    assert stats["main.step"].calls == 5
