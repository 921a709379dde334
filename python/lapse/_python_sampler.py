"""The PYTHON feature: this process's Python stacks, sampled from outside by the
`lapse record --pid` command (a C program reading the interpreter with
process_vm_readv; docs/sampler.md), added to the session's final .lapse file at stop,
where each sample carries the span path that was open on its thread."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import warnings

from . import _lapse

SUPPORTED_VERSIONS = ((3, 11), (3, 12), (3, 13))


def command() -> str | None:
    """The `lapse` command as an absolute path, found the way it is then run:
    $LAPSE_COMMAND (a path, or a name looked up on PATH as execvp looks it up), else
    the one pip installed next to this interpreter, else the first on PATH."""
    chosen = os.environ.get("LAPSE_COMMAND")
    if chosen:
        found = shutil.which(chosen)
        return os.path.abspath(found) if found else None
    sibling = os.path.join(os.path.dirname(sys.executable), "lapse")
    if os.access(sibling, os.X_OK):
        return sibling
    found = shutil.which("lapse")
    return os.path.abspath(found) if found else None


def resolve() -> tuple[str | None, str | None]:
    """(the lapse command, resolved once: command()), and why this process's Python
    cannot be sampled from outside (None when it can)."""
    if sys.version_info[:2] not in SUPPORTED_VERSIONS:
        return None, (f"CPython {sys.version_info[0]}.{sys.version_info[1]} is not supported "
                      "(3.11 to 3.13)")
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return None, "a free-threaded CPython is not supported"
    cmd = command()
    if cmd is None:
        chosen = os.environ.get("LAPSE_COMMAND")
        if chosen:
            return None, (f"LAPSE_COMMAND={chosen} is not an executable file, nor a command "
                          "on PATH")
        return None, "the lapse command was not found (pip install . puts it next to python)"
    return cmd, None


def unavailable_reason() -> str | None:
    """Why this process's Python cannot be sampled from outside; None when it can."""
    return resolve()[1]


class PythonSampler:
    """A `lapse record --pid` process (cmd: the lapse command, as resolve() found it)
    sampling this process at rate_hz."""

    def __init__(self, cmd: str, rate_hz: int) -> None:
        self.cmd = cmd
        self.rate_hz = rate_hz
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._out = ""
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None

    def start(self, session_file: str) -> None:
        cmd = self.cmd
        self._out = session_file + ".samples"
        # the sampler is not a process of the run: none of the session's variables
        env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
        self._log = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [cmd, "record", "--pid", str(os.getpid()), "-r", str(self.rate_hz),
                 "--format", "lapse", "-o", self._out],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, env=env)
        except OSError as e:
            warnings.warn(f"lapse: cannot start the Python sampler {cmd}: {e} "
                          "(no PYTHON samples)", RuntimeWarning, stacklevel=3)
            self._log.close()
            self._log = None
            return
        self._owner = os.getpid()
        # that child, and no other process, may read this one (Yama's ptrace_scope 1)
        _lapse.allow_reader(self._proc.pid)

    def stop(self, final_file: str | None) -> None:
        """Ends the sampling and adds its samples to final_file (the session's final
        file, written before this). A forked child's copy does nothing."""
        proc, self._proc = self._proc, None
        if proc is None or os.getpid() != self._owner:
            return
        proc.send_signal(signal.SIGINT)
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
        _lapse.allow_reader(0)  # withdrawn: its pid may be another process's next
        log = b""
        if self._log is not None:
            self._log.seek(0)
            log = self._log.read()
            self._log.close()
            self._log = None
        said = [line for line in log.decode(errors="replace").splitlines()
                if line.startswith("lapse record:") and " wrote " not in line]
        if status != 0 or not os.path.exists(self._out):
            reason = said[-1] if said else f"the sampler ended with status {status}"
            warnings.warn(f"lapse: no PYTHON samples: {reason}", RuntimeWarning, stacklevel=3)
            return
        if final_file is None:
            return
        try:
            _lapse.add_samples(self._out, final_file)
        except OSError as e:
            warnings.warn(f"lapse: the PYTHON samples stay in {self._out}: {e}", RuntimeWarning,
                          stacklevel=3)
