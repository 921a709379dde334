"""lapse.LineProfiler and `lapse lines`: exact hits, inclusive time, threads,
generators, regions, only project code, outputs. Each target runs in a fresh
interpreter in its own project folder (tmp_path, marked by a .git folder)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conftest import lapse_command

# a target's epilogue: its line statistics as JSON on stdout
DUMP = textwrap.dedent("""
    import json as _json
    assert profiler.lost_events == 0, profiler.lost_events
    print("STATS" + _json.dumps([
        {"name": f.name, "file": f.filename, "region": f.region, "total_ns": f.total_ns,
         "lines": {l.lineno: [l.hits, l.time_ns] for l in f.lines}}
        for f in profiler.get_stats()]))
""")


def run_target(tmp_path, source: str, *, files: dict[str, str] | None = None) -> list[dict]:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    for name, text in (files or {}).items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(textwrap.dedent(text))
    script = project / "main.py"
    script.write_text(textwrap.dedent(source) + DUMP)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120, cwd=project)
    assert r.returncode == 0, r.stderr
    line = [x for x in r.stdout.splitlines() if x.startswith("STATS")][-1]
    return json.loads(line[5:])


def function(stats: list[dict], name: str, region: str | None = None,
             file: str = "main.py") -> dict[int, list[int]]:
    found = [f for f in stats if f["name"] == name and f["region"] == region
             and (name != "<module>" or f["file"].endswith(file))]
    assert len(found) == 1, [(f["name"], f["region"]) for f in stats]
    return {int(k): v for k, v in found[0]["lines"].items()}


def hits(lines: dict[int, list[int]]) -> dict[int, int]:
    return {n: h for n, (h, _) in lines.items() if h}


KNOWN = """\
from lapse import LineProfiler
import helper


def work(n):
    total = 0
    for i in range(n):
        total += helper.double(i)
    return total


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


def closure():
    k = 3
    def inner(x):
        return x + k
    return [inner(i) for i in range(4)]


with LineProfiler() as profiler:
    work(5)
    Box(2).get()
    closure()
    import later
    later.go(3)
