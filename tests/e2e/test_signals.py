"""Workers killed mid-run: a run with a SIGKILLed and a SIGTERMed worker still reads
honestly. Finished workers are exact, the SIGTERM worker wrote a final file that
matches its progress, the SIGKILLed one keeps its last snapshot and is named as stale.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from conftest import (SPANS_PER_ITERATION, TIMEOUT_S, WORKER_PATHS, counter, kill_group,
                      phase_names, phases_by_path, profile_env, role_of, start_program, stderr_lines,
                      wait_until, worker_by_pid, worker_info, worker_progress)

ITERATIONS = 60     # per worker; about 0.6 s at SLEEP_US per iteration
SLEEP_US = 10000
SNAPSHOT_MS = 100
# The report calls a non-final worker stale when its last write is more than
# 2 snapshot intervals + 1 s older than the run's end (the newest write of any file);
# workers that finished hold the run open (RELEASE_FILE) until this long after the kill.
STALE_AFTER_S = 2 * SNAPSHOT_MS / 1000 + 1.0
HOLD_AFTER_KILL_S = STALE_AFTER_S + 0.3
WORKERS = 4
KILLED = 2          # SIGKILL: no chance to write a final file
TERMINATED = 3      # SIGTERM: lapse writes a final file, then the process dies of it
MIN_BEFORE_KILL = 3  # iterations the SIGKILLed worker's last snapshot surely holds


def stat_key(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def test_killed_and_terminated_workers(lapse, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    release = tmp_path / "release"
    env = profile_env(tmp_path / "runs", role="driver", snapshot_ms=SNAPSHOT_MS)
    proc = start_program([lapse.program("e2e_workers"), state, ITERATIONS, SLEEP_US, WORKERS,
                          release], env)
    try:
        infos = [wait_until(lambda i=i: worker_info(state, i), what=f"worker {i} to start")
                 for i in range(WORKERS)]
        pids = [pid for pid, _ in infos]
        killed_pid, killed_file = infos[KILLED]
        term_pid, _ = infos[TERMINATED]

        # SIGTERM, mid-run, once it has done a few iterations.
        wait_until(lambda: worker_progress(state, TERMINATED) >= 5,
                   what="the SIGTERM worker to make progress")
        os.kill(term_pid, signal.SIGTERM)

        # SIGKILL, mid-run, after a snapshot that holds >= MIN_BEFORE_KILL iterations:
        # once progress >= MIN_BEFORE_KILL, wait for two more writes of its file. The
        # first may have been taken before we looked (a write is taken, then renamed);
        # the second was taken after the first was renamed, so after we looked.
        wait_until(lambda: worker_progress(state, KILLED) >= MIN_BEFORE_KILL,
                   what="the SIGKILL worker to make progress")
        seen = stat_key(killed_file)
        for n in range(2):
            wait_until(lambda: stat_key(killed_file) not in (None, seen),
                       what=f"snapshot {n + 1} of {killed_file}")
            seen = stat_key(killed_file)
        os.kill(killed_pid, signal.SIGKILL)
        killed_at = time.monotonic()

        # the others finish their iterations, then wait for the release
        for i in range(WORKERS):
            if i not in (KILLED, TERMINATED):
                wait_until(lambda i=i: worker_progress(state, i) >= ITERATIONS,
                           what=f"worker {i} to finish")
        time.sleep(max(0.0, killed_at + HOLD_AFTER_KILL_S - time.monotonic()))
        release.touch()
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"e2e_workers did not finish in {TIMEOUT_S}s")
    finally:
        kill_group(proc)  # whatever is left, if the test failed half-way

    assert proc.returncode == 0, f"driver failed ({proc.returncode}): {err}"
    assert stderr_lines(err) == [], err
    assert f"worker {KILLED} pid {killed_pid} signal {int(signal.SIGKILL)}" in out, out
    assert f"worker {TERMINATED} pid {term_pid} signal {int(signal.SIGTERM)}" in out, out
    for i in range(WORKERS):
        if i not in (KILLED, TERMINATED):
            assert f"worker {i} pid {pids[i]} exit 0" in out, out

    progress = [worker_progress(state, i) for i in range(WORKERS)]
    for i in (KILLED, TERMINATED):
        if progress[i] >= ITERATIONS:
            pytest.fail(f"worker {i} finished before it was killed (progress {progress}): "
                        "the machine is too slow for this test's timing")

    doc = lapse.report_json(killed_file.parent.parent)
    S = SPANS_PER_ITERATION

    # Finished workers: exact.
    for i in range(WORKERS):
        if i in (KILLED, TERMINATED):
            continue
        w = worker_by_pid(doc, pids[i])
        assert w["role"] == "worker"
        assert w["final"] is True, w
        assert w["end_reason"] == "exit", w
        assert w["stale"] is False, w
        assert w["span_calls"] == ITERATIONS * S, w

    # SIGTERM: lapse's handler wrote a final file before the process died of the signal.
    w = worker_by_pid(doc, term_pid)
    assert w["final"] is True, w
    assert w["end_reason"] == "SIGTERM", w
    assert w["stale"] is False, w
    # The worker writes its progress only after an iteration's spans have all ended,
    # so the file holds at least progress * S spans. The signal may land after an
    # iteration's spans ended but before its progress was written, or (the file is
    # written while the signal is handled, maybe on lapse's flush thread) in the middle
    # of an iteration whose inner spans already ended: at most one iteration more.
    p = progress[TERMINATED]
    assert p * S <= w["span_calls"] <= (p + 1) * S, (p, w)
    signalled = [c for c in doc["caveats"] if str(term_pid) in c.get("message", "")]
    assert [c["kind"] for c in signalled] == ["signal"], signalled
    assert "SIGTERM" in signalled[0]["message"], signalled

    # SIGKILL: its last periodic snapshot, not final, and reported as stale.
    w = worker_by_pid(doc, killed_pid)
    assert w["final"] is False, w
    assert w["stale"] is True, w
    assert w["stale_by_ns"] >= HOLD_AFTER_KILL_S * 1e9 - 1e6, w
    assert w["end_reason"] in ("", None), w
    p = progress[KILLED]
    assert w["span_calls"] >= MIN_BEFORE_KILL * S, (p, w)
    # What a snapshot recorded cannot exceed what the worker did. Allow exactly the one
    # iteration that may have been between its spans' end and its progress write when
    # the last snapshot was taken and the SIGKILL came.
    assert w["span_calls"] <= (p + 1) * S, (p, w)
    named = [c for c in doc["caveats"] if str(killed_pid) in c.get("message", "")]
    assert named, f"no caveat names pid {killed_pid}: {doc['caveats']}"
    assert any(c["kind"] == "stale" for c in named), named
    for i in range(WORKERS):
        if i != KILLED:
            assert not any(str(pids[i]) in c.get("message", "") and c["kind"] == "stale"
                           for c in doc["caveats"]), (i, doc["caveats"])

    # The merged role: 4 worker processes; phases agree with the per-worker counts.
    assert doc["run"]["roles"].get("worker") == WORKERS, doc["run"]["roles"]
    assert doc["run"]["roles"].get("driver") == 1, doc["run"]["roles"]
    role = role_of(doc, "worker")
    assert role["processes"] == WORKERS
    phases = phases_by_path(role)
    assert set(WORKER_PATHS) <= set(phases), sorted(phases)
    workers = [w for w in doc["workers"] if w["role"] == "worker"]
    assert sum(phases[p]["calls"] for p in WORKER_PATHS) == sum(w["span_calls"] for w in workers)
    iters = phases["iteration"]["calls"]
    done = 2 * ITERATIONS
    assert done + progress[TERMINATED] + MIN_BEFORE_KILL <= iters, (iters, progress)
    assert iters <= done + progress[TERMINATED] + progress[KILLED] + 2, (iters, progress)
    inner = phases["iteration/work/inner"]
    assert phase_names(role, inner) == ["iteration", "work", "inner"]
    assert inner["depth"] == 3
    items = counter(inner, "items")
    # items is counted inside inner, just before inner ends: a snapshot taken in
    # between (the killed or terminated worker) sees one more update than calls.
    assert inner["calls"] <= items["updates"] <= inner["calls"] + 2, (inner, items)
    assert items["sum"] == 3 * items["updates"]


def test_killed_worker_on_this_host_is_named_at_once(lapse, tmp_path):
    """A SIGKILLed worker whose pid is gone from this host is reported as gone (kind
    'stale') right away, without waiting for its snapshots to become overdue."""
    state = tmp_path / "state"
    state.mkdir()
    env = profile_env(tmp_path / "runs", role="driver", snapshot_ms=SNAPSHOT_MS)
    proc = start_program([lapse.program("e2e_workers"), state, 100000, SLEEP_US, 1], env)
    try:
        pid, path = wait_until(lambda: worker_info(state, 0), what="the worker to start")
        wait_until(lambda: worker_progress(state, 0) >= 2, what="the worker to make progress")
        seen = stat_key(path)
        wait_until(lambda: stat_key(path) not in (None, seen), what="a snapshot")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: f"worker 0 pid {pid} signal" in (proc.stdout.readline() or ""),
                   what="the driver to reap the worker")
        doc = lapse.report_json(path.parent.parent)  # the driver is still running
    finally:
        kill_group(proc)
    w = worker_by_pid(doc, pid)
    assert w["final"] is False and w["stale"] is True and w["state"] == "gone", w
    assert w["span_calls"] >= 2 * SPANS_PER_ITERATION, w
    named = [c for c in doc["caveats"] if str(pid) in c.get("message", "")]
    assert [c["kind"] for c in named] == ["stale"], named
    assert "gone" in named[0]["message"], named
