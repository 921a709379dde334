"""Hostile input beside a good run, through lapse.load_run and Profile.load (and
Profile.save): the Python reader is the C reader, so both say the same thing, the work
stays bounded, and nothing the reader refused is copied.

The hostile files come from tests/e2e/lapse_files.py (a writer of the format written
from docs/format.md); the bounded runs from tests/e2e/bounded.py.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import lapse
from lapse import Profile, Profiler, span

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "e2e"))
import lapse_files as lf  # noqa: E402
from bounded import run_bounded  # noqa: E402

from conftest import lapse_command  # noqa: E402

MEMORY = 512 << 20
TIME_S = 30


@pytest.fixture
def run(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A good run of two processes' files (recorded here, one after the other)."""
    monkeypatch.setenv("LAPSE_RUN_ID", "hostile-test")
    for role in ("a", "b"):
        with Profiler(run_dir=tmp_path / "runs", role=role):
            for _ in range(5):
                with span("step"):
                    pass
    monkeypatch.delenv("LAPSE_RUN_ID")
    (run_dir,) = (tmp_path / "runs").iterdir()
    return run_dir


def host_dir(run: pathlib.Path) -> pathlib.Path:
    (h,) = [d for d in run.iterdir() if d.is_dir()]
    return h


def c_report(path: pathlib.Path) -> dict:
    r = subprocess.run([lapse_command(), "report", str(path), "--json"], capture_output=True,
                       text=True, timeout=TIME_S)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def same_verdicts(doc: dict, other: dict) -> None:
    """Two readings of one run agree on what was read, left out and why."""
    assert doc["run"]["processes"] == other["run"]["processes"]
    assert doc["unreadable"] == other["unreadable"]
    assert [(c["kind"], c["message"]) for c in doc["caveats"]] == \
        [(c["kind"], c["message"]) for c in other["caveats"]]


def check(run: pathlib.Path, processes: int = 2) -> lapse.Run:
    loaded = lapse.load_run(run)
    assert len(loaded.workers) == processes
    same_verdicts(loaded.profile.to_dict(), c_report(run))
    return loaded


def swap_fifo_shim(tmp: pathlib.Path) -> str:
    """tests/e2e/preload/swap_fifo.c, built here (cc) when `make build` has not."""
    repo = pathlib.Path(__file__).resolve().parents[2]
    built = repo / "build" / "libswap_fifo.so"
    if built.exists():
        return str(built)
    out = tmp / "libswap_fifo.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-D_GNU_SOURCE", "-o", str(out),
                    str(repo / "tests" / "e2e" / "preload" / "swap_fifo.c"), "-ldl"], check=True)
    return str(out)


def reasons(r: lapse.Run, name: str) -> list[str]:
    return [why for f, why in r.unreadable if f.endswith(name)]


