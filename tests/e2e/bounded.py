"""Running a command with its time and memory bounded, and measuring both: for the
tests of hostile input (tests/e2e/test_hostile_files.py, tests/python).

The memory bound is a memory cgroup when this process may make one (root, cgroup v1
or v2 with the memory controller): it counts what the process touches, as a batch
system's limit does, and the kernel kills it past the limit. Elsewhere it is
RLIMIT_AS (address space): allocations past it fail instead. `how` says which.
"""

from __future__ import annotations

import os
import pathlib
import resource
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass


@dataclass
class Bounded:
    returncode: int | None  # None: killed at the time bound
    seconds: float
    peak_rss_kb: int
    stdout: bytes
    stderr: str
    how: str  # "cgroup v1 512 MiB", "cgroup v2 ...", "RLIMIT_AS ...", "no memory bound"

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def _cgroup(limit: int) -> tuple[pathlib.Path, str] | None:
    if os.geteuid() != 0:
        return None
    name = f"lapse-test-{uuid.uuid4().hex[:8]}"
    v1 = pathlib.Path("/sys/fs/cgroup/memory")
    v2 = pathlib.Path("/sys/fs/cgroup")
    try:
        if (v1 / "memory.limit_in_bytes").exists():
            d = v1 / name
            d.mkdir()
            (d / "memory.limit_in_bytes").write_text(str(limit))
            return d, f"cgroup v1 memory limit {limit >> 20} MiB"
        if "memory" in (v2 / "cgroup.controllers").read_text().split():
            d = v2 / name
            d.mkdir()
            (d / "memory.max").write_text(str(limit))
            (d / "memory.swap.max").write_text("0")
            return d, f"cgroup v2 memory.max {limit >> 20} MiB"
    except OSError:
        return None
    return None


def run_bounded(argv: list[str], memory_bytes: int | None = None, timeout_s: float = 60,
                env: dict | None = None) -> Bounded:
    """Runs argv to completion or until timeout_s (then kills its process group)."""
    cg = _cgroup(memory_bytes) if memory_bytes else None
    how = cg[1] if cg else (f"RLIMIT_AS {memory_bytes >> 20} MiB" if memory_bytes else "no memory bound")

    def enter() -> None:
        os.setsid()
        if cg:
            (cg[0] / "cgroup.procs").write_text(str(os.getpid()))
        elif memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen([str(a) for a in argv], stdout=out, stderr=err, env=env,
                                preexec_fn=enter)
        rc: int | None = None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() - start > timeout_s:
                os.killpg(proc.pid, signal.SIGKILL)
                _, _, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        seconds = time.monotonic() - start
        proc.returncode = rc if rc is not None else -9
        out.seek(0)
        err.seek(0)
        result = Bounded(rc, seconds, usage.ru_maxrss, out.read(),
                         err.read().decode(errors="replace"), how)
    if cg:
        try:
            cg[0].rmdir()
        except OSError:
            pass
    return result
