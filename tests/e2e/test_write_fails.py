"""Writes that fail: the process carries on, says at the end of each session that its
profile was not saved, and the report claims no cause it cannot prove.

As root, the program runs in a mount namespace of its own (`unshare -m`) whose run
directory is a small tmpfs: the test fills it (ENOSPC: write()) or remounts it
read-only (EROFS: the temporary file cannot be created), through /proc/PID/root and
nsenter, and undoes it. chmod does not stop root. As another user, the test takes
the write permission off the run's host directory (EACCES).
"""

from __future__ import annotations

import errno
import os
import pathlib
import shutil
import subprocess
import threading

import pytest

from conftest import TIMEOUT_S, clean_env, kill_group, stderr_lines, wait_until

ROOT = os.geteuid() == 0


class Target:
    """e2e_write_fails, and the means to make its writes fail."""

    def __init__(self, lapse, tmp_path: pathlib.Path, sessions: int, snapshot_ms: int | None = None):
        self.run_dir = tmp_path / "runs"
        self.run_dir.mkdir()
        prog = [lapse.program("e2e_write_fails"), str(self.run_dir), str(sessions)]
        if snapshot_ms is not None:
            prog.append(str(snapshot_ms))
        if ROOT:
            for tool in ("unshare", "nsenter", "mount"):
                if not shutil.which(tool):
                    pytest.fail(f"{tool} is missing: the root variant of this test needs it")
            # the shell stays after the program, so that its namespace (and the files
            # on the tmpfs) outlive it until stdin closes
            args = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                    'mount -t tmpfs -o size=1m tmpfs "$0" || exit 99; "$@"; echo "exit $?"; read x',
                    str(self.run_dir), *prog]
        else:
            args = [*prog]
        self.proc = subprocess.Popen(args, env=clean_env(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.fill: pathlib.Path | None = None
        self.locked: pathlib.Path | None = None
        self.err: list[str] = []  # its stderr, read as it comes
        self.reader = threading.Thread(target=lambda: self.err.extend(self.proc.stderr),
                                       daemon=True)
        self.reader.start()

    def view(self, path: pathlib.Path | str) -> pathlib.Path:
        """A path of the program's as the test can reach it."""
        if ROOT:
            return pathlib.Path(f"/proc/{self.proc.pid}/root{path}")
        return pathlib.Path(path)

    def start(self) -> str:
        """Starts the program's next session; returns its file."""
        self.send("start")
        kind, path = self.line().split(maxsplit=1)
        assert kind == "file" and self.view(path).exists(), (kind, path)
        return path

    def line(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=TIMEOUT_S)
            self.reader.join(timeout=TIMEOUT_S)
            pytest.fail(f"e2e_write_fails ended early: {''.join(self.err)}")
        return line.strip()

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def break_space(self, path: str) -> str:
        """Makes the next writes of the file at path fail; returns the error they
        will give."""
        if not ROOT:
            return self.break_permission(path)
        self.fill = self.view(self.run_dir / "fill")
        with open(self.fill, "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
        return os.strerror(errno.ENOSPC)

    def break_read_only(self, path: str) -> str:
        if not ROOT:
            return self.break_permission(path)
        subprocess.run(["nsenter", "-t", str(self.proc.pid), "-m", "mount", "-o", "remount,ro",
                        str(self.run_dir)], check=True, timeout=TIMEOUT_S)
        return os.strerror(errno.EROFS)

    def break_permission(self, path: str) -> str:
        self.locked = pathlib.Path(path).parent
        self.locked.chmod(0o555)
        return os.strerror(errno.EACCES)

    def repair(self) -> None:
        if self.fill is not None:
            self.fill.unlink()
            self.fill = None
        elif ROOT:
            subprocess.run(["nsenter", "-t", str(self.proc.pid), "-m", "mount", "-o",
                            "remount,rw", str(self.run_dir)], check=True, timeout=TIMEOUT_S)
        if self.locked is not None:
            self.locked.chmod(0o755)
            self.locked = None

    def finish(self, copy_to: pathlib.Path | None = None) -> tuple[str, str]:
        """Waits for the program's end; copies its run directory out (before the
        namespace goes) when asked; returns (stdout, stderr)."""
        out = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                break
            out.append(line)
            if line.startswith("exit ") or (not ROOT and line.strip() == "bye"):
                break
        if copy_to is not None:
            shutil.copytree(self.view(self.run_dir), copy_to,
                            ignore=shutil.ignore_patterns("fill"))
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            pytest.fail("e2e_write_fails did not finish")
        out.extend(self.proc.stdout)
        self.reader.join(timeout=TIMEOUT_S)
        if self.locked is not None:
            self.locked.chmod(0o755)
        return "".join(out), "".join(self.err)


def failures_in(lapse, f: pathlib.Path, copy: pathlib.Path) -> int:
    """write_failures of the file f holds now (read from a copy: the reader does not
    follow /proc/PID/root)."""
    shutil.copyfile(f, copy)
    return lapse.report_json(copy)["workers"][0]["write_failures"]


def saved_lines(err: str) -> list[str]:
    return [l for l in stderr_lines(err) if l.startswith("lapse: profile not saved: ")]


def test_each_failed_final_write_is_reported(lapse, tmp_path):
    """Three sessions, each ended with its final write failing (a full disk, a
    read-only file system, and at exit): three lines, one per failure, each with its
    reason; the program ends normally; nothing else on stderr."""
    t = Target(lapse, tmp_path, sessions=3)
    try:
        expected = []
        for how, end in (("space", "stop"), ("read_only", "stop"), ("space", "exit")):
            path = t.start()
            expected.append((path, getattr(t, f"break_{how}")(path)))
            t.send(end)
            if end == "stop":
                # lapse_stop itself succeeds: the program carries on
                assert t.line() == "stopped 0"
                t.repair()
        out, err = t.finish()
    finally:
        kill_group(t.proc)
    assert "bye" in out and (not ROOT or "exit 0" in out), (out, err)
    lines = saved_lines(err)
    assert len(lines) == 3, err
    for line, (path, why) in zip(lines, expected):
        assert path in line and line.endswith(why), (line, path, why)
    assert [l for l in stderr_lines(err) if l not in lines] == [], err


def test_report_names_only_what_it_can_prove(lapse, tmp_path):
    """Snapshots every 50 ms. The disk fills: the periodic writes fail (one warning);
    it has room again: a write lands and carries the failures before it; it fills
    again and the final write fails at exit. The report reads the file that landed:
    the process is gone without a final write, and the report says the file cannot
    tell why (killed, _exit, or failed writes) instead of naming one, and that writes
    had failed before it, with their reason."""
    t = Target(lapse, tmp_path, sessions=1, snapshot_ms=50)
    try:
        path = t.start()
        f = t.view(path)
        why = t.break_space(path)
        wait_until(lambda: any(l.startswith("lapse: warning:") for l in t.err),
                   what="the first failed write's warning")
        t.repair()
        # a write lands: the file is replaced (a new inode)
        seen = f.stat().st_ino
        wait_until(lambda: f.exists() and f.stat().st_ino != seen, what="a write to land")
        wait_until(lambda: failures_in(lapse, f, tmp_path / "probe.lapse") > 0,
                   what="a write that holds the failures")
        t.break_space(path)
        t.send("exit")
        out, err = t.finish(copy_to=tmp_path / "copy")
    finally:
        kill_group(t.proc)
    assert "bye" in out, (out, err)
    lines = saved_lines(err)
    assert len(lines) == 1 and lines[0].endswith(why), err
    warnings = [l for l in stderr_lines(err) if l.startswith("lapse: warning: ")]
    assert len(warnings) == 1 and "whether the profile was saved" in warnings[0], err
    doc = lapse.report_json(tmp_path / "copy")
    w, = doc["workers"]
    assert w["final"] is False and w["state"] == "gone", w
    assert w["write_failures"] >= 1 and w["write_error"].endswith(why), w
    kinds = {c["kind"]: c["message"] for c in doc["caveats"]}
    assert "write_failed" in kinds and why in kinds["write_failed"], doc["caveats"]
    gone = kinds["stale"]
    assert "cannot tell which" in gone and "writes failed" in gone, gone
    assert "profile not saved" in gone, gone
    text = lapse.run("report", tmp_path / "copy").stdout
    assert "writes failed" in text and why in text, text
