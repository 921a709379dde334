"""pytest --lapse: one lapse span per test phase, and the slowest tests at the end.

Registered as a pytest plugin (the ``pytest11`` entry point of the package):

    pytest --lapse [--lapse-top N] [--lapse-dir DIR]

Each test is a top-level span named after its node id, with a child span per phase
(``setup``, ``call``, ``teardown``); after the run the terminal summary lists the
slowest tests by total time and their phases, from the run's report model
(``Profile.stats()``), and says where the run is (``lapse report DIR``).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Any, Iterator

import pytest

PHASES = ("setup", "call", "teardown")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("lapse", "lapse profiler")
    group.addoption("--lapse", action="store_true", default=False,
                    help="record one lapse span per test phase (setup, call, teardown) and "
                         "print the slowest tests")
    group.addoption("--lapse-top", type=int, default=10, metavar="N",
                    help="how many of the slowest tests --lapse prints (default 10)")
    group.addoption("--lapse-dir", default=None, metavar="DIR",
                    help="where --lapse writes its run (default: $LAPSE_RUN_DIR, else a new "
                         "temporary directory)")


def pytest_configure(config: Any) -> None:
    if not config.getoption("lapse"):
        return
    top = config.getoption("lapse_top")
    if top < 1:
        raise pytest.UsageError(f"--lapse-top needs a whole number >= 1 (got {top})")
    config.pluginmanager.register(_Recorder(config, top), "lapse-recorder")


def _span(name: str) -> Any:
    from lapse import span

    with warnings.catch_warnings():  # test ids are names from data by design
        warnings.simplefilter("ignore", RuntimeWarning)
        return span(name)


class _Recorder:
    def __init__(self, config: Any, top: int):
        from lapse import Profiler

        run_dir = config.getoption("lapse_dir") or os.environ.get("LAPSE_RUN_DIR") or \
            tempfile.mkdtemp(prefix="lapse-pytest-")
        self.profiler = Profiler(role="pytest", run_dir=run_dir)
        self.top = top

    def pytest_sessionstart(self, session: Any) -> None:
        self.profiler.start()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Iterator[None]:
        with _span(item.nodeid):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: Any) -> Iterator[None]:
        with _span("setup"):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: Any) -> Iterator[None]:
        with _span("call"):
            yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: Any, nextitem: Any) -> Iterator[None]:
        with _span("teardown"):
            yield

    def pytest_sessionfinish(self, session: Any) -> None:
        self.profiler.stop()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        if self.profiler.file is None:
            tr.write_line("lapse: no run was recorded (the session could not start)")
            return
        stats = self.profiler.result().stats()
        tests = {s.names: s for s in stats.values() if s.depth == 1}
        phases = {s.names: s for s in stats.values() if s.depth == 2}
        slowest = sorted(tests.values(), key=lambda s: -s.total_ns)[:self.top]
        run = os.path.dirname(os.path.dirname(self.profiler.file))
        tr.write_sep("=", f"lapse: the {len(slowest)} slowest of {len(tests)} tests")
        tr.write_line(f"{'total':>10} {'setup':>10} {'call':>10} {'teardown':>10}  test")
        for t in slowest:
            cells = []
            for phase in PHASES:
                p = phases.get((*t.names, phase))
                cells.append(_seconds(p.total_ns) if p else "-")
            tr.write_line(f"{_seconds(t.total_ns):>10} " + " ".join(f"{c:>10}" for c in cells) +
                          f"  {t.names[0]}")
        tr.write_line(f"lapse: the run is in {run} (lapse report {run})")


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:.3f}s" if ns >= 1e8 else f"{ns / 1e6:.2f}ms"
