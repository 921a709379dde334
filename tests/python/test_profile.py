"""lapse.Profile and lapse.ProfileDiff on real runs made with the Python API.

Every run here is recorded by ``lapse.Profiler`` in this process (several roles of
one run are recorded one after the other, joined by ``LAPSE_RUN_ID``), so the tests
need only the installed package.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pathlib
import pickle
import time

import pytest

from lapse import Profile, ProfileDiff, Profiler, _lapse, count, span
from lapse.profile import _names_of as _names


def busy_us(us: float) -> None:
    """Spins for at least `us` microseconds (sleep is too coarse and too noisy)."""
    end = time.perf_counter_ns() + int(us * 1000)
    while time.perf_counter_ns() < end:
        pass


def record(run_dir: pathlib.Path, role: str = "t", steps: int = 20, work_us: float = 20.0,
           **options: object) -> Profiler:
    """One process's session: `steps` x step > (load, compute x3), a setup once."""
    with Profiler(run_dir=run_dir, role=role, **options) as p:  # type: ignore[arg-type]
        with span("setup"):
            busy_us(work_us)
        for _ in range(steps):
            with span("step"):
                with span("load"):
                    busy_us(work_us / 4)
                    count("bytes", 100)
                for _ in range(3):
                    with span("compute"):
                        busy_us(work_us)
                count("items", 1)
    return p


