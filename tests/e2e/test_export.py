"""`lapse export RUN --perfetto out.json`: Chrome trace JSON with X slices."""

from __future__ import annotations

import json
from collections import defaultdict

from conftest import WORKER_PATHS


def test_perfetto_export(lapse, workers_run, tmp_path):
    out = tmp_path / "trace.json"
    r = lapse.run("export", workers_run.run_dir, "--perfetto", out)
    assert r.returncode == 0, (r.returncode, r.stderr)
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    slices = [e for e in events if e.get("ph") == "X"]
    assert slices, "no X slices"
    for e in slices:
        assert isinstance(e["name"], str) and e["name"]
        assert e["dur"] >= 0 and e["ts"] >= 0
        assert "pid" in e and "tid" in e

    # every span of every worker is there (the timeline bound is far away)
    W, N = workers_run.workers, workers_run.iterations
    by_name = defaultdict(int)
    for e in slices:
        by_name[e["name"]] += 1
    for path, per_iteration in WORKER_PATHS.items():
        name = path.rsplit("/", 1)[-1]
        assert by_name[name] == W * N * per_iteration, (name, dict(by_name))
    pids = {e["pid"] for e in slices if e["name"] == "iteration"}
    assert pids == set(workers_run.pids), (pids, workers_run.pids)

    # the process sampler's counter tracks: every process has its RSS and I/O rate
    counters = [e for e in events if e.get("ph") == "C"]
    rss = [e for e in counters if e["name"] == "lapse: RSS bytes (max)"]
    rates = [e for e in counters if e["name"] == "lapse: I/O bytes/s"]
    assert {e["pid"] for e in rss} >= set(workers_run.pids), rss[:3]
    assert all(e["args"]["rss"] > 0 for e in rss)
    assert all(set(e["args"]) == {"read", "written"} and e["ts"] >= 0 for e in rates)

    # nesting: each inner slice lies within a work slice of the same thread
    # (1 us of slack: an exporter may round ts and dur to whole microseconds)
    pid = workers_run.pids[0]
    work = [(e["ts"], e["ts"] + e["dur"]) for e in slices
            if e["pid"] == pid and e["name"] == "work"]
    for e in slices:
        if e["pid"] == pid and e["name"] == "inner":
            assert any(b <= e["ts"] and e["ts"] + e["dur"] <= end + 1 for b, end in work), e
