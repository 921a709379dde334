"""`lapse run` on a script and on a module, and Profiler.run: one target, one run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

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


MESSY = textwrap.dedent("""
    import sys
    sys.path.insert(0, "/nowhere/first")
    sys.path.append("/nowhere/last")
    sys.path.remove(sys.path[1])      # the script's own directory, put there for it
    sys.argv.append("more")
    sys.argv = ["replaced"]
""")


@pytest.mark.parametrize("how", ["exit", "return"])
def test_profiler_run_restores_sys_path_and_argv_exactly(tmp_path, how):
    """Whatever the target does to sys.path and sys.argv (insert at the front,
    append, remove, replace the list), they are the same lists with the same items
    afterwards: the script's directory is not left on sys.path, nothing of the
    target's is, and nothing of the caller's is taken away."""
    script = tmp_path / "messy.py"
    script.write_text(MESSY + ("sys.exit(3)\n" if how == "exit" else ""))
    path, argv = sys.path, sys.argv
    path_items, argv_items = list(path), list(argv)
    Profiler.run(str(script), ["a"], run_dir=tmp_path / "runs")
    assert sys.path is path and sys.path == path_items
    assert sys.argv is argv and sys.argv == argv_items


def test_profiler_run_takes_a_bare_name_for_a_module(tmp_path, monkeypatch, capsys):
    """Profiler.run("platform") runs the module platform, as python -m does, even
    with a file named platform in the working directory (which ./platform runs)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "platform").write_text("open('ran_the_file', 'w').close()\n")
    Profiler.run("platform", run_dir=tmp_path / "runs")
    assert not (tmp_path / "ran_the_file").exists()
    import platform

    assert capsys.readouterr().out.strip() == platform.platform()
    Profiler.run("./platform", run_dir=tmp_path / "runs")
    assert (tmp_path / "ran_the_file").exists()


@pytest.mark.parametrize("args,first", [
    (["--x", "job.py"], "lapse run: unknown option '--x'"),
    (["--x=5", "job.py"], "lapse run: unknown option '--x'"),
    (["--max-spans=many", "job.py"], "lapse run: argument --max-spans: invalid int value: 'many'"),
])
def test_lapse_run_usage_errors(tmp_path, args, first):
    """A wrong option or value: the C commands' form (docs/cli.md), one line naming
    it and where help is, exit 2 (argparse's own was usage first, then
    "error: unrecognized arguments")."""
    r = subprocess.run([lapse_command(), "run", *args], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"{first} (lapse run --help explains)"], r.stderr


def test_lapse_run_option_forms(tmp_path):
    """--output=DIR, -oDIR, --max-spans=N and -q: the forms every command takes."""
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    for i, out in enumerate(([f"--output={tmp_path / 'a'}"], [f"-o{tmp_path / 'b'}"])):
        r = subprocess.run([lapse_command(), "run", "-q", *out, "--max-spans=50", str(script), "2"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert phases(report(tmp_path / "ab"[i]))["main/step"]["calls"] == 2
