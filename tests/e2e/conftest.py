"""Shared pieces of the end-to-end tests: real programs, real processes, real signals.

The build under test is $LAPSE_BUILD_DIR (default: build/ at the repository root),
so that the same suite runs against the normal and the sanitizer build:

    LAPSE_BUILD_DIR=build-asan python3 -m pytest tests/e2e
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# Every child process gets a timeout: a hang must fail a test, never the suite.
TIMEOUT_S = 30

# Spans per iteration of tests/e2e/e2e_workers.c:
# iteration, iteration/work, iteration/work/inner (x2), iteration/sync.
SPANS_PER_ITERATION = 5
WORKER_PATHS = {
    "iteration": 1,
    "iteration/work": 1,
    "iteration/work/inner": 2,
    "iteration/sync": 1,
}


def build_dir() -> pathlib.Path:
    d = pathlib.Path(os.environ.get("LAPSE_BUILD_DIR", "build"))
    return d if d.is_absolute() else REPO / d


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without any LAPSE_* variable, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def profile_env(run_dir: os.PathLike | str, role: str | None = None,
                snapshot_ms: int | None = None, **extra: str) -> dict[str, str]:
    """Environment that makes a program linked with liblapse profile itself."""
    env = clean_env(LAPSE_PROFILE="1", LAPSE_RUN_DIR=str(run_dir), **extra)
    if role is not None:
        env["LAPSE_ROLE"] = role
    if snapshot_ms is not None:
        env["LAPSE_SNAPSHOT_MS"] = str(snapshot_ms)
    return env


# LeakSanitizer, at exit of a forked child of a multi-threaded process (liblapse's
# flush thread runs in the parent), still lists the parent's threads and prints this
# line for each one. It is a sanitizer artefact, not output of the program; a real
# leak report still fails the run (the child exits non-zero, and the test sees it).
_SANITIZER_NOISE = re.compile(r"^==\d+==Running thread \d+ was not suspended\. "
                              r"False leaks are possible\.$")


def stderr_lines(text: str) -> list[str]:
    """The lines of a program's stderr, without known sanitizer noise."""
    return [line for line in text.splitlines() if not _SANITIZER_NOISE.match(line)]


