"""fork() right after lapse_start: a forked child must never hang.

liblapse starts the child's flush thread from its pthread_atfork child handler. If
the parent's own flush thread is still starting when the program forks (it has just
called lapse_start), a sanitizer build's child can inherit the allocator lock that
thread held and deadlock at thread start; the child then hangs at exit, joining it.
e2e_fork_storm forks right after lapse_start in 100 rounds and reports any hang.
"""

from __future__ import annotations

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
