"""A target for the failed-write tests: python write_fail_target.py RUN_DIR

Reads commands from stdin, one a line: "start" starts a Profiler in RUN_DIR and
prints "file <path>"; "stop" stops it (printing "stopped"); "exit" exits with the
Profiler still running (its final write comes at the interpreter's exit)."""

from __future__ import annotations

import sys

from lapse import Profiler, span

profiler = None
for line in sys.stdin:
    command = line.strip()
    if command == "start":
        profiler = Profiler(run_dir=sys.argv[1], role="writer", snapshot_ms=3_600_000).start()
        with span("step"):
            pass
        print("file", profiler.file, flush=True)
    elif command == "stop":
        profiler.stop()
        print("stopped", flush=True)
    elif command == "exit":
        break
print("bye", flush=True)
