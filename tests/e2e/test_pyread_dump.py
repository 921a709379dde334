"""`lapse dump PID` against real CPython interpreters: known stacks at known lines
(including the first line of a function, a generator and a coroutine frame), thread
ids, the GIL holder, running vs waiting; and one clear line with a non-zero exit for
a PID that is gone, a process that is not Python, a Python lapse does not read, a
process it may not read, and bad usage."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import time

import pytest

from conftest import REPO, clean_env, kill_group, start_program

TARGETS = REPO / "tests" / "e2e" / "py_targets"
PARKED = TARGETS / "parked.py"
NAMED = TARGETS / "named_threads.py"


def pythons() -> list[str]:
    """Every CPython >= 3.11 on the machine: pyenv's and the system's."""
    found = []
    for v in ("3.11", "3.12", "3.13", "3.14"):
        for p in sorted(pathlib.Path.home().glob(f".pyenv/versions/{v}*/bin/python{v}")):
            found.append(str(p))
    sys_py = pathlib.Path("/usr/bin/python3")
    if sys_py.exists():
        r = subprocess.run([str(sys_py), "-c", "import sys; print(sys.version_info >= (3, 11))"],
                           capture_output=True, text=True)
        if r.stdout.strip() == "True":
            found.append(str(sys_py))
    return found


PYTHONS = pythons()


def park_lines() -> dict[str, int]:
    lines = {}
    for n, text in enumerate(PARKED.read_text().splitlines(), 1):
        if "# PARK:" in text:
            lines[text.split("# PARK:")[1].strip()] = n
    return lines


LINES = park_lines()


class Parked:
    def __init__(self, python: str, *args: str):
        self.proc = start_program([python, str(PARKED), *args], env=clean_env())
        line = self.proc.stdout.readline()
        assert line.startswith("ready "), f"target did not start: {line!r} {self.proc.stderr.read()}"
        self.ids = json.loads(line[len("ready "):])
        self.pid = self.proc.pid

    def close(self):
        kill_group(self.proc)


class NamedThreads:
    """named_threads.py: a raw _thread thread (OS name "raw-os"), and with
    --threading, threading.Threads named "worker-A" (OS name "os-worker"),
    "Thread-N (sleeper)" and "dict-named" (its instance dict materialized)."""

    def __init__(self, python: str, *args: str):
        self.proc = start_program([python, str(NAMED), *args], env=clean_env())
        line = self.proc.stdout.readline()
        assert line.startswith("ready "), f"target did not start: {line!r} {self.proc.stderr.read()}"
        doc = json.loads(line[len("ready "):])
        self.ids = doc["ids"]
        self.threading = doc["threading"]
        self.pid = self.proc.pid
        self.comm = pathlib.Path(f"/proc/{self.pid}/comm").read_text().strip()

    def close(self):
        kill_group(self.proc)


@pytest.fixture(params=PYTHONS, ids=[p.replace(str(pathlib.Path.home()), "~") for p in PYTHONS])
def parked(request):
    t = Parked(request.param)
    yield t
    t.close()


def dump_json(lapse, pid: int) -> dict:
    r = lapse.run("dump", "--json", pid)
    assert r.returncode == 0, f"lapse dump failed ({r.returncode}): {r.stderr}"
    return json.loads(r.stdout)


def innermost(doc: dict) -> dict[str, dict]:
    return {t["frames"][0]["function"]: t for t in doc["threads"] if t["frames"]}


def settled(lapse, pid: int, timeout_s: float = 10.0) -> dict:
    """A dump in which every thread has reached its parking place (they pass the
    barrier together, and the last few bytecodes to the parking line take a moment)."""
    want = {"park_main", "first_line_park", "park_gen", "park_coro", "spin"}
    deadline = time.monotonic() + timeout_s
    while True:
        doc = dump_json(lapse, pid)
        got = innermost(doc)
        if want <= set(got) and all(
                got[f]["frames"][0]["line"] == LINES[k]
                for f, k in (("park_main", "main"), ("first_line_park", "first_line"),
                             ("park_gen", "gen"), ("park_coro", "coro"))):
            return doc
        if time.monotonic() > deadline:
            return doc
        time.sleep(0.1)


def test_known_stacks_at_known_lines(lapse, parked):
    doc = settled(lapse, parked.pid)
    assert doc["pid"] == parked.pid
    got = innermost(doc)
    file = str(PARKED)

    def frames(fn):
        assert fn in got, f"no thread parked in {fn}: {sorted(got)}"
        return [(f["function"], f["file"], f["line"]) for f in got[fn]["frames"]]

    main = frames("park_main")
    assert main[0] == ("park_main", file, LINES["main"])
    assert [f[0] for f in main[1:]] == ["main", "<module>"]

    # the first line of a function's body
    first = frames("first_line_park")
    assert first[0] == ("first_line_park", file, LINES["first_line"])
    assert first[1][0] == "first_line_thread"

    gen = frames("park_gen")
    assert gen[0] == ("park_gen", file, LINES["gen"])
    assert gen[1][0] == "gen_consumer"

    coro = frames("park_coro")
    assert coro[0] == ("park_coro", file, LINES["coro"])
    assert "run_coro" in [f[0] for f in coro]

    spin = frames("spin")
    assert spin[0][1] == file and spin[0][2] in (LINES["spin"], LINES["spin"] - 1)
    for t in doc["threads"]:
        assert not t["torn"] and not t["truncated"]


def test_thread_ids_and_names(lapse, parked):
    doc = settled(lapse, parked.pid)
    got = innermost(doc)
    by_fn = {"park_main": "MainThread", "first_line_park": "first-line", "park_gen": "gen",
             "park_coro": "coro", "spin": "spinner"}
    for fn, name in by_fn.items():
        assert got[fn]["native_id"] == parked.ids[name], (fn, got[fn]["native_id"], parked.ids)
        comm = pathlib.Path(f"/proc/{parked.pid}/task/{parked.ids[name]}/comm").read_text().strip()
        assert got[fn]["name"] == name, (fn, got[fn])  # Python's threading name
        assert got[fn]["os_name"] == comm, (fn, got[fn])
    assert got["park_main"]["native_id"] == parked.pid
    assert len({t["thread_id"] for t in doc["threads"]}) == len(doc["threads"])


PY_IDS = [p.replace(str(pathlib.Path.home()), "~") for p in PYTHONS]


@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_python_thread_names(lapse, python):
    """Names set by the target (threading.Thread(name=...)), threading's default
    name, one whose instance dict was materialized, and a raw _thread thread that
    threading does not know (its OS name); the OS name beside the Python name in
    the text only where it differs from the process's own."""
    t = NamedThreads(python, "--threading")
    try:
        by_id = {th["native_id"]: th for th in dump_json(lapse, t.pid)["threads"]}
        want = {"main": ("MainThread", t.comm), "worker-A": ("worker-A", "os-worker"),
                "dict-named": ("dict-named", t.comm), "raw": ("raw-os", "raw-os")}
        for key, (name, os_name) in want.items():
            th = by_id[t.ids[key]]
            assert (th["name"], th["os_name"]) == (name, os_name), (key, th)
        sleeper = by_id[t.ids["sleeper"]]
        assert re.fullmatch(r"Thread-\d+ \(sleeper\)", sleeper["name"]), sleeper
        r = lapse.run("dump", t.pid)
        assert r.returncode == 0, r.stderr
        assert f'Thread {t.ids["worker-A"]} (0x' in r.stdout
        assert '"worker-A" (OS name "os-worker"): running' in r.stdout, r.stdout
        assert f'Thread {t.pid} (0x{by_id[t.pid]["thread_id"]:x}) "MainThread": ' in r.stdout, r.stdout
        assert '"raw-os": ' in r.stdout and '"dict-named": ' in r.stdout, r.stdout
        assert "OS name" not in r.stdout.replace('(OS name "os-worker")', ""), r.stdout
    finally:
        t.close()


