"""A program's own signal handler runs once per signal delivered, as without lapse
(issue 15), measured as two properties that the machine's load cannot blur:

- in a storm (1,000 signals: 250 each of SIGTERM, SIGINT, SIGUSR1 and SIGHUP, round
  robin, one every GAP_US), lapse's handler chains to the program's exactly once per
  delivery it gets, and the program's read still sees EINTR. e2e_signal_storm puts an
  outer handler over lapse's that counts the deliveries; the program's handlers count
  their runs. (How many of the 1,000 are delivered at all is the scheduler's doing:
  standard signals coalesce while one of a kind is pending. On a loaded 2-CPU VM two
  runs without lapse differ by 0.28-3.1 x, so a count with lapse against one without
  measures the load, not lapse.)
- one signal at a time, the time from kill() to the program's handler (it writes a
  byte to its stdout, which the test reads) with lapse is the time without it plus at
  most LATENCY_BOUND_NS, medians over ECHOES signals sent alternately to two
  processes running at the same time, one without lapse and one with. A handler that
  holds the signal back (lapse's used to wait for the file to be written) fails it.
"""

from __future__ import annotations

import os
import random
import select
import signal
import statistics
import subprocess
import time

import pytest

from conftest import TIMEOUT_S, clean_env, kill_group, stderr_lines

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP)
ROUNDS = 250
GAP_US = 100
ECHOES = 80
# kill() to the program's handler, with lapse: at most the time without it plus this,
# medians over ECHOES signals. Measured on a 2-CPU VM at load 10-14, ASan build:
# without 12-51 us, with 37 us; the handler that waited for the write (b98faea): 4.3 ms
LATENCY_BOUND_NS = 1_000_000
# lapse's handler, chaining included, on average per delivery in the storm: at most
# (ASan, load 10: 0.4 us; the handler that waited for the write: 634 us)
HANDLER_MEAN_BOUND_NS = 50_000


def send_storm(pid: int, signals=SIGNALS, rounds: int = ROUNDS, gap_us: float = GAP_US):
    """rounds x signals to pid, one every gap_us (busy-waited: sleep is too coarse)."""
    for _ in range(rounds):
        for sig in signals:
            os.kill(pid, sig)
            until = time.perf_counter() + gap_us / 1e6
            while time.perf_counter() < until:
                pass


def start(lapse, run_dir, *args) -> tuple[subprocess.Popen, int, str]:
    """e2e_signal_storm (without lapse when run_dir is None), ready: (proc, pid, file)."""
    argv = [lapse.program("e2e_signal_storm"), run_dir or "-", *args]
    proc = subprocess.Popen([str(a) for a in argv], env=clean_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    _, pid, path = proc.stdout.readline().decode().split()
    return proc, int(pid), path


def finish(proc: subprocess.Popen) -> dict[str, int]:
    """Closes the program's stdin: the counts it printed."""
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail("e2e_signal_storm did not finish")
    finally:
        kill_group(proc)
    assert proc.returncode == 0, err
    assert stderr_lines(err.decode()) == [], err
    words = out.decode().lstrip("!").split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def test_signal_storm_chains_once_per_delivery(lapse, tmp_path):
    proc, pid, _ = start(lapse, tmp_path / "runs")
    try:
        send_storm(pid)
        time.sleep(0.2)  # the last ones are handled
    except BaseException:
        kill_group(proc)
        raise
    counts = finish(proc)
    handled = sum(counts[s.name[3:]] for s in SIGNALS)
    print(f"signal storm: {counts}; lapse's handler "
          f"{counts['HANDLER_NS'] / max(1, counts['DELIVERED']) / 1e3:.2f} us a delivery")
    assert counts["DELIVERED"] > 0, counts
    assert counts["HANDLER_NS"] / counts["DELIVERED"] <= HANDLER_MEAN_BOUND_NS, counts
    assert handled == counts["DELIVERED"], (
        f"lapse's handler got {counts['DELIVERED']} signals, the program's ran {handled} "
        f"times: {counts}")
    # the handlers were installed without SA_RESTART: the program's read sees EINTR
    # with lapse as without (lapse's handler takes the program's flags)
    assert counts["EINTR"] > 0, counts
    # the process wrote its file, the last time at exit
    files = list((tmp_path / "runs").glob("*/*/storm-*.lapse"))
    assert len(files) == 1, files
    doc = lapse.report_json(files[0])
    assert [w["end_reason"] for w in doc["workers"]] == ["exit"], doc["workers"]


def echo_latency_ns(proc: subprocess.Popen, pid: int, sig: int) -> int:
    """kill() to the byte the program's handler writes."""
    fd = proc.stdout.fileno()
    t0 = time.perf_counter_ns()
    os.kill(pid, sig)
    ready, _, _ = select.select([fd], [], [], TIMEOUT_S)
    assert ready, f"no echo of {sig.name} from {pid}"
    assert os.read(fd, 1) == b"!"
    return time.perf_counter_ns() - t0


def test_signal_reaches_the_program_handler_at_once(lapse, tmp_path):
    without, _, _ = start(lapse, None, "TERM,INT,USR1,HUP", "echo")
    with_, with_pid, _ = start(lapse, tmp_path / "runs", "TERM,INT,USR1,HUP", "echo")
    try:
        rng = random.Random(15)
        lat = {"without": [], "with": []}
        for i in range(ECHOES):
            sig = SIGNALS[i % len(SIGNALS)]
            order = [("without", without, without.pid), ("with", with_, with_pid)]
            rng.shuffle(order)
            for name, proc, pid in order:
                lat[name].append(echo_latency_ns(proc, pid, sig))
                time.sleep(rng.uniform(0.001, 0.003))
    except BaseException:
        kill_group(without)
        kill_group(with_)
        raise
    a, b = finish(without), finish(with_)
    med = {k: statistics.median(v) for k, v in lat.items()}
    print(f"kill() to the program's handler, median: without lapse {med['without'] / 1e3:.0f} "
          f"us, with {med['with'] / 1e3:.0f} us; {a}, {b}")
    assert a["DELIVERED"] == ECHOES and b["DELIVERED"] == ECHOES, (a, b)
    assert med["with"] <= med["without"] + LATENCY_BOUND_NS, (
        f"the program's handler ran {(med['with'] - med['without']) / 1e3:.0f} us later with "
        f"lapse (medians over {ECHOES} signals: without {med['without'] / 1e3:.0f} us, with "
        f"{med['with'] / 1e3:.0f} us)")


def test_terminating_signal_in_a_storm_leaves_the_final_file(lapse, tmp_path):
    """SIGUSR1 and SIGHUP handled by the program, SIGTERM left to its default: in a
    storm of the first two, a SIGTERM still ends the process with its final file in
    place (the handler waits for it), written for that SIGTERM."""
    proc, pid, path = start(lapse, tmp_path / "runs", "USR1,HUP")
    try:
        send_storm(pid, (signal.SIGUSR1, signal.SIGHUP), rounds=100)
        os.kill(pid, signal.SIGTERM)
        send_storm(pid, (signal.SIGUSR1, signal.SIGHUP), rounds=20)
        proc.communicate(timeout=TIMEOUT_S)
    finally:
        kill_group(proc)
    assert proc.returncode == -signal.SIGTERM, proc.returncode
    doc = lapse.report_json(path)
    w, = doc["workers"]
    assert w["final"] is True and w["end_reason"] == "SIGTERM", w
