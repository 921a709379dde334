"""`lapse record` against real CPython interpreters: a known dominant function gets
its expected share, every output format is written and readable, a target that
exits mid-run ends the recording cleanly, attaching by PID, the sampling modes,
--subprocesses, and one clear line for targets it cannot read."""

from __future__ import annotations

import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, clean_env, kill_group, start_program

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_pyread_dump import PARKED, PYTHONS, NamedThreads, Parked  # noqa: E402

TARGETS = REPO / "tests" / "e2e" / "py_targets"
WORKLOAD = TARGETS / "workload.py"
SPAWNER = TARGETS / "spawner.py"

PY_IDS = [p.replace(str(pathlib.Path.home()), "~") for p in PYTHONS]


def collapsed_shares(text: str) -> tuple[dict[str, float], int]:
    """Self share of each innermost-but-one function name over every sample, and
    the number of samples. Lines: 'a;b;c count'; '#' lines are comments."""
    counts: dict[str, int] = {}
    total = 0
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        stack, n = line.rsplit(" ", 1)
        n = int(n)
        total += n
        for frame in set(stack.split(";")):
            name = frame.split(" (")[0]
            counts[name] = counts.get(name, 0) + n
    return {k: v / total for k, v in counts.items()}, total


def record(lapse, *args, timeout=60):
    return lapse.run("record", *args, timeout=timeout)


@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_dominant_function_share(lapse, tmp_path, python):
    """hot() does three times the work of cold(): about 75% and 25% of the samples
    that are in either (the loop around them takes a little)."""
    out = tmp_path / "w.txt"
    r = record(lapse, "-r", "200", "-o", out, "--", python, WORKLOAD, "3")
    assert r.returncode == 0, r.stderr
    shares, total = collapsed_shares(out.read_text())
    assert total >= 100, f"only {total} samples in 3 s at 200 Hz: {r.stderr}"
    hot, cold = shares.get("hot", 0), shares.get("cold", 0)
    assert hot + cold > 0.85, shares
    assert abs(hot / (hot + cold) - 0.75) < 0.08, (hot, cold)
    assert shares.get("work", 0) > 0.85


