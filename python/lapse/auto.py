"""Automatic spans: Profiler(auto=("pkg.module", ...)) and `lapse run --auto`.

Every function of the chosen modules (a package: its submodules too) is a span while
the profiler is active, without editing them. The engine is C: on 3.12+
sys.monitoring events set on those modules' code objects only (auto_spans.c), on
3.11 each chosen function runs its timed code (plain_functions.c). This module
finds the functions: in the modules imported when the profiler starts, and in those
imported while it runs (through the import hook LineProfiler uses)."""

from __future__ import annotations

import os
import sys
import types
import warnings
from typing import Any, Sequence

from . import _lapse
from ._imports import ImportHook, functions_of

MONITORING = sys.version_info >= (3, 12)
_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, CO_ASYNC_GENERATOR


def check_names(names: Any) -> tuple[str, ...]:
    """The module names of auto=, checked: a str or a sequence of dotted names."""
    if isinstance(names, str):
        names = (names,)
    try:
        names = tuple(names)
    except TypeError:
        raise TypeError(f"auto: module names (str), not {type(names).__name__}") from None
    for name in names:
        if not isinstance(name, str) or not all(part.isidentifier() for part in name.split(".")):
            raise ValueError(f"auto: {name!r} is not a module name (pkg.module)")
    return names


def span_name(fn: types.FunctionType) -> str:
    """As @span names a function: its qualified name after the last "<locals>."."""
    return fn.__qualname__.rsplit("<locals>.", 1)[-1]


class AutoSpans:
    """The automatic spans of one Profiler: start() at the session's start, stop()
    before its end. Off, nothing is installed."""

    def __init__(self, names: Sequence[str]):
        self.names = tuple(names)
        self._hook: ImportHook | None = None
        self._not_timed: list[str] = []  # 3.11: generator and coroutine functions
        self._lost = 0

    def chooses(self, module_name: str) -> bool:
        return any(module_name == n or module_name.startswith(n + ".") for n in self.names)

    def start(self) -> None:
        for name, module in list(sys.modules.items()):
            if isinstance(module, types.ModuleType) and self.chooses(name):
                self._add_module(module)
        if MONITORING:
            self._lost = _lapse.auto_lost()
            try:
                _lapse.auto_enable()
            except BaseException:
                _lapse.auto_disable()  # forgets the code objects chosen above
                raise
        self._hook = ImportHook(lambda name, spec: self.chooses(name),
                                on_code=_lapse.auto_add if MONITORING else None,
                                on_module=self._add_module)
        self._hook.install()
        self._warn_not_timed()

    def stop(self) -> None:
        if self._hook is None:
            return
        self._hook.remove()
        self._hook = None
        if MONITORING:
            lost = _lapse.auto_lost()
            _lapse.auto_disable()
            if lost > self._lost:
                warnings.warn(f"lapse: auto spans: {lost - self._lost} calls were not timed (no "
                              "memory for their thread's stack)", RuntimeWarning, stacklevel=3)
        else:
            _lapse.auto_untime()

    def _add_module(self, module: types.ModuleType) -> None:
        filename = getattr(module, "__file__", None)
        if not isinstance(filename, str):
            return  # a namespace package or a builtin module: no functions of its own
        own = os.path.realpath(filename)
        files: dict[str, bool] = {}
        for fn in functions_of(list(vars(module).values())):
            code = fn.__code__
            mine = files.get(code.co_filename)
            if mine is None:
                mine = files[code.co_filename] = os.path.realpath(code.co_filename) == own
            if not mine or code.co_name.startswith("<"):
                continue  # imported from elsewhere; lambdas
            if MONITORING:
                if hasattr(fn, "__lapse_span__"):  # @span functions are spans already
                    _lapse.auto_remove(code)  # (chosen with its module's code)
                else:
                    _lapse.auto_add(code)
            elif code.co_flags & _NOT_PLAIN:
                self._not_timed.append(f"{module.__name__}.{fn.__qualname__}")
            else:
                _lapse.auto_time(fn, span_name(fn))
        if self._hook is not None:
            self._warn_not_timed()

    def _warn_not_timed(self) -> None:
        if self._not_timed:
            names, self._not_timed = self._not_timed, []
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            warnings.warn(f"lapse: auto spans on Python 3.11 do not time generator and coroutine "
                          f"functions: {shown}", RuntimeWarning, stacklevel=4)
