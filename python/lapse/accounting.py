"""The accounting API (with-line-profiler's): phases and counts reached from
anywhere, without threading a profiler argument through the code.

    profiler = Profiler(run_dir="profile", role="actor", install=True)
    ...
    def uct_search(root):                    # five calls down, no profiler argument
        with lapse.phase("mcts"):
            lapse.count("simulations", 64)

A phase is a span (the same name space, the same tree) with options:
``sync=True`` synchronizes CUDA at both ends when torch with a CUDA device is in use;
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


def cuda_synchronize() -> None:
    """torch.cuda.synchronize() when torch is already imported and a CUDA device is
    initialized; nothing otherwise (lapse never imports torch itself)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        cuda.synchronize()


def make_phase(name: str, io: bool = False, sync: bool = False,
               sample: float | None = None) -> Any:
    if not isinstance(name, str):
        raise TypeError(f"a phase name must be a str, not {type(name).__name__}")
    if io:
        raise NotImplementedError("lapse: phase(io=True) needs the IO collector, which this "
                                  "build does not have yet")
    if sample is not None:
        if sync:
            raise ValueError("lapse: a phase is either sampled or synchronized, not both")
        return sampled(name, sample)
    return _SyncPhase(name) if sync else _lapse.span(name)


_sampled: dict[tuple[str, int], Any] = {}


def sampled(name: str, sample: float) -> Any:
    """The sampled phase `name` measuring one entry in round(1 / sample): that entry
    and its whole subtree are recorded scaled up, and marked as estimates (`~` in
    the report); the other entries record nothing. Selection is a deterministic
    stride, not a random draw, so a workload whose period lines up with the stride
    keeps measuring the same point in it."""
    if not 0.0 < sample <= 1.0:
        raise ValueError(f"lapse: sample must be in (0, 1], not {sample!r}")
    stride = max(1, round(1.0 / sample))
    key = (name, stride)
    phase_ = _sampled.get(key)
    if phase_ is None:
        phase_ = _sampled[key] = _lapse.sampled_span(name, stride)
    return phase_


def phase(name: str, io: bool = False, sync: bool = False, sample: float | None = None) -> Any:
    """A phase of the active session (see Profiler.phase); with none, a no-op."""
    return make_phase(name, io=io, sync=sync, sample=sample)


def count(name: str, n: int) -> None:
    """Adds n to the counter `name` of the innermost open phase; a no-op with no session."""
    _lapse.count(name, n)


def current() -> str:
    """The dotted path of the phases open here (this thread, this task), or ""."""
    return _lapse.current()


def installed_profiler() -> Profiler | None:
    """The Profiler made with install=True, while it is active; else None."""
    from .profiler import Profiler

    return Profiler._installed
