"""VRAM from torch: the caching allocator's peaks, per device, for the session's file.

In a process where torch has initialised CUDA (``torch.cuda.is_initialized()``: lapse
never imports torch nor initialises CUDA itself), each reading hands the session, per
torch device index, ``max_memory_allocated(i)``, ``max_memory_reserved(i)`` and the
device's uuid and name (``get_device_properties(i)``); the session keeps the largest
peaks read and counts a peak that went down (the program called
``reset_peak_memory_stats``) as a reset (session/gpu_memory.c). A reading is taken
after each periodic snapshot (so the next one carries it), at ``Profiler.stop`` and
at exit, before the final write. A call that raises is recorded as the reason, never
raised into the program.
"""

from __future__ import annotations

import atexit
import sys
import threading

from . import _lapse


def read() -> tuple[list[tuple[int, str, str, int, int]], str] | None:
    """(devices, "") or ([], why it failed); None when torch has no CUDA to read."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    call = "torch.cuda.is_initialized()"
    try:
        cuda = torch.cuda
        if not cuda.is_initialized():
            return None
        call = "torch.cuda.device_count()"
        devices = []
        for i in range(cuda.device_count()):
            call = f"torch.cuda.get_device_properties({i})"
            props = cuda.get_device_properties(i)
            uuid, name = str(getattr(props, "uuid", "") or ""), str(getattr(props, "name", "") or "")
            call = f"torch.cuda.max_memory_allocated({i})"
            allocated = int(cuda.max_memory_allocated(i))
            call = f"torch.cuda.max_memory_reserved({i})"
            reserved = int(cuda.max_memory_reserved(i))
            devices.append((i, uuid, name, allocated, reserved))
    except Exception as e:  # the program carries on; the file says why
        return [], f"{call}: {type(e).__name__}: {e}"
    return devices, ""


def take() -> None:
    """One reading, handed to the active session; nothing without torch's CUDA."""
    try:
        got = read()
        if got is not None:
            _lapse.gpu_memory_reading(got[0], got[1])
    except Exception:  # never into the program (a value torch gave that is no int)
        pass


class TorchMemory:
    """The reading thread ("lapse-vram") of one Profiler's session."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        self._stop.clear()
        atexit.register(take)  # before the C layer's final write at exit
        self._thread = threading.Thread(target=self._run, name="lapse-vram", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        take()
        seq = _lapse.wait_snapshot(2**64 - 1, 0)[1]  # the count so far
        while not self._stop.is_set():
            written, seq = _lapse.wait_snapshot(seq, 1000)
            if self._stop.is_set() or not _lapse.is_active():
                return
            if written:
                take()  # the next snapshot carries it

    def stop(self) -> None:
        """Before the session stops: a last reading for the final write."""
        self._stop.set()
        _lapse.wake_snapshot_waiters()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        atexit.unregister(take)
        take()
