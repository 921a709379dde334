"""`lapse export RUN --perfetto out.json`: Chrome trace JSON with X slices."""

from __future__ import annotations

import gzip
import json
import pstats
from collections import defaultdict

from conftest import WORKER_PATHS
from test_record import WORKLOAD
from test_pyread_dump import PYTHONS


def test_perfetto_export(lapse, workers_run, tmp_path):
    out = tmp_path / "trace.json"
    r = lapse.run("export", workers_run.run_dir, "--perfetto", out)
    assert r.returncode == 0, (r.returncode, r.stderr)
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    slices = [e for e in events if e.get("ph") == "X"]
    assert slices, "no X slices"
    for e in slices:
        assert isinstance(e["name"], str) and e["name"]
        assert e["dur"] >= 0 and e["ts"] >= 0
        assert "pid" in e and "tid" in e

    # every span of every worker is there (the timeline bound is far away)
    W, N = workers_run.workers, workers_run.iterations
    by_name = defaultdict(int)
    for e in slices:
        by_name[e["name"]] += 1
    for path, per_iteration in WORKER_PATHS.items():
        name = path.rsplit("/", 1)[-1]
        assert by_name[name] == W * N * per_iteration, (name, dict(by_name))
    pids = {e["pid"] for e in slices if e["name"] == "iteration"}
    assert pids == set(workers_run.pids), (pids, workers_run.pids)

    # the process sampler's counter tracks: every process has its RSS and I/O rate
    counters = [e for e in events if e.get("ph") == "C"]
    rss = [e for e in counters if e["name"] == "lapse: RSS bytes (max)"]
    rates = [e for e in counters if e["name"] == "lapse: I/O bytes/s"]
    assert {e["pid"] for e in rss} >= set(workers_run.pids), rss[:3]
    assert all(e["args"]["rss"] > 0 for e in rss)
    assert all(set(e["args"]) == {"read", "written"} and e["ts"] >= 0 for e in rates)

    # nesting: each inner slice lies within a work slice of the same thread
    # (1 us of slack: an exporter may round ts and dur to whole microseconds)
    pid = workers_run.pids[0]
    work = [(e["ts"], e["ts"] + e["dur"]) for e in slices
            if e["pid"] == pid and e["name"] == "work"]
    for e in slices:
        if e["pid"] == pid and e["name"] == "inner":
            assert any(b <= e["ts"] and e["ts"] + e["dur"] <= end + 1 for b, end in work), e


def test_perfetto_order_and_no_depth(lapse, workers_run, tmp_path):
    """Slices of a thread come in order of start, a parent before what it holds, and
    carry no depth argument (speedscope takes args as part of a frame's name)."""
    out = tmp_path / "trace.json"
    r = lapse.run("export", workers_run.run_dir, "--perfetto", out)
    assert r.returncode == 0, r.stderr
    events = json.loads(out.read_text())["traceEvents"]
    by_thread = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            assert "args" not in e or "depth" not in e["args"], e
            by_thread[(e["pid"], e["tid"])].append(e)
    for key, slices in by_thread.items():
        for a, b in zip(slices, slices[1:]):
            assert a["ts"] <= b["ts"], (key, a, b)
            if a["ts"] == b["ts"]:  # a tie: the one first must hold the other
                assert a["dur"] >= b["dur"], (key, a, b)


def test_perfetto_gzip(lapse, workers_run, tmp_path):
    plain, packed = tmp_path / "trace.json", tmp_path / "trace.json.gz"
    assert lapse.run("export", workers_run.run_dir, "--perfetto", plain).returncode == 0
    r = lapse.run("export", workers_run.run_dir, "--perfetto", packed)
    assert r.returncode == 0, r.stderr
    assert "(gzip)" in r.stderr
    raw = packed.read_bytes()
    assert raw[:2] == b"\x1f\x8b", raw[:8]
    assert len(raw) * 3 < plain.stat().st_size, "gzip that does not compress"
    assert json.loads(gzip.decompress(raw)) == json.loads(plain.read_text())