def test_formats(lapse, tmp_path):
    python = PYTHONS[0]
    outs = {"lapse": tmp_path / "w.lapse", "collapsed": tmp_path / "w.txt",
            "speedscope": tmp_path / "w.json", "flamegraph": tmp_path / "w.svg"}
    for fmt, out in outs.items():
        r = record(lapse, "-r", "100", "-o", out, "--", python, WORKLOAD, "1")
        assert r.returncode == 0, (fmt, r.stderr)
        assert f"({fmt})" in r.stderr
        assert out.stat().st_size > 0

    doc = lapse.report_json(outs["lapse"])
    ps = doc["python_samples"]
    assert len(ps) == 1 and ps[0]["mode"] == "wall"
    assert ps[0]["rate_asked_hz"] == 100
    assert 0 < ps[0]["rate_achieved_hz"] <= 110
    assert ps[0]["samples"] > 20
    names = [f["function"] for f in ps[0]["processes"][0]["top_total"]]
    assert "hot" in names and "work" in names
    text = lapse.run("report", outs["lapse"]).stdout
    assert "PYTHON SAMPLES" in text and "asked 100.0 Hz" in text

    header = outs["collapsed"].read_text().splitlines()[0]
    assert header.startswith("#") and "asked 100 Hz" in header

    sp = json.loads(outs["speedscope"].read_text())
    assert sp["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    frames = [f["name"] for f in sp["shared"]["frames"]]
    assert "hot" in frames and "work" in frames

    svg = outs["flamegraph"].read_text()
    assert "<svg" in svg and "hot" in svg and "<script" in svg


def test_format_to_stdout(lapse):
    r = record(lapse, "-r", "100", "--format", "collapsed", "-o", "-", "--", PYTHONS[0], WORKLOAD, "0.5")
    assert r.returncode == 0, r.stderr
    assert ";work (" in r.stdout


def test_target_exits_mid_run(lapse, tmp_path):
    """The program ends long before -d: the recording ends with it, the output is
    written, and lapse record exits with the program's status, which it names."""
    out = tmp_path / "w.txt"
    t0 = time.monotonic()
    r = record(lapse, "-r", "100", "-d", "30", "-o", out, "--", PYTHONS[0], WORKLOAD, "1",
               "--exit-code", "3")
    took = time.monotonic() - t0
    assert r.returncode == 3, r.stderr
    assert took < 15, f"the recording went on for {took:.1f}s after the program ended"
    assert "exited with status 3" in r.stderr
    shares, total = collapsed_shares(out.read_text())
    assert total > 20 and shares.get("hot", 0) > 0.5


def test_target_killed_by_a_signal(lapse, tmp_path):
    """A program killed by a signal: the output is written and lapse record exits
    128 + the signal's number, as a shell would; a program that -d stops exits 0."""
    out = tmp_path / "w.txt"
    r = record(lapse, "-r", "100", "-o", out, "--", PYTHONS[0], "-c",
               "import os, signal, time\nt = time.monotonic()\nwhile time.monotonic() - t < 0.5: pass\n"
               "os.kill(os.getpid(), signal.SIGKILL)")
    assert r.returncode == 128 + 9, r.stderr
    assert "killed by signal 9" in r.stderr and out.exists()
    r = record(lapse, "-r", "100", "-d", "0.5", "-o", out, "--", PYTHONS[0], WORKLOAD, "30")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", ["prof.png", "prof", "out.d/prof"])
def test_unknown_output_extension(lapse, tmp_path, name):
    """An -o whose extension names no format, without --format: one line, exit 2, and
    nothing launched (the program would create its file)."""
    marker = tmp_path / "started"
    r = record(lapse, "-o", tmp_path / name, "--", PYTHONS[0], "-c", f"open({str(marker)!r}, 'w')")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "give --format" in r.stderr, r.stderr
    assert not marker.exists(), "the program was launched"
    assert not (tmp_path / name).exists()


def pinned_apart() -> bool:
    return len(os.sched_getaffinity(0)) > 1


@pytest.mark.skipif(not pinned_apart(), reason="one CPU: a sampler cannot run beside the target")
@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_short_calls_keep_their_share(lapse, python):
    """short_calls.py spends about half its time in methods that run for well under a
    microsecond (__init__ and __sub__ called from C, dot), on a CPU of its own. The
    reference: the target stopped (SIGSTOP) at random moments and read while stopped
    (`lapse dump`), as a blocking sampler would. lapse record, started beside the
    target, must give those methods their share: read while the target ran, they
    were torn or named their callers (3.12: 19% of the samples against 52%)."""
    t = start_program([python, TARGETS / "short_calls.py", "30"], env=clean_env())
    try:
        assert t.stdout.readline().strip() == "ready", t.stderr.read()
        time.sleep(0.3)
        reference: dict[str, int] = {}
        n = 0
        rng = random.Random(7)
        while n < 300:
            os.kill(t.pid, signal.SIGSTOP)
            try:
                deadline = time.monotonic() + 5
                while not stopped(t.pid):
                    assert time.monotonic() < deadline, "the target did not stop"
                    time.sleep(0.0002)
                d = lapse.run("dump", "--json", t.pid)
            finally:
                os.kill(t.pid, signal.SIGCONT)
            frames = [th["frames"] for th in json.loads(d.stdout)["threads"] if th["frames"]]
            if frames:
                reference[frames[0][0]["function"]] = reference.get(frames[0][0]["function"], 0) + 1
                n += 1
            time.sleep(rng.uniform(0.002, 0.008))
        r = lapse.run("record", "--pid", t.pid, "-r", "1000", "-d", "2", "--format", "collapsed", "-o", "-")
        assert r.returncode == 0, r.stderr
    finally:
        kill_group(t)
    sampled: dict[str, int] = {}
    for line in r.stdout.splitlines():
        if line and not line.startswith("#"):
            stack, count = line.rsplit(" ", 1)
            leaf = stack.split(";")[-1].split(" (")[0]
            sampled[leaf] = sampled.get(leaf, 0) + int(count)
    total = sum(sampled.values())
    assert total > 1000, r.stderr
    short = ("Vec.__init__", "Vec.__sub__", "Vec.dot")
    want = sum(reference.get(f, 0) for f in short) / n
    got = sum(sampled.get(f, 0) for f in short) / total
    detail = (f"short methods: {got:.1%} of the samples, {want:.1%} stopped; sampled "
              f"{ {k: round(v / total, 3) for k, v in sampled.items()} }, stopped "
              f"{ {k: round(v / n, 3) for k, v in reference.items()} }; {r.stderr.strip()}")
    assert 0.75 * want <= got <= 1.25 * want, detail
    for f in short + ("pair", "caller"):
        assert abs(sampled.get(f, 0) / total - reference.get(f, 0) / n) < 0.08, f"{f}: {detail}"


def stopped(pid: int) -> bool:
    text = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2] == "T"


