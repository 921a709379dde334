"""multiprocessing children under spawn, fork and forkserver join the parent's run,
with exact span counts, including children that leave through os._exit (fork and
forkserver children do)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

import mp_worker
from conftest import phases, report

HERE = pathlib.Path(__file__).parent
METHODS = ["spawn", "fork", "forkserver"]


def scenario(tmp_path, method: str, workers: int, kind: str) -> dict:
    r = subprocess.run([sys.executable, str(HERE / "mp_scenario.py"), method, str(workers),
                        str(tmp_path), kind], capture_output=True, text=True, timeout=180,
                       cwd=HERE)
    assert r.returncode == 0, r.stdout + r.stderr
    parent_file = pathlib.Path(r.stdout.strip().splitlines()[-1])
    return report(parent_file.parent.parent)


def child_phases(doc: dict) -> dict[str, int]:
    """path -> calls, summed over every role but the parent's."""
    calls: dict[str, int] = {}
    for role in doc["roles"]:
        if role["role"] == "parent":
            continue
        for ph in role["phases"]:
            calls[ph["path"]] = calls.get(ph["path"], 0) + ph["calls"]
    return calls


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("workers", [1, 4, 16])
def test_workers_join_with_exact_counts(tmp_path, method, workers):
    doc = scenario(tmp_path, method, workers, "process")
    assert doc["run"]["roles"].get("worker") == workers, doc["run"]["roles"]
    got = phases(doc, "worker")
    assert got["task"]["calls"] == workers
    assert got["task/step"]["calls"] == workers * mp_worker.STEPS
    not_final = [(w["role"], w["pid"]) for w in doc["workers"] if not w["final"]]
    assert not_final == []
    assert phases(doc, "parent")["dispatch"]["calls"] == 1


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_workers_use_the_parent_features(tmp_path, method):
    """A worker's Profiler() that names no feature joins its inherited session with
    the parent's features, timeline bound and snapshot period."""
    doc = scenario(tmp_path, method, 2, "features")
    assert doc["run"]["roles"] == {"parent": 1, "worker": 2}, doc["run"]["roles"]
    for w in doc["workers"]:
        assert (w["role"], w["cpu_sampler"], w["max_spans"], w["snapshot_interval_ms"]) == \
            (w["role"], None, 500, 30_000), w
    assert phases(doc, "worker")["task/step"]["calls"] == 2 * mp_worker.STEPS


@pytest.mark.parametrize("method", METHODS)
def test_pool_workers_without_a_profiler_of_their_own(tmp_path, method):
    doc = scenario(tmp_path, method, 4, "pool")
    got = child_phases(doc)
    assert got["task"] == 8 and got["task/step"] == 8 * mp_worker.STEPS
    assert all(w["final"] for w in doc["workers"]), doc["workers"]


@pytest.mark.parametrize("method", METHODS)
def test_pool_maps_a_span_function(tmp_path, method):
    """Pool.map of a @span function: the function pickles (by its qualified name) and
    each call is a span in the worker that ran it."""
    doc = scenario(tmp_path, method, 2, "pool_span")
    assert child_phases(doc)["step"] == 20


@pytest.mark.parametrize("method", METHODS)
def test_a_worker_that_raises_keeps_what_it_recorded(tmp_path, method):
    doc = scenario(tmp_path, method, 1, "raises")
    got = child_phases(doc)
    assert got["task"] == 1 and got["task/step"] == 1


@pytest.mark.parametrize("method", METHODS)
def test_a_worker_killed_before_any_snapshot_is_named(tmp_path, method):
    """SIGKILLed in its first span, long before a periodic snapshot: its file (written
    when it took its role) names it, and the other workers are exact."""
    doc = scenario(tmp_path, method, 4, "killed")
    workers = [w for w in doc["workers"] if w["role"] == "worker"]
    assert len(workers) == 4, doc["workers"]
    killed = [w for w in workers if not w["final"]]
    assert len(killed) == 1 and killed[0]["stale"], workers
    named = [c for c in doc["caveats"] if str(killed[0]["pid"]) in c.get("message", "")]
    assert [c["kind"] for c in named] == ["stale"], doc["caveats"]
    got = phases(doc, "worker")
    assert got["task/step"]["calls"] == 3 * mp_worker.STEPS
    assert got["task"]["calls"] == 3


def test_load_run_as_a_test_assertion(tmp_path):
    import lapse

    scenario(tmp_path, "fork", 4, "process")
    run = lapse.load_run(tmp_path)
    assert run.roles["worker"] == 4 and run.roles["parent"] == 1
    assert "evaluator" not in run.roles
    assert run.tree[("task", "step")].calls == 4 * mp_worker.STEPS
    assert run.tree[("task",)].roles == ("worker",)
    assert run.tree[("dispatch",)].calls == 1
    assert run.unreadable == [] and run.stale == [] and run.superseded == []
    latest = max(w.written_at for w in run.workers)
    assert all(latest - w.written_at < 300 for w in run.workers)
    assert {w.role for w in run.workers} == {"parent", "worker"}
    (pathlib.Path(run.workers[0].file).parent / "garbage.lapse").write_bytes(b"\0" * 64)
    again = lapse.load_run(tmp_path)
    assert len(again.unreadable) == 1 and "garbage.lapse" in again.unreadable[0][0]
