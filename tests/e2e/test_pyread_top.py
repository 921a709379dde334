"""`lapse top PID`: a table of functions by self and total share, one table per
interval when the output is not a terminal, refreshed in place on a terminal (bold
headers only there, and never with NO_COLOR)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import pathlib
import time

from conftest import REPO, clean_env, kill_group, start_program

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_pyread_dump import PYTHONS  # noqa: E402

WORKLOAD = REPO / "tests" / "e2e" / "py_targets" / "workload.py"


def start_workload(seconds: str = "30"):
    p = start_program([PYTHONS[0], str(WORKLOAD), seconds], env=clean_env())
    time.sleep(0.5)
    return p


def test_table_on_a_pipe(lapse):
    p = start_workload()
    try:
        r = lapse.run("top", "-i", "0.4", "-d", "1.5", "-r", "200", p.pid)
        assert r.returncode == 0, r.stderr
        assert "\033" not in r.stdout
        tables = r.stdout.count("%SELF  %TOTAL")
        assert 2 <= tables <= 4, r.stdout
        last = r.stdout.split("%SELF  %TOTAL")[-1]
        rows = {line.split()[-2]: line.split() for line in last.splitlines() if "(" in line}
        assert float(rows["work"][0].rstrip("%")) > 80, last
        assert float(rows["hot"][1].rstrip("%")) > 50, last
        assert float(rows["main"][1].rstrip("%")) > 90, last
    finally:
        kill_group(p)


def run_on_tty(lapse, pid, env):
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(lapse.exe), "top", "-i", "0.3", "-d", "1", str(pid)], stdout=slave,
                            stderr=subprocess.PIPE, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=20)
    os.close(master)
    return proc.returncode, out.decode(errors="replace")


def test_in_place_on_a_terminal(lapse):
    p = start_workload()
    try:
        rc, out = run_on_tty(lapse, p.pid, clean_env())
        assert rc == 0
        assert "\033[H\033[2J" in out and "\033[1m" in out
        assert "work (" in out
        rc, out = run_on_tty(lapse, p.pid, clean_env(NO_COLOR="1"))
        assert rc == 0
        assert "\033[H\033[2J" in out and "\033[1m" not in out
    finally:
        kill_group(p)


def test_target_exits(lapse):
    p = start_workload("1")
    try:
        r = lapse.run("top", "-i", "0.3", p.pid)
        assert r.returncode == 0, r.stderr
        assert f"process {p.pid} exited" in r.stderr
    finally:
        kill_group(p)


def test_gone_and_not_python(lapse):
    q = subprocess.Popen(["true"])
    q.wait()
    r = lapse.run("top", q.pid)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert f"no process {q.pid}" in r.stderr
    s = subprocess.Popen(["sleep", "30"])
    try:
        r = lapse.run("top", s.pid)
        assert r.returncode == 1 and "not a CPython process" in r.stderr
    finally:
        s.kill()
        s.wait()


def test_bad_usage(lapse):
    for args in ([], ["x"], ["-i", "0", "1"], ["--mode", "foo", "1"]):
        r = lapse.run("top", *args)
        assert r.returncode == 2, (args, r.stderr)
