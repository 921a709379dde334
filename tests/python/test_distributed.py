"""Python ranks of a parallel job give one report: `mpirun -np 4` of a program that
uses mpi4py, and `torchrun --nproc_per_node 4` with the gloo backend on the CPU
(an all_reduce inside a phase). No LAPSE_RUN_ID: the run comes from the launch."""

from __future__ import annotations

import importlib.util
import os
import re
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import lapse
from lapse.profile import RankSpread
from conftest import lapse_command, needs_torch, phases, report

RANKS = 4
ITERATIONS = 5

MPI_PROGRAM = textwrap.dedent("""
    import sys, time
    from mpi4py import MPI
    from lapse import Profiler, span

    run_dir, iterations = sys.argv[1], int(sys.argv[2])
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    with Profiler(run_dir=run_dir, role="rank") as p:
        total = 0
        for _ in range(iterations):
            with span("step"):
                with span("compute"):
                    time.sleep(0.002 * (1 + 3 * rank))  # ranks far apart in time
                if rank == 0:
                    with span("save"):
                        time.sleep(0.001)
                with span("allreduce"):
                    total = comm.allreduce(rank, op=MPI.SUM)
    print(f"rank {rank} of {comm.Get_size()} sum {total} file {p.file}", flush=True)
""")

TORCH_PROGRAM = textwrap.dedent("""
    import sys, time
    import torch
    import torch.distributed as dist
    from lapse import Profiler, span

    run_dir, iterations = sys.argv[1], int(sys.argv[2])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    with Profiler(run_dir=run_dir, role="trainer") as p:
        for _ in range(iterations):
            with span("step"):
                with span("forward"):
                    time.sleep(0.002 * (1 + 3 * rank))
                t = torch.ones(4) * rank
                with span("all_reduce"):
                    dist.all_reduce(t)
                if rank == 1:
                    with span("log"):
                        time.sleep(0.001)
    dist.barrier()
    print(f"rank {rank} of {dist.get_world_size()} sum {int(t[0])} file {p.file}", flush=True)
    dist.destroy_process_group()
""")

LAUNCHER_PREFIXES = ("SLURM", "OMPI_", "PMIX_", "PMI_", "TORCHELASTIC_")
LAUNCHER_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def launch_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(LAUNCHER_PREFIXES) and k not in LAUNCHER_NAMES}
    if os.getuid() == 0:  # Open MPI refuses root without these
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def run_launch(args: list[str], timeout: float) -> list[str]:
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=launch_env())
    assert r.returncode == 0, f"{args[0]} failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}"
    # the launcher forwards the ranks' output: lines of two ranks may run together
    lines = sorted(re.findall(r"rank \d+ of \d+ sum \d+ ", r.stdout))
    assert len(lines) == RANKS, r.stdout
    return lines


def check_ranks(doc: dict, role: str, launcher: str) -> dict[str, dict]:
    assert doc["run"]["processes"] == RANKS and doc["run"]["run_ids"] == 1, doc["run"]
    assert doc["run"]["roles"] == {role: RANKS}
    ranks = doc["run"]["ranks"]
    assert (ranks["count"], ranks["world_size"], ranks["launchers"], ranks["missing"]) == \
        (RANKS, RANKS, launcher, []), ranks
    assert sorted(r for v in ranks["by_host"].values() for r in v) == list(range(RANKS))
    assert sorted(w["rank"] for w in doc["workers"]) == list(range(RANKS))
    assert all(w["final"] and w["world_size"] == RANKS for w in doc["workers"]), doc["workers"]
    return phases(doc, role)


def per_rank_totals(doc: dict) -> dict[int, dict[str, int]]:
    """rank -> path -> total_ns, from the report of each rank's own file."""
    totals: dict[int, dict[str, int]] = {}
    for w in doc["workers"]:
        mine = totals.setdefault(w["rank"], {})
        for role in report(w["file"])["roles"]:
            for p in role["phases"]:
                mine[p["path"]] = mine.get(p["path"], 0) + p["total_ns"]
    return totals


