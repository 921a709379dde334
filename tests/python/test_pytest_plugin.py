"""pytest --lapse (lapse.pytest_plugin, the package's pytest11 entry point): a real
pytest run in a child process."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import phases, report

SUITE = '''
import time
import pytest

@pytest.fixture
def slow_setup():
    time.sleep(0.05)
    yield
    time.sleep(0.02)

def test_fast():
    pass

def test_slow_call():
    time.sleep(0.12)

def test_slow_setup(slow_setup):
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n
'''


def run_pytest(tmp_path, *options):
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *options, str(tmp_path / "test_suite.py")],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)


def test_pytest_lapse_records_each_phase_and_prints_the_slowest(tmp_path):
    r = run_pytest(tmp_path, "--lapse", "--lapse-top", "2", "--lapse-dir", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "lapse: the 2 slowest of 5 tests" in line)
    assert lines[at + 1].split() == ["total", "setup", "call", "teardown", "test"]
    first, second = lines[at + 2].split(), lines[at + 3].split()
    assert first[-1] == "test_suite.py::test_slow_call"
    assert second[-1] == "test_suite.py::test_slow_setup"
    assert "lapse report" in lines[at + 4]
    run = lines[at + 4].split("lapse: the run is in ")[1].split(" (")[0]
    got = phases(report(run), "pytest")
    for test in ("test_fast", "test_slow_call", "test_slow_setup", "test_param[1]", "test_param[2]"):
        for phase in ("", "/setup", "/call", "/teardown"):
            assert got[f"test_suite.py::{test}{phase}"]["calls"] == 1
    assert got["test_suite.py::test_slow_call/call"]["total_ns"] >= 100_000_000
    assert got["test_suite.py::test_slow_setup/setup"]["total_ns"] >= 40_000_000


def test_without_the_option_nothing_is_recorded(tmp_path):
    r = run_pytest(tmp_path)
    assert r.returncode == 0 and "lapse:" not in r.stdout
    r = run_pytest(tmp_path, "--lapse", "--lapse-top", "0")
    assert r.returncode != 0 and "--lapse-top needs a whole number >= 1" in r.stderr
