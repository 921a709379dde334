"""A storm of signals reaches a Python program's own handlers (the signal module's)
as it would without lapse: 1,000 signals (250 each of SIGTERM, SIGINT, SIGUSR1 and
SIGHUP, round robin, one every GAP_US) to storm_target.py without and with a Profiler,
whose handler chains to Python's. Python runs its handlers when the main thread
gets back to the interpreter: a blocking read must be interrupted (EINTR) as it is
without lapse, or the handlers run only once it returns. The machine's noise loses
some deliveries in both runs (more while other builds load it), so the test compares
the best run of each over up to ATTEMPTS pairs, allowing what the best run without
lapse lost (at least TOLERANCE): on a loaded machine that is the noise floor."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

TARGET = str(pathlib.Path(__file__).with_name("storm_target.py"))
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGHUP)
ROUNDS = 250
GAP_US = 100
TOLERANCE = 30  # of the 1,000 handler runs: 3%, at least
ATTEMPTS = 5


def storm(run_dir, wait: str) -> dict[str, int]:
    proc = subprocess.Popen([sys.executable, TARGET, str(run_dir or "-"), wait],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        pid = int(proc.stdout.readline().split()[1])
        for _ in range(ROUNDS):
            for sig in SIGNALS:
                os.kill(pid, sig)
                until = time.perf_counter() + GAP_US / 1e6
                while time.perf_counter() < until:  # busy: sleep is too coarse
                    pass
        time.sleep(0.2)  # the last ones are handled
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert err == "", err
    return json.loads(out)


@pytest.mark.parametrize("wait", ["read", "sleep"])
def test_signal_storm_reaches_python_handlers(tmp_path, wait):
    seen = []
    for attempt in range(ATTEMPTS):
        seen.append((storm(None, wait), storm(tmp_path / f"runs{attempt}", wait)))
        without = max(sum(a.values()) for a, _ in seen)
        with_lapse = max(sum(b.values()) for _, b in seen)
        if with_lapse >= without - max(TOLERANCE, len(SIGNALS) * ROUNDS - without):
            break
    else:
        pytest.fail(f"Python's handlers ran fewer times with lapse (without, with): {seen}")
    files = list((tmp_path / f"runs{attempt}").glob("*/*/storm-*.lapse"))
    assert len(files) == 1, files
