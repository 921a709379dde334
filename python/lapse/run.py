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
from typing import Any, Mapping

from .profile import Profile, Worker, _names_of


@dataclass(frozen=True)
class RunPath:
    """One span path merged over every role, thread and process of the run, as the
    report's ``run_paths`` hold it (the C analysis merges them)."""

    names: tuple[str, ...]
    calls: int
    total_ns: int
    self_ns: int
    roles: tuple[str, ...]  #: the roles in which it ran
    counters: Mapping[str, int] = field(hash=False)  #: counter name -> sum
    estimated: bool = False  #: some of its figures come from a sampled phase (or its self time from sampled children)


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

    def to_dataframe(self) -> Any:
        """The merged tree as a pandas DataFrame, one row per path in the report's
        order (``run_paths``, merged by the C analysis; nothing is recomputed).
        Columns: path (the names joined with "."), names (a tuple), depth, calls,
        total_ns, self_ns, roles (a tuple), estimated, counters (a dict).
        ImportError when pandas is not installed."""
        from ._frames import data_frame

        rows = [{"path": ".".join(p.names), "names": p.names, "depth": len(p.names),
                 "calls": p.calls, "total_ns": p.total_ns, "self_ns": p.self_ns, "roles": p.roles,
                 "estimated": p.estimated, "counters": dict(p.counters)}
                for p in self.tree.values()]
        return data_frame(rows, ("path", "names", "depth", "calls", "total_ns", "self_ns", "roles",
                                 "estimated", "counters"))


def load_run(path: str | os.PathLike[str]) -> Run:
    """Loads a run directory (its newest attempt), a directory of runs, or a file."""
    profile = Profile.load(path)
    doc = profile.to_dict()
    paths = doc["run_paths"]  # merged over the roles by the C analysis (docs/report.md)
    tree = {
        names: RunPath(names=names, calls=p["calls"], total_ns=p["total_ns"], self_ns=p["self_ns"],
                       roles=tuple(p["roles"]),
                       counters=MappingProxyType({c["name"]: c["sum"] for c in p["counters"]}),
                       estimated=bool(p["estimated"]))
        for p, names in zip(paths, _names_of(paths))
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
