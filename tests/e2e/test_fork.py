"""fork() right after lapse_start: a forked child must never hang.

liblapse starts the child's flush thread from its pthread_atfork child handler. If
the parent's own flush thread is still starting when the program forks (it has just
called lapse_start), a sanitizer build's child can inherit the allocator lock that
thread held and deadlock at thread start; the child then hangs at exit, joining it.
e2e_fork_storm forks right after lapse_start in 100 rounds and reports any hang.
"""

from __future__ import annotations

import re

from conftest import run_program, clean_env, stderr_lines

ROUNDS = 100


def test_fork_right_after_start_never_hangs(lapse, tmp_path):
    runs = tmp_path / "runs"
    r = run_program([lapse.program("e2e_fork_storm"), runs, ROUNDS], clean_env(), timeout=60)
    assert r.returncode == 0 and f"rounds {ROUNDS} hung 0 failed 0" in r.stdout, (
        f"{r.stdout}{r.stderr}")
    assert stderr_lines(r.stderr) == [], r.stderr
    # each round is a run of its own: the parent's file and the child's
    files = sorted(runs.glob("*/*/*.lapse"))
    assert len(files) == 2 * ROUNDS, len(files)
    assert len({f.parent for f in files}) == ROUNDS


def test_fork_from_a_child_whose_threads_are_starting_never_hangs(lapse, tmp_path):
    """A child's own threads are started, not waited for, when it is forked; a fork
    of its own (a grandchild, at once) waits for them to run first, and hangs
    nowhere."""
    runs = tmp_path / "runs"
    r = run_program([lapse.program("e2e_fork_storm"), runs, ROUNDS // 2, "nested"], clean_env(),
                    timeout=60)
    assert r.returncode == 0 and f"rounds {ROUNDS // 2} hung 0 failed 0" in r.stdout, (
        f"{r.stdout}{r.stderr}")
    assert stderr_lines(r.stderr) == [], r.stderr
    # parent, child and grandchild: a file each
    assert len(list(runs.glob("*/*/*.lapse"))) == 3 * (ROUNDS // 2)


def test_fork_does_not_wait_for_the_childs_threads(lapse, tmp_path):
    """With 4 busy threads, a forked child's own lapse threads get a CPU only when
    the scheduler gives them one; fork() must return in the child without waiting
    for that (it did: 50 of 50 children blocked, a fork cost 4-7.5 writes of the
    child's file more than without lapse; bench/fork_cost measures the cost). Without
    lapse no child blocks; a few may, for reasons of the machine's own."""
    # 1-2 s each; a sanitizer build on a loaded machine (LeakSanitizer scans at each
    # child's exit) has taken more than 30
    without = run_program([lapse.program("e2e_fork_waits"), "-"], clean_env(), timeout=180)
    with_lapse = run_program([lapse.program("e2e_fork_waits"), tmp_path / "runs"], clean_env(),
                             timeout=180)
    for r in (without, with_lapse):
        assert r.returncode == 0 and stderr_lines(r.stderr) == [], r.stderr
    blocked = [int(re.search(r"forks 50 blocked (\d+)", r.stdout).group(1))
               for r in (without, with_lapse)]
    assert blocked[1] <= blocked[0] + 5, (without.stdout, with_lapse.stdout)
    # every child left its file (written at exit), and the parent its own
    assert len(list((tmp_path / "runs").glob("*/*/*.lapse"))) == 51
