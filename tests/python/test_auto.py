"""Automatic spans: Profiler(auto=...) and lapse run --auto (docs/python.md,
"Automatic spans"). tests/python/autopkg holds modules of known calls."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

from lapse import Profiler, span

from conftest import lapse_command, phases, report

MONITORING = sys.version_info >= (3, 12)


def fresh(name: str):
    """The module imported anew (its functions new objects)."""
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]
    return importlib.import_module(name)


def expected(n: int) -> dict[str, int]:
    calls = {"run": 1, "run/leaf": n, "run/Worker.step": n, "run/Worker.step/leaf": n,
             "run/fails": 1}
    if MONITORING:  # a generator: one span per run between resumes (n + 1)
        calls["run/gen"] = n + 1
    return calls


def test_known_calls_are_counted_exactly(tmp_path):
    known = fresh("autopkg.known")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Profiler(run_dir=tmp_path, role="t", auto=("autopkg.known",)) as p:
            known.run(10)
    got = {path: ph["calls"] for path, ph in phases(report(p.file)).items()}
    assert got == expected(10)
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    if MONITORING:
        assert said == []
    else:  # 3.11: generators are not timed, and that is said
        assert said == ["lapse: auto spans on Python 3.11 do not time generator and coroutine "
                        "functions: autopkg.known.gen"]


def test_a_module_imported_inside_the_profiler_is_chosen(tmp_path):
    for key in [k for k in sys.modules if k.startswith("autopkg")]:
        del sys.modules[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with Profiler(run_dir=tmp_path, role="t", auto=("autopkg",)) as p:
            from autopkg import known, other
            known.run(3)
            other.outside(1)
    got = {path: ph["calls"] for path, ph in phases(report(p.file)).items()}
    assert got == {**expected(3), "outside": 1}  # a package: its submodules too


def test_modules_not_chosen_and_other_sessions_are_untouched(tmp_path):
    known = fresh("autopkg.known")
    other = fresh("autopkg.other")
    own_code = known.leaf.__code__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with Profiler(run_dir=tmp_path / "a", role="t", auto=("autopkg.known",)) as p:
            other.outside(2)
            with span("block"):
                known.leaf(1)
    assert set(phases(report(p.file))) == {"block", "block/leaf"}
    assert known.leaf.__code__ is own_code  # 3.11: its own code again
    if MONITORING:
        assert all(sys.monitoring.get_tool(i) != "lapse auto" for i in range(6))
    with Profiler(run_dir=tmp_path / "b", role="t") as q:  # off: no auto span
        with span("block"):
            known.run(2)
    assert set(phases(report(q.file))) == {"block"}


def test_a_decorated_function_is_one_span(tmp_path):
    mod = fresh("autopkg.other")
    mod.outside = span(mod.outside)
    with Profiler(run_dir=tmp_path, role="t", auto=("autopkg.other",)) as p:
        mod.outside(3)
    assert {k: v["calls"] for k, v in phases(report(p.file)).items()} == {"outside": 1}


def test_a_function_running_at_start_is_no_span_and_no_unmatched_end(tmp_path):
    known = fresh("autopkg.known")

    def body_in_known():  # stands for a chosen function that starts the profiler
        with Profiler(run_dir=tmp_path, role="t", auto=("autopkg.known",)) as p:
            known.leaf(1)
        return p

    known.starter = body_in_known
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = known.starter()
    doc = report(p.file)
    assert {k: v["calls"] for k, v in phases(doc).items()} == {"leaf": 1}
    assert not [c for c in doc.get("caveats", []) if "unmatched" in str(c)]


def test_bad_auto_options_are_refused():
    from lapse import Feature
    with pytest.raises(ValueError, match="not a module name"):
        Profiler(auto=("pkg..mod",))
    with pytest.raises(TypeError, match="module names"):
        Profiler(auto=3)
    with pytest.raises(ValueError, match="need Feature.SPANS"):
        Profiler(auto="pkg", features=Feature.IO)


def test_lapse_run_auto(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("from autopkg import known\nknown.run(4)\n")
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": here}
    r = subprocess.run([lapse_command(), "run", "-q", "--no-python", "--auto", "autopkg.known",
                        "-o", str(tmp_path / "run"), str(script)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    got = {path: ph["calls"] for path, ph in phases(report(tmp_path / "run")).items()}
    assert got == expected(4)
    r = subprocess.run([lapse_command(), "run", "--no-spans", "--auto", "x", str(script)],
                       capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 2 and "--auto makes spans" in r.stderr


@pytest.mark.skipif(not MONITORING, reason="sys.monitoring is 3.12+ (3.11 uses timed code)")
def test_no_free_monitoring_tool_refuses_the_start(tmp_path):
    import lapse
    taken = []
    for i in range(2, 6):
        if sys.monitoring.get_tool(i) is None:
            sys.monitoring.use_tool_id(i, "someone else")
            taken.append(i)
    try:
        p = Profiler(run_dir=tmp_path, role="t", auto=("autopkg.known",))
        with pytest.raises(RuntimeError, match="tools 2 to 5 are all in use"):
            p.start()
        assert not p.active and not lapse._lapse.is_active()
    finally:
        for i in taken:
            sys.monitoring.free_tool_id(i)
    known = fresh("autopkg.known")
    with Profiler(run_dir=tmp_path / "b", role="t", auto=("autopkg.known",)) as q:
        known.leaf(1)
    assert {k: v["calls"] for k, v in phases(report(q.file)).items()} == {"leaf": 1}


def test_a_coroutine_is_a_span_per_run_between_resumes(tmp_path):
    import asyncio
    aio = fresh("autopkg.aio")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with Profiler(run_dir=tmp_path, role="t", auto=("autopkg.aio",)) as p:
            assert asyncio.run(aio.work()) == 1
    got = {k: v["calls"] for k, v in phases(report(p.file)).items()}
    if MONITORING:
        assert got == {"work": 3}
    else:
        assert got == {} and any("autopkg.aio.work" in str(w.message) for w in caught)