def run_dirs(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(d for d in root.iterdir() if d.is_dir())


def lapse_files(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(root.rglob("*.lapse"))


@pytest.fixture
def multi_role_run(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    """A run of four processes' files: driver x1, worker x3 (one run id)."""
    monkeypatch.setenv("LAPSE_RUN_ID", "test-run-1")
    record(tmp_path, role="driver", steps=2)
    for steps in (10, 12, 14):
        record(tmp_path, role="worker", steps=steps)
    (run,) = run_dirs(tmp_path)
    return run


# ---- loading ----


def test_load_a_file_a_run_dir_and_a_dir_of_runs(tmp_path: pathlib.Path) -> None:
    p = record(tmp_path / "runs", steps=15)
    assert p.file is not None
    file = pathlib.Path(p.file)
    run = file.parent.parent

    from_result = p.result()
    from_file = Profile.load(file)
    from_run = Profile.load(run)
    from_runs = Profile.load(tmp_path / "runs")
    for prof in (from_result, from_file, from_run, from_runs):
        assert prof.stats() == from_file.stats()
        assert prof.run_id == run.name
        assert prof.roles == ("t",)
        assert [w.pid for w in prof.workers] == [os.getpid()]
        assert prof.stats()["step"].calls == 15
    assert list(from_file.files) == [file.name]
    assert list(from_run.files) == [f"{file.parent.name}/{file.name}"]
    assert from_run.files[f"{file.parent.name}/{file.name}"] == file.read_bytes()
    assert from_file.source == str(file)
    assert from_run.source == str(run)


def test_dir_of_runs_loads_the_newest_and_names_the_others(tmp_path: pathlib.Path) -> None:
    record(tmp_path, steps=5)
    time.sleep(0.05)  # a later modification time
    record(tmp_path, steps=7)
    old, new = sorted(run_dirs(tmp_path), key=lambda d: max(f.stat().st_mtime_ns for f in lapse_files(d)))
    prof = Profile.load(tmp_path)
    assert prof.run_id == new.name
    assert prof.stats()["step"].calls == 7
    assert [c.kind for c in prof.caveats] == ["superseded"]
    assert old.name in prof.caveats[0].message
    assert len(prof.files) == 1  # the newest attempt only


def test_missing_path_raises_file_not_found(tmp_path: pathlib.Path) -> None:
    with pytest.raises(FileNotFoundError) as e:
        Profile.load(tmp_path / "nope")
    assert "nope" in str(e.value)
    with pytest.raises(FileNotFoundError):
        _lapse.report(str(tmp_path / "nope"))


def test_dir_without_lapse_files_raises_value_error(tmp_path: pathlib.Path) -> None:
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "notes.txt").write_text("not a run")
    with pytest.raises(ValueError, match="no .lapse file"):
        Profile.load(tmp_path)


def test_only_unreadable_files_raises_value_error(tmp_path: pathlib.Path) -> None:
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "junk.lapse").write_bytes(b"\x00garbage" * 100)
    with pytest.raises(ValueError, match="no readable .lapse file"):
        Profile.load(tmp_path)
    with pytest.raises(ValueError):
        _lapse.export_perfetto(str(tmp_path), str(tmp_path / "t.json"))


def test_truncated_and_garbage_files_are_caveats_and_the_rest_loads(tmp_path: pathlib.Path) -> None:
    p = record(tmp_path, steps=10)
    assert p.file is not None
    good = pathlib.Path(p.file)
    data = good.read_bytes()
    (good.parent / "cut-1-0000.lapse").write_bytes(data[: len(data) // 2])
    (good.parent / "junk-2-0000.lapse").write_bytes(b"this is not a lapse file\n" * 20)

    prof = Profile.load(good.parent.parent)
    kinds = [c.kind for c in prof.caveats]
    assert kinds.count("unreadable") == 2
    assert {pathlib.Path(f).name for f, _ in prof.unreadable} == {"cut-1-0000.lapse", "junk-2-0000.lapse"}
    assert len(prof.workers) == 1
    assert prof.stats()["step"].calls == 10
    assert "2 caveats" in repr(prof)
    assert "unreadable" in str(prof)
    # the unreadable files are held too: a saved profile keeps its caveats
    assert len(prof.files) == 3
    back = Profile.load(prof.save(tmp_path / "saved"))
    assert [c.kind for c in back.caveats].count("unreadable") == 2
    assert back.stats() == prof.stats()


# ---- saving ----


def test_save_one_file_round_trip(tmp_path: pathlib.Path) -> None:
    prof = record(tmp_path / "runs", steps=12).result()
    out = prof.save(tmp_path / "before")
    assert out == tmp_path / "before.lapse"
    assert out.read_bytes() == next(iter(prof.files.values()))
    back = Profile.load(out)
    assert back.stats() == prof.stats()
    assert back.run_id == prof.run_id
    # a suffix is kept; a directory receives the file under its name
    assert prof.save(tmp_path / "x.prof") == tmp_path / "x.prof"
    assert Profile.load(tmp_path / "x.prof").stats() == prof.stats()
    (tmp_path / "into").mkdir()
    inside = prof.save(tmp_path / "into")
    assert inside.parent == tmp_path / "into" and inside.suffix == ".lapse"


def test_save_several_files_as_a_run_directory(multi_role_run: pathlib.Path, tmp_path: pathlib.Path) -> None:
    prof = Profile.load(multi_role_run)
    assert len(prof.files) == 4
    out = prof.save(tmp_path / "copy")
    assert out == tmp_path / "copy"
    written = sorted(str(f.relative_to(out)) for f in lapse_files(out))
    assert written == sorted(prof.files)
    assert all(len(pathlib.PurePosixPath(rel).parts) == 2 for rel in written)  # <host>/<name>
    back = Profile.load(out)
    assert back.stats() == prof.stats()
    assert back.roles == prof.roles
    assert [w.pid for w in back.workers] == [w.pid for w in prof.workers]
    # never mixed into a directory that holds something
    with pytest.raises(FileExistsError):
        prof.save(out)


def test_save_never_writes_through_a_link(tmp_path: pathlib.Path) -> None:
    """A link planted at the temporary name save used (.NAME.tmp.<pid>) or at the
    destination itself: neither is written through; the destination becomes a file
    of its own."""
    prof = record(tmp_path / "runs", steps=3).result()
    victim = tmp_path / "victim"
    victim.write_bytes(b"victim")
    out = tmp_path / "out.lapse"
    (tmp_path / f".out.lapse.tmp.{os.getpid()}").symlink_to(victim)
    assert prof.save(out) == out
    assert victim.read_bytes() == b"victim"
    out.unlink()
    out.symlink_to(victim)
    prof.save(out)
    assert victim.read_bytes() == b"victim"
    assert not out.is_symlink() and out.read_bytes() == next(iter(prof.files.values()))


@pytest.mark.parametrize("share,dirs,files", [(False, 0o700, 0o600), (True, 0o750, 0o640)])
def test_modes_of_what_is_written(tmp_path: pathlib.Path, multi_role_run: pathlib.Path,
                                  monkeypatch: pytest.MonkeyPatch, share: bool, dirs: int,
                                  files: int) -> None:
    """Under umask 022: a run and what save writes are the user's alone (0700/0600),
    or with share (Profiler(share=True), LAPSE_SHARE=1) also the group's (0750/0640)."""
    old = os.umask(0o022)
    try:
        p = record(tmp_path / "runs", steps=2, share=share)
        if share:
            monkeypatch.setenv("LAPSE_SHARE", "1")
        saved = Profile.load(multi_role_run).save(tmp_path / "saved")
    finally:
        os.umask(old)
    made = pathlib.Path(p.file)
    assert made.stat().st_mode & 0o777 == files, oct(made.stat().st_mode)
    for d in (made.parent, made.parent.parent, tmp_path / "runs"):
        assert d.stat().st_mode & 0o777 == dirs, (d, oct(d.stat().st_mode))
    for f in lapse_files(saved):
        assert f.stat().st_mode & 0o777 == files, (f, oct(f.stat().st_mode))
        assert f.parent.stat().st_mode & 0o777 == dirs, f.parent
    assert saved.stat().st_mode & 0o777 == dirs


# ---- numbers ----


def test_stats_values(tmp_path: pathlib.Path) -> None:
    prof = record(tmp_path, steps=20, work_us=30).result()
    st = prof.stats()
    assert set(st) == {"setup", "step", "step.load", "step.compute"}
    assert st["setup"].calls == 1
    assert st["step"].calls == 20
    assert st["step.load"].calls == 20
    assert st["step.compute"].calls == 60
    assert st["step.compute"].names == ("step", "compute")
    assert st["step.compute"].depth == 2
    assert st["step"].counters == {"items": 20}
    assert st["step.load"].counters == {"bytes": 2000}
    for s in st.values():
        assert s.role == "t"
        assert 0 <= s.self_ns <= s.total_ns
        assert s.min_ns is not None and s.p50_ns is not None and s.p99_ns is not None
        assert s.max_ns is not None and s.mean_ns is not None
        assert s.min_ns <= s.p50_ns <= s.p90_ns <= s.p99_ns <= s.max_ns  # type: ignore[operator]
        assert s.in_processes == 1
    assert st["step.compute"].p50_ns >= 30_000  # type: ignore[operator]
    # the children's time is not in the parent's self time
    step = st["step"]
    assert step.self_ns == step.total_ns - st["step.load"].total_ns - st["step.compute"].total_ns
    assert st["step.compute"].self_ns == st["step.compute"].total_ns


def test_stats_keys_with_several_roles(multi_role_run: pathlib.Path) -> None:
    prof = Profile.load(multi_role_run)
    assert prof.roles == ("driver", "worker")
    st = prof.stats()
    assert "driver:step" in st and "worker:step.compute" in st
    assert st["worker:step"].calls == 10 + 12 + 14
    assert st["worker:step"].in_processes == 3
    assert st["driver:step"].calls == 2
    workers_only = prof.stats("worker")
    assert set(workers_only) == {"setup", "step", "step.load", "step.compute"}
    assert workers_only["step"] == st["worker:step"]
    with pytest.raises(ValueError, match="no role"):
        prof.stats("nobody")
    assert [w.role for w in prof.workers].count("worker") == 3
    assert all(w.final and w.state == "final" for w in prof.workers)
    assert "4 processes (driver x1, worker x3)" in repr(prof)


def test_bottlenecks_by_self_time(multi_role_run: pathlib.Path) -> None:
    prof = Profile.load(multi_role_run)
    top = prof.bottlenecks(3)
    assert len(top) == 3
    assert [s.self_ns for s in top] == sorted((s.self_ns for s in top), reverse=True)
    everything = prof.bottlenecks(100)
    assert len(everything) == len(prof.stats())
    assert top == everything[:3]
    assert top[0].role == "worker" and top[0].path == "step.compute"
    assert all(s.role == "driver" for s in prof.bottlenecks(role="driver"))
    assert prof.bottlenecks(0) == []


# ---- diff ----


def test_diff_of_a_run_with_itself_changes_nothing(multi_role_run: pathlib.Path) -> None:
    prof = Profile.load(multi_role_run)
    d = prof.diff(prof)
    assert isinstance(d, ProfileDiff)
    rows = d.rows
    assert len(rows) == len(prof.stats())
    assert not any(r.changed for r in rows)
    assert d.changed == []
    assert all(r.presence == "both" and r.ks_d == 0 and r.total_delta_ns == 0 for r in rows)
    assert {r.key for r in rows} == set(prof.stats())
    assert d.summary["changed"] == 0
    assert d.to_dict()["schema"] == "lapse.diff"
    assert "0 changed" in repr(d)
    assert "no real change" in str(d)


def test_diff_flags_the_slowed_path(tmp_path: pathlib.Path) -> None:
    before = record(tmp_path / "a", steps=60, work_us=20).result()
    after = record(tmp_path / "b", steps=60, work_us=200).result()
    d = after.diff(before)
    rows = {r.key: r for r in d.rows}
    compute = rows["t:step.compute"]  # 180 calls a side
    assert compute.calls_a == compute.calls_b == 180
    assert compute.changed and compute.ks_significant and not compute.few_calls
    assert compute.p50_ratio is not None and compute.p50_ratio > 2
    assert compute.total_delta_ns > 0
    assert "changed" in compute.flags
    setup = rows["t:setup"]  # one call a side: too few to call a change
    assert setup.few_calls and not setup.changed
    assert d.before is before and d.after is after
    text = str(d)
    assert f"A {before.source}" in text and f"B {after.source}" in text
    out = io.StringIO()
    d.show(file=out, top=1)
    assert "more rows" in out.getvalue()
    # keyed by path alone
    by_path = after.diff(before, by_path=True)
    assert {r.key for r in by_path.rows} == {"setup", "step", "step.load", "step.compute"}
    assert by_path.to_dict()["key"] == "path"


def test_diff_rows_present_on_one_side(tmp_path: pathlib.Path) -> None:
    before = record(tmp_path / "a", steps=3).result()
    with Profiler(run_dir=tmp_path / "b", role="t") as p:
        with span("new_phase"):
            busy_us(10)
    d = p.result().diff(before)
    presence = {r.key: r.presence for r in d.rows}
    assert presence["t:new_phase"] == "only_b"
    assert presence["t:step"] == "only_a"
    row = next(r for r in d.rows if r.key == "t:step")
    assert row.p50_b_ns is None and row.p50_ratio is None


# ---- export and text ----


def test_perfetto_writes_chrome_trace_json(tmp_path: pathlib.Path) -> None:
    prof = record(tmp_path, steps=5).result()
    out = prof.perfetto(tmp_path / "trace.json")
    assert out == tmp_path / "trace.json"
    trace = json.loads(out.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    slices = [e for e in events if e.get("ph") == "X"]
    # setup + 5 x (step + load + 3 compute)
    assert len(slices) == 1 + 5 * 5
    assert {e["name"] for e in slices} == {"setup", "step", "load", "compute"}
    assert all(e["dur"] >= 0 for e in slices)
    with pytest.raises(FileNotFoundError):
        prof.perfetto(tmp_path / "no" / "such" / "dir" / "trace.json")


def test_perfetto_writes_no_temporary_file(multi_role_run: pathlib.Path, tmp_path: pathlib.Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """perfetto() exports the held bytes in memory: with the run's files gone and no
    temporary file or directory to be had, the trace is what `lapse export` wrote
    from the files."""
    import shutil
    import subprocess
    import tempfile

    copy = tmp_path / "copy"
    shutil.copytree(multi_role_run, copy)
    profile = Profile.load(copy)
    lapse_cmd = pathlib.Path(os.environ.get("LAPSE_BUILD_DIR", pathlib.Path(__file__).parents[2] / "build")) / "lapse"
    expected = None
    if lapse_cmd.exists():
        subprocess.run([str(lapse_cmd), "export", str(copy), "--perfetto", str(tmp_path / "cli.json")],
                       capture_output=True, check=True)
        expected = json.loads((tmp_path / "cli.json").read_text())
    shutil.rmtree(copy)

    def no_temp(*a: object, **k: object) -> None:
        raise AssertionError("a temporary file or directory was made")

    for name in ("TemporaryDirectory", "mkdtemp", "mkstemp", "NamedTemporaryFile", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, no_temp)
    out = profile.perfetto(tmp_path / "trace.json")
    trace = json.loads(out.read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    slices = [e for e in events if e.get("ph") == "X"]
    assert len(slices) == 4 + 5 * (2 + 10 + 12 + 14)  # setup, then step > load, compute x3
    if expected is not None:
        assert trace == expected


def test_repr_str_and_show(tmp_path: pathlib.Path) -> None:
    prof = record(tmp_path, steps=5).result()
    r = repr(prof)
    assert r.startswith("<lapse.Profile run ") and prof.run_id in r
    assert "1 process (t x1)" in r and "4 paths" in r and "no caveats" in r
    text = str(prof)
    assert text.startswith(f"Run {prof.run_id}")
    assert "DOMINANT PHASES" in text and "step/compute" in text and "CAVEATS none" in text
    assert str(tmp_path) in text  # the source, not a temporary directory
    out = io.StringIO()
    prof.show(file=out)
    assert out.getvalue() == text
    short = io.StringIO()
    prof.show(file=short, top=1)
    assert short.getvalue() != text
    assert prof._repr_html_().startswith("<iframe srcdoc=\"")
    # the text is what the C report renders from the same files
    assert text == _lapse.report(prof.source)


def test_to_dict_and_to_json(tmp_path: pathlib.Path) -> None:
    prof = record(tmp_path, steps=5).result()
    doc = prof.to_dict()
    assert doc["schema"] == "lapse.report" and doc["schema_version"] == 2
    assert json.loads(prof.to_json(indent=2)) == doc
    assert doc["run"]["runtime_ns"] == prof.runtime_ns > 0


# ---- immutability ----


def test_profile_is_immutable(tmp_path: pathlib.Path) -> None:
    prof = record(tmp_path, steps=5).result()
    before = prof.stats()
    with pytest.raises(AttributeError):
        prof.run_id = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        prof._doc = {}  # type: ignore[misc]
    doc = prof.to_dict()
    doc["roles"].clear()
    doc["run"]["id"] = "changed"
    assert prof.to_dict()["roles"] and prof.run_id != "changed"
    s = prof.stats()["step"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.calls = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.counters["items"] = 0  # type: ignore[index]
    with pytest.raises(TypeError):
        prof.files["x"] = b""  # type: ignore[index]
    assert prof.stats() == before
    assert dataclasses.is_dataclass(prof.workers[0])
    again = pickle.loads(pickle.dumps(prof))
    assert again.stats() == before and again.files == prof.files


def test_workers_caveats_and_dropped_spans(tmp_path: pathlib.Path) -> None:
    p = record(tmp_path, steps=20, max_spans=10)
    prof = p.result()
    (w,) = prof.workers
    assert w.pid == os.getpid() and w.role == "t" and w.final
    assert w.end_reason == "stop" and w.state == "final"
    assert w.span_calls == 1 + 20 * 5
    assert w.max_spans == 10
    assert prof.dropped_spans == w.timeline_dropped > 0
    assert "dropped_spans" in [c.kind for c in prof.caveats]
    # the aggregates still count every span
    assert prof.stats()["step.compute"].calls == 60


def test_reports_from_several_threads_at_once(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The C layer runs without the GIL: concurrent reports must neither crash nor
    mix (the analysis sorts through shared comparator state; read.c serializes it)."""
    import threading

    monkeypatch.setenv("LAPSE_RUN_ID", "many-roles")
    for r in range(8):
        with Profiler(run_dir=tmp_path, role=f"role{r}"):
            for k in range(40):
                with span(f"phase{(k * 7 + r) % 40}"):
                    with span(f"inner{k % 5}"):
                        count(f"c{k % 3}", k)
    (run_path,) = run_dirs(tmp_path)
    run = str(run_path)
    text = _lapse.report(run)
    diff = _lapse.diff(run, run)
    failures: list[str] = []

    def work() -> None:
        for _ in range(60):
            if _lapse.report(run) != text:
                failures.append("report")
            if _lapse.diff(run, run) != diff:
                failures.append("diff")

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_rendering_and_diff_write_no_file(multi_role_run: pathlib.Path, tmp_path: pathlib.Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """show(), str() and diff() analyse the held bytes in memory: with the run's files
    gone and no temporary directory to be had, the text is what `lapse report` printed
    of the run, names included."""
    import shutil
    import subprocess
    import tempfile

    copy = tmp_path / "copy"
    shutil.copytree(multi_role_run, copy)
    profile = Profile.load(copy)
    lapse_cmd = pathlib.Path(os.environ.get("LAPSE_BUILD_DIR", pathlib.Path(__file__).parents[2] / "build")) / "lapse"
    expected = subprocess.run([str(lapse_cmd), "report", str(copy)], capture_output=True, text=True,
                              check=True).stdout if lapse_cmd.exists() else None
    shutil.rmtree(copy)

    def no_temp(*a: object, **k: object) -> None:
        raise AssertionError("a temporary file or directory was made")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", no_temp)
    monkeypatch.setattr(tempfile, "mkdtemp", no_temp)
    text = str(profile)
    assert profile.source in text
    if expected is not None:
        # what depends on the time of reading: the Run line and states are the same here
        assert text.splitlines()[:3] == expected.splitlines()[:3]
        assert text.split("CAVEATS")[0].splitlines()[3:] == expected.split("CAVEATS")[0].splitlines()[3:]
    d = profile.diff(profile)
    assert d.summary["changed"] == 0 and profile.source in str(d)


def test_load_run_tree_agrees_with_the_text_and_json(multi_role_run: pathlib.Path) -> None:
    """lapse.load_run's tree is the report's run_paths (merged over the roles by the C
    analysis), and each figure is the sum over its roles of what the JSON's phases and
    the text's DOMINANT PHASES rows (calls, counter totals) say of that path."""
    import re

    import lapse

    run = lapse.load_run(multi_role_run)
    doc = json.loads(_lapse.report(str(multi_role_run), json=True))
    text = _lapse.report(str(multi_role_run), top=100)
    assert set(run.roles) == {"driver", "worker"}

    paths = doc["run_paths"]
    assert {names for names in _names(paths)} == set(run.tree) and len(paths) == len(run.tree)
    for p, names in zip(paths, _names(paths)):
        t = run.tree[names]
        assert (t.calls, t.total_ns, t.self_ns, t.estimated) == (p["calls"], p["total_ns"], p["self_ns"],
                                                                p["estimated"])
        assert t.roles == tuple(p["roles"])
        assert dict(t.counters) == {c["name"]: c["sum"] for c in p["counters"]}

    # the same figures, added up over the roles' phases of the JSON ...
    summed: dict[tuple[str, ...], dict[str, object]] = {}
    for role in doc["roles"]:
        for ph, names in zip(role["phases"], _names(role["phases"])):
            e = summed.setdefault(names, {"calls": 0, "total_ns": 0, "self_ns": 0, "roles": [],
                                          "counters": {}})
            for k in ("calls", "total_ns", "self_ns"):
                e[k] += ph[k]  # type: ignore[operator]
            e["roles"].append(role["role"])  # type: ignore[attr-defined]
            for c in ph["counters"]:
                e["counters"][c["name"]] = e["counters"].get(c["name"], 0) + c["sum"]  # type: ignore[attr-defined,index]
    assert set(summed) == set(run.tree)
    for names, e in summed.items():
        t = run.tree[names]
        assert (t.calls, t.total_ns, t.self_ns, list(t.roles), dict(t.counters)) == (
            e["calls"], e["total_ns"], e["self_ns"], e["roles"], e["counters"])

    # ... and of the text: calls per DOMINANT PHASES row, "+ name N total" below it
    shown: dict[tuple[str, ...], list[int]] = {}
    counted: dict[tuple[str, ...], dict[str, int]] = {}
    row = None
    for line in text.splitlines():
        if m := re.match(r"^  (\S+)\s+([\d,]+)\s+\S+\s+\d+/\d+\s", line):
            row = tuple(m.group(1).split("/"))
            shown.setdefault(row, []).append(int(m.group(2).replace(",", "")))
        elif (m := re.match(r"^    \+ (\S+)\s+([\d,]+) total", line)) and row is not None:
            c = counted.setdefault(row, {})
            c[m.group(1)] = c.get(m.group(1), 0) + int(m.group(2).replace(",", ""))
        elif not line.startswith("    "):
            row = None
    assert set(shown) == set(run.tree)
    for names, t in run.tree.items():
        assert sum(shown[names]) == t.calls and len(shown[names]) == len(t.roles)
        assert counted.get(names, {}) == dict(t.counters)


def test_usage_agrees_with_the_text_and_json(multi_role_run: pathlib.Path) -> None:
    """Profile.usage and Worker.usage are the report's figures: the same as its JSON,
    and as the Usage rows of its text."""
    profile = Profile.load(multi_role_run)
    doc = profile.to_dict()
    for r in doc["roles"]:
        u = profile.usage[r["role"]]
        assert dataclasses.asdict(u) == r["usage"]
        assert u.ctx_voluntary is not None and u.cpu_ns is not None and u.cores_busy is not None
    rows = [line.split()[-3:] for line in str(profile).splitlines() if line.split()[:1] == ["pid"]]
    shown = []
    for w, jw in zip(profile.workers, doc["workers"]):
        assert w.usage is not None and dataclasses.asdict(w.usage) == jw["usage"]
        shown.append([f"{w.usage.ctx_voluntary:,}", "/", f"{w.usage.ctx_involuntary:,}"])
    assert sorted(rows) == sorted(shown)  # one row per process (all of this test's pid)


def test_usage_is_the_sessions_own(tmp_path: pathlib.Path) -> None:
    """CPU time and context switches count from the session's start, as its wall time
    does: work the process did before Profiler() is not in "cores busy" (it read 2.9
    cores for a session that only slept, after 0.6 s of work before it)."""
    start = time.process_time()
    while time.process_time() - start < 0.6:
        pass
    with Profiler(run_dir=tmp_path) as p:
        with span("nap"):
            time.sleep(0.2)
    (w,) = Profile.load(p.file).workers
    assert w.usage is not None and w.usage.cpu_ns is not None, w.usage
    assert w.usage.cpu_ns < 3 * 10**8 and w.usage.cores_busy < 1.0, w.usage