def test_fifo_is_named_not_opened_and_not_held(run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    os.mkfifo(host_dir(run) / "zz.lapse")
    r = check(run)
    assert reasons(r, "zz.lapse") == ["not read: a FIFO, not a regular file"]
    assert not any(name.endswith("zz.lapse") for name in r.profile.files)
    assert "zz.lapse" in str(r.profile)  # the rendering names it as the report did
    saved = r.profile.save(tmp_path / "saved")
    assert not list(saved.rglob("zz.lapse"))


def test_fifo_swapped_in_after_the_listing_does_not_block(run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """Profile.load in a process of its own with libswap_fifo.so preloaded (the race,
    made the same every time): the FIFO is named, not waited on."""
    shim = swap_fifo_shim(tmp_path)
    victim = sorted(host_dir(run).glob("*.lapse"))[0].name
    code = ("import sys, lapse; p = lapse.Profile.load(sys.argv[1]); "
            "print(len(p.workers), [u for u in p.unreadable])")
    env = dict(os.environ, LD_PRELOAD=shim, LAPSE_TEST_SWAP_FIFO=victim)
    r = run_bounded([sys.executable, "-c", code, run], None, TIME_S, env=env)
    assert not r.timed_out, "Profile.load blocked on a FIFO swapped in after the listing"
    assert r.returncode == 0, r.stderr
    assert "is a FIFO now" in r.stderr
    out = r.stdout.decode()
    assert out.startswith("1 ") and "not read: a FIFO, not a regular file" in out, out


def test_symlink_loop_is_named_not_raised(run: pathlib.Path) -> None:
    loop = host_dir(run) / "loop.lapse"
    os.symlink(loop.name, loop)
    r = check(run)  # it raised OSError ELOOP
    assert reasons(r, "loop.lapse") == ["not read: a symbolic link loop"]


def test_symlink_out_of_the_run_is_not_followed_held_or_saved(run: pathlib.Path,
                                                               tmp_path: pathlib.Path) -> None:
    secret = tmp_path / "secret.lapse"
    secret.write_bytes(lf.chain(lf.process(7, role="secret"), 1, "s").encode())
    os.symlink(secret, host_dir(run) / "out.lapse")
    r = check(run)
    assert "secret" not in r.roles
    assert reasons(r, "out.lapse") == [f"not read: a symbolic link that leaves the run directory (to {secret})"]
    assert not any(secret.read_bytes() in data for data in r.profile.files.values())
    saved = r.profile.save(tmp_path / "saved")
    assert all(secret.read_bytes() != p.read_bytes() for p in saved.rglob("*.lapse"))


def test_directory_named_like_a_file(run: pathlib.Path) -> None:
    (run / "d.lapse").mkdir()
    (run / "d.lapse" / "x.lapse").write_bytes(lf.chain(lf.process(8, role="stray"), 1, "s").encode())
    r = check(run)
    assert "stray" not in r.roles
    assert reasons(r, "d.lapse") == ["not read: a directory, not a .lapse file"]


def test_2gb_sparse_file_under_a_memory_limit(run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """load_run and save in a process under 512 MiB (a memory cgroup as root, else
    RLIMIT_AS): 2 GB of zeros cost their first bytes, and the saved copy holds a hole."""
    with open(host_dir(run) / "zeros.lapse", "wb") as f:
        f.truncate(2 << 30)
    code = ("import sys, lapse; r = lapse.load_run(sys.argv[1]); "
            "print(len(r.workers), sum(map(len, r.profile.files.values())), r.unreadable); "
            "r.profile.save(sys.argv[2])")
    saved = tmp_path / "saved"
    r = run_bounded([sys.executable, "-c", code, run, saved], MEMORY, TIME_S)
    print(f"memory bound: {r.how}; {r.seconds:.2f} s, peak RSS {r.peak_rss_kb} kB")
    assert r.returncode == 0, (r.how, r.stderr[-2000:])
    out = r.stdout.decode()
    assert out.startswith("2 ") and "not a .lapse file (bad magic)" in out, out
    held = int(out.split()[1])
    assert held < 1 << 20, held  # the two good files and 32 bytes of the zeros
    copy = saved / host_dir(run).name / "zeros.lapse"
    assert copy.stat().st_size == 2 << 30 and copy.stat().st_blocks * 512 < 1 << 20
    assert r.seconds < 20


def test_10000_deep_file_in_bounded_time_and_memory(run: pathlib.Path) -> None:
    deep = lf.process(4242)
    lf.chain(deep, 10000, "a")
    for n in deep.nodes:
        n.hist = {}
    (host_dir(run) / "deep.lapse").write_bytes(deep.encode())
    code = "import sys, lapse; r = lapse.load_run(sys.argv[1]); print(len(r.workers), len(r.tree))"
    r = run_bounded([sys.executable, "-c", code, run], MEMORY, TIME_S)
    print(f"10000 deep: {r.how}; {r.seconds:.2f} s, peak RSS {r.peak_rss_kb} kB")
    assert r.returncode == 0, (r.how, r.stderr[-2000:])
    assert r.stdout.decode().split() == ["2", "1"]
    assert r.seconds < 10 and r.peak_rss_kb < 256 << 10, r
    r2 = check(run)
    assert reasons(r2, "deep.lapse") == [
        "node 65 is nested 65 deep, deeper than its writer folds (max_depth 64)"]


def test_deepest_tree_a_writer_makes_has_exact_names(tmp_path: pathlib.Path) -> None:
    (tmp_path / "h").mkdir()
    f = lf.chain(lf.process(1, max_depth=4096), 4096, "n")
    (tmp_path / "h" / "deep.lapse").write_bytes(f.encode())
    prof = Profile.load(tmp_path)
    stats = prof.stats()
    assert len(stats) == 4096
    deepest = max(stats.values(), key=lambda s: s.depth)
    assert deepest.names == ("n",) * 4096 and deepest.path == ".".join(["n"] * 4096)


def test_copied_file_is_one_process(run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    original = sorted(host_dir(run).glob("*.lapse"))[0]
    shutil.copy(original, host_dir(run) / "zz-copy.lapse")
    r = check(run)
    dup = [c for c in r.profile.to_dict()["caveats"] if c["kind"] == "duplicate"]
    assert len(dup) == 1 and dup[0]["kept"] == str(original), dup
    # the copy is held as far as it was read (its meta), and stays a copy when saved
    assert len(r.profile.files[f"{host_dir(run).name}/zz-copy.lapse"]) < original.stat().st_size
    back = lapse.load_run(r.profile.save(tmp_path / "saved"))
    assert len(back.workers) == 2
    assert [c.kind for c in back.profile.caveats].count("duplicate") == 1


def test_pack_of_overlapping_members_is_one_process(run: pathlib.Path) -> None:
    member = sorted(host_dir(run).glob("*.lapse"))[0]
    (host_dir(run) / "mpi-ranks-1.lapse").write_bytes(lf.pack([member.read_bytes()], [0] * 100_000))
    member.unlink()
    code = "import sys, lapse; r = lapse.load_run(sys.argv[1]); print(len(r.workers))"
    b = run_bounded([sys.executable, "-c", code, run], MEMORY, TIME_S)
    assert b.returncode == 0 and b.stdout.decode().split() == ["2"], b
    assert b.seconds < 10, b.seconds
    r = check(run)
    dup = [c for c in r.profile.to_dict()["caveats"] if c["kind"] == "duplicate"]
    assert len(dup) == 1 and dup[0]["count"] == 99_999


def test_counter_overflow_and_inconsistent_sums(tmp_path: pathlib.Path) -> None:
    (tmp_path / "h").mkdir()
    for i in range(2):
        f = lf.chain(lf.process(10 + i), 1, "step")
        f.counters.append((1, f.name("items"), 2**63 - 10, 1))
        (tmp_path / "h" / f"w{i}.lapse").write_bytes(f.encode())
    g = lf.chain(lf.process(20), 2, "bad")
    g.nodes[1].child_ns = 10**17
    (tmp_path / "h" / "bad.lapse").write_bytes(g.encode())
    r = check(tmp_path, processes=2)
    assert r.tree[("step",)].counters["items"] == 2**63 - 1
    assert [c.kind for c in r.profile.caveats] == ["unreadable", "overflow"]
    assert reasons(r, "bad.lapse")[0].startswith("inconsistent sums:")