def start_program(args, env: dict, **kw) -> subprocess.Popen:
    """Starts a program in its own process group (see kill_group), text mode."""
    return subprocess.Popen([str(a) for a in args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def kill_group(proc: subprocess.Popen) -> None:
    """Kills what is left of a program and every process it forked."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if proc.poll() is None:
        proc.wait()


def run_program(args, env: dict, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
    """Runs a program to completion; on timeout kills it and its children, then fails."""
    proc = start_program(args, env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        pytest.fail(f"{args[0]} did not finish in {timeout}s (killed with its children)\n"
                    f"stdout: {out[-2000:]}\nstderr: {err[-2000:]}")
    finally:
        kill_group(proc)  # workers it forked and left behind
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def wait_until(predicate, timeout_s: float = 20.0, what: str = "condition",
               interval_s: float = 0.005):
    """Polls predicate() until it returns something truthy; fails after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(interval_s)


@dataclass
class Lapse:
    """The build under test: the `lapse` command and the test programs."""

    build: pathlib.Path

    @property
    def exe(self) -> pathlib.Path:
        return self.build / "lapse"

    def program(self, name: str) -> str:
        path = self.build / name
        if not path.exists():
            pytest.fail(f"{path} is missing: build first (make build, or ninja -C {self.build})")
        return str(path)

    def run(self, *args, env: dict | None = None, check: bool = False,
            timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess:
        """Runs `lapse ARGS...` and returns the completed process (text mode)."""
        return subprocess.run([str(self.exe), *map(str, args)], capture_output=True, text=True,
                              env=env if env is not None else clean_env(), timeout=timeout,
                              check=check)

    def report_json(self, path: os.PathLike | str) -> dict:
        """`lapse report PATH --json`, parsed and checked for its schema."""
        r = self.run("report", path, "--json")
        assert r.returncode == 0, f"lapse report --json failed ({r.returncode}): {r.stderr}"
        try:
            doc = json.loads(r.stdout)
        except json.JSONDecodeError as e:
            pytest.fail(f"lapse report --json printed invalid JSON ({e}): {r.stdout[:2000]}")
        assert doc.get("schema") == "lapse.report", doc.get("schema")
        assert doc.get("schema_version") == 2, doc.get("schema_version")
        for key in ("run", "roles", "workers", "unreadable", "caveats"):
            assert key in doc, f"report JSON has no '{key}'"
        return doc


@pytest.fixture(scope="session")
def lapse() -> Lapse:
    b = build_dir()
    if not (b / "lapse").exists():
        pytest.fail(f"{b}/lapse is missing: build first (make build), or set LAPSE_BUILD_DIR")
    return Lapse(b)


# ---- reading a report ----

def role_of(doc: dict, role: str) -> dict:
    for r in doc["roles"]:
        if r["role"] == role:
            return r
    pytest.fail(f"no role {role!r} in report (roles: {[r['role'] for r in doc['roles']]})")


def phases_by_path(role: dict) -> dict[str, dict]:
    return {p["path"]: p for p in role["phases"]}


def phase_names(role: dict, phase: dict) -> list[str]:
    """A phase's names, top-level first, from its parent chain (schema 2)."""
    names = []
    while phase is not None:
        names.append(phase["name"])
        phase = None if phase["parent"] is None else role["phases"][phase["parent"]]
    return names[::-1]


def worker_by_pid(doc: dict, pid: int) -> dict:
    for w in doc["workers"]:
        if int(w["pid"]) == pid:
            return w
    pytest.fail(f"no worker with pid {pid} in report (pids: {[w['pid'] for w in doc['workers']]})")


def counter(phase: dict, name: str) -> dict:
    for c in phase.get("counters", []):
        if c["name"] == name:
            return c
    pytest.fail(f"phase {phase['path']!r} has no counter {name!r}")


# ---- e2e_workers ----

def read_int_file(path: pathlib.Path) -> int | None:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    return int(text) if text.strip() else None


def worker_progress(state: pathlib.Path, i: int) -> int:
    """Iterations worker i reported as complete (all their spans ended)."""
    return read_int_file(state / f"w{i}.progress") or 0


def worker_info(state: pathlib.Path, i: int) -> tuple[int, pathlib.Path] | None:
    """(pid, lapse file path) of worker i, once it has taken its role."""
    try:
        pid, path = (state / f"w{i}.info").read_text().split()
    except (FileNotFoundError, ValueError):
        return None
    return int(pid), pathlib.Path(path)


@dataclass
class WorkersRun:
    run_dir: pathlib.Path     # <run_dir>/<run_id>: the run's own directory
    host_dir: pathlib.Path    # where the .lapse files are
    workers: int
    iterations: int
    pids: list[int]
    driver_stdout: str


def run_workers(lapse: Lapse, tmp: pathlib.Path, workers: int = 4, iterations: int = 10,
                sleep_us: int = 1000) -> WorkersRun:
    """Runs e2e_workers to completion under LAPSE_PROFILE=1 (no signals)."""
    state = tmp / "state"
    state.mkdir(parents=True)
    env = profile_env(tmp / "runs", role="driver", snapshot_ms=100)
    r = run_program([lapse.program("e2e_workers"), state, iterations, sleep_us, workers], env)
    assert r.returncode == 0, f"e2e_workers failed ({r.returncode}): {r.stderr}"
    assert stderr_lines(r.stderr) == [], r.stderr
    assert r.stdout.count(" exit 0\n") == workers, r.stdout
    infos = [worker_info(state, i) for i in range(workers)]
    assert all(infos), infos
    host_dir = infos[0][1].parent
    return WorkersRun(run_dir=host_dir.parent, host_dir=host_dir, workers=workers,
                      iterations=iterations, pids=[pid for pid, _ in infos],
                      driver_stdout=r.stdout)


@pytest.fixture(scope="session")
def workers_run(lapse, tmp_path_factory) -> WorkersRun:
    """One complete run of e2e_workers (4 workers x 10 iterations). Read-only: copy it
    (copy_run) before changing anything in it."""
    return run_workers(lapse, tmp_path_factory.mktemp("workers_run"))


def copy_run(run: WorkersRun, dest: pathlib.Path) -> WorkersRun:
    new_run_dir = dest / run.run_dir.name
    shutil.copytree(run.run_dir, new_run_dir)
    return WorkersRun(run_dir=new_run_dir, host_dir=new_run_dir / run.host_dir.name,
                      workers=run.workers, iterations=run.iterations, pids=list(run.pids),
                      driver_stdout=run.driver_stdout)
