"""lapse.span in every form, nesting across threads and asyncio tasks, and the
Profiler's session rules. Counts are checked exactly from the files written."""

from __future__ import annotations

import asyncio
import threading

import pytest

import lapse
from lapse import Profiler, count, span

from conftest import phases, report


@span
def leaf(x: int) -> int:
    return x + 1


@span("forward")
def forward() -> int:
    return leaf(1)


class Model:
    @span
    def method(self, a: int) -> int:
        return a * 2

    @span
    @classmethod
    def build(cls) -> str:
        return cls.__name__

    @span
    @staticmethod
    def helper() -> int:
        return 5


def run_profiled(tmp_path, body, role: str = "t") -> dict:
    with Profiler(run_dir=tmp_path, role=role) as p:
        body()
    return phases(report(p.file))


def test_dormant_calls_straight_through():
    assert not lapse._lapse.is_active()
    assert forward() == 2
    assert Model().method(3) == 6 and Model.build() == "Model" and Model.helper() == 5
    with span("nothing") as s:
        count("ignored", 1)
    assert s is span("nothing")  # one cached object per name


def test_decorator_keeps_the_function_face():
    # the function itself (a session times it by its timed code or its vectorcall)
    assert leaf.__name__ == "leaf" and not hasattr(leaf, "__wrapped__")
    assert type(leaf) is type(lambda: None)
    assert leaf.__lapse_span__ == "leaf"
    assert forward.__lapse_span__ == "forward"
    assert "leaf" in repr(leaf)


def test_every_form_counts_exactly(tmp_path):
    def body():
        for _ in range(10):
            forward()
        m = Model()
        for _ in range(3):
            m.method(1)
            Model.build()
            m.helper()
        with span("request"):
            count("items", 3)
            count("items", 4)
            leaf(0)

    got = run_profiled(tmp_path, body)
    assert got["forward"]["calls"] == 10
    assert got["forward/leaf"]["calls"] == 10
    assert got["Model.method"]["calls"] == 3
    assert got["Model.build"]["calls"] == 3
    assert got["Model.helper"]["calls"] == 3
    assert got["request"]["calls"] == 1 and got["request/leaf"]["calls"] == 1
    items = {c["name"]: c for c in got["request"]["counters"]}["items"]
    assert items["sum"] == 7 and items["updates"] == 2
    for p in got.values():
        assert p["self_ns"] <= p["total_ns"]


def test_exceptions_pass_through_and_close_the_span(tmp_path):
    @span
    def boom():
        raise KeyError("k")

    def body():
        for _ in range(4):
            with pytest.raises(KeyError):
                boom()
        with pytest.raises(ValueError):
            with span("block"):
                raise ValueError("v")
        leaf(1)  # at top level again: nothing was left open

    got = run_profiled(tmp_path, body)
    assert got["boom"]["calls"] == 4
    assert got["block"]["calls"] == 1
    assert got["leaf"]["calls"] == 1


def test_recursion_nests(tmp_path):
    @span
    def fact(n: int) -> int:
        return 1 if n <= 1 else n * fact(n - 1)

    got = run_profiled(tmp_path, lambda: fact(4))
    assert got["fact"]["calls"] == 1
    assert got["fact/fact/fact/fact"]["calls"] == 1


def test_generators_are_timed_per_resumption(tmp_path):
    @span
    def numbers():
        yield 1
        yield 2
        return "done"

    def body():
        assert list(numbers()) == [1, 2]
        g = numbers()
        next(g)
        with span("consumer"):  # the generator's span is not open here
            pass
        g.close()

    got = run_profiled(tmp_path, body)
    assert got["numbers"]["calls"] == 4  # 3 resumptions, then 1
    assert "consumer" in got and "numbers/consumer" not in got


def test_generator_send_and_throw():
    @span
    def echo():
        received = []
        try:
            while True:
                received.append((yield len(received)))
        except RuntimeError:
            yield received

    g = echo()
    assert next(g) == 0
    assert g.send("a") == 1
    assert g.throw(RuntimeError("stop")) == ["a"]


def test_asyncio_tasks_interleave_without_mixing(tmp_path):
    @span
    async def task(name: str, delay: float) -> str:
        with span("step"):
            await asyncio.sleep(delay)
            with span("inner"):
                await asyncio.sleep(delay)
        return name

    async def main():
        return await asyncio.gather(task("a", 0.01), task("b", 0.015), task("c", 0.005))

    def body():
        assert asyncio.run(main()) == ["a", "b", "c"]

    got = run_profiled(tmp_path, body)
    assert got["task"]["calls"] == 3
    assert got["task/step"]["calls"] == 3
    assert got["task/step/inner"]["calls"] == 3
    assert not any(path.count("task") > 1 for path in got), list(got)  # no task inside another


def test_threads_nest_independently(tmp_path):
    def worker():
        for _ in range(50):
            with span("thread_work"):
                leaf(0)

    def body():
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    got = run_profiled(tmp_path, body)
    assert got["thread_work"]["calls"] == 200
    assert got["thread_work/leaf"]["calls"] == 200


