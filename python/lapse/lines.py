"""lapse.LineProfiler: hits and time per line of your project's code.

    from lapse import LineProfiler

    with LineProfiler() as profiler:          # the project: up to the nearest .git
        with profiler.region("select"):       # line statistics partitioned by region
            select()
        train()
    profiler.print_stats()
    profiler.print_global_top_stats(top_n=20)
    profiler.to_html("lines.html")

The engine is C (lapse._lapse.lines_*): sys.monitoring events on the chosen code
objects only (3.12+), a C trace function on 3.11. This module finds the code objects
(the project's modules already imported, the frames running the block, the modules
imported inside it) and reads their source; the figures and the outputs are C too
(lapse._lapse.lines_figures and lines_render: src/analyze/line_stats.c and
src/render/line_stats_*.c).
"""

from __future__ import annotations

import contextlib
import linecache
import os
import sys
import sysconfig
import types
from dataclasses import dataclass
from typing import IO, Any, Iterator, Union

from . import _lapse
from ._imports import ImportHook, functions_of

StrPath = Union[str, "os.PathLike[str]"]
_owner: LineProfiler | None = None  # the profiler whose counts the engine holds
_LAPSE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclass(frozen=True)
class LineStats:
    """One line of one function in one region: times run, and time billed to it
    (nanoseconds, inclusive of the functions it called), in microseconds, per hit
    (None: no hit) and as a percentage of the function's time. The figures are
    computed in C (src/analyze/line_stats.c)."""

    lineno: int
    hits: int
    time_ns: int
    time_us: float
    per_hit_us: float | None
    share: float
    source: str


@dataclass(frozen=True)
class FunctionStats:
    """The lines of one code object that ran in one region (None: outside every
    region), in source order. total_ns is the sum of its lines' times."""

    name: str
    filename: str
    first_line: int
    region: str | None
    total_ns: int
    lines: tuple[LineStats, ...]


def find_project_root(start: StrPath) -> str:
    """The nearest folder at or above `start` (a file or folder) holding `.git`; the
    folder of `start` itself when there is none."""
    path = os.path.abspath(os.fspath(start))
    here = path if os.path.isdir(path) else os.path.dirname(path)
    probe = here
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def _excluded_dirs() -> tuple[str, ...]:
    dirs = {_LAPSE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path) + os.sep)
    return tuple(dirs)


