"""`lapse export RUN --hdf5 out.h5`: the run's timeline spans in scope_profiler's
HDF5 layout, read back with scope_profiler's own reader (scope-profiler from PyPI,
requirements-dev.txt) and checked against `lapse report --json`."""

from __future__ import annotations

import os
from collections import defaultdict

import pytest

from conftest import WORKER_PATHS, profile_env, run_program
from test_distributed import mpi_env, mpirun


def built_with_hdf5(lapse) -> bool:
    r = lapse.run("export", "--help")
    return "--hdf5 is refused" not in r.stdout


def read_h5(path):
    """scope_profiler's reader; missing, the test fails (it is a test dependency)."""
    try:
        import h5py  # noqa: F401  (scope_profiler's own dependency)
        from scope_profiler import read_h5 as reader
    except ImportError as e:
        pytest.fail(f"scope_profiler is missing ({e}): pip install -r requirements-dev.txt "
                    "(make tools-venv)")
    return reader(path)


def export(lapse, run, out):
    if not built_with_hdf5(lapse):
        pytest.fail("this lapse was built without HDF5: install libhdf5-dev (.ci/run does) "
                    "and rebuild")
    r = lapse.run("export", run, "--hdf5", out)
    assert r.returncode == 0, (r.returncode, r.stderr)
    return r


def rank_attrs(path) -> dict[int, dict]:
    import h5py
    with h5py.File(path, "r") as f:
        return {int(name[4:]): dict(f[name].attrs) for name in f if name.startswith("rank")}


