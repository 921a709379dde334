"""Real processes, real signals: SIGUSR1 and SIGHUP flushes across a multi-process run,
and a run directory removed while its workers run."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

from lapse import Profiler

from conftest import report

WORKER = str(pathlib.Path(__file__).with_name("signal_worker.py"))


def _wait(cond, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.01)
    pytest.fail(f"timed out waiting for {what}")


def _progress(path: pathlib.Path) -> int:
    try:
        return int(path.read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _identity(path: pathlib.Path):
    """(inode, mtime) of a file, None while it does not exist: a write replaces it."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns)


def _start_workers(tmp_path, n):
    """n workers that inherit the process's environment as the session exported it
    (os.environ, a copy taken at startup, does not hold the session's variables:
    no env= here); LAPSE_SNAPSHOT_MS is set by the test with monkeypatch."""
    stop = tmp_path / "stop"
    procs, states = [], []
    for i in range(n):
        state = tmp_path / f"w{i}"
        procs.append(subprocess.Popen([sys.executable, WORKER, str(state), str(stop)],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        states.append(state)
    return procs, states, stop


def test_sigusr1_and_sighup_flush_every_worker(tmp_path, monkeypatch):
    """Children flushed by SIGUSR1/SIGHUP write a non-final file (they carry on: they
    handle the signal) that the report reads, with what they had done by then; then
    they are SIGKILLed, so that file is all that is left of them."""
    monkeypatch.setenv("LAPSE_SNAPSHOT_MS", "60000")
    with Profiler(run_dir=tmp_path / "runs", role="parent", snapshot_ms=60000) as p:
        procs, states, _ = _start_workers(tmp_path, 4)
        try:
            for s in states:
                _wait(lambda s=s: _progress(s) >= 5, f"{s} to make progress")
            files = [pathlib.Path(_wait(lambda s=s: (pathlib.Path(str(s) + ".pid").read_text()
                                                     if pathlib.Path(str(s) + ".pid").exists()
                                                     else ""), "pid")
                                  .split()[1]) for s in states]
            # each file was written once, when its worker took its role; the next
            # periodic write is 60 s away
            first = [_wait(lambda f=f: _identity(f), f"{f} written at start") for f in files]
            sigs = [signal.SIGUSR1, signal.SIGUSR1, signal.SIGHUP, signal.SIGHUP]
            before = []
            for proc, s, sig in zip(procs, states, sigs):
                before.append(_progress(s))
                os.kill(proc.pid, sig)
            for f, seen in zip(files, first):
                _wait(lambda f=f, seen=seen: _identity(f) not in (None, seen),
                      f"{f} written by the signal")
            time.sleep(0.1)  # they go on after the flush
            after = [_progress(s) for s in states]
            assert all(a > b for a, b in zip(after, before)), (before, after)
            for proc in procs:
                os.kill(proc.pid, signal.SIGKILL)
            for proc in procs:
                proc.wait(timeout=30)
                assert proc.returncode == -signal.SIGKILL
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
    doc = report(pathlib.Path(p.file).parent.parent)
    assert doc["run"]["roles"] == {"parent": 1, "worker": 4}, doc["run"]
    workers = {w["pid"]: w for w in doc["workers"]}
    for proc, sig, b in zip(procs, sigs, before):
        w = workers[proc.pid]
        assert w["final"] is False and w["end_reason"] == sig.name, w
        # the file holds what was done when the signal came: at least the phases
        # completed before it was sent, and fewer than were done 0.1 s later
        assert b <= w["span_calls"] < _progress(states[procs.index(proc)]), (b, w)
    parent = next(w for w in doc["workers"] if w["role"] == "parent")
    assert parent["final"] is True
    kinds = {c["kind"] for c in doc["caveats"]}
    assert "not_final" in kinds or "stale" in kinds, doc["caveats"]


def test_run_dir_removed_mid_run(tmp_path, capfd, monkeypatch):
    """rm -rf of the run directory while workers run: each process warns once and
    carries on to a normal exit, where it says that its profile was not saved;
    nothing crashes, and nothing is written again (lapse does not recreate the
    directory: the run is lost from then on)."""
    run_dir = tmp_path / "runs"
    monkeypatch.setenv("LAPSE_SNAPSHOT_MS", "50")
    with Profiler(run_dir=run_dir, role="parent", snapshot_ms=50) as p:
        procs, states, stop = _start_workers(tmp_path, 4)
        try:
            for s in states:
                _wait(lambda s=s: _progress(s) >= 5, f"{s} to make progress")
            _wait(lambda: len(list(run_dir.glob("*/*/worker-*.lapse"))) == 4, "worker files")
            while run_dir.exists():  # as `rm -rf` would, racing the writers' tmp files
                shutil.rmtree(run_dir, ignore_errors=True)
            marks = [_progress(s) for s in states]
            for s, m in zip(states, marks):
                _wait(lambda s=s, m=m: _progress(s) >= m + 20, f"{s} to go on")
            stop.touch()
            outs = [proc.communicate(timeout=60) for proc in procs]
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
        with p.phase("after"):
            pass
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err
        assert int(out) > 20
        warnings = [line for line in err.splitlines() if line.startswith("lapse: warning")]
        assert len(warnings) == 1, err
        not_saved = [line for line in err.splitlines()
                     if line.startswith("lapse: profile not saved: ")]
        assert len(not_saved) == 1, err
        assert "Traceback" not in err
    parent_err = capfd.readouterr().err.splitlines()
    assert sum(1 for line in parent_err if line.startswith("lapse: warning")) == 1
    assert sum(1 for line in parent_err if line.startswith("lapse: profile not saved: ")) == 1
    assert not run_dir.exists()  # not recreated
