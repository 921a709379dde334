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
imported inside it) and formats what the engine counted.
"""

from __future__ import annotations

import contextlib
import html
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
_SORTS = ("line", "time", "hits")
_owner: LineProfiler | None = None  # the profiler whose counts the engine holds
_LAPSE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclass(frozen=True)
class LineStats:
    """One line of one function in one region: times run, and time billed to it
    (nanoseconds, inclusive of the functions it called)."""

    lineno: int
    hits: int
    time_ns: int
    source: str

    @property
    def time_us(self) -> float:
        return self.time_ns / 1e3


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

    def get_stats(self) -> list[FunctionStats]:
        """Every function (code object) with a line run, per region, in source order:
        by file, first line, then region (outside every region first)."""
        out = []
        if _owner is self:
            rows = _lapse.lines_stats()
        else:
            rows = [] if self._kept is None else _lapse.lines_stats(self._kept)
        for region, code, first_line, lines, total in rows:
            filename = code.co_filename
            out.append(FunctionStats(
                name=code.co_qualname if hasattr(code, "co_qualname") else code.co_name,
                filename=filename, first_line=first_line, region=region or None,
                total_ns=total,
                lines=tuple(LineStats(n, hits, ns, linecache.getline(filename, n).rstrip("\n"))
                            for n, hits, ns in lines)))
        out.sort(key=lambda f: (f.filename, f.first_line, f.region or "", f.name))
        return out

    def _display_name(self, filename: str) -> str:
        path = os.path.abspath(filename)
        return os.path.relpath(path, self.root) if path.startswith(self._prefix) else filename

    def print_stats(self, min_time_us: float = 0.0, top_n_lines: int | None = None,
                    sort_by: str = "line", file: IO[str] | None = None) -> None:
        """Per function in source order: each line's hits, time, time per hit and
        share of the function's time. sort_by "time" or "hits" orders the lines of
        each function that way; top_n_lines keeps the first N of them."""
        _check_sort(sort_by)
        out = sys.stdout if file is None else file
        self._write_lost(out)
        for f in self.get_stats():
            lines = [line for line in f.lines if line.time_ns / 1e3 >= min_time_us]
            if not lines:
                continue
            lines = _sorted(lines, sort_by)[:top_n_lines]
            region = f" [region {f.region}]" if f.region else ""
            out.write(f"\n{f.name} at {self._display_name(f.filename)}:{f.first_line}{region}"
                      f"   total {_ms(f.total_ns)} ms\n")
            out.write(f"{'Line':>6} {'Hits':>10} {'Time (ms)':>12} {'Per hit (us)':>13} "
                      f"{'% func':>7}  Source\n")
            for line in lines:
                share = 100.0 * line.time_ns / f.total_ns if f.total_ns else 0.0
                out.write(f"{line.lineno:>6} {line.hits:>10} {_ms(line.time_ns):>12} "
                          f"{_per_hit(line):>13} {share:>6.1f}%  {line.source}\n")

    def print_global_top_stats(self, top_n: int = 20, min_time_us: float = 0.0,
                               sort_by: str = "time", file: IO[str] | None = None) -> None:
        """The top_n lines of every function and region together, by time (or hits,
        or source order with sort_by="line")."""
        _check_sort(sort_by)
        out = sys.stdout if file is None else file
        self._write_lost(out)
        rows = [(f, line) for f in self.get_stats() for line in f.lines
                if line.time_ns / 1e3 >= min_time_us]
        key = {"time": lambda r: -r[1].time_ns, "hits": lambda r: -r[1].hits,
               "line": lambda r: (r[0].filename, r[1].lineno)}[sort_by]
        rows.sort(key=key)
        out.write(f"{'Hits':>10} {'Time (ms)':>12} {'Per hit (us)':>13}  Where / Source\n")
        for f, line in rows[:top_n]:
            region = f" [{f.region}]" if f.region else ""
            out.write(f"{line.hits:>10} {_ms(line.time_ns):>12} {_per_hit(line):>13}  "
                      f"{self._display_name(f.filename)}:{line.lineno} {f.name}{region}: "
                      f"{line.source.strip()}\n")

    def _write_lost(self, out: IO[str]) -> None:
        lost = self.lost_events
        if lost:
            out.write(f"lapse lines: {lost} line events were not counted (a line outside "
                      "its function's lines, or no memory): the figures below miss them\n")

    def to_html(self, path: StrPath) -> None:
        """Writes one self-contained HTML page: each function's whole source, every
        line that ran shaded by its time (the hottest line of the page darkest)."""
        stats = self.get_stats()
        hottest = max((line.time_ns for f in stats for line in f.lines), default=0) or 1
        parts = [_HTML_HEAD]
        for f in stats:
            by_line = {line.lineno: line for line in f.lines}
            last = max(by_line)
            region = f" [region {html.escape(f.region)}]" if f.region else ""
            parts.append(f"<h2>{html.escape(f.name)} <small>{html.escape(self._display_name(f.filename))}"
                         f":{f.first_line}{region}, total {_ms(f.total_ns)} ms</small></h2>\n"
                         "<table><tr><th>line</th><th>hits</th><th>time (ms)</th>"
                         "<th>per hit (us)</th><th>source</th></tr>\n")
            for n in range(f.first_line, last + 1):
                line = by_line.get(n)
                source = html.escape(linecache.getline(f.filename, n).rstrip("\n"))
                if line is None:
                    parts.append(f"<tr><td>{n}</td><td></td><td></td><td></td>"
                                 f"<td><pre>{source}</pre></td></tr>\n")
                    continue
                heat = line.time_ns / hottest
                parts.append(f'<tr style="background:rgba(220,40,20,{0.05 + 0.85 * heat:.3f})">'
                             f"<td>{n}</td><td>{line.hits}</td><td>{_ms(line.time_ns)}</td>"
                             f"<td>{_per_hit(line)}</td><td><pre>{source}</pre></td></tr>\n")
            parts.append("</table>\n")
        parts.append("</body></html>\n")
        tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as out:
            out.write("".join(parts))
        os.replace(tmp, path)


_HTML_HEAD = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>lapse lines</title>
<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse;margin-bottom:2em}
td,th{padding:0 .6em;text-align:right;font-size:13px}td:last-child{text-align:left}
pre{margin:0;font-family:monospace}small{color:#555;font-weight:normal}</style></head><body>
<h1>lapse lines</h1><p>Time per line is inclusive of the functions the line calls.</p>
"""


def _check_sort(sort_by: str) -> None:
    if sort_by not in _SORTS:
        raise ValueError(f"sort_by must be one of {', '.join(_SORTS)}, not {sort_by!r}")


def _sorted(lines: list[LineStats], sort_by: str) -> list[LineStats]:
    if sort_by == "time":
        return sorted(lines, key=lambda line: -line.time_ns)
    if sort_by == "hits":
        return sorted(lines, key=lambda line: -line.hits)
    return lines


def _ms(ns: int) -> str:
    return f"{ns / 1e6:.3f}"


def _per_hit(line: LineStats) -> str:
    return f"{line.time_ns / 1e3 / line.hits:.2f}" if line.hits else "-"
