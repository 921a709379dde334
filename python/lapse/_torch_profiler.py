"""ACTIVITY beside torch.profiler in one process.

torch.profiler records CUDA through Kineto, which needs CUPTI: CUPTI takes one
subscriber per process and one set of activity-buffer callbacks, both of which
lapse's ACTIVITY collector holds while it collects. So, in a session collecting
ACTIVITY, lapse wraps the three functions of ``torch.autograd.profiler`` through
which every Kineto capture starts and ends (``_prepare_profiler``,
``_enable_profiler``, ``_disable_profiler``; ``torch.profiler.profile``, the
autograd profiler and lapse's own ``backend="torch"`` window all call them): when a
capture asks for ``ProfilerActivity.CUDA``, ACTIVITY lets CUPTI go first (its
records flushed and kept) and takes it back once the capture is disabled. The
pauses are counted in the file and the report says them (caveat
``activity_paused``): the kernels of those intervals are in torch's trace.

Nothing here imports torch: the module is wrapped where the program imports it.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

from . import _lapse
from ._imports import ImportHook

MODULE = "torch.autograd.profiler"
NAMES = ("_prepare_profiler", "_enable_profiler", "_disable_profiler")
_MARK = "_lapse_cupti_wrapped"

_hook: ImportHook | None = None
_yielded = False  # ACTIVITY let CUPTI go for the capture under way


def _records_cuda(module: types.ModuleType, activities: Any) -> bool:
    cuda = getattr(getattr(module, "ProfilerActivity", None), "CUDA", None)
    try:
        return cuda is not None and cuda in activities
    except TypeError:
        return False


def _let_go(module: types.ModuleType, activities: Any) -> None:
    global _yielded
    if not _yielded and _records_cuda(module, activities) and _lapse.activity_yield():
        _yielded = True


def _take_back() -> None:
    global _yielded
    if _yielded:
        _yielded = False
        _lapse.activity_resume()  # a refusal is the file's note, not the program's error


def wrap(module: types.ModuleType) -> bool:
    """Wraps module's three profiler functions (once); False when it lacks one (a
    torch whose profiler lapse does not know: nothing is changed)."""
    if getattr(module, _MARK, False):
        return True
    if not all(callable(getattr(module, name, None)) for name in NAMES):
        return False
    prepare, enable, disable = (getattr(module, name) for name in NAMES)

    def starting(real: Callable[..., Any]) -> Callable[..., Any]:
        def start(config: Any, activities: Any, *args: Any, **kwargs: Any) -> Any:
            _let_go(module, activities)
            try:
                return real(config, activities, *args, **kwargs)
            except BaseException:
                _take_back()  # the capture did not start: CUPTI is lapse's again
                raise
        start.__wrapped__ = real  # type: ignore[attr-defined]
        return start

    def _disable_profiler(*args: Any, **kwargs: Any) -> Any:
        try:
            return disable(*args, **kwargs)
        finally:
            _take_back()

    _disable_profiler.__wrapped__ = disable  # type: ignore[attr-defined]
    module._prepare_profiler = starting(prepare)  # type: ignore[attr-defined]
    module._enable_profiler = starting(enable)  # type: ignore[attr-defined]
    module._disable_profiler = _disable_profiler  # type: ignore[attr-defined]
    setattr(module, _MARK, True)
    return True


def install() -> None:
    """In a session collecting ACTIVITY: wraps torch's profiler now if the program
    imported it, else when it does."""
    global _hook
    module = sys.modules.get(MODULE)
    if module is not None:
        wrap(module)
    elif _hook is None:
        _hook = ImportHook(lambda name, spec: name == MODULE, on_module=wrap)
        _hook.install()


def uninstall() -> None:
    """The session ended: no more wrapping at import (what was wrapped stays: it lets
    nothing go without a session collecting ACTIVITY)."""
    global _hook
    if _hook is not None:
        _hook.remove()
        _hook = None
