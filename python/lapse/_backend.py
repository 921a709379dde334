"""Heavy backends for a window of phase entries (Profiler(backend=..., backend_window=
(start, stop), window_phase=...)). The entries are counted in C (_ext/window.c), which
calls open() on the start-th entry and close() on the stop-th; this module only starts
and stops the package and names its trace: <run dir>/backend/<backend>-<pid>.json."""
from __future__ import annotations

import importlib.util
import os
from typing import Any

from . import _lapse

BACKENDS = ("torch", "viztracer")

# a forked child runs none of its parent's window (its session's file has none)
os.register_at_fork(after_in_child=_lapse.window_forget)


def check(backend: str | None, window: Any, phase: str | None) -> tuple[int, int] | None:
    """The window asked for, checked (ValueError), or None without a backend."""
    if backend is None:
        if window is not None or phase is not None:
            raise ValueError("lapse: backend_window and window_phase need backend= "
                             f"(one of {', '.join(BACKENDS)})")
        return None
    if backend not in BACKENDS:
        raise ValueError(f"lapse: unknown backend {backend!r} (one of {', '.join(BACKENDS)})")
    if not isinstance(phase, str) or not phase:
        raise ValueError("lapse: backend= needs window_phase= (the span whose entries are counted)")
    try:
        first, last = window
    except (TypeError, ValueError):
        raise ValueError(f"lapse: backend_window is (start, stop), not {window!r}") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (first, last)) or \
            first < 1 or first >= last:
        raise ValueError(f"lapse: backend_window=(start, stop): whole entries with 1 <= start < stop "
                         f"(entries start .. stop - 1 are inside it), not {window!r}")
    return first, last


def unavailable(backend: str) -> str | None:
    """Why the backend's package cannot be imported here, or None (not imported yet:
    that happens when the window opens)."""
    module = "torch.profiler" if backend == "torch" else "viztracer"
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError) as e:
        return f"{module} is not importable: {e}"
    return None if found else f"{module} is not importable (the package is not installed)"


def trace_path(backend: str) -> str:
    """Beside the process's .lapse file (of the session now): its run directory's backend/."""
    return os.path.join(os.path.dirname(_lapse.file_path() or ""), "backend",
                        f"{backend}-{os.getpid()}.json")


class TorchWindow:
    """torch.profiler for the window: CPU, and CUDA where torch has a device; its Chrome
    trace (export_chrome_trace)."""

    def __init__(self) -> None:
        self.path = ""
        self._profile: Any = None

    def open(self) -> None:
        self.path = trace_path("torch")
        import torch
        import torch.profiler as tp

        activities = [tp.ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(tp.ProfilerActivity.CUDA)
        profile = tp.profile(activities=activities)
        profile.start()
        self._profile = profile

    def close(self) -> str:
        profile, self._profile = self._profile, None
        profile.stop()
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        profile.export_chrome_trace(self.path)
        return self.path


class VizTracerWindow:
    """VizTracer for the window; its JSON trace (save)."""

    def __init__(self) -> None:
        self.path = ""
        self._tracer: Any = None

    def open(self) -> None:
        self.path = trace_path("viztracer")
        from viztracer import VizTracer

        tracer = VizTracer(output_file=self.path, verbose=0)
        tracer.start()
        self._tracer = tracer

    def close(self) -> str:
        tracer, self._tracer = self._tracer, None
        tracer.stop()
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tracer.save(self.path)
        return self.path


def runner(backend: str) -> TorchWindow | VizTracerWindow:
    return TorchWindow() if backend == "torch" else VizTracerWindow()