"""


def test_hit_counts_are_exact(tmp_path):
    stats = run_target(tmp_path, KNOWN, files={
        "helper.py": "def double(x):\n    return 2 * x\n",
        "later.py": "X = 1\n\n\ndef go(n):\n    for _ in range(n):\n        pass\n",
    })
    assert hits(function(stats, "work")) == {6: 1, 7: 6, 8: 5, 9: 1}
    assert hits(function(stats, "double")) == {2: 5}  # a module imported before
    assert hits(function(stats, "Box.__init__")) == {14: 1}
    assert hits(function(stats, "Box.get")) == {17: 1}
    assert hits(function(stats, "closure")) == {21: 1, 22: 1, 24: 1}
    assert hits(function(stats, "closure.<locals>.inner")) == {23: 4}
    # a module imported inside the block: its module code and its functions
    assert hits(function(stats, "go")) == {5: 4, 6: 3}
    assert hits(function(stats, "<module>"))[28] == 1  # the block itself
    assert hits(function(stats, "<module>", file="later.py")) == {1: 1, 4: 1}


def test_only_project_code_is_traced(tmp_path):
    stats = run_target(tmp_path, """\
        import json, os
        from lapse import LineProfiler

        def mine():
            return json.dumps({"a": os.path.join("x", "y")})

        with LineProfiler() as profiler:
            mine()
    """)
    files = {f["file"] for f in stats}
    assert files and all(f.endswith("main.py") for f in files), files
    assert hits(function(stats, "mine")) == {5: 1}


def test_calling_line_is_billed_inclusively(tmp_path):
    stats = run_target(tmp_path, """\
        import time
        from lapse import LineProfiler

        def nap():
            time.sleep(0.05)

        def caller():
            nap()
            x = 1
            return x

        with LineProfiler() as profiler:
            caller()
    """)
    lines = function(stats, "caller")
    assert lines[8][1] >= 50_000_000  # the line that calls nap()
    assert lines[9][1] < 5_000_000
    assert function(stats, "nap")[5][1] >= 50_000_000


def test_threads_have_their_own_frames(tmp_path):
    stats = run_target(tmp_path, """\
        import threading, time
        from lapse import LineProfiler

        def worker(n):
            total = 0
            for i in range(n):
                total += i
            time.sleep(0.05)
            return total

        with LineProfiler() as profiler:
            threads = [threading.Thread(target=worker, args=(10,)) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    """)
    lines = function(stats, "worker")
    assert hits(lines) == {5: 4, 6: 44, 7: 40, 8: 4, 9: 4}
    # four sleeps of 50 ms, each billed to its own thread's line once
    assert 200_000_000 <= lines[8][1] < 400_000_000


def test_threads_that_overlap_out_of_order(tmp_path):
    # spinner starts first and ends last, sleeper starts later and ends first: one stack
    # for both threads would lose sleeper's line to spinner's frames
    stats = run_target(tmp_path, """\
        import threading, time
        from lapse import LineProfiler

        def spinner():
            for _ in range(3):
                time.sleep(0.1)

        def sleeper():
            time.sleep(0.1)
            return 1

        with LineProfiler() as profiler:
            a = threading.Thread(target=spinner)
            b = threading.Thread(target=sleeper)
            a.start()
            time.sleep(0.03)
            b.start()
            b.join()
            a.join()
    """)
    assert hits(function(stats, "spinner")) == {5: 4, 6: 3}
    assert 300_000_000 <= function(stats, "spinner")[6][1] < 500_000_000
    assert hits(function(stats, "sleeper")) == {9: 1, 10: 1}
    assert 100_000_000 <= function(stats, "sleeper")[9][1] < 250_000_000


def test_thread_started_before_the_profiler(tmp_path):
    stats = run_target(tmp_path, """\
        import threading
        from lapse import LineProfiler

        go, done = threading.Event(), threading.Event()

        def work(n):
            return sum(range(n))

        def loop():
            go.wait()
            work(10)
            work(20)
            done.set()

        t = threading.Thread(target=loop)
        t.start()
        with LineProfiler() as profiler:
            go.set()
            done.wait()
        t.join()
    """)
    assert hits(function(stats, "work")) == {7: 2}


def test_suspended_generator_is_not_billed(tmp_path):
    stats = run_target(tmp_path, """\
        import time
        from lapse import LineProfiler

        def produce(n):
            for i in range(n):
                yield i
                time.sleep(0.01)

        def consume():
            for v in produce(3):
                time.sleep(0.1)

        with LineProfiler() as profiler:
            consume()
    """)
    lines = function(stats, "produce")
    assert hits(lines) == {5: 4, 6: 3, 7: 3}
    # three sleeps of 10 ms; the 300 ms the consumer sleeps while it is suspended are not its
    assert 30_000_000 <= lines[7][1] < 150_000_000
    assert lines[6][1] < 50_000_000
    consume = function(stats, "consume")
    assert consume[11][1] >= 300_000_000


def test_exception_unwinds_the_frame(tmp_path):
    stats = run_target(tmp_path, """\
        import time
        from lapse import LineProfiler

        def fail():
            raise ValueError("x")

        def caller():
            try:
                fail()
            except ValueError:
                time.sleep(0.03)
            return 1

        with LineProfiler() as profiler:
            caller()
    """)
    assert hits(function(stats, "fail")) == {5: 1}
    lines = function(stats, "caller")
    assert lines[11][1] >= 30_000_000  # billed to caller's line, not to the dead frame of fail
    assert function(stats, "fail")[5][1] < 20_000_000


def test_regions_partition_the_lines(tmp_path):
    stats = run_target(tmp_path, """\
        from lapse import LineProfiler

        def step(n):
            for _ in range(n):
                pass

        with LineProfiler() as profiler:
            step(2)
            with profiler.region("select"):
                step(3)
                step(1)
            with profiler.region("train"):
                step(5)
    """)
    assert hits(function(stats, "step")) == {4: 3, 5: 2}
    assert hits(function(stats, "step", "select")) == {4: 6, 5: 4}
    assert hits(function(stats, "step", "train")) == {4: 6, 5: 5}


PRINTED = """\
import sys
from lapse import LineProfiler

def hot():
    s = 0
    for i in range(2000):
        s += i * i
    return s

with LineProfiler() as profiler:
    hot()
profiler.print_stats()
profiler.print_global_top_stats(top_n=2)
profiler.to_html(sys.argv[1])
"""


def test_print_and_html_outputs(tmp_path):
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / "job.py").write_text(PRINTED)
    page = tmp_path / "lines.html"
    r = subprocess.run([sys.executable, str(project / "job.py"), str(page)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "hot at job.py:4" in out
    table = out[out.index("hot at job.py:4"):out.index("Where / Source")]
    rows = [row.split() for row in table.splitlines()[2:] if row.strip()[:1].isdigit()]
    assert [int(row[0]) for row in rows] == [5, 6, 7, 8]
    assert [int(row[1]) for row in rows] == [1, 2001, 2000, 1]
    assert "2000" in table and "s += i * i" in table
    top = out[out.index("Where / Source"):].splitlines()[1:]
    assert len(top) == 2 and any("job.py:7 hot" in row or "job.py:6 hot" in row for row in top)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "s += i * i" in text
    assert "rgba(220,40,20," in text and "<script" not in text and "http" not in text


FIGURES = """\
import json, sys
from lapse import LineProfiler

def hot():
    s = 0
    for i in range(3000):
        s += i * i
    return s

with LineProfiler() as profiler:
    hot()
for bad in (lambda: profiler.print_stats(top_n_lines=-1),
            lambda: profiler.print_global_top_stats(top_n=-2)):
    try:
        bad()
    except ValueError as e:
        print("REFUSED", e)
(f,) = [f for f in profiler.get_stats() if f.name == "hot"]
print("FIGURES" + json.dumps([f.total_ns, [[l.lineno, l.hits, l.time_ns, l.time_us, l.per_hit_us,
                                             l.share] for l in f.lines]]))
"""


def test_get_stats_figures_are_the_models(tmp_path):
    # time_us, per_hit_us and share come from the C model (src/analyze/line_stats.c)
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / "job.py").write_text(FIGURES)
    r = subprocess.run([sys.executable, str(project / "job.py")], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("REFUSED top_n must be None or at least 0") == 2, r.stdout
    total, lines = json.loads(r.stdout.split("FIGURES")[1])
    assert [(n, hits) for n, hits, *_ in lines] == [(5, 1), (6, 3001), (7, 3000), (8, 1)]
    assert sum(ns for _, _, ns, *_ in lines) == total > 0
    for _, hits, ns, us, per_hit, share in lines:
        assert us == ns / 1e3 and per_hit == us / hits
        assert share == 100.0 * ns / total
    assert abs(sum(line[5] for line in lines) - 100.0) < 1e-9


def test_sort_is_checked(tmp_path):
    from lapse import LineProfiler
    with pytest.raises(ValueError, match="sort_by"):
        LineProfiler(root=tmp_path).print_stats(sort_by="speed")
    with pytest.raises(ValueError, match="not a folder"):
        LineProfiler(root=tmp_path / "missing")


def test_one_profiler_at_a_time(tmp_path):
    from lapse import LineProfiler
    first, second = LineProfiler(root=tmp_path), LineProfiler(root=tmp_path)
    with first:
        with pytest.raises(RuntimeError, match="another LineProfiler"):
            second.start()
        with pytest.raises(RuntimeError, match="already active"):
            first.start()
        second.stop()  # not active: nothing to do, and first goes on
        assert first._active


def test_each_profiler_keeps_its_own_counts(tmp_path):
    stats = run_target(tmp_path, """\
        from lapse import LineProfiler

        def f(n):
            for _ in range(n):
                pass

        first = LineProfiler()
        with first:
            f(2)
        second = LineProfiler()
        with second:
            f(5)
        with first:  # started again: adds to its own counts
            f(1)
        assert {l.lineno: l.hits for s in second.get_stats() if s.name == "f"
                for l in s.lines} == {4: 6, 5: 5}
        profiler = first
    """)
    assert hits(function(stats, "f")) == {4: 5, 5: 3}


def test_lapse_lines_command(tmp_path):
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / "util.py").write_text("def twice(x):\n    return 2 * x\n")
    (project / "job.py").write_text(textwrap.dedent("""\
        import sys
        import util

        def main(n):
            return sum(util.twice(i) for i in range(n))

        print("result", main(int(sys.argv[1])))
    """))
    page = tmp_path / "out.html"
    r = subprocess.run([lapse_command(), "lines", "--html", str(page), str(project / "job.py"),
                        "7"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "result 42" in r.stdout
    assert "twice at util.py:1" in r.stderr and "main at job.py:4" in r.stderr
    twice = r.stderr[r.stderr.index("twice at util.py:1"):].splitlines()[2]
    assert twice.split()[:2] == ["2", "7"]
    assert page.exists()
    # -m: a module of the working directory, its project found from there
    r = subprocess.run([lapse_command(), "lines", "--top", "1", "-m", "job", "3"],
                       capture_output=True, text=True, timeout=120, cwd=project)
    assert r.returncode == 0, r.stderr
    assert "result 6" in r.stdout
    top = r.stderr.splitlines()
    assert len(top) == 2 and top[1].split()[0] == "1" and " job.py:" in top[1], top
    r = subprocess.run([lapse_command(), "lines", str(tmp_path / "nope.py")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.strip() == f"lapse lines: {tmp_path / 'nope.py'}: no such file"
    r = subprocess.run([lapse_command(), "lines", "--bogus", "x.py"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
