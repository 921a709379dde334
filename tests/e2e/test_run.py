"""A complete run of e2e_workers reads back exactly: every count is known."""

from __future__ import annotations

from conftest import SPANS_PER_ITERATION, WORKER_PATHS, counter, phase_names, phases_by_path, role_of


def test_complete_run_is_exact(lapse, workers_run):
    run = workers_run
    doc = lapse.report_json(run.run_dir)
    W, N = run.workers, run.iterations

    assert doc["run"]["processes"] == W + 1
    assert doc["run"]["roles"] == {"driver": 1, "worker": W}
    assert len(doc["run"]["hosts"]) == 1
    assert doc["unreadable"] == []
    assert not [c for c in doc["caveats"] if c["kind"] in ("stale", "unreadable")], doc["caveats"]

    workers = [w for w in doc["workers"] if w["role"] == "worker"]
    assert sorted(int(w["pid"]) for w in workers) == sorted(run.pids)
    for w in workers:
        assert w["final"] is True and w["end_reason"] == "exit" and w["stale"] is False, w
        assert w["span_calls"] == N * SPANS_PER_ITERATION, w
        assert w["unmatched_ends"] == 0, w
        assert w["timeline_dropped"] == 0, w
        assert w["busy_ns"] > 0 and w["wall_ns"] >= w["busy_ns"], w

    role = role_of(doc, "worker")
    assert role["processes"] == W
    phases = phases_by_path(role)
    assert set(phases) == set(WORKER_PATHS), sorted(phases)
    for path, per_iteration in WORKER_PATHS.items():
        p = phases[path]
        assert p["calls"] == W * N * per_iteration, p
        assert phase_names(role, p) == path.split("/"), p
        assert p["depth"] == len(path.split("/")), p
        assert p["in_processes"] == W, p
        assert p["p50_ns"] <= p["p90_ns"] <= p["p95_ns"] <= p["p99_ns"], p
        assert 0 < p["min_ns"] <= p["mean_ns"] <= p["max_ns"], p
        assert p["self_ns"] <= p["total_ns"], p
    assert counter(phases["iteration/work/inner"], "items")["sum"] == 3 * 2 * W * N
    assert counter(phases["iteration/work/inner"], "items")["updates"] == 2 * W * N
    assert counter(phases["iteration"], "ticks")["sum"] == W * N
    # iteration's time is its children's plus its own
    it = phases["iteration"]
    children = phases["iteration/work"]["total_ns"] + phases["iteration/sync"]["total_ns"]
    assert it["self_ns"] == it["total_ns"] - children, (it, children)

    driver = role_of(doc, "driver")
    assert driver["processes"] == 1
    dphases = phases_by_path(driver)
    assert dphases["spawn"]["calls"] == 1 and dphases["wait"]["calls"] == 1, sorted(dphases)

    # the process sampler ran in every process (C sessions: on by default); the
    # driver's counters include its reaped workers' I/O, and the report says so
    workers_role = role_of(doc, "worker")
    assert workers_role["io"]["processes"] == W and workers_role["io"]["children_in_run"] == 0
    assert driver["io"]["processes"] == 1 and driver["io"]["children_in_run"] == W
    assert driver["io"]["unreadable_intervals"] == 0 and driver["io"]["intervals"] >= 1
    assert driver["memory"]["peak_rss_getrusage_bytes"] > 0


def test_quantiles_lie_within_min_and_max(lapse, workers_run):
    """A quantile is a duration some call took: never below the fastest call or above
    the slowest (a one-call phase has p50 == min == max)."""
    doc = lapse.report_json(workers_run.run_dir)
    bad = []
    for role in doc["roles"]:
        for p in role["phases"]:
            qs = {k: p[k] for k in ("p50_ns", "p90_ns", "p95_ns", "p99_ns")}
            if not all(p["min_ns"] <= q <= p["max_ns"] for q in qs.values()):
                bad.append(f"{role['role']}:{p['path']} calls={p['calls']} min={p['min_ns']} "
                           f"max={p['max_ns']} {qs}")
    assert not bad, "quantiles outside [min, max]:\n" + "\n".join(bad)


def test_text_report_blocks(lapse, workers_run):
    r = lapse.run("report", workers_run.run_dir)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert "DOMINANT PHASES by self time" in text
    assert "peak RSS per process: max" in text  # every process recorded its ru_maxrss
    assert "MOST-CALLED LOOP" in text
    assert "CAVEATS" in text
