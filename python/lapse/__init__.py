"""lapse: a low-overhead profiler for long, multi-process programs.

    from lapse import Profiler, span

    @span
    def load(): ...

    with Profiler() as profiler:
        with span("request"):
            load()
    profiler.show()

A span carries only a name; the active Profiler decides what is measured. With no
active Profiler a decorated function is one check and a direct call.
"""

from __future__ import annotations

from ._lapse import count, current, phase, span
from .accounting import installed_profiler
from .instrument import environment_tags as _environment_tags
from .instrument import instrument, register_opt_in_tag
from .lines import LineProfiler
from .profile import Profile, ProfileDiff
from .profiler import Feature, Profiler
from .profiler import sync_environment as _sync_environment
from . import _lapse as _lapse_ext
from .run import Run, load_run
from ._processes import flush_at_multiprocessing_exit as _flush_at_multiprocessing_exit

_lapse_ext.enable_tags(_environment_tags())  # a session the environment started honours them
_flush_at_multiprocessing_exit()  # a spawn or forkserver child whose session the environment started
if _lapse_ext.is_active():  # started by the environment: os.environ says what it exported
    _sync_environment()

__all__ = ["Feature", "Profile", "ProfileDiff", "Profiler", "Run", "count", "current",
           "installed_profiler", "instrument", "LineProfiler", "load_run", "phase",
           "register_opt_in_tag", "span"]
__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext lapse``: registers the ``%lapse`` and ``%%lapse`` magics
    (lapse.magics; IPython is imported only then)."""
    from .magics import load_ipython_extension as load

    load(ipython)
