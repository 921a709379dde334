"""Processes of a parallel job: placed by their launcher's variables (SLURM, torchrun,
Open MPI), one run per launch without LAPSE_RUN_ID, cross-rank statistics, and real
`mpirun -np 4` runs of a C program linked with liblapse and with liblapse_mpi."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil

import pytest

from conftest import clean_env, phases_by_path, profile_env, role_of, run_program

# Launcher variables the test environment may carry itself (a CI inside SLURM, say):
# each test sets exactly the ones it means.
LAUNCHER_PREFIXES = ("SLURM", "OMPI_", "PMIX_", "PMI_", "TORCHELASTIC_")
LAUNCHER_NAMES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MPI_LOCALRANKID", "PBS_JOBID", "LSB_JOBID")


def job_env(run_dir, **extra) -> dict[str, str]:
    env = profile_env(run_dir, snapshot_ms=100)
    for k in list(env):
        if k.startswith(LAUNCHER_PREFIXES) or k in LAUNCHER_NAMES:
            del env[k]
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_rank(lapse, env, iterations=3, sleep_us=1000, ckpt=False) -> pathlib.Path:
    args = [lapse.program("e2e_rank"), iterations, sleep_us] + (["ckpt"] if ckpt else [])
    r = run_program(args, env)
    assert r.returncode == 0, r.stderr
    return pathlib.Path(r.stdout.strip())


def worker(doc: dict, rank: int) -> dict:
    found = [w for w in doc["workers"] if w["rank"] == rank]
    assert len(found) == 1, (rank, doc["workers"])
    return found[0]


SLURM = dict(SLURM_JOB_ID="4242", SLURM_STEP_ID="3", SLURM_NTASKS="4")


def test_slurm_step_is_one_run(lapse, tmp_path):
    """Four tasks of one srun step, on two nodes, started one by one as SLURM would:
    no LAPSE_RUN_ID, yet one run directory, each task placed by its variables."""
    runs = tmp_path / "runs"
    files = []
    for rank in range(4):
        env = job_env(runs, SLURM_PROCID=rank, SLURM_LOCALID=rank % 2,
                      SLURMD_NODENAME=f"node0{rank // 2 + 1}", **SLURM)
        # rank 0 sleeps 20x longer, and checkpoints: the slowest by far
        files.append(run_rank(lapse, env, sleep_us=20000 if rank == 0 else 1000, ckpt=rank == 0))
    assert [f.parent.parent.name for f in files] == ["slurm-4242.3"] * 4, files
    assert [f.parent.name for f in files] == ["node01", "node01", "node02", "node02"], files
    assert sorted(p.name for p in runs.iterdir()) == ["slurm-4242.3"]

    doc = lapse.report_json(runs)
    assert not [c for c in doc["caveats"] if c["kind"] == "missing_ranks"], doc["caveats"]
    assert doc["run"]["id"] == "slurm-4242.3"
    assert doc["run"]["processes"] == 4 and doc["run"]["run_ids"] == 1
    assert doc["run"]["hosts"] == ["node01", "node02"]
    assert doc["run"]["ranks"] == {"count": 4, "world_size": 4, "launchers": "slurm",
                                   "missing": [], "missing_count": 0,
                                   "by_host": {"node01": [0, 1], "node02": [2, 3]}}
    for rank in range(4):
        w = worker(doc, rank)
        assert (w["world_size"], w["local_rank"], w["host"], w["job_id"], w["launcher"]) == \
            (4, rank % 2, f"node0{rank // 2 + 1}", "4242", "slurm"), w
        assert w["run_id"] == "slurm-4242.3", w

    role = role_of(doc, "main")
    assert role["ranks"] == [0, 1, 2, 3] and role["unranked_processes"] == 0
    phases = phases_by_path(role)
    ckpt = phases["step/ckpt"]["across_ranks"]
    assert (ckpt["ranks"], ckpt["entered"], ckpt["min_ns"], ckpt["median_ns"]) == (4, 1, 0, 0), ckpt
    assert ckpt["slowest_rank"] == 0 and ckpt["max_ns"] == phases["step/ckpt"]["total_ns"], ckpt
    step = phases["step"]["across_ranks"]
    assert (step["ranks"], step["entered"]) == (4, 4), step
    assert step["min_ns"] <= step["median_ns"] <= step["max_ns"], step
    assert step["slowest_rank"] == 0 and step["max_ns"] >= 3 * 30_000_000, step

    text = lapse.run("report", runs, check=True).stdout
    assert "Ranks 4 of world size 4 (slurm): node01 0-1; node02 2-3" in text, text
    assert "ACROSS RANKS  4 ranks (0-3)" in text, text
    line = next(l for l in text.splitlines() if l.strip().startswith("step/ckpt") and "in " in l)
    assert line.split()[1:4] == ["0", "0", line.split()[3]] and line.rstrip().endswith("in 1/4"), line
    assert "rank 0" in line, line


def test_missing_rank_is_named(lapse, tmp_path):
    runs = tmp_path / "runs"
    for rank in (0, 1, 3):
        run_rank(lapse, job_env(runs, SLURM_PROCID=rank, SLURMD_NODENAME="n1", **SLURM))
    doc = lapse.report_json(runs)
    assert doc["run"]["ranks"]["missing"] == [2] and doc["run"]["ranks"]["missing_count"] == 1
    text = lapse.run("report", runs, check=True).stdout
    assert "Missing ranks: 2 (of world size 4, no readable file)" in text, text
    caveats = [c for c in doc["caveats"] if c["kind"] == "missing_ranks"]
    assert len(caveats) == 1 and caveats[0]["count"] == 1, doc["caveats"]
    assert "rank 2 " in caveats[0]["message"], caveats
    assert "missing_ranks" in text.split("CAVEATS", 1)[1], text


def test_two_steps_are_two_runs(lapse, tmp_path):
    runs = tmp_path / "runs"
    a = run_rank(lapse, job_env(runs, SLURM_PROCID=0, **{**SLURM, "SLURM_STEP_ID": "0"}))
    b = run_rank(lapse, job_env(runs, SLURM_PROCID=0, **{**SLURM, "SLURM_STEP_ID": "1"}))
    assert a.parent.parent.name == "slurm-4242.0" and b.parent.parent.name == "slurm-4242.1"


def test_batch_script_without_step_is_not_a_rank(lapse, tmp_path):
    """A process of the batch script itself (no SLURM_STEP_ID) is no task of a step:
    SLURM_PROCID there is 0 for everything, so lapse reads no rank from it."""
    runs = tmp_path / "runs"
    f = run_rank(lapse, job_env(runs, SLURM_JOB_ID="77", SLURM_PROCID="0", SLURM_NTASKS="8"))
    assert not f.parent.parent.name.startswith("slurm-"), f
    doc = lapse.report_json(runs)
    w = doc["workers"][0]
    assert (w["rank"], w["world_size"], w["job_id"]) == (None, None, "77"), w
    assert doc["run"]["ranks"] is None


def test_lapse_run_id_wins(lapse, tmp_path):
    runs = tmp_path / "runs"
    f = run_rank(lapse, job_env(runs, LAPSE_RUN_ID="mine", SLURM_PROCID=1, **SLURM))
    assert f.parent.parent.name == "mine"


def test_torchrun_variables(lapse, tmp_path):
    """As torchrun sets them: the rendezvous id is the run; a restart is a new attempt
    of it; the default id "none" falls back to the agent's error-file directory."""
    runs = tmp_path / "runs"
    torch = dict(TORCHELASTIC_RUN_ID="job7", WORLD_SIZE=2, MASTER_PORT=29500)
    a = run_rank(lapse, job_env(runs, RANK=1, LOCAL_RANK=1, **torch))
    assert a.parent.parent.name == "torchrun-job7"
    b = run_rank(lapse, job_env(runs, RANK=0, LOCAL_RANK=0, TORCHELASTIC_RESTART_COUNT=2, **torch))
    assert b.parent.parent.name == "torchrun-job7-restart2"
    doc = lapse.report_json(runs / "torchrun-job7")
    w = doc["workers"][0]
    assert (w["rank"], w["world_size"], w["local_rank"], w["launcher"]) == (1, 2, 1, "torchrun"), w

    agent = "/tmp/torchelastic_abc/none_xyz"
    c = run_rank(lapse, job_env(runs, RANK=0, TORCHELASTIC_RUN_ID="none",
                                TORCHELASTIC_ERROR_FILE=f"{agent}/attempt_0/0/error.json"))
    d = run_rank(lapse, job_env(runs, RANK=1, TORCHELASTIC_RUN_ID="none",
                                TORCHELASTIC_ERROR_FILE=f"{agent}/attempt_0/1/error.json"))
    assert c.parent.parent.name == d.parent.parent.name
    assert c.parent.parent.name.startswith("torchrun-none-"), c