def report_by_name(doc: dict, role: str) -> dict[str, tuple[int, int]]:
    """name -> (calls, total_ns) of a role, its paths of one name added together."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in doc["roles"]:
        if r["role"] == role:
            for p in r["phases"]:
                out[p["name"]][0] += p["calls"]
                out[p["name"]][1] += p["total_ns"]
    return {k: tuple(v) for k, v in out.items()}


def test_hdf5_export_read_by_scope_profiler(lapse, workers_run, tmp_path):
    out = tmp_path / "run.h5"
    r = export(lapse, workers_run.run_dir, out)
    results = read_h5(out)
    attrs = rank_attrs(out)
    W, N = workers_run.workers, workers_run.iterations
    # one rank group per process: the driver and its workers (no rank of their own)
    assert results.num_ranks == W + 1, results.num_ranks
    assert sorted(attrs) == list(range(W + 1)), attrs
    assert sorted(int(a["pid"]) for a in attrs.values() if a["role"] == "worker") == \
        sorted(workers_run.pids)
    assert all(int(a["lapse_rank"]) == -1 for a in attrs.values())
    assert f"{W + 1} processes without a rank of their own" in r.stderr, r.stderr
    assert results.metadata["profiler"] == "lapse" and results.metadata["time_unit"] == "ns"
    assert int(results.metadata["mpi_size"]) == W + 1

    names = {path.rsplit("/", 1)[-1] for path in WORKER_PATHS} | {"spawn", "wait"}
    assert set(results.region_names) == names, results.region_names

    doc = lapse.report_json(workers_run.run_dir)
    for role in ("driver", "worker"):
        ranks = [k for k, a in attrs.items() if a["role"] == role]
        for name, (calls, total_ns) in report_by_name(doc, role).items():
            regions = results[name].regions
            got_calls = sum(regions[k].num_calls for k in ranks if k in regions)
            got_ns = sum(int((regions[k].end_times_ns - regions[k].start_times_ns).sum())
                         for k in ranks if k in regions)
            assert got_calls == calls, (role, name, got_calls, calls)
            # the same clock readings, converted apart: 1 ns a call of rounding
            assert abs(got_ns - total_ns) <= calls, (role, name, got_ns, total_ns)
    # every worker's iterations: W x N calls, in order of start, ends after starts
    for k, a in attrs.items():
        if a["role"] != "worker":
            continue
        it = results["iteration"].regions[k]
        assert it.num_calls == N
        starts, ends = it.start_times_ns, it.end_times_ns
        assert (starts[1:] >= starts[:-1]).all() and (ends >= starts).all()
        assert starts.dtype.kind == "i" and starts.dtype.itemsize == 8
        # nesting holds across regions: each work call lies in an iteration call
        for s, e in zip(results["work"].regions[k].start_times_ns,
                        results["work"].regions[k].end_times_ns):
            assert any(b <= s and e <= end for b, end in zip(starts, ends)), (s, e)
    # time 0 is the run's first session start: every call starts at or after it
    for name in results.region_names:
        for reg in results[name].regions.values():
            assert reg.start_times_ns.min() >= 0, name


def test_hdf5_names_that_hdf5_cannot_hold(lapse, tmp_path):
    """Span names with '/' or ".": percent-encoded, said on stderr (a '%' elsewhere
    stays as it is); counts and nesting kept."""
    runs = tmp_path / "runs"
    r = run_program([lapse.program("e2e_regions"), "7", "solve", "io/read", "100%", "."],
                    profile_env(runs, role="solver"))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "names.h5"
    e = export(lapse, runs, out)
    assert "2 span names with '/' (or empty, or \".\") written percent-encoded" in e.stderr, e.stderr
    results = read_h5(out)
    assert sorted(results.region_names) == sorted(["solve", "io%2Fread", "100%", "%2E"])
    assert results.num_ranks == 1
    for name in results.region_names:
        assert results[name].regions[0].num_calls == 7, name
    solve, inner = results["solve"].regions[0], results["%2E"].regions[0]
    assert (solve.start_times_ns <= inner.start_times_ns).all()
    assert (inner.end_times_ns <= solve.end_times_ns).all()
    # each innermost call spins 20 us
    assert (inner.end_times_ns - inner.start_times_ns >= 20_000).all()


def test_hdf5_mpirun_ranks(lapse, tmp_path):
    """mpirun -np 2, each rank its own file (liblapse): /rank0 and /rank1 are the MPI
    ranks, the rank-0-only region only in /rank0."""
    runs = tmp_path / "runs"
    env = mpi_env(profile_env(runs, role="solver"))
    r = run_program([mpirun(), "--oversubscribe", "-np", "2", lapse.program("mpi_ranks"), "3",
                     "1000"], env, timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "mpi.h5"
    e = export(lapse, runs, out)
    assert "without a rank" not in e.stderr, e.stderr
    results = read_h5(out)
    attrs = rank_attrs(out)
    assert results.num_ranks == 2 and sorted(attrs) == [0, 1]
    assert [int(attrs[k]["lapse_rank"]) for k in (0, 1)] == [0, 1]
    assert int(results.metadata["mpi_size"]) == 2
    assert set(results["checkpoint"].regions) == {0}
    assert set(results["odd"].regions) == {1}
    assert all(results["step"].regions[k].num_calls == 3 for k in (0, 1))


def test_hdf5_bad_run_one_line(lapse, tmp_path):
    out = tmp_path / "out.h5"
    if not built_with_hdf5(lapse):
        r = lapse.run("export", tmp_path, "--hdf5", out)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        assert "built without HDF5" in r.stderr and "libhdf5-dev" in r.stderr, r.stderr
        pytest.fail("this lapse was built without HDF5 (the refusal is right; the export "
                    "tests need libhdf5-dev)")
    r = lapse.run("export", tmp_path / "missing", "--hdf5", out)
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("lapse export: "), r.stderr
    bad = tmp_path / "bad"
    (bad / "host").mkdir(parents=True)
    (bad / "host" / "x.lapse").write_bytes(b"\x89LAPSE\r\n" + os.urandom(64))
    r = lapse.run("export", bad, "--hdf5", out)
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines()[-1].startswith("lapse export: ") and \
        "no readable .lapse file" in r.stderr, r.stderr
    assert not out.exists()
    # two outputs at once: a usage error
    r = lapse.run("export", bad, "--hdf5", out, "--perfetto", tmp_path / "t.json")
    assert r.returncode == 2 and "one output at a time" in r.stderr, r.stderr
