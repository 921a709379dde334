"""Profiler: the session that decides what is measured, for one process."""

from __future__ import annotations

import atexit
import enum
import os
import tempfile
import warnings
from types import TracebackType
import runpy
import sys
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence

from . import _lapse, _names

if TYPE_CHECKING:
    from .live import Interval
    from .profile import Profile


class Feature(enum.Flag):
    """What a Profiler may collect. Flags decide what may be collected; evidence
    decides what appears: a flag whose collector cannot run here adds no section to the
    result (and with ``strict=True`` the Profiler refuses to start)."""

    SPANS = enum.auto()     #: spans and counters: their wall time (without it a span
                            #: records nothing)
    CPU = enum.auto()       #: wait% per span (needs SPANS): a sampler thread reads each
                            #: thread's CPU clock
    IO = enum.auto()        #: bytes read and written: exactly by phase(name, io=True), and
                            #: per interval by the process sampler (the I/O block)
    MEMORY = enum.auto()    #: RSS over time (the process sampler) and per io=True phase
    PYTHON = enum.auto()    #: external sampling of Python stacks
    MARKERS = enum.auto()   #: every span also an NVTX range (domain "lapse") for the NVTX
                            #: tool capturing the process (nsys, Kineto); collected only
                            #: when one is attached (NVTX_INJECTION64_PATH)
    DEVICE = enum.auto()    #: GPU telemetry of this process (NVML, loaded at start: where
                            #: it cannot run, ``Profiler.missing`` says why)
    ACTIVITY = enum.auto()  #: GPU kernels, copies and sets (CUPTI), each attributed to the
                            #: span that launched it (where CUPTI cannot start,
                            #: ``Profiler.missing`` says why)
    DEFAULT = SPANS | CPU | IO | MEMORY | PYTHON | MARKERS | DEVICE | ACTIVITY  #: every feature with a collector


#: The features this build can always collect. PYTHON joins them where the lapse
#: command and a supported CPython are at hand (available()).
AVAILABLE = Feature.SPANS | Feature.CPU | Feature.IO | Feature.MEMORY

#: Features with no collector yet: a Profiler refuses them (ValueError).
NO_COLLECTOR = Feature(0)

#: What a Profiler collects unless told otherwise: what a C session collects
#: (LAPSE_FEATURES_DEFAULT: spans, wait%, the process sampler's I/O and RSS, NVTX
#: markers where a tool takes them, GPU telemetry where NVML can start, GPU activity
#: where CUPTI can), as `lapse run` does, which also samples Python stacks
#: (Feature.PYTHON).
COLLECTED_BY_DEFAULT = (Feature.SPANS | Feature.CPU | Feature.IO | Feature.MEMORY |
                        Feature.MARKERS | Feature.DEVICE | Feature.ACTIVITY)

#: The LAPSE_FEATURE_* bit of each feature the C session collects.
SESSION_BITS = ((Feature.SPANS, 1), (Feature.CPU, 4), (Feature.IO, 8), (Feature.MEMORY, 16),
                (Feature.MARKERS, 32), (Feature.DEVICE, 64), (Feature.ACTIVITY, 128))


#: The features whose C collector may be unable to start here (lapse_check_features
#: says why: "markers: no NVTX tool: ...", "device: ..."); a session runs without them.
COLLECTOR_FEATURES = Feature.MARKERS | Feature.DEVICE | Feature.ACTIVITY


def _cannot_start(feature: Feature) -> str | None:
    """Why the C collector of feature cannot start in this process ("name: why"), or
    None (also while a session is active)."""
    return _lapse.check_features(dict(SESSION_BITS)[feature])


_annotate_warned = False


def _record_function() -> tuple[Callable[[str], Any] | None, str | None]:
    """torch.profiler.record_function for annotate=True, or None and why (warned
    about once in a process)."""
    global _annotate_warned
    try:
        from torch.profiler import record_function
    except ImportError as e:
        why = f"torch is not importable ({e})"
        if not _annotate_warned:
            _annotate_warned = True
            warnings.warn(f"lapse: annotate=True adds nothing: {why}", RuntimeWarning, stacklevel=3)
        return None, why
    return record_function, None