def test_innermost_launcher_wins(lapse, tmp_path):
    """mpirun inside a SLURM allocation: every rank inherits the batch step's
    SLURM_PROCID; Open MPI's variables give the rank and the run."""
    runs = tmp_path / "runs"
    f = run_rank(lapse, job_env(runs, OMPI_COMM_WORLD_RANK=3, OMPI_COMM_WORLD_SIZE=4,
                                OMPI_COMM_WORLD_LOCAL_RANK=1, OMPI_MCA_ess_base_jobid=12345,
                                OMPI_MCA_orte_hnp_uri="12344.0;tcp://10.0.0.1:4000",
                                SLURM_PROCID=0, SLURM_NTASKS=1, **{"SLURM_JOB_ID": "9",
                                                                   "SLURM_STEP_ID": "0"}))
    assert f.parent.parent.name.startswith("openmpi-12345-"), f
    doc = lapse.report_json(runs)
    w = doc["workers"][0]
    assert (w["rank"], w["world_size"], w["local_rank"], w["launcher"], w["job_id"]) == \
        (3, 4, 1, "openmpi", "9"), w


# ---- real mpirun ----

def mpi_env(env: dict) -> dict:
    env = dict(env)
    if os.getuid() == 0:  # Open MPI refuses root without these
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # LeakSanitizer reports Open MPI's own allocations at exit (sanitizer build)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
    return env


