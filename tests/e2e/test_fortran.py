"""The Fortran module (fortran/lapse.f90): programs of tests/fortran, built when
CMake finds gfortran, whose reports hold the spans nested as called and the
counters' sums; under `mpirun -np 2` with liblapse_mpi, both ranks in one run."""

from __future__ import annotations

import shutil

import pytest

from conftest import phases_by_path, profile_env, role_of, run_program
from test_distributed import mpi_env, mpirun
from test_export_hdf5 import export, read_h5, rank_attrs


def program(lapse, name: str) -> str:
    if not (lapse.build / name).exists():
        pytest.fail(f"{lapse.build / name} is missing: the Fortran module is built when CMake "
                    f"finds gfortran ({shutil.which('gfortran') or 'not on PATH'}; apt-get "
                    "install gfortran, .ci/run does) and, for the MPI programs, MPI's Fortran "
                    "bindings")
    return str(lapse.build / name)


def counter_sum(phase: dict, name: str) -> int:
    found = [c for c in phase["counters"] if c["name"] == name]
    assert len(found) == 1, (phase["path"], phase["counters"])
    return found[0]["sum"]


def test_fortran_spans_counters_session(lapse, tmp_path):
    runs = tmp_path / "runs"
    r = run_program([program(lapse, "fortran_spans"), "4"], profile_env(runs) | {
        "LAPSE_PROFILE": "0"})  # the program starts its own session
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert r.stdout.strip() == "fortran_spans: 4 steps", r.stdout
    assert r.stderr == "", r.stderr
    doc = lapse.report_json(runs)
    role = role_of(doc, "fortran")
    phases = phases_by_path(role)
    assert set(phases) == {"step", "step/solve", "step/io"}, sorted(phases)
    assert [phases[p]["calls"] for p in ("step", "step/solve", "step/io")] == [4, 12, 4]
    assert counter_sum(phases["step/solve"], "cells") == 1200
    assert counter_sum(phases["step/io"], "bytes") == 4 * 4096
    # each solve spins 50 us; step holds its solves
    assert phases["step/solve"]["min_ns"] >= 50_000
    assert phases["step"]["total_ns"] >= phases["step/solve"]["total_ns"]
    w = doc["workers"][0]
    assert w["final"] and w["role"] == "fortran", w


@pytest.mark.parametrize("prog", ["fortran_mpi_ranks", "fortran_mpi_f08"])
def test_fortran_mpirun_liblapse_mpi(lapse, tmp_path, prog):
    """mpirun -np 2, no LAPSE_PROFILE: liblapse_mpi starts each rank's session at the
    Fortran MPI_Init and packs both ranks at MPI_Finalize."""
    runs = tmp_path / "runs"
    env = mpi_env(profile_env(runs, role="solver"))
    del env["LAPSE_PROFILE"]
    r = run_program([mpirun(), "--oversubscribe", "-np", "2", program(lapse, prog), "3"], env,
                    timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert sorted(line.split(" of ")[0] for line in r.stdout.split("\n") if " of " in line) == \
        ["rank 0", "rank 1"], r.stdout
    files = list(runs.glob("*/*/*.lapse"))
    assert len(files) == 1 and files[0].name.startswith("mpi-ranks-"), files
    doc = lapse.report_json(runs)
    assert sorted(w["rank"] for w in doc["workers"]) == [0, 1], doc["workers"]
    assert all(w["world_size"] == 2 and w["final"] for w in doc["workers"]), doc["workers"]
    phases = phases_by_path(role_of(doc, "solver"))
    assert phases["step"]["calls"] == 6 and phases["step/compute"]["calls"] == 6
    assert counter_sum(phases["step/compute"], "cells") == 3 * (1 + 2)
    if prog == "fortran_mpi_ranks":
        assert phases["step/allreduce"]["calls"] == 6
        assert phases["step/root"]["calls"] == 3 and phases["step/root"]["in_processes"] == 1

        # the same run in scope_profiler's layout: /rank0 and /rank1 are MPI's ranks
        out = tmp_path / "fortran.h5"
        export(lapse, runs, out)
        results = read_h5(out)
        assert sorted(rank_attrs(out)) == [0, 1]
        assert set(results["root"].regions) == {0}
        assert all(results["step"].regions[k].num_calls == 3 for k in (0, 1))
