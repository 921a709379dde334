"""Hostile input next to a good run, through `lapse report`, `lapse report --json` and
`lapse export`: the work stays bounded, nothing blocks, what is not a file of the run
is not read (one line names it), and every process is counted once.

Each case starts from a real run (e2e_workers) and adds one thing to it; the files no
writer makes come from tests/e2e/lapse_files.py, written from docs/format.md.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import pytest

import lapse_files as lf
from bounded import run_bounded
from conftest import copy_run

# A report of the good run costs a few MB and a few ms. The bounds leave room for the
# sanitizer build and a loaded machine, and are far below what the cases cost before.
TIME_S = 20
MEMORY = 512 << 20


def lapse_bounded(lapse, *args, memory=None, env=None):
    r = run_bounded([lapse.exe, *args], memory, TIME_S, env=env)
    assert not r.timed_out, f"lapse {args[0]} ran past {TIME_S}s ({r.how}): {r.stderr[-2000:]}"
    assert r.returncode == 0, f"lapse {args}: exit {r.returncode} ({r.how}): {r.stderr[-2000:]}"
    return r


def report_all(lapse, run_dir, tmp_path, memory=None):
    """report, report --json and export --perfetto of run_dir, each bounded."""
    trace = tmp_path / "trace.json"
    out = {
        "text": lapse_bounded(lapse, "report", run_dir, memory=memory),
        "json": lapse_bounded(lapse, "report", run_dir, "--json", memory=memory),
        "export": lapse_bounded(lapse, "export", run_dir, "--perfetto", trace, memory=memory),
    }
    out["doc"] = json.loads(out["json"].stdout)
    out["trace"] = json.loads(trace.read_text())
    return out


def lines_naming(r, name):
    text = r.stdout.decode(errors="replace") + r.stderr
    return [line for line in text.splitlines() if name in line]


def trace_processes(trace):
    return {e["pid"] for e in trace["traceEvents"] if e.get("ph") == "X"}


def check_good_run(out, run):
    """The good run's processes, each once, in every output."""
    doc = out["doc"]
    assert doc["run"]["processes"] == run.workers + 1, doc["workers"]
    pids = [int(w["pid"]) for w in doc["workers"]]
    assert sorted(pids) == sorted(set(pids)), pids
    assert len(trace_processes(out["trace"])) == run.workers + 1
    assert "worker" in out["text"].stdout.decode()


def reasons(doc, name):
    return [u["reason"] for u in doc["unreadable"] if u["file"].endswith(name)]


@pytest.fixture
def run(workers_run, tmp_path):
    return copy_run(workers_run, tmp_path)


def a_worker_file(run) -> pathlib.Path:
    return sorted(run.host_dir.glob("worker-*.lapse"))[0]


# ---- entries that are not files of the run: named in one line, never opened ----

def test_fifo_named_like_a_file_is_named_and_not_opened(lapse, run, tmp_path):
    fifo = run.host_dir / "zz-fifo.lapse"
    os.mkfifo(fifo)
    out = report_all(lapse, run.run_dir, tmp_path)
    check_good_run(out, run)
    for name in ("text", "export"):
        assert len(lines_naming(out[name], fifo.name)) == 1, out[name].stderr
    assert reasons(out["doc"], fifo.name) == ["not read: a FIFO, not a regular file"]