def mpirun() -> str:
    path = shutil.which("mpirun")
    if not path:
        pytest.fail("mpirun is missing: install Open MPI (apt-get install openmpi-bin "
                    "libopenmpi-dev; .ci/run does) and rebuild")
    return path


ITERATIONS = 5


def run_mpi(lapse, program: str, env: dict, ranks: int = 4):
    args = [mpirun(), "--oversubscribe", "-np", ranks, lapse.program(program), ITERATIONS, 2000]
    r = run_program(args, mpi_env(env), timeout=60)
    assert r.returncode == 0, r.stderr
    # mpirun forwards the ranks' output: lines of two ranks may run together
    sums = re.findall(r"rank (\d+) of (\d+) pid \d+ sum (\d+)", r.stdout)
    assert sorted(int(rank) for rank, _, _ in sums) == list(range(ranks)), r.stdout
    expected_sum = ranks * (ranks - 1) // 2
    assert all((int(n), int(total)) == (ranks, expected_sum) for _, n, total in sums), sums
    return r


def member_bytes(file: str) -> bytes:
    """The bytes of a worker's file: a .lapse file, or member i of a pack ("PATH[i]"),
    read from the pack's index as docs/format.md lays it out."""
    if not file.endswith("]"):
        return pathlib.Path(file).read_bytes()
    path, index = file[:-1].rsplit("[", 1)
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == b"\x89LAPSEPK", data[:8]
    count = int.from_bytes(data[12:16], "little")
    assert int.from_bytes(data[16:24], "little") == len(data)
    i = int(index)
    assert i < count
    entry = data[32 + 16 * i: 48 + 16 * i]
    offset, length = int.from_bytes(entry[:8], "little"), int.from_bytes(entry[8:], "little")
    return data[offset:offset + length]


def per_rank_totals(lapse, doc: dict, tmp: pathlib.Path) -> dict[int, dict[str, int]]:
    """rank -> path -> total_ns, from `lapse report` of each rank's own image."""
    totals: dict[int, dict[str, int]] = {}
    for n, w in enumerate(doc["workers"]):
        one = tmp / f"rank-image-{n}.lapse"
        one.write_bytes(member_bytes(w["file"]))
        own = lapse.report_json(one)
        assert own["workers"][0]["rank"] == w["rank"], (own["workers"], w)
        mine = totals.setdefault(w["rank"], {})
        for role in own["roles"]:
            for p in role["phases"]:
                mine[p["path"]] = mine.get(p["path"], 0) + p["total_ns"]
    return totals


def check_spread(spread: dict, totals: dict[int, dict[str, int]], path: str, ranks: int):
    """across_ranks of a phase as computed here: a rank without it counts as 0."""
    values = sorted(totals.get(r, {}).get(path, 0) for r in range(ranks))
    mid = ranks // 2
    median = values[mid] if ranks % 2 else (values[mid - 1] + values[mid]) / 2
    entered = [r for r in range(ranks) if totals.get(r, {}).get(path, 0) > 0]
    slowest = min(entered, key=lambda r: (-totals[r][path], r)) if entered else None
    assert (spread["ranks"], spread["entered"], spread["min_ns"], spread["max_ns"],
            spread["slowest_rank"]) == (ranks, len(entered), values[0], values[-1], slowest), \
        (path, spread, values)
    assert abs(spread["median_ns"] - median) <= 1, (path, spread, median)