def available() -> Feature:
    """The features a Profiler can collect in this process. PYTHON, DEVICE and
    ACTIVITY, when absent, are accepted and add nothing (``Profiler.missing``);
    NO_COLLECTOR is refused."""
    from ._python_sampler import unavailable_reason

    collectors = Feature(0)
    for feature in COLLECTOR_FEATURES:
        if _cannot_start(feature) is None:
            collectors |= feature
    return AVAILABLE | (Feature.PYTHON if unavailable_reason() is None else Feature(0)) | collectors


def sync_environment() -> None:
    """Makes os.environ hold what the C environment holds of the variables a session
    exports to its children (set at its start, restored at its end). os.environ is a
    copy taken at startup: without this, a child launched with
    ``env={**os.environ, ...}`` would leave the run, or one launched after the stop
    would join it."""
    for name, value in _lapse.exported_environment().items():
        if value is None:
            os.environ.pop(name, None)
        elif os.environ.get(name) != value:
            os.environ[name] = value


class Profiler:
    """One profiling session of this process; a context manager.

    Args:
        features: what may be collected (``Feature`` flags); default
            ``COLLECTED_BY_DEFAULT``: spans, wait% (CPU), I/O, memory and GPU activity, as a C session
            (in a process that joins an inherited session: the session's). A feature
            with no collector (``NO_COLLECTOR``), or CPU without SPANS, raises ValueError.
        role: this process's role in the report (default ``$LAPSE_ROLE`` or "main").
        run_dir: where runs are written (default ``$LAPSE_RUN_DIR``, else a new
            temporary directory). Children started while the session is active join
            the same run through the environment.
        max_spans: the timeline bound (raw begin/end records kept per process);
            default 100000.
        install: also make this the profiler that module-level helpers reach.
        strict: fail before the session starts when a requested collector cannot run
            (``Feature.DEVICE``: NVML cannot be loaded or started, the error says why), and
            (``Feature.PYTHON``) when the sampler cannot start or read this process: the
            start waits until it does. Without it, a sampler that failed is warned about
            and named in the report's CAVEATS, and a DEVICE that cannot run is in
            ``missing`` (``missing_why`` says why).
        strict_names: raise on the second span name of one shape (digit runs read as
            "#"): names built from data. Without it, a warning at 128 names of a shape.
        thread_names: nest each thread's spans under its name in the report
            (``threading.current_thread().name``; done when the run is read: it costs
            nothing per span).
        process_sample_ms: the period of the process sampler, which records the
            process's I/O and RSS (with ``Feature.IO`` or ``Feature.MEMORY``); default
            ``$LAPSE_PROCESS_SAMPLE_MS``, else 1000.
        python_hz: with ``Feature.PYTHON``, the rate at which the `lapse record` command
            samples this process's Python stacks from outside (default 100); the
            samples join the final file, each with the span path open on its thread.
        snapshot_ms: the period of the snapshots written while the session runs (and of
            ``on_snapshot`` callbacks); default ``$LAPSE_SNAPSHOT_MS``, else 5000.
        auto: module names (``"pkg.module"``; a package: its submodules too) whose every
            function is a span while the session is active, without editing them
            (docs/python.md, "Automatic spans"); needs ``Feature.SPANS``.
        enable_tags: the opt-in span tags (``lapse.register_opt_in_tag``) whose spans
            this session records, with those of ``$LAPSE_ENABLE_TAGS``.
        share: make the run readable by the user's group: directories 0750 and files
            0640 instead of 0700 and 0600 (the umask still applies); default
            ``$LAPSE_SHARE``. Processes that join the run inherit it.
        annotate: every span of Python code (``span``, ``phase``, decorated functions)
            also opens ``torch.profiler.record_function(name)``, so that a
            ``torch.profiler`` capture shows them, nested. Without torch importable it
            warns once and adds nothing (``annotate_missing`` says why); off, spans
            cost what they cost.
        backend, backend_window, window_phase: a heavy profiler (``"torch"``:
            torch.profiler; ``"viztracer"``) for a window of entries into the span
            ``window_phase``: it starts on entry ``start`` and stops on entry ``stop`` of
            ``backend_window=(start, stop)`` (entries count from 1; start .. stop - 1 are
            inside), and writes its trace into the run directory's ``backend/``
            (``<backend>-<pid>.json``). Without its package, or when it fails to start or
            write, the program runs on: ``backend_missing`` and the report say why.

    Only one Profiler may be active in a process; starting a second raises
    RuntimeError.

    In a process that inherited a session (started by the environment its parent
    exported, or continued by a fork), the Profiler joins that session: ``role`` and
    ``thread_names`` are applied; ``features`` (CPU, IO/MEMORY), ``max_spans``,
    ``snapshot_ms``, ``process_sample_ms``, ``share`` and ``run_dir``, fixed when the
    session started, must be the session's or left out (then the session's, which
    are its parent's): ``start`` raises RuntimeError naming those that differ.
    """

    _installed: Profiler | None = None

    def __init__(self, features: Feature | None = None, role: str | None = None,
                 run_dir: str | os.PathLike[str] | None = None, max_spans: int | None = None,
                 install: bool = False, strict: bool = False,
                 strict_names: bool = False, thread_names: bool | None = None,
                 process_sample_ms: int | None = None, snapshot_ms: int | None = None,
                 python_hz: int = 100, share: bool | None = None,
                 auto: str | Sequence[str] = (),
                 enable_tags: str | Sequence[str] = (), annotate: bool = False,
                 backend: str | None = None, backend_window: tuple[int, int] | None = None,
                 window_phase: str | None = None) -> None:
        # what was asked for, as opposed to left to the default: a session this
        # Profiler joins (inherited from a parent) takes the one, keeps its own for the other
        given = {"features": features, "run_dir": run_dir, "max_spans": max_spans,
                 "thread_names": thread_names, "process_sample_ms": process_sample_ms,
                 "snapshot_ms": snapshot_ms, "share": share}
        self._given = {name for name, value in given.items() if value is not None}
        features = COLLECTED_BY_DEFAULT if features is None else features
        max_spans = 100_000 if max_spans is None else max_spans
        if not isinstance(features, Feature):
            raise TypeError(f"features must be lapse.Feature flags, not {type(features).__name__}")
        refused = [f.name for f in NO_COLLECTOR if f in features]
        if refused:
            raise ValueError(f"lapse: no collector yet for {', '.join(map(str, refused))} "
                             f"(the GPU collectors are to come): leave it out of features")
        if Feature.CPU in features and Feature.SPANS not in features:
            raise ValueError("lapse: Feature.CPU (wait% per span) needs Feature.SPANS")
        if Feature.MARKERS in features and Feature.SPANS not in features:
            raise ValueError("lapse: Feature.MARKERS (an NVTX range per span) needs Feature.SPANS")
        if max_spans < 0:
            raise ValueError("max_spans must be >= 0")
        self.features = features
        self.role = role
        self.run_dir = None if run_dir is None else os.fspath(run_dir)
        self.max_spans = max_spans
        self.install = install
        self.strict = strict
        self.strict_names = strict_names
        self.thread_names = bool(thread_names)
        for label, value in (("process_sample_ms", process_sample_ms), ("snapshot_ms", snapshot_ms)):
            if value is not None and value < 10:
                raise ValueError(f"{label} must be >= 10")
        self.process_sample_ms = process_sample_ms
        self.snapshot_ms = snapshot_ms
        if python_hz < 1 or python_hz > 20_000:
            raise ValueError("python_hz must be 1 to 20000")
        self.python_hz = python_hz
        self.share = bool(share)
        from .auto import check_names
        self.auto = check_names(auto)
        if self.auto and Feature.SPANS not in features:
            raise ValueError("lapse: auto spans need Feature.SPANS")
        self._auto: Any = None
        tags = (enable_tags,) if isinstance(enable_tags, str) else tuple(enable_tags)
        if not all(isinstance(t, str) and t for t in tags):
            raise TypeError("enable_tags: tag names (non-empty str)")
        self.enable_tags = frozenset(tags)
        # the lapse command behind PYTHON, resolved once: what is checked is what runs
        self._lapse_command: str | None = None
        self._python_why: str | None = None
        if Feature.PYTHON in features:
            from ._python_sampler import resolve

            self._lapse_command, self._python_why = resolve()
        python = Feature(0) if self._python_why else Feature.PYTHON
        #: requested features that add nothing here
        self.missing = features & ~(AVAILABLE | python | COLLECTOR_FEATURES)
        self.missing_why: dict[Feature, str] = {}  #: why, for each of ``missing`` known
        if self._python_why:
            self.missing_why[Feature.PYTHON] = self._python_why
        if Feature.MARKERS in features:  # cheap to check (an NVTX tool named and attaching)
            why = _cannot_start(Feature.MARKERS)
            if why is not None:
                self._feature_missing(Feature.MARKERS, why)
        self.annotate = bool(annotate)
        self._record_function: Callable[[str], Any] | None = None
        self.annotate_missing: str | None = None  #: why annotate=True adds nothing, or None
        if annotate:
            self._record_function, self.annotate_missing = _record_function()
        self._init_backend(backend, backend_window, window_phase)
        self._python_sampler = None
        self._launcher = False  # run_target runs the program: its launcher frames are left out
        self._file: str | None = None
        self._active = False
        self._paused_here = threading.local()
        self._serial = 0
        from .live import LiveExport

        self._live = LiveExport()
        from ._torch_memory import TorchMemory

        self._vram = TorchMemory()  # VRAM peaks from torch, where it has initialised CUDA

    def _init_backend(self, backend: str | None, window: Any, phase: str | None) -> None:
        """backend=, backend_window=, window_phase= (checked: ValueError)."""
        from . import _backend

        self.backend = backend
        self.backend_window = _backend.check(backend, window, phase)
        self.window_phase = phase
        if self.backend_window is not None and Feature.SPANS not in self.features:
            raise ValueError("lapse: backend= counts entries of a span: it needs Feature.SPANS")
        #: why the backend's window adds nothing (its package missing, it failed to start
        #: or to write), or None
        self.backend_missing: str | None = None
        #: what the window did, once the session stopped (state, entries, trace, ...)
        self.backend_result: dict[str, Any] | None = None

    def _window_argument(self) -> tuple[Any, ...] | None:
        """start()'s window=: (backend, phase, start, stop, runner, why)."""
        if self.backend is None or self.backend_window is None:
            return None
        from . import _backend

        why = _backend.unavailable(self.backend)
        self.backend_missing = why
        runner = None if why else _backend.runner(self.backend)
        return (self.backend, self.window_phase, *self.backend_window, runner, why)

    def _window_finish(self) -> None:
        """Before the session's final file: a window still open is closed (its trace
        written), and what it did is the file's and ``backend_result``."""
        result = _lapse.window_finish()
        if result is not None:
            self.backend_result = result
            self.backend_missing = result["error"]

    # ---- session ----

    def start(self) -> Profiler:
        """Starts the session (what ``with Profiler():`` does on entry)."""
        if self.strict and not _lapse.is_active():
            # each collector started, then let go: NVML, CUPTI (subscribed, unsubscribed)
            for feature in self.features & COLLECTOR_FEATURES & ~self.missing:
                why = _cannot_start(feature)
                if why is not None:
                    self._feature_missing(feature, why)
        if self.strict and self.missing:
            names = ", ".join(f.name or "?" for f in Feature if f in self.missing and f.name != "DEFAULT")
            why = "".join(f" ({f.name}: {self.missing_why[f]})" for f in Feature
                          if f in self.missing and f in self.missing_why)
            raise RuntimeError(f"lapse: strict=True and these collectors cannot run here: {names}{why}")
        if Feature.PYTHON in self.missing and os.environ.get("LAPSE_COMMAND"):
            # a command the user named that cannot run is said, not dropped in silence
            warnings.warn(f"lapse: no PYTHON samples: {self._python_why}", RuntimeWarning,
                          stacklevel=2)
        inherited = _lapse.session_settings()
        if inherited is not None and inherited["inherited"]:
            # a parent's session reached this process through the environment
            # (LAPSE_PROFILE=1, started when lapse loaded) or a fork: this Profiler
            # takes it, with the options it can apply
            self._join(inherited)
            _lapse.adopt_environment_session()
            if self.role is not None:
                _lapse.set_role(self.role)
            if "thread_names" in self._given and self.thread_names != inherited["thread_names"]:
                _lapse.set_thread_names(self.thread_names)
            self._file = _lapse.file_path()
            self._began()
            return self
        run_dir = self.run_dir
        if run_dir is None:
            run_dir = os.environ.get("LAPSE_RUN_DIR") or tempfile.mkdtemp(prefix="lapse-")
            self.run_dir = run_dir
        try:
            spans = Feature.SPANS in self.features
            self._file = _lapse.start(role=self.role, run_dir=run_dir, max_spans=self.max_spans,
                                      timeline=spans and self.max_spans > 0,
                                      cpu=Feature.CPU in self.features,
                                      thread_names=self.thread_names, spans=spans,
                                      io=Feature.IO in self.features,
                                      memory=Feature.MEMORY in self.features,
                                      process_ms=self.process_sample_ms or 0,
                                      snapshot_ms=self.snapshot_ms or 0, share=self.share,
                                      device=Feature.DEVICE in self.features,
                                      markers=Feature.MARKERS in self.features,
                                      annotate=self._record_function,
                                      activity=Feature.ACTIVITY in self.features,
                                      window=self._window_argument())
        except OSError as e:
            # the host program carries on without profiling
            warnings.warn(f"{e} (profiling is off)", RuntimeWarning, stacklevel=2)
            self._file = None
            return self
        if self.backend_window is not None:  # a run that ends inside the window writes its trace
            atexit.register(self._window_finish)
        self._began()
        if Feature.MARKERS in self.missing and os.environ.get("NVTX_INJECTION64_PATH"):
            # a tool the user named that did not attach is said, not dropped in silence
            warnings.warn(f"lapse: no NVTX markers: {self.missing_why[Feature.MARKERS]}",
                          RuntimeWarning, stacklevel=2)
        return self

    def _feature_missing(self, feature: Feature, why: str) -> None:
        """A feature of a C collector (COLLECTOR_FEATURES) asked for and not collected:
        why ("markers: ...", "device: ...", as lapse_missing() and
        lapse_check_features() say it), in missing."""
        self.missing |= feature
        self.missing_why[feature] = why.removeprefix(f"{(feature.name or '').lower()}: ")

    def _join(self, session: dict[str, Any]) -> None:
        """Checks the options asked for against the inherited session's, raising for
        those it cannot take (what it collects and keeps is fixed at its start); the
        options left to the default become the session's."""
        # the session's LAPSE_FEATURE_* bits (SESSION_BITS; DEVICE and ACTIVITY where
        # they started)
        bits = session["features"]
        collected = Feature(0)
        for flag, bit in SESSION_BITS:
            if bits & bit:
                collected |= flag
        cannot = []
        if "features" in self._given:
            for flag in (Feature.SPANS, Feature.CPU, Feature.IO, Feature.MEMORY):
                if (flag in self.features) != (flag in collected):
                    cannot.append(f"features: {flag.name} ({'on' if flag in collected else 'off'} "
                                  f"in the session)")
        fixed = (("max_spans", self.max_spans, session["max_spans"]),
                 ("snapshot_ms", self.snapshot_ms, session["snapshot_ms"]),
                 ("process_sample_ms", self.process_sample_ms, session["process_sample_ms"]),
                 ("share", self.share, session["share"]))
        for name, mine, theirs in fixed:
            if name in self._given and mine != theirs:
                cannot.append(f"{name}={mine!r} (the session's is {theirs!r})")
        if "run_dir" in self._given and self.run_dir is not None and \
                os.path.realpath(self.run_dir) != os.path.realpath(session["run_dir"]):
            cannot.append(f"run_dir={self.run_dir!r} (the session writes into {session['run_dir']!r})")
        if self._record_function is not None:
            cannot.append("annotate=True (what a span calls is fixed when the session starts)")
        if self.backend is not None:
            cannot.append("backend= (what a span calls is fixed when the session starts)")
        if cannot:
            raise RuntimeError("lapse: this process joins the session it inherited from its parent, "
                               "which cannot take " + "; ".join(cannot) +
                               ": leave them out to take the session's")
        # what this Profiler now stands for is the session's
        self.features = collected | (self.features & ~(AVAILABLE | COLLECTOR_FEATURES))
        self.max_spans = session["max_spans"]
        self.snapshot_ms = session["snapshot_ms"]
        self.process_sample_ms = session["process_sample_ms"] or None
        self.share = session["share"]
        self.run_dir = session["run_dir"]
        if "thread_names" not in self._given:
            self.thread_names = session["thread_names"]

    # ---- accounting API (phases and counts) ----

    def phase(self, name: str, io: bool = False, sync: bool = False,
              sample: float | None = None, gpu_time: bool = False) -> Any:
        """A phase: a span with options. ``sync=True`` synchronizes CUDA at both
        ends when torch with a CUDA device is in use (a no-op otherwise), so the
        phase's wall time includes its GPU work. ``gpu_time=True`` records its GPU
        time (torch.cuda.Event at both ends) beside its wall time, where torch has
        initialized CUDA; elsewhere the figure is missing with the reason."""
        return _lapse.phase(name, io=io, sync=sync, sample=sample, gpu_time=gpu_time)

    def count(self, name: str, n: int) -> None:
        """Adds n to the counter `name` of the innermost open phase."""
        _lapse.count(name, n)

    def current(self) -> str:
        """The dotted path of the phases open here (this thread, this task)."""
        return _lapse.current()

    # ---- choosing what is measured ----
    def pause(self) -> None:
        """Stops recording the spans of the calling thread (within it, of the current
        asyncio task) until ``resume()``. Refused (RuntimeError) while a span is open
        here, and when already paused here: pause between spans, not inside one."""
        if not self._active:
            raise RuntimeError("lapse: pause() needs an active Profiler")
        here = self._paused_here
        if getattr(here, "state", None) is not None and here.serial == self._serial:
            raise RuntimeError("lapse: pause(): already paused here (resume() first)")
        open_here = _lapse.current()
        if open_here:
            raise RuntimeError(f"lapse: pause() while the span {open_here!r} is open here: "
                               "pause between spans, not inside one")
        here.state, here.serial = _lapse.pause_here() or (), self._serial  # (): no spans to pause

    def resume(self) -> None:
        """Records the calling thread's spans again after ``pause()``. Refused
        (RuntimeError) while a span begun during the pause is still open, and where
        nothing was paused; after the session stopped it does nothing."""
        here = self._paused_here
        state = getattr(here, "state", None)
        if state is None or here.serial != self._serial:
            if not self._active:
                return
            raise RuntimeError("lapse: resume() without pause() on this thread")
        if self._active and state:
            open_here = _lapse.current()
            if open_here != "(paused)":
                raise RuntimeError(f"lapse: resume() while the span {open_here!r} is open "
                                   "(begun during the pause): end it first")
            _lapse.resume_here(state)
        here.state = None

    def sample_every(self, n: int, name: str = "iteration") -> Any:
        """A span named `name` (a context manager) that measures its first entry and
        then one in every `n` (entries 1, n + 1, 2n + 1, ...), each scaled by n, and
        records nothing for the others: ``with every10:`` inside a loop. The report
        marks what comes from it as estimated (``~``, "1 entry in n"). The same
        (name, n) gives the same object, which counts its entries over the process."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"lapse: sample_every(n): n is a whole number >= 1, not {n!r}")
        return _lapse.phase(name, sample=1.0 / n)

    def _began(self) -> None:
        """What follows a session's start, whether this Profiler started it or
        adopted one the environment or a fork started."""
        from ._processes import hook_multiprocessing

        self._active = True
        self._serial += 1  # a pause of an earlier session is over
        # what the C collectors collect, and why not, is the session's word (checked
        # before it started, an NVTX tool or a driver may since have come or gone)
        settings = _lapse.session_settings()
        bits = settings["features"] if settings else 0
        for feature, bit in SESSION_BITS:
            if feature in COLLECTOR_FEATURES and bits & bit:
                self.missing &= ~feature
                self.missing_why.pop(feature, None)
        for entry in _lapse.missing().split("; "):
            for feature in COLLECTOR_FEATURES:
                if entry.startswith(f"{(feature.name or '').lower()}: ") and feature in self.features:
                    self._feature_missing(feature, entry)  # the session runs without it, and says why
        sync_environment()
        self._live.began()
        self._vram.start()
        if bits & dict(SESSION_BITS)[Feature.ACTIVITY]:  # the session collects it
            from . import _torch_profiler  # torch.profiler recording CUDA gets CUPTI

            _torch_profiler.install()
        if Feature.SPANS in self.features:
            from .instrument import environment_tags
            _lapse.enable_tags(self.enable_tags | environment_tags())
            _lapse.timing_enable()
            if self.auto:
                from .auto import AutoSpans
                auto = AutoSpans(self.auto)
                try:
                    auto.start()
                except BaseException:
                    self.stop()  # no session without the spans asked for
                    raise
                self._auto = auto
        hook_multiprocessing()
        if self._lapse_command and Feature.PYTHON not in self.missing and self._file:
            from ._python_sampler import PythonSampler, launcher_files

            sampler = PythonSampler(self._lapse_command, self.python_hz,
                                    launcher_files() if self._launcher else ())
            self._python_sampler = sampler
            sampler.start(self._file, wait=self.strict)
            if self.strict and sampler.failure:
                # before the body runs: no session, no sampler
                sampler.abandon()
                self._python_sampler = None
                self.stop()
                raise RuntimeError(f"lapse: strict=True and the Python sampler (lapse record) could not "
                                   f"start: {sampler.failure}")
        if self.strict_names:
            _names.strict = True
        if self.install:
            if Profiler._installed is not None:
                warnings.warn("lapse: another Profiler is installed; replacing it", RuntimeWarning,
                              stacklevel=3)
            Profiler._installed = self

    def stop(self) -> None:
        """Ends the session and writes the final file (idempotent)."""
        if not self._active:
            return
        self._live.stop()  # a last interval for on_snapshot callbacks, then the final write
        self._vram.stop()  # a last reading of torch's VRAM peaks for it
        if self._auto is not None:
            auto, self._auto = self._auto, None
            auto.stop()
        _lapse.timing_disable()
        from .instrument import environment_tags
        _lapse.enable_tags(environment_tags())
        if self.strict_names:
            _names.strict = False
        if self.backend_window is not None:
            atexit.unregister(self._window_finish)
            self._window_finish()
        self._file = _lapse.stop() or self._file
        from . import _torch_profiler

        _torch_profiler.uninstall()
        sync_environment()  # as the C environment: restored
        self._active = False
        if self._python_sampler is not None:
            sampler, self._python_sampler = self._python_sampler, None
            sampler.stop(self._file)
        if Profiler._installed is self:
            Profiler._installed = None

    close = stop

    def flush(self) -> None:
        """Writes a snapshot of the session now."""
        if self._active:
            _lapse.flush()

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def active(self) -> bool:
        return self._active

    @property
    def file(self) -> str | None:
        """The .lapse file this process writes (or wrote)."""
        return self._file

    # ---- live export ----

    def on_snapshot(self, callback: Callable[[Interval], Any]) -> None:
        """Calls ``callback(interval)`` after each periodic snapshot of the session
        (every ``snapshot_ms``) and once more at stop, on a thread of its own
        ("lapse-live"), with the stats of the interval since the previous call: a
        ``lapse.live.Interval``. A callback that raises is counted
        (``callback_errors``; the counter ``lapse.snapshot_callback_errors`` in the
        result) and warned about once; it never stops the snapshots or the other
        callbacks."""
        self._live.add(callback, self._active)

    def deltas(self) -> Interval | None:
        """The stats since the previous call (the first: since the session
        started), as a ``lapse.live.Interval``; None when the session is not
        active. Quantiles come from the difference of the histograms; a phase idle
        in the interval is absent."""
        if not self._active:
            return None
        return self._live.deltas()

    @property
    def callback_errors(self) -> int:
        """How many on_snapshot callbacks raised."""
        return self._live.callback_errors

    # ---- results ----

    def result(self) -> Profile:
        """The profile of this process: a ``Profile`` (pure data). While the session
        is active it is a snapshot taken now."""
        from .profile import Profile

        if self._file is None:
            raise RuntimeError("lapse: this Profiler recorded nothing (it never started)")
        if self._active:
            _lapse.flush()
        return Profile.load(self._file)

    def show(self) -> None:
        """Prints the report of this process."""
        self.result().show()

    @classmethod
    def run(cls, target: str, args: Sequence[str] = (), **options: Any) -> Profile:
        """Runs a module (``"pkg.mod"``) or a script (``"train.py"``, any path with a
        separator) once, in this process, with a session active, and returns its
        Profile (``run_target``: a name without ``.py`` or a separator is a module,
        never a file of that name). ``options`` are the Profiler's arguments.
        ``sys.argv`` is the target's while it runs; ``sys.argv`` and ``sys.path`` are
        restored exactly afterwards; a SystemExit of the target ends the run
        normally."""
        profiler = cls(**options)
        profiler._launcher = True
        with profiler:
            run_target(target, args)
        return profiler.result()

    def __repr__(self) -> str:
        state = "active" if self._active else "stopped" if self._file else "not started"
        return f"<lapse.Profiler {state} role={self.role!r} features={self.features!r}>"


def run_target(target: str, args: Sequence[str] = (), module: bool | None = None) -> int:
    """Runs a script path or a module name as __main__ with sys.argv set; returns
    the exit status it asked for (SystemExit), 0 when it returned.

    Unless ``module`` says, a target that ends with ``.py`` or holds a path
    separator is a script, anything else a module name, as ``python -m`` takes it: a
    file of that name in the working directory is not run (``./name`` runs it). A
    script's directory comes first on sys.path while it runs, as with ``python
    script.py``. Afterwards ``sys.argv`` and ``sys.path`` are what they were: the same
    list objects with the same items, whatever the target did to them."""
    if module is None:
        separators = [s for s in (os.sep, os.altsep) if s]
        module = not (target.endswith(".py") or any(s in target for s in separators))
    saved_argv, saved_path = sys.argv, sys.path
    argv_items, path_items = list(saved_argv), list(saved_path)
    sys.argv = [target, *args]
    if not module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv, sys.path = saved_argv, saved_path
        saved_argv[:], saved_path[:] = argv_items, path_items
    return 0