@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_thread_names_without_threading(lapse, python):
    """A target that never imported threading (but for 3.11 builds whose startup
    does): every thread keeps its OS name, read again while it has no Python name."""
    t = NamedThreads(python)
    try:
        for _ in range(2):
            by_id = {th["native_id"]: th for th in dump_json(lapse, t.pid)["threads"]}
            assert by_id[t.ids["raw"]]["name"] == "raw-os"
            main = by_id[t.pid]
            assert main["name"] == ("MainThread" if t.threading else t.comm), (t.threading, main)
            assert main["os_name"] == t.comm
    finally:
        t.close()


def test_gil_holder_and_states(lapse, parked):
    """The spinner runs a pure Python loop while every other thread sleeps: it holds
    the GIL and is running; the sleepers wait. Several dumps, most must agree (a
    dump can land in the instant the spinner drops the GIL at a switch interval)."""
    settled(lapse, parked.pid)
    agree = 0
    for _ in range(20):
        got = innermost(dump_json(lapse, parked.pid))
        if not {"spin", "park_main", "park_gen"} <= set(got):
            continue
        holders = [fn for fn, t in got.items() if t["holds_gil"]]
        if holders == ["spin"] and got["spin"]["state"] == "running" and \
                got["park_main"]["state"] == "waiting" and got["park_gen"]["state"] == "waiting":
            agree += 1
    assert agree >= 12, f"only {agree}/20 dumps saw the spinner holding the GIL"


def test_no_gil_holder_when_all_sleep(lapse):
    t = Parked(PYTHONS[0], "--no-spin")
    try:
        # the threads reach their parking places a moment after "ready"
        for _ in range(50):
            doc = dump_json(lapse, t.pid)
            if not any(th["holds_gil"] for th in doc["threads"]) and \
                    all(th["state"] == "waiting" for th in doc["threads"]):
                break
            time.sleep(0.1)
        assert not any(th["holds_gil"] for th in doc["threads"]), doc
        assert all(th["state"] == "waiting" for th in doc["threads"]), doc
    finally:
        t.close()


