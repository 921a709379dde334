"""lapse.instrument and span tags (docs/python.md, "Instrument a module; tags")."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

import lapse
from lapse import Profiler, span

from conftest import lapse_command, phases, report


def fresh(name: str):
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def calls(p) -> dict[str, int]:
    return {path: ph["calls"] for path, ph in phases(report(p.file)).items()}


def test_instrument_decorates_in_place(tmp_path):
    lib = fresh("autopkg.lib")
    solve = lib.solve
    names = lapse.instrument(lib, exclude=("helper",), prefix="lib.")
    assert names == ["lib.solve", "lib.numbers", "lib.Grid.step", "lib.Grid.make", "lib.Grid.size"]
    assert lib.solve is solve  # a plain function stays itself
    assert lib.join.__module__ != "autopkg.lib" and not hasattr(lib.join, "__lapse_span__")
    with Profiler(run_dir=tmp_path, role="t") as p:
        lib.solve(3)
        lib.helper()
        assert list(lib.numbers(2)) == [0, 1]
    assert calls(p) == {"lib.solve": 1, "lib.solve/lib.Grid.step": 3, "lib.solve/lib.Grid.make": 1,
                        "lib.solve/lib.Grid.size": 1, "lib.numbers": 3}
    assert lapse.instrument(lib) == ["helper"]  # the spans already made are left alone


def test_instrument_include_by_name_and_bad_arguments():
    lib = fresh("autopkg.lib")
    assert lapse.instrument("autopkg.lib", include="Grid.*") == ["Grid.step", "Grid.make", "Grid.size"]
    with pytest.raises(TypeError, match="module"):
        lapse.instrument(3)
    with pytest.raises(TypeError, match="glob patterns"):
        lapse.instrument(lib, include=(3,))
    with pytest.raises(TypeError, match="tag"):
        lapse.instrument(lib, tag="")
    assert not hasattr(lib.solve, "__lapse_span__")  # nothing changed by a refused call


def test_opt_in_tag_spans_are_dormant_unless_enabled(tmp_path, monkeypatch):
    lib = fresh("autopkg.lib")
    lapse.instrument(lib, include=("solve", "Grid.*"), tag="optlib")
    lapse.register_opt_in_tag("optlib")
    tagged = span("tagged.block", tag="optlib")
    assert tagged.tag == "optlib" and span("x").tag is None

    def body():
        with span("outer"):
            with tagged:
                lib.solve(2)

    with Profiler(run_dir=tmp_path / "off", role="t") as p:
        body()
    assert calls(p) == {"outer": 1}
    with Profiler(run_dir=tmp_path / "on", role="t", enable_tags=("optlib",)) as q:
        body()
    assert calls(q) == {"outer": 1, "outer/tagged.block": 1, "outer/tagged.block/solve": 1,
                        "outer/tagged.block/solve/Grid.step": 2,
                        "outer/tagged.block/solve/Grid.make": 1,
                        "outer/tagged.block/solve/Grid.size": 1}
    monkeypatch.setenv("LAPSE_ENABLE_TAGS", "other, optlib")
    with Profiler(run_dir=tmp_path / "env", role="t") as r:
        body()
    assert calls(r) == calls(q)


def test_a_tag_opted_out_during_a_session_goes_dormant_at_once(tmp_path):
    lib = fresh("autopkg.lib")
    lapse.instrument(lib, include=("helper",), tag="latelib")
    with Profiler(run_dir=tmp_path, role="t") as p:
        lib.helper()
        lapse.register_opt_in_tag("latelib")
        lib.helper()
        with span("late", tag="latelib"):
            pass
    assert calls(p) == {"helper": 1}


def test_lapse_run_enable_tag(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("import lapse\nlapse.register_opt_in_tag('runlib')\n"
                      "with lapse.span('work', tag='runlib'):\n    pass\n")
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.abspath(__file__))}
    for extra, want in (([], {}), (["--enable-tag", "runlib"], {"work": 1})):
        out = tmp_path / f"run{len(extra)}"
        r = subprocess.run([lapse_command(), "run", "-q", "--no-python", *extra, "-o", str(out),
                            str(script)], capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        doc = report(out)
        got = {p["path"]: p["calls"] for role in doc["roles"] for p in role["phases"]}
        assert got == want


def test_bad_tags_are_refused():
    with pytest.raises(TypeError, match="tag"):
        span("x", tag=3)
    with pytest.raises(TypeError, match="tag"):
        lapse.register_opt_in_tag("")
    with pytest.raises(TypeError, match="enable_tags"):
        Profiler(enable_tags=("",))