def check_mpi_report(lapse, runs: pathlib.Path, tmp: pathlib.Path, ranks: int = 4) -> dict:
    doc = lapse.report_json(runs)
    assert doc["unreadable"] == [] and doc["run"]["run_ids"] == 1, doc["unreadable"]
    assert doc["run"]["id"].startswith("openmpi-"), doc["run"]["id"]
    assert doc["run"]["processes"] == ranks
    r = doc["run"]["ranks"]
    assert (r["count"], r["world_size"], r["launchers"], r["missing"]) == \
        (ranks, ranks, "openmpi", []), r
    assert sorted(x for v in r["by_host"].values() for x in v) == list(range(ranks)), r
    assert all(w["final"] for w in doc["workers"]), doc["workers"]

    role = role_of(doc, "main")
    phases = phases_by_path(role)
    assert phases["step"]["calls"] == ranks * ITERATIONS
    assert phases["step/compute"]["calls"] == ranks * ITERATIONS
    assert phases["step/allreduce"]["calls"] == ranks * ITERATIONS
    assert phases["step/checkpoint"]["calls"] == ITERATIONS
    assert phases["step/odd"]["calls"] == (ranks // 2) * ITERATIONS
    ck = phases["step/checkpoint"]["across_ranks"]
    assert (ck["ranks"], ck["entered"], ck["min_ns"], ck["median_ns"], ck["slowest_rank"]) == \
        (ranks, 1, 0, 0, 0), ck
    odd = phases["step/odd"]["across_ranks"]
    assert (odd["entered"], odd["min_ns"]) == (ranks // 2, 0), odd
    assert odd["slowest_rank"] % 2 == 1, odd
    # every phase's figures against each rank's own file, read on its own
    totals = per_rank_totals(lapse, doc, tmp)
    for path, phase in phases.items():
        check_spread(phase["across_ranks"], totals, path, ranks)
    comp = phases["step/compute"]["across_ranks"]
    assert comp["entered"] == ranks and comp["min_ns"] >= ITERATIONS * 2_000_000, comp

    text = lapse.run("report", runs, check=True).stdout
    host = next(iter(r["by_host"]))
    assert f"Ranks {ranks} of world size {ranks} (openmpi): {host} 0-{ranks - 1}" in text, text
    assert f"ACROSS RANKS  {ranks} ranks (0-{ranks - 1})" in text, text
    return doc


def test_mpirun_c_program_is_one_run(lapse, tmp_path):
    runs = tmp_path / "runs"
    run_mpi(lapse, "mpi_ranks", job_env(runs))
    run_dirs = list(runs.iterdir())
    assert len(run_dirs) == 1, run_dirs
    files = list(run_dirs[0].glob("*/*.lapse"))
    assert len(files) == 4, files
    check_mpi_report(lapse, runs, tmp_path)


@pytest.mark.parametrize("init", ["MPI_Init", "MPI_Init_thread"])
def test_liblapse_mpi_gathers_one_pack(lapse, tmp_path, init):
    """Linked with liblapse_mpi and no LAPSE_PROFILE: sessions start at MPI_Init (or
    MPI_Init_thread), and at MPI_Finalize rank 0 writes one file holding every rank."""
    runs = tmp_path / "runs"
    env = job_env(runs, MPI_RANKS_INIT_THREAD="1" if init == "MPI_Init_thread" else "0")
    del env["LAPSE_PROFILE"]
    run_mpi(lapse, "mpi_ranks_packed", env)
    files = list(runs.glob("*/*/*.lapse"))
    assert len(files) == 1 and files[0].name.startswith("mpi-ranks-"), files
    doc = check_mpi_report(lapse, runs, tmp_path)
    assert sorted(w["file"] for w in doc["workers"]) == [f"{files[0]}[{i}]" for i in range(4)]

    out = tmp_path / "trace.json"
    r = lapse.run("export", runs, "--perfetto", out)
    assert r.returncode == 0, r.stderr
    trace = json.loads(out.read_text())
    pids = {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert len(pids) == 4, pids


def test_liblapse_mpi_with_an_environment_session(lapse, tmp_path):
    """LAPSE_PROFILE=1 started each rank's session before MPI_Init: liblapse_mpi keeps
    it, gives it MPI's rank, and still gathers one pack."""
    runs = tmp_path / "runs"
    run_mpi(lapse, "mpi_ranks_packed", job_env(runs))
    files = list(runs.glob("*/*/*.lapse"))
    assert len(files) == 1 and files[0].name.startswith("mpi-ranks-"), files
    check_mpi_report(lapse, runs, tmp_path)


def test_liblapse_mpi_gather_off_keeps_rank_files(lapse, tmp_path):
    runs = tmp_path / "runs"
    env = job_env(runs, LAPSE_MPI_GATHER="0")
    del env["LAPSE_PROFILE"]
    run_mpi(lapse, "mpi_ranks_packed", env)
    files = list(runs.glob("*/*/*.lapse"))
    assert len(files) == 4 and not any(f.name.startswith("mpi-ranks-") for f in files), files
    check_mpi_report(lapse, runs, tmp_path)