def test_one_profiler_at_a_time(tmp_path):
    with Profiler(run_dir=tmp_path):
        with pytest.raises(RuntimeError, match="already active"):
            Profiler(run_dir=tmp_path).start()
    with Profiler(run_dir=tmp_path) as again:  # after stop, a new one may start
        assert again.active
    assert not again.active


def test_strict_names_missing_collectors(tmp_path):
    # (ACTIVITY where CUPTI cannot start: tests/python/test_gpu_activity.py, strict)
    p = Profiler(features=lapse.Feature.DEFAULT, run_dir=tmp_path)
    assert lapse.Feature.CPU not in p.missing
    assert lapse.Feature.MEMORY not in p.missing and lapse.Feature.IO not in p.missing


def test_bad_arguments():
    with pytest.raises(TypeError):
        span(3)
    with pytest.raises(ValueError):
        span("")
    with pytest.raises(TypeError):
        count("x", 1.5)
    with pytest.raises(TypeError):
        Profiler(features=1)


def test_unwritable_run_dir_warns_and_carries_on(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="profiling is off"):
        with Profiler(run_dir=blocker / "runs") as p:
            assert forward() == 2
    assert not p.active


def test_warm_functions_are_timed_when_a_session_starts(tmp_path):
    """A decorated function called many times while dormant (the interpreter has
    specialized its call sites) is still timed once a session starts, and is back
    to a plain call after it stops."""

    @span
    def hot(x: int) -> int:
        return x + 1

    def loop(n: int) -> int:
        total = 0
        for i in range(n):
            total += hot(i)
        return total

    loop(20_000)  # warm: specialized call sites
    with Profiler(run_dir=tmp_path) as p:
        loop(100)
    loop(20_000)  # dormant again: nothing recorded after stop
    assert phases(report(p.file))["hot"]["calls"] == 100


def test_a_run_dir_that_disappears_warns_and_the_program_goes_on(tmp_path):
    import shutil

    import lapse._lapse as core

    with Profiler(run_dir=tmp_path / "runs") as p:
        forward()
        shutil.rmtree(tmp_path / "runs")
        with pytest.warns(RuntimeWarning, match="lapse"):
            assert core.flush() is False
        assert forward() == 2  # the program carries on
    assert not p.active


def test_a_thread_whose_context_appears_mid_span(tmp_path):
    """A thread's context is created by its first ContextVar.set; spans open at that
    moment still close where they were opened."""
    import contextvars

    var: contextvars.ContextVar[int] = contextvars.ContextVar("var")

    def worker():
        with span("outer_ctx"):
            var.set(1)  # creates this thread's context
            with span("inner_ctx"):
                pass

    def body():
        t = threading.Thread(target=worker)
        t.start()
        t.join()

    got = run_profiled(tmp_path, body)
    assert got["outer_ctx"]["calls"] == 1
    assert got["outer_ctx/inner_ctx"]["calls"] == 1


def test_tasks_created_inside_a_span_nest_under_it(tmp_path):
    seen = {}

    @span
    async def child(name: str) -> None:
        with span("work"):
            await asyncio.sleep(0.005)
            seen[name] = lapse.current()

    async def main():
        with span("request"):
            await asyncio.gather(child("a"), child("b"))
        await child("after")  # no new task, no span open: top level

    got = run_profiled(tmp_path, lambda: asyncio.run(main()))
    assert got["request"]["calls"] == 1
    assert got["request/child"]["calls"] == 2
    assert got["request/child/work"]["calls"] == 2
    assert got["child/work"]["calls"] == 1
    assert seen == {"a": "request.child.work", "b": "request.child.work",
                    "after": "child.work"}


def test_cpu_feature_measures_wait(tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("LAPSE_CPU_SAMPLE_MS", "1")
    with Profiler(features=lapse.Feature.SPANS | lapse.Feature.CPU, run_dir=tmp_path) as p:
        for _ in range(60):  # enough ticks for a figure (docs/report.md, wait%)
            with span("sleepy"):
                time.sleep(0.005)
    got = phases(report(p.file))
    assert got["sleepy"]["wait_share"] is not None and got["sleepy"]["wait_share"] > 0.75
    with Profiler(features=lapse.Feature.SPANS, run_dir=tmp_path / "spans_only") as q:
        with span("x"):
            pass
    assert phases(report(q.file))["x"]["wait_share"] is None
    assert phases(report(q.file))["x"]["ticks"] == 0


def test_thread_names_nest_each_threads_spans(tmp_path):
    def learner():
        for _ in range(3):
            with span("train_step"):
                pass

    def collector():
        for _ in range(5):
            with span("drain_queue"):
                pass

    with Profiler(run_dir=tmp_path, role="learner", thread_names=True) as p:
        threads = [threading.Thread(target=learner, name="learner"),
                   threading.Thread(target=collector, name="collector")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    got = phases(report(p.file))
    assert got["learner/train_step"]["calls"] == 3
    assert got["collector/drain_queue"]["calls"] == 5
    assert got["learner"]["total_ns"] == got["learner/train_step"]["total_ns"]