def test_text_output(lapse, parked):
    settled(lapse, parked.pid)
    r = lapse.run("dump", parked.pid)
    assert r.returncode == 0, r.stderr
    assert f"Process {parked.pid}:" in r.stdout
    assert f"park_main ({PARKED}:{LINES['main']})" in r.stdout
    assert "holds the GIL" in r.stdout
    assert f'Thread {parked.pid} (0x' in r.stdout and '"MainThread": waiting' in r.stdout, r.stdout
    assert '"spinner": running' in r.stdout or '"spinner": waiting' in r.stdout, r.stdout


def one_line_error(r) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert r.stdout == ""
    return lines[0]


def test_pid_gone(lapse):
    p = subprocess.Popen(["true"])
    p.wait()
    line = one_line_error(lapse.run("dump", p.pid))
    assert f"no process {p.pid}" in line


def test_not_python(lapse):
    p = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.1)
        line = one_line_error(lapse.run("dump", p.pid))
        assert "not a CPython process" in line and "(sleep)" in line
    finally:
        p.kill()
        p.wait()


def test_python_version_not_read(lapse):
    old = sorted(pathlib.Path.home().glob(".pyenv/versions/3.10*/bin/python3.10"))
    if not old:
        pytest.skip("no CPython 3.10 on this machine")
    p = subprocess.Popen([str(old[0]), "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)
        line = one_line_error(lapse.run("dump", p.pid))
        assert "3.10" in line and "3.11, 3.12 and 3.13" in line
    finally:
        p.kill()
        p.wait()


def test_permission_denied(lapse, tmp_path):
    """An unprivileged user may not read a root process: the line says what to do."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run lapse as another user")
    t = Parked(PYTHONS[0], "--no-spin")
    try:
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            str(lapse.exe), "dump", str(t.pid)], capture_output=True, text=True,
                           timeout=30)
        line = one_line_error(r)
        assert "permission denied" in line
        assert "kernel.yama.ptrace_scope" in line and "CAP_SYS_PTRACE" in line
    finally:
        t.close()


@pytest.mark.parametrize("args", [[], ["abc"], ["-5"], ["1", "2"], ["--bogus", "1"]])
def test_bad_usage(lapse, args):
    r = lapse.run("dump", *args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert r.stderr.strip()


DEEP_AND_WIDE = """
import sys, threading, time
sys.setrecursionlimit(5000)
def down(k):
    if k == 0:
        time.sleep(1000)
    down(k - 1)
for i in range(40):
    threading.Thread(target=time.sleep, args=(1000,), daemon=True, name=f"w{i}").start()
threading.Thread(target=down, args=(700,), daemon=True, name="deep").start()
print("ready", flush=True)
time.sleep(1000)
"""


def test_deep_stack_is_cut_and_many_threads(lapse):
    """A 700-frame stack is cut at 512 frames and marked truncated; 42 threads are
    all listed."""
    p = start_program([PYTHONS[-1], "-c", DEEP_AND_WIDE], env=clean_env())
    try:
        assert p.stdout.readline().strip() == "ready"
        for _ in range(50):
            doc = dump_json(lapse, p.pid)
            if len(doc["threads"]) == 42 and any(t["truncated"] for t in doc["threads"]):
                break
            time.sleep(0.1)
        assert len(doc["threads"]) == 42, len(doc["threads"])
        deep = [t for t in doc["threads"] if t["frames"] and t["frames"][0]["function"] in ("sleep", "down")
                and t["truncated"]]
        assert len(deep) == 1, [(t["native_id"], len(t["frames"]), t["truncated"]) for t in doc["threads"]]
        assert len(deep[0]["frames"]) == 512
        assert all(f["function"] == "down" for f in deep[0]["frames"])
    finally:
        kill_group(p)


@pytest.mark.parametrize("python", PYTHONS, ids=[p.replace(str(pathlib.Path.home()), "~") for p in PYTHONS])
def test_stacks_match_the_interpreters_own_view(lapse, python):
    """Every frame of every parked thread (threading and asyncio internals included),
    function and line, as the interpreter itself reports them (sys._current_frames,
    f_lineno)."""
    p = start_program([python, str(TARGETS / "oracle.py")], env=clean_env())
    try:
        line = p.stdout.readline()
        assert line.startswith("frames "), line
        want = json.loads(line[len("frames "):])
        assert len(want) == 3, want
        doc = dump_json(lapse, p.pid)
        got = {str(t["native_id"]): t for t in doc["threads"]}
        for tid, stack in want.items():
            assert tid in got, (tid, sorted(got))
            frames = [[f["function"].rsplit(".", 1)[-1], f["file"], f["line"]] for f in got[tid]["frames"]]
            assert frames == stack, (tid, frames, stack)
    finally:
        kill_group(p)