class LineProfiler:
    """Hits and time per line of the code under the folder `root` (default: the
    nearest folder holding `.git` above the file that creates the profiler), while
    active.

    Traced: the functions, methods, closures and class bodies of project modules
    already imported, the frames that run the block itself, and project modules
    imported inside the block (their module code too). Not traced: the standard
    library, site-packages, lapse itself, and code compiled at run time (exec of a
    string). One LineProfiler is active per process at a time; start it again and
    it adds to what it counted (clear() forgets)."""

    def __init__(self, root: StrPath | None = None):
        if root is None:
            caller = sys._getframe(1).f_code.co_filename
            self.root = find_project_root(caller if os.path.exists(caller) else os.getcwd())
        elif not os.path.isdir(os.fspath(root)):
            raise ValueError(f"LineProfiler: root {os.fspath(root)!r} is not a folder")
        else:
            self.root = os.path.abspath(os.fspath(root))
        self._prefix = os.path.join(self.root, "")
        self._excluded = tuple(d for d in _excluded_dirs() if not self._prefix.startswith(d))
        self._hook: ImportHook | None = None
        self._known: dict[str, bool] = {}
        self._active = False
        # what the engine counted for this profiler, kept (in C) while another one has it
        self._kept: object | None = None

    # -- what is traced --

    def _is_project_file(self, filename: str) -> bool:
        known = self._known.get(filename)
        if known is None:
            path = os.path.abspath(filename)
            known = (not filename.startswith("<")  # <frozen runpy>, <string>, <stdin>
                     and path.startswith(self._prefix) and not path.startswith(self._excluded)
                     and os.sep + "site-packages" + os.sep not in path)
            self._known[filename] = known
        return known

    def add_code(self, code: types.CodeType) -> None:
        """Traces one more code object (and those nested in it), wherever it lives."""
        _lapse.lines_add_code(code)

    def _add_function(self, fn: Any) -> None:
        code = getattr(fn, "__code__", None)
        if isinstance(code, types.CodeType) and self._is_project_file(code.co_filename):
            _lapse.lines_add_code(code)

    def _add_loaded(self) -> None:
        seen: set[int] = set()
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str) and self._is_project_file(filename):
                for fn in functions_of(list(vars(module).values()), seen):
                    self._add_function(fn)
        frame: types.FrameType | None = sys._getframe()
        while frame is not None:
            if self._is_project_file(frame.f_code.co_filename):
                _lapse.lines_add_code(frame.f_code)
            frame = frame.f_back

    # -- control --

    def start(self) -> LineProfiler:
        global _owner
        if self._active:
            raise RuntimeError("LineProfiler: this profiler is already active")
        self._add_loaded()
        _lapse.lines_enable()  # raises while another profiler is active
        if _owner is not self:  # the engine's counts become this profiler's
            kept = _lapse.lines_take()
            if _owner is not None:
                _owner._kept = kept
            if self._kept is not None:
                _lapse.lines_give(self._kept)
                self._kept = None
            _owner = self
        self._active = True
        self._hook = ImportHook(
            lambda name, spec: bool(spec.origin) and self._is_project_file(spec.origin),
            on_code=_lapse.lines_add_code)
        self._hook.install()
        return self

    def stop(self) -> None:
        """Stops counting (a profiler not active: nothing to do)."""
        if not self._active:
            return
        self._active = False
        _lapse.lines_disable()
        if self._hook is not None:
            self._hook.remove()
            self._hook = None

    def __enter__(self) -> LineProfiler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @contextlib.contextmanager
    def region(self, name: str) -> Iterator[None]:
        """Lines that start inside the block count under `name` (per thread; regions
        nest, the innermost counts)."""
        previous = _lapse.lines_region(name)
        try:
            yield
        finally:
            _lapse.lines_region(previous)

    def clear(self) -> None:
        """Forgets every hit and time counted so far."""
        if _owner is self:
            _lapse.lines_clear()
        self._kept = None

    reset = clear

    # -- results --

    @property
    def lost_events(self) -> int:
        """Events not counted (a line outside its code object's lines, or no memory
        for a thread's stack); the printed statistics say so when there are any."""
        if _owner is self:
            return _lapse.lines_lost()
        return 0 if self._kept is None else _lapse.lines_lost(self._kept)

    def _rows(self) -> tuple[list, dict[str, tuple[str, list[str]]]]:
        """The engine's rows and, per file, its display name and source lines: what
        the C model (lapse._lapse.lines_figures / lines_render) is made of."""
        if _owner is self:
            rows = _lapse.lines_stats()
        else:
            rows = [] if self._kept is None else _lapse.lines_stats(self._kept)
        files: dict[str, tuple[str, list[str]]] = {}
        for row in rows:
            filename = row[1].co_filename
            if filename not in files:
                files[filename] = (self._display_name(filename),
                                   [line.rstrip("\n") for line in linecache.getlines(filename)])
        return rows, files

    def get_stats(self) -> list[FunctionStats]:
        """Every function (code object) with a line run, per region, in source order:
        by file, first line, then region (outside every region first)."""
        return [FunctionStats(name, filename, first_line, region, total,
                              tuple(LineStats(*line) for line in lines))
                for name, filename, first_line, region, total, lines
                in _lapse.lines_figures(*self._rows())]

    def _display_name(self, filename: str) -> str:
        path = os.path.abspath(filename)
        return os.path.relpath(path, self.root) if path.startswith(self._prefix) else filename

    def print_stats(self, min_time_us: float = 0.0, top_n_lines: int | None = None,
                    sort_by: str = "line", file: IO[str] | None = None) -> None:
        """Per function in source order: each line's hits, time, time per hit and
        share of the function's time. sort_by "time" or "hits" orders the lines of
        each function that way; top_n_lines keeps the first N of them."""
        (sys.stdout if file is None else file).write(_lapse.lines_render(
            *self._rows(), "stats", min_time_us, top_n_lines, sort_by, self.lost_events))

    def print_global_top_stats(self, top_n: int = 20, min_time_us: float = 0.0,
                               sort_by: str = "time", file: IO[str] | None = None) -> None:
        """The top_n lines of every function and region together, by time (or hits,
        or source order with sort_by="line")."""
        (sys.stdout if file is None else file).write(_lapse.lines_render(
            *self._rows(), "top", min_time_us, top_n, sort_by, self.lost_events))

    def to_html(self, path: StrPath) -> None:
        """Writes one self-contained HTML page: each function's whole source, every
        line that ran shaded by its time (the hottest line of the page darkest)."""
        page = _lapse.lines_render(*self._rows(), "html")
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(page)
        os.replace(tmp, path)
