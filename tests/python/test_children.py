"""A child Python process started while a Profiler is active joins the same run,
whether or not it makes a Profiler of its own."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time
import warnings

from lapse import Profiler, span

from conftest import phases, report

CHILD_WITH_PROFILER = textwrap.dedent("""
    from lapse import Profiler, span
    with Profiler(role="child") as p:     # adopts the session the environment started
        for _ in range(6):
            with span("child_step"):
                pass
""")

CHILD_WITHOUT = textwrap.dedent("""
    from lapse import span
    for _ in range(4):
        with span("bare_step"):
            pass
""")


def test_children_join_the_parent_run(tmp_path):
    with Profiler(run_dir=tmp_path, role="parent") as p:
        with span("spawn"):
            for code in (CHILD_WITH_PROFILER, CHILD_WITHOUT):
                r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                   timeout=60)
                assert r.returncode == 0, r.stderr
    run = report(pathlib.Path(p.file).parent.parent)  # the run directory
    assert run["run"]["roles"] == {"parent": 1, "child": 2}, run["run"]
    got = phases(run, "child")  # both children: one chose the role, one got it
    assert got["child_step"]["calls"] == 6
    assert got["bare_step"]["calls"] == 4
    assert phases(run, "parent")["spawn"]["calls"] == 1
    assert all(w["final"] for w in run["workers"]), run["workers"]


CHILD_OF_OS_ENVIRON = textwrap.dedent("""
    import os
    from lapse import span
    assert os.environ["X"] == "1"
    for _ in range(3):
        with span("environ_step"):
            pass
""")


def test_a_child_given_os_environ_joins_the_run(tmp_path):
    """A child launched with env={**os.environ, ...} gets what the session exported
    (os.environ says it while the session runs), and os.environ is as before after it."""
    before = dict(os.environ)
    with Profiler(run_dir=tmp_path, role="parent", snapshot_ms=60_000) as p:
        assert os.environ["LAPSE_PROFILE"] == "1" and os.environ["LAPSE_ROLE"] == "child"
        r = subprocess.run([sys.executable, "-c", CHILD_OF_OS_ENVIRON], env={**os.environ, "X": "1"},
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    assert dict(os.environ) == before
    run = report(pathlib.Path(p.file).parent.parent)
    assert run["run"]["roles"] == {"parent": 1, "child": 1}, run["run"]
    assert phases(run, "child")["environ_step"]["calls"] == 3
    # after the stop, a child given os.environ is in no run
    r = subprocess.run([sys.executable, "-c", "import lapse, sys; sys.exit(lapse._lapse.is_active())"],
                       env={**os.environ}, timeout=60)
    assert r.returncode == 0


def _forked(body) -> int:
    with warnings.catch_warnings():  # the session's threads: the child runs only Python
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        try:
            body()
        finally:
            os._exit(0)
    return pid


def _work_until_killed():
    while True:  # spans, no role of its own: no file before its first snapshot
        with span("doomed_work"):
            time.sleep(0.01)


def _worker_with_a_role():
    with Profiler(role="worker"):  # adopts the forked session: a file at once
        with span("kept_work"):
            pass


def test_a_forked_child_that_left_no_file_is_named(tmp_path):
    """A forked worker SIGKILLed 1.5 s into its work, before its first snapshot, is
    named in CAVEATS by its parent's file; a child that wrote its file, and one that
    exec'd at once (a launcher's fork), are not."""
    with Profiler(run_dir=tmp_path, role="parent", snapshot_ms=60_000) as p:
        doomed = _forked(_work_until_killed)
        kept = _forked(_worker_with_a_role)
        execd = _forked(lambda: os.execv("/bin/true", ["true"]))
        time.sleep(1.5)
        os.kill(doomed, signal.SIGKILL)
        for pid, want in ((doomed, -signal.SIGKILL), (kept, 0), (execd, 0)):
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == want
    run = report(pathlib.Path(p.file).parent.parent)
    assert run["run"]["roles"] == {"parent": 1, "worker": 1}, run["run"]
    named = [c for c in run["caveats"] if c["kind"] == "child_no_file"]
    assert len(named) == 1, run["caveats"]
    assert named[0]["pid"] == os.getpid() and named[0]["role"] == "parent"
    assert [ch["pid"] for ch in named[0]["children"]] == [doomed]
    assert f"pid {doomed} (forked" in named[0]["message"]
    assert 0 <= named[0]["children"][0]["forked_after_ns"] < 5e9


CHILD_WITH_OPTIONS = textwrap.dedent("""
    import threading
    from lapse import Feature, Profiler, span
    for options in ({"features": Feature.SPANS}, {"max_spans": 10}):
        try:
            Profiler(**options).start()
        except RuntimeError as e:
            print("refused:", e)
        else:
            raise SystemExit(f"Profiler({options}) joined a session that cannot take it")
    def work():
        with span("in_thread"):
            pass
    with Profiler(role="named", thread_names=True):
        t = threading.Thread(target=work, name="helper")
        t.start()
        t.join()
""")


def test_a_profiler_joining_an_inherited_session_applies_its_options_or_raises(tmp_path):
    with Profiler(run_dir=tmp_path, role="parent") as p:  # wait% on, 100000 spans
        r = subprocess.run([sys.executable, "-c", CHILD_WITH_OPTIONS], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
    refused = [line for line in r.stdout.splitlines() if line.startswith("refused:")]
    assert len(refused) == 2, r.stdout
    assert "features: CPU (on in the session)" in refused[0], refused
    assert "max_spans=10 (the session's is 100000)" in refused[1]
    run = report(pathlib.Path(p.file).parent.parent)
    assert "helper/in_thread" in phases(run, "named"), phases(run, "named")


def test_an_unknown_feature_in_the_environment_is_one_line():
    env = {**os.environ, "LAPSE_PROFILE": "1", "LAPSE_FEATURES": "spans,gpu"}
    r = subprocess.run([sys.executable, "-c", "import lapse; print(lapse._lapse.is_active())"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stdout + r.stderr
    assert r.stderr.strip() == ("lapse: warning: profiling is off: lapse_start: LAPSE_FEATURES: "
                                "unknown feature gpu: Invalid argument"), r.stderr
