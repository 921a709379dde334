"""Live export: per-interval stats of the running session, for dashboards and tests.

``Profiler.deltas()`` returns what happened since its previous call;
``Profiler.on_snapshot(callback)`` calls ``callback(interval)`` on a thread of
its own after each periodic snapshot the session writes (every ``snapshot_ms``).

Each interval is computed in C (analyze/live_delta.h) from the session's cumulative
state, taken in memory (no file is read): calls, totals and counters are differences,
and the quantiles come from the difference of the two histograms (the core's
496-bucket log-linear histograms, bucket by bucket), so they are the quantiles of the
calls completed in the interval, within one bucket (< 1/8 of the value). A phase that
completed no call and changed no counter in the interval is absent from it, not zero.
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from . import _lapse

__all__ = ["Interval", "PhaseDelta"]

_ERRORS_COUNTER = "lapse.snapshot_callback_errors"


@dataclass(frozen=True)
class PhaseDelta:
    """What one phase (span path of this process, merged over its threads) did in
    one interval. Durations in ns; quantiles of the calls completed in the interval
    (``None`` when it completed none, only counted)."""

    path: str  #: names joined with "."
    names: tuple[str, ...]
    calls: int
    total_ns: int
    mean_ns: int | None
    p50_ns: int | None
    p90_ns: int | None
    p99_ns: int | None
    counters: Mapping[str, int] = field(hash=False)


@dataclass(frozen=True)
class Interval:
    """The stats of one interval: from ``start_ns`` to ``end_ns`` (time.monotonic_ns
    of the two readings). ``phases`` maps dotted paths to their ``PhaseDelta`` (only
    phases active in the interval); ``outside`` holds counters counted with no span
    open. ``callback_errors`` is how many on_snapshot callbacks raised so far."""

    seq: int
    start_ns: int
    end_ns: int
    phases: Mapping[str, PhaseDelta]
    outside: Mapping[str, int]
    callback_errors: int
    restarted: bool = False  #: the session restarted: figures are since its start

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


class _Baseline:
    """One consumer's baseline: the cumulative state at the end of its previous
    interval, held by the extension (the interval is computed in C,
    analyze/live_delta.h)."""

    def __init__(self, start_ns: int, take: bool = False) -> None:
        self.base = _lapse.live_baseline(take)
        self.at_ns = start_ns
        self.seq = 0

    def advance(self, callback_errors: int) -> Interval | None:
        got = _lapse.live_advance(self.base)
        now = time.monotonic_ns()
        if got is None:
            return None
        rows, outside, restarted = got
        phases: dict[str, PhaseDelta] = {}
        for names, calls, total_ns, mean_ns, p50_ns, p90_ns, p99_ns, counters in rows:
            dotted = ".".join(names)
            phases[dotted] = PhaseDelta(
                path=dotted, names=names, calls=calls, total_ns=total_ns, mean_ns=mean_ns,
                p50_ns=p50_ns, p90_ns=p90_ns, p99_ns=p99_ns, counters=MappingProxyType(counters))
        self.seq += 1
        interval = Interval(seq=self.seq, start_ns=self.at_ns, end_ns=now,
                            phases=MappingProxyType(phases), outside=MappingProxyType(outside),
                            callback_errors=callback_errors, restarted=restarted)
        self.at_ns = now
        return interval


class LiveExport:
    """The on_snapshot thread and the deltas() baseline of one Profiler."""

    def __init__(self) -> None:
        self.callbacks: list[Callable[[Interval], Any]] = []
        self.callback_errors = 0
        self.last_error: BaseException | None = None
        self._deltas: _Baseline | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._warned = False

    # ---- deltas() ----

    def began(self) -> None:
        now = time.monotonic_ns()
        self._deltas = _Baseline(now)
        self._stop.clear()
        if self.callbacks:
            self._start_thread()

    def deltas(self) -> Interval | None:
        if self._deltas is None:
            return None
        return self._deltas.advance(self.callback_errors)

    # ---- on_snapshot() ----

    def add(self, callback: Callable[[Interval], Any], active: bool) -> None:
        if not callable(callback):
            raise TypeError("on_snapshot needs a callable")
        with self._lock:
            self.callbacks.append(callback)
        if active:
            self._start_thread()

    def _start_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        baseline = _Baseline(time.monotonic_ns(), take=True)
        self._thread = threading.Thread(target=self._run, args=(baseline,),
                                        name="lapse-live", daemon=True)
        self._thread.start()

    def _deliver(self, baseline: _Baseline) -> None:
        interval = baseline.advance(self.callback_errors)
        if interval is None:
            return
        with self._lock:
            callbacks = list(self.callbacks)
        for cb in callbacks:
            try:
                cb(interval)
            except Exception as e:  # counted, never stops the flush or the others
                self.callback_errors += 1
                self.last_error = e
                _lapse.count(_ERRORS_COUNTER, 1)  # no span open here: in the result
                if not self._warned:
                    self._warned = True
                    warnings.warn(f"lapse: an on_snapshot callback raised {e!r} (counted in "
                                  f"{_ERRORS_COUNTER}; later ones are not warned)",
                                  RuntimeWarning, stacklevel=1)

    def _run(self, baseline: _Baseline) -> None:
        seq = _lapse.wait_snapshot(2**64 - 1, 0)[1]  # the count so far
        while not self._stop.is_set():
            written, seq_now = _lapse.wait_snapshot(seq, 1000)
            if self._stop.is_set():
                break
            if not written:
                if not _lapse.is_active():
                    return
                continue
            seq = seq_now
            self._deliver(baseline)
        if _lapse.is_active():
            self._deliver(baseline)  # the last, partial interval, before the final write

    def stop(self) -> None:
        """Before the session stops: ends the thread after a last delivery."""
        self._stop.set()
        _lapse.wake_snapshot_waiters()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._deltas = None
