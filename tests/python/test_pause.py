"""Profiler.pause() / resume() and sample_every(n) (docs/python.md, "Choosing what is
measured in a long loop")."""

from __future__ import annotations

import threading

import pytest

from lapse import Profiler, span

from conftest import phases, report


def test_paused_iterations_record_nothing(tmp_path):
    with Profiler(run_dir=tmp_path, role="t") as p:
        for i in range(10):
            if i == 3:
                p.pause()
            if i == 7:
                p.resume()
            with span("step"):
                with span("inner"):
                    pass
    doc = report(p.file)
    got = phases(doc)
    assert {k: v["calls"] for k, v in got.items()} == {"step": 6, "step/inner": 6}
    assert not got["step"]["estimated"]
    assert "unmatched" not in str(doc.get("caveats"))


def test_pause_is_refused_inside_a_span_and_resume_without_pause(tmp_path):
    with Profiler(run_dir=tmp_path, role="t") as p:
        with span("outer"):
            with pytest.raises(RuntimeError, match="'outer' is open here"):
                p.pause()
        with pytest.raises(RuntimeError, match="without pause"):
            p.resume()
        p.pause()
        with pytest.raises(RuntimeError, match="already paused"):
            p.pause()
        with span("during"):
            with pytest.raises(RuntimeError, match="begun during the pause"):
                p.resume()
        p.resume()
        with span("after"):
            pass
    assert {k: v["calls"] for k, v in phases(report(p.file)).items()} == {"outer": 1, "after": 1}
    with pytest.raises(RuntimeError, match="active Profiler"):
        p.pause()


def test_a_pause_is_the_calling_threads(tmp_path):
    def worker():
        for _ in range(4):
            with span("worker"):
                pass

    with Profiler(run_dir=tmp_path, role="t") as p:
        p.pause()
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        with span("main"):
            pass
        p.resume()
    assert {k: v["calls"] for k, v in phases(report(p.file)).items()} == {"worker": 4}


def test_a_pause_ends_with_its_session(tmp_path):
    p = Profiler(run_dir=tmp_path / "a", role="t")
    with p:
        p.pause()
    p.resume()  # stopped: nothing to do
    with p:  # a new session is not paused
        with span("x"):
            pass
        with pytest.raises(RuntimeError, match="without pause"):
            p.resume()
    assert {k: v["calls"] for k, v in phases(report(p.file)).items()} == {"x": 1}


def test_sample_every_measures_one_entry_in_n(tmp_path):
    with Profiler(run_dir=tmp_path, role="t") as p:
        every10 = p.sample_every(10, "iteration")
        assert p.sample_every(10, "iteration") is every10
        for _ in range(95):  # entries 1, 11, ..., 91 measured: 10 of them
            with every10:
                with span("inner"):
                    pass
    got = phases(report(p.file))
    assert {k: (v["calls"], v["estimated"], v["sample_stride"]) for k, v in got.items()} == {
        "iteration": (100, True, 10), "iteration/inner": (100, True, 10)}
    text = p.result().__str__()
    assert "1 entry in 10" in text
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="whole number"):
            p.sample_every(bad)


def test_pause_without_spans_collected(tmp_path):
    from lapse import Feature
    with Profiler(run_dir=tmp_path, role="t", features=Feature.IO) as p:
        p.pause()
        p.resume()
