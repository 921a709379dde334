"""Profiler(backend=, backend_window=(start, stop), window_phase=): a heavy profiler
(torch.profiler, VizTracer) for entries start .. stop - 1 of a span, its trace beside
the process's file, what it did in the report (BACKEND WINDOW, backend_windows); a
missing package, a window never reached, annotate=True beside it. (ACTIVITY letting
CUPTI go to a torch capture that records CUDA, the window's included, is
test_torch_profiler_cupti.py's.)"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import lapse
from conftest import needs_torch
from lapse import Feature, Profiler


# each entry i of "iteration" calls a function named entry<i> (viztracer), inside a
# record_function of that name (torch): a trace names the entries it holds
PROGRAM = textwrap.dedent("""
    import json, sys
    import lapse
    backend, run_dir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    annotate = len(sys.argv) > 4 and sys.argv[4] == "annotate"
    {blocker}
    entries = {{}}
    for i in range(1, n + 1):
        exec(f"def entry{{i}}():\\n    return {{i}}", entries)
    if backend == "torch":
        from torch.profiler import record_function
    p = lapse.Profiler(run_dir=run_dir, backend=backend, backend_window=(10, 20),
                       window_phase="iteration", annotate=annotate)
    with p:
        for i in range(1, n + 1):
            with lapse.phase("iteration"):
                if backend == "torch":
                    with record_function(f"entry{{i}}"):
                        entries[f"entry{{i}}"]()
                else:
                    entries[f"entry{{i}}"]()
    print(json.dumps({{"missing": p.backend_missing, "result": p.backend_result,
                      "report": p.result().to_dict(), "text": str(p.result())}}))