def test_fifo_swapped_in_after_the_listing_does_not_block(lapse, run, tmp_path):
    """The reader lists the run, then a FIFO takes the place of a listed file before
    the reader opens it: libswap_fifo.so (LD_PRELOAD) makes the swap at that open,
    so the race is the same every time. The FIFO is named, never waited on."""
    victim = a_worker_file(run).name
    # (under AddressSanitizer the shim comes before its runtime: allowed here)
    asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    env = dict(os.environ, LD_PRELOAD=str(lapse.build / "libswap_fifo.so"),
               LAPSE_TEST_SWAP_FIFO=victim, ASAN_OPTIONS=asan)
    for k, args in enumerate((["report"], ["report", "--json"], ["export", "--perfetto"])):
        fresh = copy_run(run, tmp_path / f"fresh{k}")
        argv = [args[0], fresh.run_dir, *args[1:]] + ([tmp_path / "t.json"] if k == 2 else [])
        r = lapse_bounded(lapse, *argv, env=env)
        assert f"{victim} is a FIFO now" in r.stderr, r.stderr  # the swap happened
        if k == 1:
            doc = json.loads(r.stdout)
            assert reasons(doc, victim) == ["not read: a FIFO, not a regular file"]
            assert doc["run"]["processes"] == run.workers
        else:  # one line of lapse's names it (the other is the shim's)
            assert len(lines_naming(r, victim)) == 2, r.stdout.decode() + r.stderr


def test_symlink_loop_is_named_and_the_run_reads(lapse, run, tmp_path):
    loop = run.host_dir / "zz-loop.lapse"
    os.symlink(loop.name, loop)
    out = report_all(lapse, run.run_dir, tmp_path)
    check_good_run(out, run)
    assert reasons(out["doc"], loop.name) == ["not read: a symbolic link loop"]
    assert len(lines_naming(out["text"], loop.name)) == 1


