"""MARKERS from Python: every span (with, decorated, phase, asyncio tasks, threads, and
a C library's below them: one core) is also an NVTX range for the NVTX tool of
NVTX_INJECTION64_PATH, here tests/fakes/fake_nvtx_inject.c built by the test; without
a tool MARKERS is in ``missing`` (strict refuses; a tool named that does not attach
is warned about)."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import warnings

import pytest

import lapse
from lapse import Feature, Profiler

REPO = pathlib.Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent("""
    import asyncio, sys, threading
    import lapse
    from lapse import Profiler, span

    @span("decorated")
    def decorated():
        with span("inside"):
            pass

    async def task(name, first, second):
        with span(name):
            await first.wait()
            second.set()
            await asyncio.sleep(0)

    async def overlapping():
        # a begins, b begins, a ends (b still open), b ends: on one thread
        a_go, b_go = asyncio.Event(), asyncio.Event()
        ta = asyncio.ensure_future(task("task.a", a_go, b_go))
        await asyncio.sleep(0)
        tb = asyncio.ensure_future(task("task.b", b_go, a_go))
        await asyncio.sleep(0)
        a_go.set()
        await asyncio.gather(ta, tb)

    def worker():
        with span("thread.work"):
            with lapse.phase("thread.phase"):
                pass

    with Profiler(run_dir=sys.argv[1]) as p:
        with span("outer"):
            decorated()
        asyncio.run(overlapping())
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    print("missing", p.missing)
""")


@pytest.fixture(scope="module")
def nvtx_tool(tmp_path_factory) -> pathlib.Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (cc) to build the fake NVTX tool")
    out = tmp_path_factory.mktemp("nvtx") / "libfake_nvtx_inject.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", out,
                    REPO / "tests" / "fakes" / "fake_nvtx_inject.c",
                    f"-I{REPO / 'third_party'}", "-lpthread", "-ldl"], check=True)
    return out


def run_program(tmp_path, env_extra):
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAPSE_", "NVTX_", "FAKE_"))}
    env.update(env_extra)
    r = subprocess.run([sys.executable, script, tmp_path / "run"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r


def events(log_path: pathlib.Path) -> list[str]:
    """"T0 +name" / "T0 -name" per range, threads numbered in order of first range;
    each range ends on the thread it began on, and every range ends."""
    open_ranges, threads, out = {}, {}, []
    for line in log_path.read_text().splitlines():
        ev = line.split(" ", 4)
        if ev[0] == "start":
            threads.setdefault(ev[2], f"T{len(threads)}")
            assert ev[3] == "lapse", line
            open_ranges[ev[1]] = (ev[4], ev[2])
            out.append(f"{threads[ev[2]]} +{ev[4]}")
        elif ev[0] == "end":
            name, tid = open_ranges.pop(ev[1])
            assert ev[2] == tid, f"{name} began on {tid}, ended on {ev[2]}"
            out.append(f"{threads[tid]} -{name}")
        else:
            assert ev[0] in ("init", "domain"), f"a call lapse should not make: {line}"
    assert not open_ranges, open_ranges
    return out


def test_python_spans_are_nvtx_ranges(tmp_path, nvtx_tool):
    log = tmp_path / "nvtx.log"
    r = run_program(tmp_path, {"NVTX_INJECTION64_PATH": str(nvtx_tool), "FAKE_NVTX_LOG": str(log)})
    assert "MARKERS" not in r.stdout, r.stdout
    assert events(log) == [
        "T0 +outer", "T0 +decorated", "T0 +inside", "T0 -inside", "T0 -decorated", "T0 -outer",
        "T0 +task.a", "T0 +task.b", "T0 -task.a", "T0 -task.b",
        "T1 +thread.work", "T1 +thread.phase", "T1 -thread.phase", "T1 -thread.work",
    ]


def test_no_markers_without_a_tool_or_with_markers_off(tmp_path, nvtx_tool):
    r = run_program(tmp_path, {})
    assert "MARKERS" in r.stdout, r.stdout  # missing: no tool
    # a tool named but MARKERS left out: lapse makes no NVTX call at all
    log = tmp_path / "nvtx.log"
    script_env = {"NVTX_INJECTION64_PATH": str(nvtx_tool), "FAKE_NVTX_LOG": str(log)}
    prog = tmp_path / "off.py"
    prog.write_text("import sys\nfrom lapse import Feature, Profiler, span\n"
                    "with Profiler(run_dir=sys.argv[1], features=Feature.SPANS):\n"
                    "    with span('x'):\n        pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAPSE_", "NVTX_", "FAKE_"))}
    env.update(script_env)
    r = subprocess.run([sys.executable, prog, tmp_path / "run2"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not log.exists() or log.read_text() == ""


def test_markers_without_a_tool_is_missing_and_strict_refuses(tmp_path, monkeypatch):
    monkeypatch.delenv("NVTX_INJECTION64_PATH", raising=False)
    for features in (None, Feature.DEFAULT, Feature.SPANS | Feature.MARKERS):
        p = Profiler(run_dir=tmp_path, features=features)  # the default asks for MARKERS
        assert Feature.MARKERS in p.features and Feature.MARKERS in p.missing
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            with p:
                pass
        # no tool named: in missing, nothing to say (a PYTHON sampler stopped before it
        # was ready may say so: DEFAULT asks for it, and this session is short)
        assert not [w for w in said if "NVTX" in str(w.message) or "MARKERS" in str(w.message)]
    with pytest.raises(RuntimeError, match="MARKERS.*NVTX_INJECTION64_PATH"):
        Profiler(run_dir=tmp_path, strict=True).start()
    assert not lapse._lapse.is_active()


def test_a_tool_that_does_not_attach(tmp_path, nvtx_tool):
    """NVTX_INJECTION64_PATH set, but the tool declines: lapse_start leaves MARKERS out
    (with a warning), and a strict Profiler raises before it starts a session (the
    same check, lapse_check_features)."""
    prog = tmp_path / "decline.py"
    prog.write_text(textwrap.dedent("""
        import sys, warnings, lapse
        from lapse import Feature, Profiler
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            with Profiler(run_dir=sys.argv[1]) as p:
                print("missing", Feature.MARKERS in p.missing)
        print("warned", [str(w.message) for w in said])
        try:
            Profiler(run_dir=sys.argv[1], features=Feature.SPANS | Feature.MARKERS,
                     strict=True).start()  # (DEFAULT would name DEVICE first: no NVML here)
        except RuntimeError as e:
            print("strict:", e, "active:", lapse._lapse.is_active())
    """))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAPSE_", "NVTX_", "FAKE_"))}
    env.update({"NVTX_INJECTION64_PATH": str(nvtx_tool), "FAKE_NVTX_REFUSE": "1"})
    r = subprocess.run([sys.executable, prog, tmp_path / "run"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "missing True", r.stdout
    assert lines[1].startswith("warned ['lapse: no NVTX markers: no NVTX tool: "
                               "NVTX_INJECTION64_PATH="), r.stdout
    assert lines[1].endswith("did not attach']"), r.stdout
    lines = lines[1:]
    assert lines[1].startswith("strict: lapse: strict=True and these collectors cannot run here: "
                               "MARKERS (MARKERS: no NVTX tool: NVTX_INJECTION64_PATH="), r.stdout
    assert lines[1].endswith("did not attach) active: False"), r.stdout


def test_the_session_has_the_last_word_on_markers(tmp_path, nvtx_tool):
    """A Profiler made before an NVTX tool is named has MARKERS in missing; started
    once one is, it has what the session collected: MARKERS, its spans the tool's
    ranges (the check before start was only a forecast)."""
    prog = tmp_path / "later.py"
    prog.write_text(textwrap.dedent("""
        import os, sys
        from lapse import Feature, Profiler, span
        p = Profiler(run_dir=sys.argv[1], features=Feature.SPANS | Feature.MARKERS)
        print("before", Feature.MARKERS in p.missing, Feature.MARKERS in p.missing_why)
        os.environ["NVTX_INJECTION64_PATH"] = sys.argv[2]
        with p:
            with span("late"):
                pass
            print("after", Feature.MARKERS in p.missing, Feature.MARKERS in p.missing_why)
    """))
    log = tmp_path / "nvtx.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAPSE_", "NVTX_", "FAKE_"))}
    env["FAKE_NVTX_LOG"] = str(log)
    r = subprocess.run([sys.executable, prog, tmp_path / "run", nvtx_tool], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["before True True", "after False False"], r.stdout
    assert events(log) == ["T0 +late", "T0 -late"]
