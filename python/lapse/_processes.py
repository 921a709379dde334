"""Child processes write their last file even when they leave through os._exit.

A session continues in a forked child (its own file, an empty tree). multiprocessing
ends fork and forkserver children with os._exit, which skips atexit: the C layer's
final write would never happen and the child's work since its last snapshot would
be lost. Such a child runs multiprocessing's own exit finalizers just before, so
lapse registers one there. multiprocessing clears the finalizers a child inherited
when its process starts (Process._bootstrap), then runs the functions registered
with util.register_after_fork: that is where the finalizer is registered.
(os.register_at_fork covers an os.fork that multiprocessing does not manage.)"""

from __future__ import annotations

import os
import sys

from . import _lapse


def _final_write() -> None:
    _lapse.timing_disable()
    _lapse.stop()


def flush_at_multiprocessing_exit() -> None:
    """If this process has a session and multiprocessing is in use, end the session
    among multiprocessing's exit finalizers (they run before its os._exit)."""
    util = sys.modules.get("multiprocessing.util")
    if util is None or not _lapse.is_active():
        return
    util.Finalize(None, _final_write, exitpriority=-1000)
    hook_multiprocessing()


class _AfterFork:
    """The object multiprocessing's after-fork registry holds (it keeps weak refs)."""


_after_fork = _AfterFork()
_hooked = False


def hook_multiprocessing() -> None:
    """Makes every multiprocessing child register the exit finalizer at its start."""
    global _hooked
    util = sys.modules.get("multiprocessing.util")
    if _hooked or util is None:
        return
    util.register_after_fork(_after_fork, lambda _: flush_at_multiprocessing_exit())
    _hooked = True


os.register_at_fork(after_in_child=flush_at_multiprocessing_exit)
