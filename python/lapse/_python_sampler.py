"""The PYTHON feature: this process's Python stacks, sampled from outside by the
`lapse record --pid` command (a C program reading the interpreter with
process_vm_readv; docs/sampler.md), added to the session's final .lapse file at stop,
where each sample carries the span path that was open on its thread."""

from __future__ import annotations

import os
import runpy
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
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


def launcher_files() -> tuple[str, ...]:
    """The files of the frames beneath a script that lapse runs (`lapse run`,
    Profiler.run): lapse's launcher and runpy. Left out of its samples."""
    here = os.path.dirname(os.path.abspath(__file__))
    files = [os.path.join(here, "__main__.py"), os.path.join(here, "profiler.py"), "<frozen runpy>"]
    if getattr(runpy, "__file__", None):
        files.append(os.path.abspath(runpy.__file__))
    return tuple(files)


STARTED = b"lapse record: sampling process "  #: the line the sampler prints once it reads us
START_TIMEOUT_S = 15.0


def what_it_said(log: bytes) -> list[str]:
    """The sampler's lines on stderr but its start line and its summary."""
    return [line for line in log.decode(errors="replace").splitlines()
            if line.startswith("lapse record:") and " wrote " not in line
            and not line.encode().startswith(STARTED)]


def failed(final_file: str | None, rate_hz: int) -> None:
    """Python stack sampling was asked for and took no pass: the final file says so (a
    caveat in its report)."""
    if final_file is None:
        return
    try:
        _lapse.add_failed_sampling(final_file, "wall", float(rate_hz))
    except OSError as e:
        warnings.warn(f"lapse: cannot note the failed sampling in {final_file}: {e}", RuntimeWarning,
                      stacklevel=3)


class PythonSampler:
    """A `lapse record --pid` process (cmd: the lapse command, as resolve() found it)
    sampling this process at rate_hz."""

    def __init__(self, cmd: str, rate_hz: int, hide_root: tuple[str, ...] = ()) -> None:
        self.cmd = cmd
        self.rate_hz = rate_hz
        self.hide_root = hide_root
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = 0
        self._out = ""
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None
        self.failure: str | None = None  #: why it could not start, once known

    def start(self, session_file: str, wait: bool = False) -> None:
        """Starts the sampler. With wait, returns once it reads this process, or with
        self.failure saying why it could not (it ended, or said nothing in time)."""
        cmd = self.cmd
        self._out = session_file + ".samples"
        # the sampler is not a process of the run: none of the session's variables
        env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
        self._log = tempfile.TemporaryFile()
        hide = [a for f in self.hide_root for a in ("--hide-root", f)]
        try:
            self._proc = subprocess.Popen(
                [cmd, "record", "--pid", str(os.getpid()), "-r", str(self.rate_hz),
                 "--format", "lapse", "-o", self._out, *hide],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, env=env)
        except OSError as e:
            self.failure = f"cannot start the Python sampler {cmd}: {e}"
            warnings.warn(f"lapse: {self.failure} (no PYTHON samples)", RuntimeWarning, stacklevel=3)
            self._log.close()
            self._log = None
            return
        self._owner = os.getpid()
        # that child, and no other process, may read this one (Yama's ptrace_scope 1)
        _lapse.allow_reader(self._proc.pid)
        if wait:
            self._wait_started()

    def _wait_started(self) -> None:
        assert self._proc is not None and self._log is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._log.seek(0)
            if STARTED in self._log.read():
                self._log.seek(0, os.SEEK_END)
                return
            status = self._proc.poll()
            if status is not None:
                self._log.seek(0)
                said = what_it_said(self._log.read())
                self.failure = said[-1] if said else f"the sampler ended with status {status}"
                return
            time.sleep(0.01)
        self.failure = f"the sampler did not start reading this process in {START_TIMEOUT_S:g} s"

    def abandon(self) -> None:
        """Ends a sampler that is not wanted any more (strict start that failed)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def stop(self, final_file: str | None) -> None:
        """Ends the sampling and adds its samples to final_file (the session's final
        file, written before this). A forked child's copy does nothing."""
        proc, self._proc = self._proc, None
        if self._owner and os.getpid() != self._owner:
            return
        if proc is None:
            if self.failure:
                failed(final_file, self.rate_hz)
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
        said = what_it_said(log)
        if status != 0 or not os.path.exists(self._out):
            reason = said[-1] if said else f"the sampler ended with status {status}"
            warnings.warn(f"lapse: no PYTHON samples: {reason}", RuntimeWarning, stacklevel=3)
            failed(final_file, self.rate_hz)
            return
        if final_file is None:
            return
        try:
            _lapse.add_samples(self._out, final_file)
        except OSError as e:
            warnings.warn(f"lapse: the PYTHON samples stay in {self._out}: {e}", RuntimeWarning,
                          stacklevel=3)
