"""The external sampler against a hostile target: every file its maps name is opened
without blocking (a FIFO named like a mapped file hung `lapse record` and `lapse top`
for good, deaf to SIGTERM and -d), and every wait ends with -d or SIGTERM."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from bounded import run_bounded
from conftest import clean_env, kill_group, start_program

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_pyread_dump import PYTHONS  # noqa: E402

# Maps two files at offset 0 (one named like a libpython, which the reader looks into
# for the interpreter; one plain, which it looks into for lapse's span registry), then
# removes them: the maps name them "PATH (deleted)", a path anyone may create.
MAPPER = """
import mmap, os, sys, time
maps = []
for name in ("libpython-fifo-test.so", "data.bin"):
    path = os.path.join(sys.argv[1], name)
    with open(path, "wb") as f:
        f.write(bytes(4096))
    with open(path, "rb") as f:
        maps.append(mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ))
    os.unlink(path)
print("ready", flush=True)
while True:
    sum(range(1000))
    time.sleep(0.001)
"""


@pytest.fixture
def target(tmp_path):
    proc = start_program([PYTHONS[0], "-c", MAPPER, tmp_path], env=clean_env())
    assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
    maps = pathlib.Path(f"/proc/{proc.pid}/maps").read_text()
    fifos = []
    for name in ("libpython-fifo-test.so", "data.bin"):
        shown = f"{tmp_path / name} (deleted)"
        assert shown in maps, maps
        os.mkfifo(shown)
        fifos.append(shown)
    yield proc
    kill_group(proc)


def bounded(lapse, args, budget_s):
    """Runs lapse ARGS; fails if it is still running after budget_s. (Output goes to
    files: a program it leaves running keeps a pipe open.)"""
    r = run_bounded([lapse.exe, *args], None, budget_s, env=clean_env())
    if r.timed_out:
        pytest.fail(f"lapse {args[0]} still running after {budget_s}s (blocked?): "
                    f"{r.stderr[-2000:]}")
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr, r.seconds


def test_record_with_a_fifo_in_the_maps_ends_at_its_duration(lapse, target, tmp_path):
    out = tmp_path / "samples.txt"
    rc, _, err, took = bounded(lapse, ["record", "--pid", target.pid, "-d", "1", "-o", out], 20)
    assert rc == 0, err
    assert out.stat().st_size > 0 and took < 15, (took, err)


def test_top_with_a_fifo_in_the_maps_ends_at_its_duration(lapse, target):
    rc, out, err, took = bounded(lapse, ["top", "-d", "1", "-i", "0.2", target.pid], 20)
    assert rc == 0, err
    assert "%" in out and took < 15, (took, out, err)


def test_record_with_a_fifo_in_the_maps_ends_on_sigterm(lapse, target, tmp_path):
    out = tmp_path / "samples.txt"
    proc = subprocess.Popen([str(lapse.exe), "record", "--pid", str(target.pid), "-o", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(), start_new_session=True)
    try:
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("lapse record did not end within 10 s of SIGTERM")
        assert proc.returncode == 0, err
        assert out.stat().st_size > 0
    finally:
        kill_group(proc)


def test_record_duration_with_a_program_that_ignores_sigterm(lapse, tmp_path):
    """-d ends the recording and sends the program SIGTERM; a program that ignores it
    is waited for 5 s, then left running (one line says so), not waited for forever."""
    prog = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(120)\n"
    out = tmp_path / "samples.txt"
    rc, _, err, took = bounded(lapse, ["record", "-d", "1", "-o", out, "--", PYTHONS[0], "-c", prog], 30)
    assert rc == 0, err
    assert "did not end within 5 s of SIGTERM; left running" in err, err
    assert took < 20, took
    pid = int(err.split("(pid ")[1].split(")")[0])
    os.kill(pid, signal.SIGKILL)
