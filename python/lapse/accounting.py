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


def installed_profiler() -> Profiler | None:
    """The Profiler made with install=True, while it is active; else None."""
    from .profiler import Profiler

    return Profiler._installed