@pytest.mark.parametrize("idle", [False, True])
def test_poller_is_waiting(lapse, tmp_path, idle):
    """A thread in `while True: sleep(0.001)` wakes every millisecond but waits at
    almost every instant: wall mode leaves it out (it used CPU between every two
    passes, which made it busy in each); with --idle it is in every pass."""
    out = tmp_path / "w.txt"
    r = record(lapse, "-r", "1000", *(["--idle"] if idle else []), "-o", out, "--", PYTHONS[0],
               TARGETS / "poller.py", "2")
    assert r.returncode == 0, r.stderr
    shares, total = collapsed_shares(out.read_text())
    assert total > 500, r.stderr
    if idle:
        assert 0.35 < shares.get("poll", 0) < 0.65 and 0.35 < shares.get("spin", 0) < 0.65, shares
    else:
        assert shares.get("poll", 0) < 0.1 and shares.get("spin", 0) > 0.9, shares


def test_attach_by_pid_and_modes(lapse, tmp_path):
    """parked.py: four threads sleep, one spins holding the GIL. wall (no --idle) and
    cpu and gil see only the spinner; wall --idle sees every thread. The target keeps
    running after an attached recording ends."""
    t = Parked(PYTHONS[0])
    try:
        seen = {}
        for mode, extra in (("wall", []), ("wall", ["--idle"]), ("cpu", []), ("gil", [])):
            out = tmp_path / f"{mode}{len(extra)}.txt"
            r = record(lapse, "--pid", t.pid, "-r", "200", "-d", "1", "--mode", mode, *extra, "-o", out)
            assert r.returncode == 0, r.stderr
            shares, total = collapsed_shares(out.read_text())
            assert total > 50, (mode, extra, total, r.stderr)
            seen[(mode, bool(extra))] = shares
        for key in (("wall", False), ("cpu", False), ("gil", False)):
            assert seen[key].get("spin", 0) > 0.8, (key, seen[key])
            assert seen[key].get("park_main", 0) < 0.1, (key, seen[key])
        idle = seen[("wall", True)]
        for fn in ("spin", "park_main", "first_line_park", "park_gen", "park_coro"):
            assert idle.get(fn, 0) > 0.1, (fn, idle)
        assert t.proc.poll() is None, "the attached target was stopped"
    finally:
        t.close()


@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_samples_carry_python_thread_names(lapse, tmp_path, python):
    """Each sample carries its thread's Python name (the collapsed stacks' first
    frame is 'NAME (tid N)'); a raw _thread thread keeps its OS name."""
    t = NamedThreads(python, "--threading")
    try:
        out = tmp_path / "names.txt"
        r = record(lapse, "--pid", t.pid, "-r", "200", "-d", "1", "--idle", "-o", out)
        assert r.returncode == 0, r.stderr
        roots: dict[str, int] = {}
        for line in out.read_text().splitlines():
            if line and not line.startswith("#"):
                stack, n = line.rsplit(" ", 1)
                roots[stack.split(";")[0]] = roots.get(stack.split(";")[0], 0) + int(n)
        for name, key in (("worker-A", "worker-A"), ("MainThread", "main"), ("dict-named", "dict-named"),
                          ("raw-os", "raw")):
            assert roots.get(f"{name} (tid {t.ids[key]})", 0) > 20, (name, roots)
        worker = next(stack for stack in out.read_text().splitlines() if stack.startswith("worker-A "))
        assert "spin_named" in worker, worker
    finally:
        t.close()


