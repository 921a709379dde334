"""A target for the signal tests: python storm_target.py RUN_DIR|- WAIT [echo]

Counts, in Python handlers installed with the signal module, each SIGTERM, SIGINT,
SIGUSR1 and SIGHUP (with "echo", each run also writes one byte, b"!", to stdout);
then (RUN_DIR given) starts a Profiler there, whose handler chains to Python's.
Prints "ready <pid>", waits (WAIT: "read", blocked reading stdin; "sleep", in
time.sleep) until stdin is closed, then prints the counts as JSON."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

run_dir, wait = sys.argv[1], sys.argv[2]
echo = sys.argv[3:] == ["echo"]
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP)
counts = {s.name: 0 for s in SIGNALS}


def handler(sig, frame):
    counts[signal.Signals(sig).name] += 1
    if echo:
        os.write(1, b"!")


for s in SIGNALS:
    signal.signal(s, handler)

profiler = None
if run_dir != "-":
    from lapse import Profiler

    profiler = Profiler(run_dir=run_dir, role="storm")
    profiler.start()
print("ready", os.getpid(), flush=True)
if wait == "read":
    while sys.stdin.buffer.read(64):
        pass
else:
    closed = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.buffer.read(), closed.set()), daemon=True).start()
    while not closed.is_set():
        time.sleep(0.01)
if profiler:
    profiler.stop()
print(json.dumps(counts), flush=True)