""")

BLOCK_VIZTRACER = textwrap.dedent("""
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name == "viztracer" or name.startswith("viztracer."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None
sys.meta_path.insert(0, Blocker())
""")


def run_program(tmp_path, backend: str, n: int = 30, blocker: str = "",
                extra: tuple[str, ...] = ()) -> dict:
    out = subprocess.run([sys.executable, "-c", PROGRAM.format(blocker="#BLOCKER").replace("#BLOCKER", blocker), backend,
                          str(tmp_path / "run"), str(n), *extra],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def entries_in(trace: str) -> set[int]:
    with open(trace) as f:
        doc = json.load(f)
    names = {e.get("name", "") for e in doc["traceEvents"]}
    return {int(n[5:].split()[0]) for n in names if n.startswith("entry")}


def check_window(got: dict, backend: str) -> None:
    assert got["missing"] is None
    result = got["result"]
    assert result["state"] == "done" and result["error"] is None
    # counted until it closed: past it, a span of the phase costs one load
    assert (result["opened_entry"], result["closed_entry"], result["entries"]) == (10, 20, 20)
    trace = result["trace"]
    assert os.path.basename(trace) == f"{backend}-{os.path.basename(trace).split('-')[1]}"
    assert os.path.basename(os.path.dirname(trace)) == "backend"
    assert entries_in(trace) == set(range(10, 20))
    (window,) = got["report"]["backend_windows"]
    assert window["backend"] == backend and window["phase"] == "iteration"
    assert (window["state"], window["first_entry"], window["last_entry"]) == ("closed", 10, 19)
    assert window["trace"] == trace and window["error"] is None
    assert 0 < window["open_at_ns"] < window["close_at_ns"]
    assert f"{backend} for entries 10..19 of iteration" in got["text"]
    assert f"trace {trace}" in got["text"]


def test_viztracer_window_traces_entries_10_to_19(tmp_path) -> None:
    if importlib.util.find_spec("viztracer") is None:
        pytest.fail("viztracer is not installed (requirements-dev.txt pins it)")
    check_window(run_program(tmp_path, "viztracer"), "viztracer")


def test_torch_window_traces_entries_10_to_19(tmp_path) -> None:
    needs_torch()
    check_window(run_program(tmp_path, "torch"), "torch")


def test_torch_window_with_annotate_records_the_phases_inside_it(tmp_path) -> None:
    # annotate=True and the window share the extension's one span hook: both work
    needs_torch()
    got = run_program(tmp_path, "torch", extra=("annotate",))
    check_window(got, "torch")
    with open(got["result"]["trace"]) as f:
        events = json.load(f)["traceEvents"]
    # a record_function of annotate=True per "iteration" of the window: ten
    assert sum(e.get("name") == "iteration" for e in events) == 10


def test_missing_package_runs_to_the_end_and_says_why(tmp_path) -> None:
    got = run_program(tmp_path, "viztracer", blocker=BLOCK_VIZTRACER)
    assert got["missing"].startswith("viztracer is not importable")
    assert "blocked by the test" in got["missing"]
    assert got["report"]["roles"][0]["phases"][0]["calls"] == 30  # the program ran on
    (window,) = got["report"]["backend_windows"]
    assert window["state"] == "not_run" and window["trace"] is None
    (caveat,) = [c for c in got["report"]["caveats"] if c["kind"] == "window_failed"]
    assert "viztracer is not importable" in caveat["message"]
    assert "viztracer" in got["text"] and "did not run" in got["text"]
    assert glob.glob(str(tmp_path / "run" / "**" / "backend"), recursive=True) == []


def test_window_never_reached_writes_nothing_and_says_so(tmp_path) -> None:
    got = run_program(tmp_path, "viztracer", n=7)
    assert got["missing"] is None
    assert got["result"]["state"] == "waiting" and got["result"]["trace"] == ""
    (window,) = got["report"]["backend_windows"]
    assert (window["state"], window["entries"], window["first_entry"]) == ("not_reached", 7, None)
    assert "did not open: 7 entries of iteration, fewer than 10; no trace" in got["text"]
    assert not [c for c in got["report"]["caveats"] if c["kind"] == "window_failed"]
    assert glob.glob(str(tmp_path / "run" / "**" / "backend"), recursive=True) == []


def test_a_run_that_ends_inside_the_window_writes_the_trace_at_stop(tmp_path) -> None:
    if importlib.util.find_spec("viztracer") is None:
        pytest.fail("viztracer is not installed (requirements-dev.txt pins it)")
    got = run_program(tmp_path, "viztracer", n=14)
    result = got["result"]
    assert (result["opened_entry"], result["closed_entry"], result["entries"]) == (10, 0, 14)
    assert entries_in(result["trace"]) == set(range(10, 15))
    (window,) = got["report"]["backend_windows"]
    assert (window["state"], window["first_entry"], window["last_entry"]) == ("cut", 10, 14)


def test_a_run_that_exits_inside_the_window_writes_the_trace_at_exit(tmp_path) -> None:
    if importlib.util.find_spec("viztracer") is None:
        pytest.fail("viztracer is not installed (requirements-dev.txt pins it)")
    program = textwrap.dedent("""
        import sys, lapse
        p = lapse.Profiler(run_dir=sys.argv[1], backend="viztracer", backend_window=(2, 50),
                           window_phase="step").start()
        for i in range(5):
            with lapse.phase("step"):
                pass
    """)  # never stopped: the process exits with the window open
    out = subprocess.run([sys.executable, "-c", program, str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    (trace,) = glob.glob(str(tmp_path / "run" / "**" / "backend" / "viztracer-*.json"),
                         recursive=True)
    json.load(open(trace))
    doc = lapse.Profile.load(str(tmp_path / "run")).to_dict()
    (window,) = doc["backend_windows"]
    assert (window["state"], window["first_entry"], window["last_entry"]) == ("cut", 2, 5)
    assert window["trace"] == trace


def test_entries_on_other_threads_count(tmp_path) -> None:
    import threading

    class Runner:  # stands for the package: what the C side calls, and when
        def __init__(self) -> None:
            self.calls: list[tuple[str, str]] = []

        def open(self) -> None:
            self.calls.append(("open", threading.current_thread().name))

        def close(self) -> str:
            self.calls.append(("close", threading.current_thread().name))
            return "trace.json"

    runner = Runner()
    from lapse import _backend
    original = _backend.runner, _backend.unavailable
    _backend.runner, _backend.unavailable = (lambda backend: runner), (lambda backend: None)
    try:
        with Profiler(run_dir=tmp_path, backend="viztracer", backend_window=(6, 8),
                      window_phase="iteration") as p:
            t = threading.Thread(target=lambda: [lapse.phase("iteration").__enter__().__exit__(
                None, None, None) for _ in range(5)], name="other")
            t.start()
            t.join()
            assert runner.calls == []
            for _ in range(3):
                with lapse.phase("iteration"):
                    pass
    finally:
        _backend.runner, _backend.unavailable = original
    assert runner.calls == [("open", "MainThread"), ("close", "MainThread")]
    assert (p.backend_result["opened_entry"], p.backend_result["closed_entry"]) == (6, 8)


C_ITERATIONS = r"""
#include <lapse.h>

void c_iterations(int n)
{
    for (int i = 0; i < n; i++) {
        LAPSE_SCOPE("iteration");
    }
}
"""


def test_c_spans_without_the_gil_count_and_the_next_entry_under_it_opens(tmp_path) -> None:
    # ctypes.CDLL releases the GIL around the call: the C library's entries count, and
    # the window waits for an entry on a thread that holds the GIL to open
    import shutil

    package = pathlib.Path(lapse.__file__).resolve().parent
    libs = sorted(package.glob("liblapse.so.*"))
    (tmp_path / "citer.c").write_text(C_ITERATIONS)
    lib_path = tmp_path / "libciter.so"
    repo = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([shutil.which("cc") or "gcc", "-shared", "-fPIC", "-O1", "-o", lib_path,
                    tmp_path / "citer.c", f"-I{repo / 'include'}", f"-L{package}",
                    f"-l:{libs[0].name}", f"-Wl,-rpath,{package}"], check=True)
    lib = ctypes.CDLL(str(lib_path))
    lib.c_iterations.argtypes = [ctypes.c_int]
    calls: list[str] = []

    class Runner:
        def open(self) -> None:
            calls.append("open")

        def close(self) -> str:
            calls.append("close")
            return "trace.json"

    from lapse import _backend
    original = _backend.runner, _backend.unavailable
    _backend.runner, _backend.unavailable = (lambda backend: Runner()), (lambda backend: None)
    try:
        with Profiler(run_dir=tmp_path / "run", backend="viztracer", backend_window=(3, 6),
                      window_phase="iteration") as p:
            lib.c_iterations(4)  # entries 1..4, without the GIL: 3 cannot open it
            assert calls == []
            for _ in range(3):  # 5 opens it, 6 closes it, 7 is past it
                with lapse.phase("iteration"):
                    pass
    finally:
        _backend.runner, _backend.unavailable = original
    assert calls == ["open", "close"]
    assert (p.backend_result["opened_entry"], p.backend_result["closed_entry"]) == (5, 6)


class Failing:
    """A backend that raises where asked: on open, or on close (its trace not written)."""

    def __init__(self, where: str) -> None:
        self.where = where

    def open(self) -> None:
        if self.where == "open":
            raise RuntimeError("no profiler today")

    def close(self) -> str:
        if self.where == "close":
            raise OSError(28, "No space left on device")
        return "unused.json"


@pytest.mark.parametrize("where", ["open", "close"])
def test_a_backend_that_fails_never_raises_into_the_program(tmp_path, monkeypatch, where) -> None:
    from lapse import _backend
    monkeypatch.setattr(_backend, "runner", lambda backend: Failing(where))
    monkeypatch.setattr(_backend, "unavailable", lambda backend: None)
    with Profiler(run_dir=tmp_path, backend="viztracer", backend_window=(2, 4),
                  window_phase="iteration") as p:
        for _ in range(6):
            try:
                raise KeyError("the program's own")  # an exception set while the hook runs
            except KeyError:
                with lapse.phase("iteration"):
                    pass
    assert p.backend_missing is not None
    doc = p.result().to_dict()
    (window,) = doc["backend_windows"]
    (caveat,) = [c for c in doc["caveats"] if c["kind"] == "window_failed"]
    if where == "open":
        assert p.backend_missing == "viztracer could not start: RuntimeError: no profiler today"
        assert (window["state"], window["trace"]) == ("not_run", None)
    else:
        assert p.backend_missing == ("viztracer could not write its trace: OSError: "
                                     "[Errno 28] No space left on device")
        assert (window["state"], window["first_entry"], window["last_entry"]) == ("closed", 2, 3)
        assert window["trace"] is None
    assert caveat["reason"] == p.backend_missing
    assert "wrote no trace" in caveat["message"] and "ran on without it" in caveat["message"]
    assert doc["roles"][0]["phases"][0]["calls"] == 6


def test_a_forked_child_runs_none_of_its_parents_window(tmp_path) -> None:
    if importlib.util.find_spec("viztracer") is None:
        pytest.fail("viztracer is not installed (requirements-dev.txt pins it)")
    program = textwrap.dedent("""
        import os, sys, lapse
        with lapse.Profiler(run_dir=sys.argv[1], backend="viztracer", backend_window=(3, 5),
                            window_phase="step") as p:
            with lapse.phase("step"):
                pass
            pid = os.fork()
            for i in range(6):
                with lapse.phase("step"):
                    pass
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
        print(os.getpid())
    """)
    out = subprocess.run([sys.executable, "-c", program, str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    parent = int(out.stdout.split()[-1])
    traces = glob.glob(str(tmp_path / "run" / "**" / "backend" / "*.json"), recursive=True)
    assert [os.path.basename(t) for t in traces] == [f"viztracer-{parent}.json"]
    doc = lapse.Profile.load(str(tmp_path / "run")).to_dict()
    assert [w["pid"] for w in doc["backend_windows"]] == [parent]


@pytest.mark.parametrize("kwargs, message", [
    ({"backend": "perf", "backend_window": (1, 2), "window_phase": "x"}, "unknown backend"),
    ({"backend": "torch", "backend_window": (5, 5), "window_phase": "x"}, "1 <= start < stop"),
    ({"backend": "torch", "backend_window": (-1, 5), "window_phase": "x"}, "1 <= start < stop"),
    ({"backend": "torch", "backend_window": (9, 3), "window_phase": "x"}, "1 <= start < stop"),
    ({"backend": "torch", "backend_window": (1, 2)}, "needs window_phase"),
    ({"backend": "torch", "backend_window": None, "window_phase": "x"}, "(start, stop)"),
    ({"backend_window": (1, 2), "window_phase": "x"}, "need backend="),
])
def test_a_bad_window_is_refused_at_construction(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Profiler(**kwargs)
