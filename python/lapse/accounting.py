"""The accounting API (with-line-profiler's): phases and counts reached from
anywhere, without threading a profiler argument through the code.

    profiler = Profiler(run_dir="profile", role="actor", install=True)
    ...
    def uct_search(root):                    # five calls down, no profiler argument
        with lapse.phase("mcts"):
            lapse.count("simulations", 64)

``phase``, ``count`` and ``current`` live in the C extension (``lapse.phase`` is
``lapse._lapse.phase``). A phase is a span (the same name space, the same tree)
with options:
``sync=True`` synchronizes CUDA at both ends when torch with a CUDA device is in use;
``gpu_time=True`` records its GPU time (torch.cuda.Event) beside its wall time;
``sample=0.01`` measures one entry in a hundred and scales it (an estimate).
Module-level ``phase`` and ``count`` record into the active session; with no session
they do nothing. ``installed_profiler()`` is the Profiler made with install=True.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

from . import _lapse

if TYPE_CHECKING:
    from .profiler import Profiler


class _SyncPhase:
    """A phase whose wall time means GPU time: CUDA is synchronized at entry (so
    the phase is not billed for work queued before it) and at exit (so it is billed
    for its own)."""

    __slots__ = ("span",)

    def __init__(self, name: str) -> None:
        self.span = _lapse.span(name)

    def __enter__(self) -> _SyncPhase:
        cuda_synchronize()
        self.span.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        try:
            cuda_synchronize()
        finally:
            self.span.__exit__(exc_type, exc, tb)
        return False


class _GpuPhase:
    """A phase whose GPU time is recorded beside its wall time: a pair of
    torch.cuda.Event(enable_timing=True) recorded on the current stream at its entry
    and exit, their elapsed time (waited for at exit) given to the phase's span. Only
    where torch is imported and CUDA is initialized: lapse never initializes CUDA, and
    elsewhere the phase's GPU time is missing, with the reason (never 0)."""

    __slots__ = ("span", "sync", "events", "why")

    def __init__(self, name: str, sync: bool) -> None:
        self.span = _lapse.span(name)
        self.sync = sync
        self.events: tuple[Any, Any] | None = None
        self.why = ""

    def __enter__(self) -> _GpuPhase:
        if self.sync:
            cuda_synchronize()
        self.span.__enter__()
        self.events, self.why = _cuda_events()
        if self.events is not None:
            try:
                self.events[0].record()
            except Exception as e:  # the program goes on; the figure is missing
                self.events, self.why = None, f"torch.cuda.Event.record failed: {e}"
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        try:
            ns, why = -1, self.why
            if self.events is not None:
                start, stop = self.events
                try:
                    stop.record()
                    stop.synchronize()
                    ns = round(start.elapsed_time(stop) * 1e6)
                except Exception as e:
                    why = f"the CUDA events' elapsed time could not be read: {e}"
            _lapse.gpu_time(ns, why)
            if self.sync:
                cuda_synchronize()
        finally:
            self.span.__exit__(exc_type, exc, tb)
        return False


def _cuda_events() -> tuple[tuple[Any, Any] | None, str]:
    """Two timing events, or None and why there are none."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None, "torch is not imported (lapse takes Python's GPU time from torch.cuda.Event)"
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_available() or not cuda.is_initialized():
        return None, ("CUDA is not initialized in this process (torch.cuda.is_initialized() "
                      "is False): lapse does not initialize it")
    try:
        return (cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)), ""
    except Exception as e:
        return None, f"torch.cuda.Event failed: {e}"


def cuda_synchronize() -> None:
    """torch.cuda.synchronize() when torch is already imported and a CUDA device is
    initialized; nothing otherwise (lapse never imports torch itself)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        cuda.synchronize()


def installed_profiler() -> Profiler | None:
    """The Profiler made with install=True, while it is active; else None."""
    from .profiler import Profiler

    return Profiler._installed
