"""Broken files next to good ones: each is named in one clear line, and the rest of
the run is reported as if they were not there (the run is still reportable: exit 0)."""

from __future__ import annotations

import random

from conftest import copy_run


def counts(doc):
    return {int(w["pid"]): (w["span_calls"], w["final"], w["role"]) for w in doc["workers"]}


def test_truncated_and_garbage_files(lapse, workers_run, tmp_path):
    run = copy_run(workers_run, tmp_path)
    before = lapse.report_json(run.run_dir)
    assert len(before["workers"]) == run.workers + 1

    good = sorted(run.host_dir.glob("worker-*.lapse"))[0].read_bytes()
    truncated = run.host_dir / "worker-999991-dead.lapse"
    truncated.write_bytes(good[: len(good) // 2])
    garbage = run.host_dir / "worker-999992-beef.lapse"
    garbage.write_bytes(random.Random(1234).randbytes(4096))
    bad = [truncated.name, garbage.name]

    text = lapse.run("report", run.run_dir)
    assert text.returncode == 0, text.stderr
    lines = (text.stdout + text.stderr).splitlines()
    for name in bad:
        mentions = [line for line in lines if name in line]
        assert len(mentions) == 1, f"{name} in {len(mentions)} lines, not 1:\n" + "\n".join(lines)
    assert "worker" in text.stdout

    after = lapse.report_json(run.run_dir)
    assert counts(after) == counts(before)
    assert after["run"]["processes"] == before["run"]["processes"]
    unreadable = sorted(u["file"].rsplit("/", 1)[-1] for u in after["unreadable"])
    assert unreadable == sorted(bad), after["unreadable"]
    assert all(u["reason"] for u in after["unreadable"])
    kinds = [c for c in after["caveats"] if c["kind"] == "unreadable"]
    assert kinds, after["caveats"]
    assert before["unreadable"] == []