def test_record_file_exports_samples(lapse, tmp_path):
    """A file of `lapse record` holds Python samples and no timeline: its samples
    become one merged flame chart per sampled thread."""
    rec = tmp_path / "w.lapse"
    r = lapse.run("record", "-r", "200", "-o", rec, "--", PYTHONS[0], WORKLOAD, "1",
                  timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "trace.json"
    r = lapse.run("export", rec, "--perfetto", out)
    assert r.returncode == 0, r.stderr
    assert "slices of merged Python samples" in r.stderr, r.stderr
    events = json.loads(out.read_text())["traceEvents"]
    names = [e for e in events if e.get("ph") == "M" and e["name"] == "thread_name"]
    tracks = {e["tid"] for e in names if "Python samples, merged" in e["args"]["name"]}
    assert tracks, names
    slices = [e for e in events if e.get("ph") == "X"]
    assert slices and all(e["tid"] in tracks and e["ts"] >= 0 for e in slices)
    callers = [e for e in slices if e["name"].split(" (")[0] in ("hot", "cold")]
    work = [e for e in slices if e["name"].startswith("work ")]
    assert callers and work, sorted({e["name"] for e in slices})
    # work runs inside hot and cold: each work slice lies within one of theirs
    for w in work:
        assert any(c["tid"] == w["tid"] and c["ts"] <= w["ts"]
                   and w["ts"] + w["dur"] <= c["ts"] + c["dur"] + 0.001 for c in callers), w
    # hot stands for about 3/4 of hot + cold (as in test_record's shares)
    total = {n: sum(e["dur"] for e in callers if e["name"].startswith(n + " ")) for n in ("hot", "cold")}
    assert abs(total["hot"] / (total["hot"] + total["cold"]) - 0.75) < 0.1, total


def test_pstats_export_reads_back_in_pstats(lapse, tmp_path):
    """--pstats writes what Python's own pstats.Stats reads: work() (innermost in
    both hot and cold) holds the most self time, its callers are hot and cold at
    about 3:1, counts are the samples that saw each function, and the total time is
    the time the samples with a Python frame stand for (speedscope's weights)."""
    rec = tmp_path / "w.lapse"
    r = lapse.run("record", "-r", "200", "-o", rec, "--", PYTHONS[0], WORKLOAD, "2",
                  timeout=60)
    assert r.returncode == 0, r.stderr
    prof, scope, folded = tmp_path / "w.prof", tmp_path / "w.json", tmp_path / "w.txt"
    for option, out in (("--pstats", prof), ("--speedscope", scope), ("--collapsed", folded)):
        r = lapse.run("export", rec, option, out)
        assert r.returncode == 0, r.stderr
    stats = pstats.Stats(str(prof))
    by_name = {func[2]: (func, value) for func, value in stats.stats.items()}
    assert {"work", "hot", "cold", "main"} <= set(by_name), sorted(by_name)
    top = max(stats.stats.items(), key=lambda kv: kv[1][2])
    assert top[0][2] == "work" and top[0][0] == str(WORKLOAD), top[0]
    work_key, (cc, nc, tt, ct, callers) = by_name["work"]
    assert cc == nc and tt <= ct + 1e-9
    # counts are samples: those of the collapsed stacks that hold a work frame
    seen = sum(int(line.rsplit(" ", 1)[1]) for line in folded.read_text().splitlines()
               if not line.startswith("#") and ";work (" in line)
    assert nc == seen and nc >= 200, (nc, seen)
    assert {c[2] for c in callers} == {"hot", "cold"}, callers
    via = {c[2]: v for c, v in callers.items()}
    assert sum(v[1] for v in via.values()) == nc
    assert abs(sum(v[3] for v in via.values()) - ct) < 1e-6
    assert abs(via["hot"][3] / ct - 0.75) < 0.1, via
    assert {c[2] for c in by_name["hot"][1][4]} == {"main"}
    assert by_name["hot"][1][2] < 0.1 * by_name["hot"][1][3], by_name["hot"]
    # the total: every sample with a Python frame, once, in seconds
    doc = json.loads(scope.read_text())
    total_us = sum(w for p in doc["profiles"] for smp, w in zip(p["samples"], p["weights"]) if smp)
    assert abs(stats.total_tt - total_us / 1e6) < 1e-6, (stats.total_tt, total_us)


def test_pstats_export_bad_input(lapse, workers_run, tmp_path):
    """A file that is not a .lapse file, a run without Python samples, or no such path:
    one line, exit 1, nothing written."""
    bad = tmp_path / "bad.lapse"
    bad.write_bytes(b"LAPSE\0\0\0" + b"\xff" * 40)
    for path in (bad, workers_run.run_dir, tmp_path / "missing"):
        out = tmp_path / "out.prof"
        r = lapse.run("export", path, "--pstats", out)
        assert r.returncode == 1, (path, r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("lapse export: "), r.stderr
        assert not out.exists()


def test_two_outputs_are_refused(lapse, workers_run, tmp_path):
    """Two outputs in one call, of the same kind or not, are a usage error: the
    first was dropped in silence when both were sample formats."""
    for pair in (["--speedscope", "a.json", "--pstats", "b.prof"],
                 ["--perfetto", "a.json", "--perfetto", "b.json"],
                 ["--collapsed", "a.txt", "--perfetto", "b.json"]):
        r = lapse.run("export", workers_run.run_dir, *[str(tmp_path / x) if "." in x else x
                                                       for x in pair])
        assert r.returncode == 2 and "one output at a time" in r.stderr, (pair, r.stderr)
        assert not any(tmp_path.glob("[ab].*")), pair


def check_gecko(doc: dict) -> None:
    """The processed format's required fields, each table's columns as long as its
    length, and every index in range."""
    meta = doc["meta"]
    assert meta["preprocessedProfileVersion"] == 47 and meta["version"] == 27
    assert isinstance(meta["startTime"], float) and meta["interval"] > 0
    cats = meta["categories"]
    assert all({"name", "color", "subcategories"} <= set(c) for c in cats)
    assert {"libs", "threads", "pages", "counters"} <= set(doc)
    for t in doc["threads"]:
        for key in ("processType", "processName", "processStartupTime", "registerTime",
                    "name", "isMainThread", "pid", "tid", "samples", "markers", "stackTable",
                    "frameTable", "funcTable", "resourceTable", "nativeSymbols", "stringArray",
                    "pausedRanges"):
            assert key in t, key
        assert isinstance(t["pid"], str) and isinstance(t["tid"], int)
        for table in ("samples", "markers", "stackTable", "frameTable", "funcTable",
                      "resourceTable", "nativeSymbols"):
            tab = t[table]
            for col, v in tab.items():
                if isinstance(v, list):
                    assert len(v) == tab["length"], (t["name"], table, col)
        strings, st, fr, fn = t["stringArray"], t["stackTable"], t["frameTable"], t["funcTable"]
        assert all(s is None or 0 <= s < st["length"] for s in t["samples"]["stack"])
        for i, (frame, prefix) in enumerate(zip(st["frame"], st["prefix"])):
            assert 0 <= frame < fr["length"] and (prefix is None or 0 <= prefix < i)
        assert all(0 <= f < fn["length"] for f in fr["func"])
        assert all(0 <= n < len(strings) for n in fn["name"] + fn["fileName"])
        m = t["markers"]
        assert all(0 <= n < len(strings) for n in m["name"])
        assert all(a <= b for a, b in zip(m["startTime"], m["endTime"]))
        assert all(0 <= c < len(cats) for c in m["category"] + st["category"] + fr["category"])


def test_gecko_export_of_spans(lapse, workers_run, tmp_path):
    """--gecko: every timeline span is a marker of its thread, where the Perfetto
    export puts its slice (same clock, same base)."""
    out = tmp_path / "p.json"
    r = lapse.run("export", workers_run.run_dir, "--gecko", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    check_gecko(doc)
    trace = tmp_path / "t.json"
    assert lapse.run("export", workers_run.run_dir, "--perfetto", trace).returncode == 0
    slices = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("ph") == "X"]
    want = defaultdict(list)
    for e in slices:
        want[(str(e["pid"]), e["tid"])].append(e["ts"])
    got = {}
    for t in doc["threads"]:
        got[(t["pid"], t["tid"])] = [x * 1000 for x in t["markers"]["startTime"]]
        names = {t["stringArray"][n] for n in t["markers"]["name"]}
        assert names <= set(WORKER_PATHS) | {"spawn", "wait"}, names
    assert set(got) == set(want)
    for k in want:
        assert len(got[k]) == len(want[k])
        for a, b in zip(sorted(got[k]), sorted(want[k])):
            assert abs(a - b) < 0.01, (k, a, b)
    total = sum(len(v) for v in want.values())
    assert f"{total} span markers" in r.stderr
    r = lapse.run("export", workers_run.run_dir, "--gecko", tmp_path / "p.json.gz")
    assert r.returncode == 1 and "plain JSON" in r.stderr


def test_gecko_export_of_samples(lapse, tmp_path):
    """--gecko of a `lapse record` file: one thread per sampled thread whose samples'
    weights add up to the samples the collapsed export counts, and whose stacks
    rebuild the collapsed export's stacks (a stack with no Python frame: null)."""
    rec = tmp_path / "w.lapse"
    r = lapse.run("record", "-r", "200", "-o", rec, "--", PYTHONS[0], WORKLOAD, "1",
                  timeout=60)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "p.json"
    r = lapse.run("export", rec, "--gecko", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    check_gecko(doc)
    coll = tmp_path / "c.txt"
    assert lapse.run("export", rec, "--collapsed", coll).returncode == 0
    want = defaultdict(int)
    for line in coll.read_text().splitlines():
        if line and not line.startswith("#"):
            stack, n = line.rsplit(" ", 1)
            frames = stack.split(";")[1:]  # the thread frame first
            want[tuple(f.split(" (")[0] for f in frames)] += int(n)
    got = defaultdict(int)
    threads = [t for t in doc["threads"] if t["samples"]["length"]]
    assert threads and all(t["name"].startswith("python ") for t in threads)
    for t in threads:
        st, fr, fn, s = t["stackTable"], t["frameTable"], t["funcTable"], t["stringArray"]
        for leaf, w in zip(t["samples"]["stack"], t["samples"]["weight"]):
            names, k = [], leaf
            while k is not None:
                names.append(s[fn["name"][fr["func"][st["frame"][k]]]])
                k = st["prefix"][k]
            got[tuple(reversed(names))] += w
    assert sum(got.values()) == sum(want.values()) > 0
    assert dict(got) == dict(want)