def test_symlink_leaving_the_run_directory_is_not_followed(lapse, run, tmp_path):
    """A link to a .lapse file elsewhere (it could be any file the reader may read):
    not opened, named with where it leads."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    secret = lf.chain(lf.process(777, role="secret"), 2, "secret_path")
    (outside / "secret.lapse").write_bytes(secret.encode())
    link = run.host_dir / "zz-out.lapse"
    os.symlink(outside / "secret.lapse", link)
    out = report_all(lapse, run.run_dir, tmp_path)
    check_good_run(out, run)
    assert "secret" not in out["doc"]["run"]["roles"]
    assert reasons(out["doc"], link.name) == [
        f"not read: a symbolic link that leaves the run directory (to {outside / 'secret.lapse'})"]
    assert len(lines_naming(out["text"], link.name)) == 1
    # a link that stays inside is followed, and its file counted once
    link.unlink()
    os.symlink(a_worker_file(run).name, run.host_dir / "zz-in.lapse")
    check_good_run(report_all(lapse, run.run_dir, tmp_path), run)


def test_directory_named_like_a_file_is_named_and_not_entered(lapse, run, tmp_path):
    stray = run.run_dir / "stray.lapse"  # beside the host directories: it would be one
    stray.mkdir()
    (stray / "p.lapse").write_bytes(lf.chain(lf.process(778, role="stray"), 2, "x").encode())
    (run.host_dir / "d.lapse").mkdir()
    out = report_all(lapse, run.run_dir, tmp_path)
    check_good_run(out, run)
    assert "stray" not in out["doc"]["run"]["roles"]
    for name in ("stray.lapse", "d.lapse"):
        assert reasons(out["doc"], name) == ["not read: a directory, not a .lapse file"]


# ---- bounded work ----

def test_2gb_sparse_file_is_refused_at_its_header_under_a_memory_limit(lapse, run, tmp_path):
    """2 GB of zeros beside the run, every command under a 512 MiB memory limit (a
    memory cgroup as root, else RLIMIT_AS): the zeros are refused after their first
    bytes and the run is reported."""
    zeros = run.host_dir / "zz-zeros.lapse"
    with open(zeros, "wb") as f:
        f.truncate(2 << 30)
    out = report_all(lapse, run.run_dir, tmp_path, memory=MEMORY)
    print(f"memory bound: {out['text'].how}; peak RSS report {out['text'].peak_rss_kb} kB, "
          f"json {out['json'].peak_rss_kb} kB, export {out['export'].peak_rss_kb} kB")
    check_good_run(out, run)
    assert reasons(out["doc"], zeros.name) == ["not a .lapse file (bad magic)"]
    for name in ("text", "json", "export"):
        assert out[name].seconds < 5, (name, out[name].seconds)


def test_10000_deep_file_is_refused_in_bounded_time_and_memory(lapse, run, tmp_path):
    """A file nested 10,000 deep (661 KB): a writer folds at its max_depth (64), so
    no writer made it; it is refused, and every output stays small."""
    deep = lf.process(4242)
    lf.chain(deep, 10000, "a")
    for n in deep.nodes:
        n.hist = {}
    data = deep.encode()
    assert 600_000 < len(data) < 700_000
    (run.host_dir / "zz-deep.lapse").write_bytes(data)
    out = report_all(lapse, run.run_dir, tmp_path, memory=MEMORY)
    print("10000 deep: " + ", ".join(
        f"{name} {out[name].seconds:.2f} s, peak RSS {out[name].peak_rss_kb} kB, "
        f"{len(out[name].stdout)} bytes out" for name in ("text", "json", "export")))
    check_good_run(out, run)
    assert reasons(out["doc"], "zz-deep.lapse") == [
        "node 65 is nested 65 deep, deeper than its writer folds (max_depth 64)"]
    for name in ("text", "json", "export"):
        assert out[name].seconds < 5 and out[name].peak_rss_kb < 256 << 10, (name, out[name])
        assert len(out[name].stdout) < 1 << 20, (name, len(out[name].stdout))


def test_json_grows_with_the_paths_not_their_depth(lapse, tmp_path):
    """The deepest tree a writer may ask for (max_depth 4096): each phase names its own
    span and its parent, so the document is linear in the paths."""
    run_dir = tmp_path / "deep" / "h"
    run_dir.mkdir(parents=True)
    f = lf.process(1, max_depth=4096)
    lf.chain(f, 4096, "n")
    (run_dir / "deep.lapse").write_bytes(f.encode())
    r = lapse_bounded(lapse, "report", run_dir.parent, "--json", memory=MEMORY)
    # path strings are bounded (4096 bytes each); nothing else repeats the chain
    assert len(r.stdout) < 4096 * (4096 + 2000), len(r.stdout)
    doc = json.loads(r.stdout)
    phases = doc["roles"][0]["phases"]
    assert len(phases) == 4096
    by_depth = {p["depth"]: p for p in phases}
    leaf = by_depth[4096]
    names = []
    p = leaf
    while p is not None:
        names.append(p["name"])
        p = None if p["parent"] is None else phases[p["parent"]]
    assert names == ["n"] * 4096


# ---- each process once ----

def test_copied_file_is_one_process_and_a_caveat(lapse, run, tmp_path):
    original = a_worker_file(run)
    copy = run.host_dir / "zz-copy.lapse"
    shutil.copy(original, copy)
    out = report_all(lapse, run.run_dir, tmp_path)
    check_good_run(out, run)
    dup = [c for c in out["doc"]["caveats"] if c["kind"] == "duplicate"]
    assert len(dup) == 1 and dup[0]["file"] == str(copy) and dup[0]["kept"] == str(original), dup
    assert len(lines_naming(out["text"], copy.name)) == 1
    assert len(lines_naming(out["export"], copy.name)) == 1


def test_copy_of_an_older_snapshot_keeps_the_newer(lapse, run, tmp_path):
    """Same process, two snapshots: the later write counts, whichever file sorts first."""
    f = lf.chain(lf.process(990, role="snap", write_seq=9, final=0), 1, "late")
    g = lf.chain(lf.process(990, role="snap", write_seq=4, final=0), 1, "early")
    (run.host_dir / "a-old.lapse").write_bytes(g.encode())
    (run.host_dir / "b-new.lapse").write_bytes(f.encode())
    doc = report_all(lapse, run.run_dir, tmp_path)["doc"]
    snap = [r for r in doc["roles"] if r["role"] == "snap"][0]
    assert [p["path"] for p in snap["phases"]] == ["late"]
    assert [w["file"] for w in doc["workers"] if w["role"] == "snap"] == [str(run.host_dir / "b-new.lapse")]


def test_pack_of_overlapping_members_is_one_process(lapse, run, tmp_path):
    """100,000 index entries over one image: one process, one caveat, linear work."""
    member = a_worker_file(run)
    pack = run.host_dir / "mpi-ranks-1.lapse"
    pack.write_bytes(lf.pack([member.read_bytes()], [0] * 100_000))
    member.unlink()
    out = report_all(lapse, run.run_dir, tmp_path, memory=MEMORY)
    check_good_run(out, run)
    dup = [c for c in out["doc"]["caveats"] if c["kind"] == "duplicate"]
    assert len(dup) == 1 and dup[0]["count"] == 99_999, dup
    assert dup[0]["kept"] == f"{pack}[0]"
    for name in ("text", "json", "export"):
        assert out[name].seconds < 10, (name, out[name].seconds)
        assert len(lines_naming(out[name], pack.name)) < 20, name


# ---- sums that do not hold together ----

def test_child_time_beyond_the_total_is_named_not_shown(lapse, run, tmp_path):
    f = lf.chain(lf.process(779), 2, "bad")
    f.nodes[1].child_ns = 10**17  # 3 years of children in a 1 us span
    (run.host_dir / "zz-childns.lapse").write_bytes(f.encode())
    out = report_all(lapse, run.run_dir, tmp_path)
    assert [r.startswith("inconsistent sums:") for r in reasons(out["doc"], "zz-childns.lapse")] == [True]
    assert "bad" not in {p["path"] for r in out["doc"]["roles"] for p in r["phases"]}


def test_share_above_the_busy_time_is_a_caveat_not_a_percentage(lapse, tmp_path):
    """Top-level spans hold more than the busy time the root records (within what a
    file can hold together: a span open at the snapshot): no share above 100%."""
    run_dir = tmp_path / "r" / "h"
    run_dir.mkdir(parents=True)
    f = lf.chain(lf.process(1, wall_ns=10**12), 1, "step", ns=10**11)
    f.nodes[0].child_ns = 10  # busy 10 ns, the top-level span 100 s
    (run_dir / "w.lapse").write_bytes(f.encode())
    r = lapse_bounded(lapse, "report", run_dir.parent)
    text = r.stdout.decode()
    assert "%" not in "".join(line for line in text.splitlines() if line.strip().startswith("step")), text
    doc = json.loads(lapse_bounded(lapse, "report", run_dir.parent, "--json").stdout)
    assert doc["roles"][0]["phases"][0]["share_of_busy"] is None
    assert [c["kind"] for c in doc["caveats"]] == ["inconsistent"]
    assert "inconsistent" in text


def test_counter_overflow_is_a_caveat_not_a_wrapped_negative(lapse, run, tmp_path):
    for i in range(2):
        f = lf.chain(lf.process(780 + i, role="big"), 1, "step")
        f.counters.append((1, f.name("items"), 2**63 - 10, 1))
        (run.host_dir / f"zz-big{i}.lapse").write_bytes(f.encode())
    out = report_all(lapse, run.run_dir, tmp_path)
    big = [r for r in out["doc"]["roles"] if r["role"] == "big"][0]
    c = big["phases"][0]["counters"][0]
    assert c["sum"] == 2**63 - 1 and c["overflowed"] is True and c["per_second"] is None, c
    assert [k["kind"] for k in out["doc"]["caveats"]].count("overflow") == 1
    text = out["text"].stdout.decode()
    line = [ln for ln in text.splitlines() if "+ items" in ln and "9,223,372,036,854,775,807" in ln]
    assert len(line) == 1 and ">9,223" in line[0], text
    assert "-9,223" not in text and " -1" not in line[0]