def check_spread(path: str, spread: dict, totals: dict[int, dict[str, int]]) -> None:
    """across_ranks as computed here: a rank that never entered the phase counts as 0."""
    values = sorted(totals.get(r, {}).get(path, 0) for r in range(RANKS))
    median = (values[RANKS // 2 - 1] + values[RANKS // 2]) / 2  # RANKS is even
    entered = [r for r in range(RANKS) if totals.get(r, {}).get(path, 0) > 0]
    slowest = min(entered, key=lambda r: (-totals[r][path], r)) if entered else None
    assert (spread["ranks"], spread["entered"], spread["min_ns"], spread["max_ns"],
            spread["slowest_rank"]) == (RANKS, len(entered), values[0], values[-1], slowest), \
        (path, spread, values)
    assert abs(spread["median_ns"] - median) <= 1, (path, spread, median)


def test_mpirun_mpi4py_is_one_report(tmp_path):
    if not shutil.which("mpirun"):
        pytest.fail("mpirun is missing: install Open MPI (apt-get install openmpi-bin "
                    "libopenmpi-dev; .ci/run does)")
    if importlib.util.find_spec("mpi4py") is None:
        pytest.fail("mpi4py is not installed (tests/python/run.sh installs it)")
    program = tmp_path / "mpi_program.py"
    program.write_text(MPI_PROGRAM)
    runs = tmp_path / "runs"
    lines = run_launch(["mpirun", "--oversubscribe", "-np", str(RANKS), sys.executable,
                        str(program), str(runs), str(ITERATIONS)], timeout=120)
    assert all(f"of {RANKS} sum {RANKS * (RANKS - 1) // 2} " in l for l in lines), lines
    run_dirs = list(runs.iterdir())
    assert len(run_dirs) == 1 and run_dirs[0].name.startswith("openmpi-"), run_dirs

    doc = report(runs)
    got = check_ranks(doc, "rank", "openmpi")
    assert got["step"]["calls"] == RANKS * ITERATIONS
    assert got["step/allreduce"]["calls"] == RANKS * ITERATIONS
    save = got["step/save"]
    assert save["calls"] == ITERATIONS
    a = save["across_ranks"]
    assert (a["ranks"], a["entered"], a["min_ns"], a["median_ns"], a["slowest_rank"]) == \
        (RANKS, 1, 0, 0, 0), a
    # every phase's figures against each rank's own file, read on its own
    for path, phase in got.items():
        check_spread(path, phase["across_ranks"], per_rank_totals(doc))
    stats = lapse.Profile.load(runs).stats()  # the same figures, in Python
    assert stats["step.save"].across_ranks == RankSpread(**a)
    assert stats["step.save"].across_ranks.entered == 1
    run = lapse.load_run(runs)
    assert sorted(w.rank for w in run.workers) == list(range(RANKS))
    assert {(w.launcher, w.world_size) for w in run.workers} == {("openmpi", RANKS)}

    text = subprocess.run([lapse_command(), "report", str(runs)], capture_output=True, text=True,
                          timeout=60, check=True).stdout
    assert f"Ranks {RANKS} of world size {RANKS} (openmpi)" in text, text
    assert "ACROSS RANKS" in text and f"in 1/{RANKS}" in text, text


def test_torchrun_gloo_is_one_report(tmp_path):
    needs_torch()
    program = tmp_path / "torch_program.py"
    program.write_text(TORCH_PROGRAM)
    runs = tmp_path / "runs"
    lines = run_launch([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        "--nproc_per_node", str(RANKS), str(program), str(runs),
                        str(ITERATIONS)], timeout=300)
    # all_reduce of ones * rank: 0 + 1 + 2 + 3 in every element
    assert all(f"of {RANKS} sum {RANKS * (RANKS - 1) // 2} " in l for l in lines), lines
    run_dirs = list(runs.iterdir())
    assert len(run_dirs) == 1 and run_dirs[0].name.startswith("torchrun-"), run_dirs

    doc = report(runs)
    got = check_ranks(doc, "trainer", "torchrun")
    assert sorted(w["local_rank"] for w in doc["workers"]) == list(range(RANKS))
    run = lapse.load_run(runs)  # the same, as a test assertion would read it
    assert sorted((w.rank, w.local_rank, w.world_size) for w in run.workers) == \
        [(r, r, RANKS) for r in range(RANKS)]
    assert {w.launcher for w in run.workers} == {"torchrun"}
    assert got["step/all_reduce"]["calls"] == RANKS * ITERATIONS
    assert got["step/forward"]["calls"] == RANKS * ITERATIONS
    log = got["step/log"]["across_ranks"]
    assert (log["entered"], log["min_ns"], log["slowest_rank"]) == (1, 0, 1), log
    assert got["step/all_reduce"]["across_ranks"]["entered"] == RANKS
    for path, phase in got.items():
        check_spread(path, phase["across_ranks"], per_rank_totals(doc))
