"""Processes started separately into one run directory: those that ran at the same
time are one run (the header says it was joined); an attempt is superseded only when
it ended before a newer one began."""
from __future__ import annotations

import json
import pathlib
import subprocess

from conftest import kill_group, profile_env, start_program, wait_until


class Launch:
    """One `LAPSE_PROFILE=1 e2e_workers` started on its own (a run id of its own): a
    driver and one worker that waits for its release file once its work is done."""

    def __init__(self, lapse, runs: pathlib.Path, tmp: pathlib.Path, name: str, role: str):
        self.state = tmp / f"state-{name}"
        self.state.mkdir()
        self.release = tmp / f"release-{name}"
        self.proc = start_program(
            [lapse.program("e2e_workers"), self.state, 2, 1000, 1, self.release],
            profile_env(runs, role=role))

    def started(self) -> bool:
        return (self.state / "w0.progress").exists()  # its worker ran: both are writing

    def finish(self) -> None:
        self.release.touch()
        try:
            out, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            raise
        assert self.proc.returncode == 0, err


def run_dirs(runs: pathlib.Path) -> set[str]:
    return {str(d) for d in runs.iterdir() if d.is_dir()}


def start_together(lapse, runs, tmp, names_roles):
    launches = [Launch(lapse, runs, tmp, n, r) for n, r in names_roles]
    try:
        wait_until(lambda: all(x.started() for x in launches), what="every launch running")
    except BaseException:
        for x in launches:
            kill_group(x.proc)
        raise
    return launches


def test_separately_started_processes_at_the_same_time_are_one_run(lapse, tmp_path):
    runs = tmp_path / "runs"
    # an actor, another actor and a learner, each started on its own, all at once
    together = start_together(lapse, runs, tmp_path,
                              [("a1", "actor"), ("a2", "actor"), ("l", "learner")])
    for x in together:
        x.finish()
    three = run_dirs(runs)
    assert len(three) == 3  # three run ids: three attempts

    doc = lapse.report_json(runs)
    assert doc["superseded"] == []
    assert doc["run"]["processes"] == 6  # each driver and its worker
    assert doc["run"]["roles"] == {"actor": 2, "learner": 1, "worker": 3}
    assert sorted(j["dir"] for j in doc["run"]["joined"]) == sorted(three)
    assert all(j["files"] == 2 for j in doc["run"]["joined"])
    assert "superseded" not in [c["kind"] for c in doc["caveats"]]
    text = lapse.run("report", runs).stdout
    assert "Joined: 3 attempts started separately that ran at the same time" in text
    assert "superseded" not in text

    # a fourth, started after all three ended: it supersedes them
    fourth = start_together(lapse, runs, tmp_path, [("b", "learner")])[0]
    fourth.finish()
    (fourth_dir,) = run_dirs(runs) - three
    doc = lapse.report_json(runs)
    assert doc["run"]["dir"] == fourth_dir
    assert doc["run"]["joined"] == []
    assert doc["run"]["roles"] == {"learner": 1, "worker": 1}
    assert sorted(doc["superseded"]) == sorted(three)
    assert [c["kind"] for c in doc["caveats"]].count("superseded") == 3
    assert "Joined:" not in lapse.run("report", runs).stdout

    # two more that overlap, the second started while the first ran and ending after
    # it: joined; the fourth ended before either began and is superseded with the rest
    first = start_together(lapse, runs, tmp_path, [("c", "actor")])[0]
    second = start_together(lapse, runs, tmp_path, [("d", "learner")])[0]
    first.finish()
    second.finish()
    last_two = run_dirs(runs) - three - {fourth_dir}
    doc = lapse.report_json(runs)
    assert sorted(j["dir"] for j in doc["run"]["joined"]) == sorted(last_two)
    starts = [j["start_real_ns"] for j in doc["run"]["joined"]]
    assert starts == sorted(starts) and starts[0] < starts[1]
    assert doc["run"]["roles"] == {"actor": 1, "learner": 1, "worker": 2}
    assert sorted(doc["superseded"]) == sorted(three | {fourth_dir})
    assert doc["run"]["dir"] == str(runs)

    # the trace of the run holds the same processes
    trace = tmp_path / "trace.json"
    r = lapse.run("export", runs, "--perfetto", trace)
    assert r.returncode == 0, r.stderr
    pids = {w["pid"] for w in doc["workers"]}
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert {e["pid"] for e in events if e.get("ph") == "X"} == pids