def test_subprocesses(lapse, tmp_path):
    out = tmp_path / "w.txt"
    """The parent waits (--idle keeps it) while its child runs the workload: both
    processes are sampled, each under its own process frame."""
    r = record(lapse, "-r", "200", "--idle", "--subprocesses", "-o", out, "--", PYTHONS[0], SPAWNER,
               PYTHONS[0], str(WORKLOAD), "2")
    assert r.returncode == 0, r.stderr
    assert "2 processes" in r.stderr, r.stderr
    text = out.read_text()
    roots = {line.split(";")[0] for line in text.splitlines() if line and not line.startswith("#")}
    assert len(roots) == 2, roots
    shares, total = collapsed_shares(text)
    assert shares.get("hot", 0) > 0.2, shares
    assert shares.get("wait_for_child", 0) > 0.2, shares


def one_line_error(r) -> str:
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def test_attach_not_python(lapse, tmp_path):
    p = subprocess.Popen(["sleep", "30"])
    try:
        line = one_line_error(record(lapse, "--pid", p.pid, "-d", "1", "-o", tmp_path / "x.txt"))
        assert "not a CPython process" in line
        assert not (tmp_path / "x.txt").exists()
    finally:
        p.kill()
        p.wait()


def test_attach_gone(lapse, tmp_path):
    p = subprocess.Popen(["true"])
    p.wait()
    line = one_line_error(record(lapse, "--pid", p.pid, "-d", "1", "-o", tmp_path / "x.txt"))
    assert f"no process {p.pid}" in line


def test_program_ends_before_python(lapse, tmp_path):
    r = record(lapse, "-o", tmp_path / "x.txt", "--", "sh", "-c", "exit 4")
    line = one_line_error(r)
    assert "ended (exit status 4) before a Python could be read" in line


def test_launch_missing_program(lapse, tmp_path):
    r = record(lapse, "-o", tmp_path / "x.txt", "--", "/nonexistent/python", "x.py")
    assert r.returncode == 1
    assert "/nonexistent/python" in r.stderr


@pytest.mark.parametrize("args", [[], ["--pid"], ["--pid", "x"], ["-r", "0", "--pid", "1"],
                                  ["--mode", "foo", "--pid", "1"], ["--format", "png", "--pid", "1"],
                                  ["--pid", "1", "--", "python3"], ["-o", "-", "--pid", "1"]])
