"""A worker process for the signal tests: python signal_worker.py STATE_FILE STOP_FILE.

Its own SIGUSR1 and SIGHUP handlers are installed before lapse loads, so lapse's
handler writes a snapshot and chains to them: the process carries on (a non-final
file). It runs phases until STOP_FILE exists, writing after each phase, atomically,
"<completed phases>" to STATE_FILE (only once the phase has ended), then exits."""

from __future__ import annotations

import os
import signal
import sys
import time

signal.signal(signal.SIGUSR1, lambda s, f: None)
signal.signal(signal.SIGHUP, lambda s, f: None)

from lapse import Profiler  # noqa: E402  (after the handlers: lapse chains to them)

state, stop = sys.argv[1], sys.argv[2]
done = 0
with Profiler(role="worker") as p:  # adopts the session inherited from the parent
    with open(state + ".pid", "w") as f:
        f.write(f"{os.getpid()} {p.file}\n")
    deadline = time.monotonic() + 60
    while not os.path.exists(stop) and time.monotonic() < deadline:
        with p.phase("step"):
            time.sleep(0.002)
        done += 1
        with open(state + ".tmp", "w") as f:
            f.write(str(done))
        os.replace(state + ".tmp", state)
print(done)
