"""A storm of signals reaches the program's own handlers as it would without lapse.

e2e_signal_storm counts each run of its handlers for SIGTERM, SIGINT, SIGUSR1 and
SIGHUP; the test sends it 1,000 signals (250 of each, round robin, one every
GAP_US), once without lapse and once with a session whose handler chains to the
program's, and compares the counts. Standard signals coalesce while one of a kind is
pending, so a handler that holds its signal back (lapse's used to wait for the file
to be written) loses deliveries. The machine's noise loses some in both runs (a busy
2-CPU VM: 4-13% of a run now and then, 12-37% of every run while other builds load
it, and the load changes from one run to the next), so the test runs PAIRS pairs
(without, with) and compares their median ratio with MIN_RATIO.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from conftest import TIMEOUT_S, clean_env, kill_group, stderr_lines

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP)
ROUNDS = 250
GAP_US = 100
PAIRS = 5
# with / without, the median over the pairs: at least. On this VM, loaded: 0.87-1.17
# per pair; main (the handler waited for the write): 0.1-0.7, and no EINTR at all.
MIN_RATIO = 0.9


def send_storm(pid: int, signals=SIGNALS, rounds: int = ROUNDS, gap_us: float = GAP_US):
    """rounds x signals to pid, one every gap_us (busy-waited: sleep is too coarse)."""
    for _ in range(rounds):
        for sig in signals:
            os.kill(pid, sig)
            until = time.perf_counter() + gap_us / 1e6
            while time.perf_counter() < until:
                pass


def storm(lapse, run_dir) -> dict[str, int]:
    """One storm against e2e_signal_storm (without lapse when run_dir is None): the
    counts it printed."""
    args = [lapse.program("e2e_signal_storm"), run_dir or "-"]
    proc = subprocess.Popen([str(a) for a in args], env=clean_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        pid = int(proc.stdout.readline().split()[1])
        send_storm(pid)
        time.sleep(0.2)  # the last ones are handled
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail("e2e_signal_storm did not finish")
    finally:
        kill_group(proc)
    assert proc.returncode == 0, err
    assert stderr_lines(err) == [], err
    words = out.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def test_signal_storm_reaches_the_program_handlers(lapse, tmp_path):
    def handled(counts):
        return sum(counts[s.name[3:]] for s in SIGNALS)

    pairs = [(storm(lapse, None), storm(lapse, tmp_path / f"runs{i}")) for i in range(PAIRS)]
    ratios = sorted(handled(b) / max(1, handled(a)) for a, b in pairs)
    # the handlers were installed without SA_RESTART: the program's read sees EINTR
    # with lapse as without (lapse's handler takes the program's flags)
    eintr = sorted(b["EINTR"] / max(1, a["EINTR"]) for a, b in pairs)
    print(f"signal storm: ratios {ratios}, EINTR {eintr}; without, with: {pairs}")
    assert all(a["EINTR"] > 0 for a, _ in pairs), pairs
    assert ratios[PAIRS // 2] >= MIN_RATIO and eintr[PAIRS // 2] >= MIN_RATIO, (
        f"the program's handlers ran fewer times with lapse, or its read saw EINTR fewer "
        f"times (ratios {ratios}, EINTR {eintr}; without, with: {pairs})")
    # the process wrote its file, the last time at exit
    files = list((tmp_path / "runs0").glob("*/*/storm-*.lapse"))
    assert len(files) == 1, files
    doc = lapse.report_json(files[0])
    assert [w["end_reason"] for w in doc["workers"]] == ["exit"], doc["workers"]


def test_terminating_signal_in_a_storm_leaves_the_final_file(lapse, tmp_path):
    """SIGUSR1 and SIGHUP handled by the program, SIGTERM left to its default: in a
    storm of the first two, a SIGTERM still ends the process with its final file in
    place (the handler waits for it), written for that SIGTERM."""
    args = [lapse.program("e2e_signal_storm"), tmp_path / "runs", "USR1,HUP"]
    proc = subprocess.Popen([str(a) for a in args], env=clean_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, pid, path = proc.stdout.readline().split()
        send_storm(int(pid), (signal.SIGUSR1, signal.SIGHUP), rounds=100)
        os.kill(int(pid), signal.SIGTERM)
        send_storm(int(pid), (signal.SIGUSR1, signal.SIGHUP), rounds=20)
        proc.communicate(timeout=TIMEOUT_S)
    finally:
        kill_group(proc)
    assert proc.returncode == -signal.SIGTERM, proc.returncode
    doc = lapse.report_json(path)
    w, = doc["workers"]
    assert w["final"] is True and w["end_reason"] == "SIGTERM", w
