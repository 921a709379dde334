"""A parent program for the multiprocessing tests, run in a fresh interpreter (as a
training script would be: a forkserver keeps the environment of the session that
was active when it started, so each scenario gets its own process).

usage: python mp_scenario.py METHOD WORKERS RUN_DIR KIND
KIND: process (Process objects, each with a Profiler), features (the same, under a
parent Profiler with features=SPANS, max_spans=500, snapshot_ms=30000), pool (a Pool, no Profiler in
the workers), pool_span (a Pool that maps a @span function), raises (one Process whose work raises), killed (worker 0 SIGKILLs itself
in its first span; it exits -9, the others 0)."""

from __future__ import annotations

import multiprocessing as mp
import sys

import mp_worker
from lapse import Feature, Profiler, span


def main() -> int:
    method, workers, run_dir, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ctx = mp.get_context(method)
    # features: a parent that collects spans only, with a timeline bound and a snapshot
    # period of its own, which its workers take
    options = {"features": Feature.SPANS, "max_spans": 500, "snapshot_ms": 30_000} \
        if kind == "features" else {}
    with Profiler(run_dir=run_dir, role="parent", **options) as p:
        with span("dispatch"):
            if kind == "pool":
                with ctx.Pool(workers) as pool:
                    results = pool.map(mp_worker.work_without_profiler, range(2 * workers))
                ok = sum(results) == 2 * workers * 600
            elif kind == "pool_span":  # the function mapped is a @span function: it pickles
                with ctx.Pool(workers) as pool:
                    results = pool.map(mp_worker.step, range(10 * workers))
                ok = results == [2 * i for i in range(10 * workers)]
            else:
                target = {"raises": mp_worker.work_raises,
                          "killed": mp_worker.work_killed}.get(kind, mp_worker.work)
                procs = [ctx.Process(target=target, args=(i,)) for i in range(workers)]
                for proc in procs:
                    proc.start()
                for proc in procs:
                    proc.join(60)
                want = {"raises": [1] * workers, "killed": [-9] + [0] * (workers - 1)}
                ok = [p.exitcode for p in procs] == want.get(kind, [0] * workers)
    print(p.file)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
