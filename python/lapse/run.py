"""A run as a test assertion: what actually ran, across every process.

    run = lapse.load_run("profile/")
    assert "evaluator" in run.roles                   # the process actually started
    assert run.tree[("iteration", "mcts")].calls > 0  # the code path actually ran
    assert run.unreadable == []                       # no worker died before its first write
    latest = max(w.written_at for w in run.workers)
    assert all(latest - w.written_at < 300 for w in run.workers), "a worker stopped writing"

No other artifact records cross-process behaviour; this is what makes "the evaluator
never started" or "a restarted actor ran a different code path" a failing test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from .profile import Profile, Worker, _names_of


@dataclass(frozen=True)
class RunPath:
    """One span path merged over every role, thread and process of the run."""

    names: tuple[str, ...]
    calls: int
    total_ns: int
    self_ns: int
    roles: tuple[str, ...]  #: the roles in which it ran
    counters: Mapping[str, int] = field(hash=False)  #: counter name -> sum
    estimated: bool = False  #: some of its figures come from a sampled phase


@dataclass(frozen=True)
class Run:
    """What load_run gives: roles with their process counts, the merged tree, the
    processes, and what could not be counted."""

    profile: Profile
    roles: Mapping[str, int]
    tree: Mapping[tuple[str, ...], RunPath]
    workers: tuple[Worker, ...]  #: one per process; Worker.written_at for staleness
    unreadable: list[tuple[str, str]]  #: (file, reason) of files that could not be read
    stale: list[Worker]  #: processes that stopped writing before the run's end
    superseded: list[str]  #: earlier attempts in the same run directory, not included


def load_run(path: str | os.PathLike[str]) -> Run:
    """Loads a run directory (its newest attempt), a directory of runs, or a file."""
    profile = Profile.load(path)
    doc = profile.to_dict()
    merged: dict[tuple[str, ...], dict[str, object]] = {}
    for role in doc["roles"]:
        for ph, names in zip(role["phases"], _names_of(role["phases"])):
            entry = merged.setdefault(names, {"calls": 0, "total_ns": 0, "self_ns": 0,
                                              "roles": [], "counters": {}, "estimated": False})
            entry["calls"] += ph["calls"]  # type: ignore[operator]
            entry["total_ns"] += ph["total_ns"]  # type: ignore[operator]
            entry["self_ns"] += ph["self_ns"]  # type: ignore[operator]
            entry["roles"].append(role["role"])  # type: ignore[attr-defined]
            entry["estimated"] = bool(entry["estimated"] or ph.get("estimated"))
            counters = entry["counters"]
            for c in ph.get("counters", ()):
                counters[c["name"]] = counters.get(c["name"], 0) + c["sum"]  # type: ignore[index,attr-defined]
    tree = {
        names: RunPath(names=names, calls=e["calls"], total_ns=e["total_ns"],  # type: ignore[arg-type]
                       self_ns=e["self_ns"], roles=tuple(e["roles"]),  # type: ignore[arg-type]
                       counters=MappingProxyType(dict(e["counters"])),  # type: ignore[arg-type]
                       estimated=bool(e["estimated"]))
        for names, e in merged.items()
    }
    workers = profile.workers
    return Run(
        profile=profile,
        roles=MappingProxyType(dict(doc["run"]["roles"])),
        tree=MappingProxyType(tree),
        workers=workers,
        unreadable=[(u["file"], u["reason"]) for u in doc.get("unreadable", [])],
        stale=[w for w in workers if w.stale],
        superseded=list(doc.get("superseded", [])),
    )