def test_bad_usage(lapse, args):
    r = lapse.run("record", *args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lapse record: "), r.stderr
    assert lines[0].endswith(" (lapse record --help explains)"), r.stderr


def test_span_paths(lapse, tmp_path):
    """A target whose lapse core (liblapse.so, session from LAPSE_PROFILE=1) publishes
    its open spans: each sample carries the span path open on its thread. hot() runs
    inside train/step, cold() inside train only. A span can change between the read
    of the stack and of the span path: a few samples may disagree."""
    out = tmp_path / "w.txt"
    env = clean_env(LAPSE_PROFILE="1", LAPSE_RUN_DIR=str(tmp_path / "runs"))
    lib = lapse.build / "liblapse.so"
    asan = re.search(r"(\S*libasan\.so\S*) => (\S+)",
                     subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout)
    if asan:
        # a sanitizer build's library loads into Python only after its runtime; Python's
        # own allocations at exit are not this test's leaks
        env.update(LD_PRELOAD=asan.group(2), ASAN_OPTIONS="detect_leaks=0")
    r = lapse.run("record", "-r", "200", "-o", out, "--", PYTHONS[0], TARGETS / "spans.py",
                  lib, "3", env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    by = {}
    for line in out.read_text().splitlines():
        if line.startswith("#") or "[span " not in line:
            continue
        stack, n = line.rsplit(" ", 1)
        span = re.search(r"\[span ([^\]]+)\]", stack).group(1)
        fn = "hot" if ";hot (" in stack else "cold" if ";cold (" in stack else "other"
        by[(span, fn)] = by.get((span, fn), 0) + int(n)
    hot_in_step = by.get(("train/step", "hot"), 0)
    cold_in_train = by.get(("train", "cold"), 0)
    wrong = by.get(("train/step", "cold"), 0) + by.get(("train", "hot"), 0)
    assert hot_in_step > 100 and cold_in_train > 20, by
    assert wrong < 0.1 * (hot_in_step + cold_in_train), by

    # one target, one run, one file: the samples joined the target's own .lapse file
    assert "added the samples to the target's own file" in r.stderr, r.stderr
    doc = lapse.report_json(tmp_path / "runs")
    assert len(doc["python_samples"]) == 1, doc["python_samples"]
    assert doc["python_samples"][0]["pid"] == doc["workers"][0]["pid"]
    text = lapse.run("report", tmp_path / "runs").stdout
    assert "train/step" in text and "FUNCTIONS INSIDE SPANS" in text


def test_interrupted_recording_is_written(lapse, tmp_path):
    """SIGINT to lapse record (what Ctrl-C sends, here to lapse alone): the recording
    ends, the output is written, and the launched program is ended."""
    out = tmp_path / "w.txt"
    p = start_program([lapse.exe, "record", "-r", "100", "-o", out, "--", PYTHONS[0], WORKLOAD, "60"],
                      env=clean_env())
    try:
        time.sleep(2)
        p.send_signal(2)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
        shares, total = collapsed_shares(out.read_text())
        assert total > 50 and shares.get("hot", 0) > 0.5, (total, shares)
    finally:
        kill_group(p)


@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_churning_target(lapse, tmp_path, python):
    """Threads that come and go and code objects freed and made again at the same
    addresses, sampled at 2 kHz: the recording ends cleanly, and no sample pairs a
    generated f_<i> with another pair's g_<j> (a stale code cache would)."""
    out = tmp_path / "w.txt"
    r = record(lapse, "-r", "2000", "-o", out, "--", python, TARGETS / "churn.py", "3")
    assert r.returncode == 0, r.stderr
    pairs, mismatched, _ = generated_pairs(out.read_text())
    assert pairs > 20, f"only {pairs} stacks in generated code"
    assert mismatched == 0, f"{mismatched} of {pairs} stacks pair f_i with g_j"


def generated_pairs(collapsed: str) -> tuple[int, int, set[str]]:
    """Stacks with a generated f_<i> calling g_<j>: how many, how many with i != j, and
    the distinct i seen."""
    pairs = mismatched = 0
    seen = set()
    for line in collapsed.splitlines():
        if line.startswith("#"):
            continue
        for a, b in re.findall(r"f_(\d+) \(<gen \d+>:\d+\);g_(\d+) ", line):
            pairs += 1
            mismatched += a != b
            seen.add(a)
    return pairs, mismatched, seen


@pytest.mark.parametrize("python", PYTHONS, ids=PY_IDS)
def test_code_replaced_after_quiet_time(lapse, tmp_path, python):
    """Each generated pair runs for 30 ms before the next takes its place (often at the
    same addresses): between replacements no code object is made, and the sampler
    skips its code checks where it can count them (3.12); every replacement must
    still be seen, with f_<i> always calling g_<i>."""
    out = tmp_path / "w.txt"
    r = record(lapse, "-r", "1000", "-o", out, "--", python, TARGETS / "churn.py", "3", "30")
    assert r.returncode == 0, r.stderr
    pairs, mismatched, seen = generated_pairs(out.read_text())
    assert len(seen) > 20, f"only {len(seen)} generated pairs seen in {pairs} stacks"
    assert mismatched == 0, f"{mismatched} of {pairs} stacks pair f_i with g_j"


def test_subprocesses_of_no_process(lapse, tmp_path):
    """--subprocesses --pid of a process that does not exist: one line and exit 1,
    as without --subprocesses (it wrote an empty profile and exited 0)."""
    out = tmp_path / "x.txt"
    r = record(lapse, "--subprocesses", "--pid", "2147483646", "-o", out)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "no process 2147483646" in one_line_error(r)
    assert not out.exists()
