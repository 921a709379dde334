"""A Profiler whose final write fails says so on stderr, each time, and the program
carries on: "lapse: profile not saved: <why>". As root the target runs in a mount
namespace of its own whose run directory is a small tmpfs that the test fills
(through /proc/PID/root: ENOSPC); as another user the test takes the write
permission off the run's host directory (EACCES; chmod does not stop root)."""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

TARGET = str(pathlib.Path(__file__).with_name("write_fail_target.py"))
ROOT = os.geteuid() == 0


def test_profiler_reports_each_failed_final_write(tmp_path):
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    args = [sys.executable, TARGET, str(run_dir)]
    if ROOT:
        if not (shutil.which("unshare") and shutil.which("mount")):
            pytest.fail("unshare and mount are needed for the root variant of this test")
        args = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                'mount -t tmpfs -o size=1m tmpfs "$0" || exit 99; exec "$@"', str(run_dir), *args]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)

    def command(line: str) -> str:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        return proc.stdout.readline().strip()

    def break_writes(path: str):
        if not ROOT:
            pathlib.Path(path).parent.chmod(0o555)
            return pathlib.Path(path).parent, os.strerror(errno.EACCES)
        fill = pathlib.Path(f"/proc/{proc.pid}/root{run_dir}/fill")
        with open(fill, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
        return fill, os.strerror(errno.ENOSPC)

    def repair(what: pathlib.Path):
        if ROOT:
            what.unlink()
        else:
            what.chmod(0o755)

    expected = []
    try:
        for end in ("stop", "exit"):
            kind, path = command("start").split(maxsplit=1)
            assert kind == "file", (kind, path)
            broken, why = break_writes(path)
            expected.append((path, why))
            if end == "stop":
                assert command("stop") == "stopped"  # the program goes on
                repair(broken)
            else:
                assert command("exit") == "bye"
        out, err = proc.communicate(timeout=60)
        if not ROOT:
            repair(broken)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lines = [l for l in err.splitlines() if l.startswith("lapse: profile not saved: ")]
    assert len(lines) == 2, err
    for line, (path, why) in zip(lines, expected):
        assert path in line and line.endswith(why), (line, path, why)
    assert [l for l in err.splitlines() if l not in lines] == [], err
