"""Write only where asked, only what is ours (issue 15, section 2).

A second local user, created here (root only), plants symbolic links where lapse,
run by root, creates files: at a session's temporary in a shared run directory, at
`lapse record --pid`'s temporary when it merges its samples into the target's own
file, at the target's file itself, at an export's temporary and output. A root-owned
0600 file must never be written or read through them. Also: the modes of what lapse
creates under umask 022 (0700/0600, LAPSE_SHARE=1: 0750/0640), and a temporary left
by a writer that died, named in CAVEATS and removed by the next writer of its file.
"""

from __future__ import annotations

import json
import os
import pathlib
import pwd
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import REPO, clean_env, kill_group, profile_env, start_program, wait_until

TARGETS = REPO / "tests" / "e2e" / "py_targets"
SECRET = b"root's secret: never written through a link\n"
# the interpreter the other user runs (pyenv's live under /root, which it cannot enter)
SYSTEM_PYTHON = "/usr/bin/python3"


# ---- the other user ----

@pytest.fixture(scope="module")
def other_user():
    """A local user created for this module (and removed after it)."""
    if os.geteuid() != 0:
        pytest.skip("the attacks need root: a second local user plays the attacker "
                    "against a root process (useradd), and this test runs as "
                    f"uid {os.geteuid()}")
    if not shutil.which("useradd") or not shutil.which("userdel"):
        pytest.skip("useradd/userdel not found: cannot create the second user")
    name = f"lapsews{os.getpid() % 1000000}"
    r = subprocess.run(["useradd", "--no-create-home", "--user-group", "--shell",
                        "/usr/sbin/nologin", name], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"useradd {name} failed: {r.stderr.strip()}")
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def attack_dir(other_user):
    """A directory the other user owns, in a place both users can reach."""
    base = pathlib.Path(tempfile.mkdtemp(prefix="lapse-ws-", dir="/tmp"))
    base.chmod(0o755)
    d = base / "shared"
    d.mkdir()
    os.chown(d, other_user.pw_uid, other_user.pw_gid)
    yield d
    shutil.rmtree(base, ignore_errors=True)


def as_user(user, *args, **kw) -> subprocess.CompletedProcess:
    """Runs a command as the other user."""
    return subprocess.run([str(a) for a in args], user=user.pw_uid, group=user.pw_gid,
                          extra_groups=[], capture_output=True, text=True, timeout=30, **kw)


def plant_link(user, target: pathlib.Path, link: pathlib.Path) -> None:
    r = as_user(user, "ln", "-s", target, link)
    assert r.returncode == 0, r.stderr


def make_dirs_as(user, path: pathlib.Path) -> None:
    r = as_user(user, "mkdir", "-p", path)
    assert r.returncode == 0, r.stderr


@pytest.fixture
def victim(tmp_path) -> pathlib.Path:
    """A root-owned 0600 file in a directory only root can enter."""
    d = tmp_path / "root-only"
    d.mkdir(mode=0o700)
    v = d / "secret"
    v.write_bytes(SECRET)
    v.chmod(0o600)
    return v


def asan_env(lapse) -> dict[str, str]:
    """What a Python process needs to load a sanitizer build's liblapse."""
    lib = lapse.build / "liblapse.so"
    found = re.search(r"(\S*libasan\.so\S*) => (\S+)",
                      subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout)
    return {"LD_PRELOAD": found.group(2), "ASAN_OPTIONS": "detect_leaks=0"} if found else {}


def lapse_files(d: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in d.rglob("*.lapse") if p.is_file() and not p.is_symlink())


def spawn_stopped(args, env, log: pathlib.Path) -> int:
    """Forks a process that stops itself (SIGSTOP) before it execs args: its pid is
    known before it runs. Its stdout and stderr go to log."""
    log.touch()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            fd = os.open(log, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.kill(os.getpid(), signal.SIGSTOP)
            os.execve(args[0], [str(a) for a in args], env)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), status
    return pid


def resume_and_wait(pid: int, timeout_s: float = 30) -> int:
    os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail(f"process {pid} did not finish in {timeout_s}s")


# ---- 1. the session's temporaries in a shared run directory ----

def test_session_does_not_write_through_a_link_at_its_temporary(lapse, other_user,
                                                                 attack_dir, victim):
    """A root process profiles into a run directory the other user can write (a
    shared LAPSE_RUN_DIR, a run id the job shares). The other user plants
    <file>.tmp.<pid> -> the root-only file; the snapshots that follow must not
    truncate or write it."""
    host_dir = attack_dir / "runs" / "shared-run" / "node1"
    make_dirs_as(other_user, host_dir)
    env = profile_env(attack_dir / "runs", snapshot_ms=20, LAPSE_RUN_ID="shared-run",
                      SLURMD_NODENAME="node1")
    proc = start_program([lapse.program("e2e_rank"), 75, 20000], env)
    try:
        [f] = wait_until(lambda: lapse_files(host_dir), what="the session's first file")
        plant_link(other_user, victim, f.with_name(f"{f.name}.tmp.{proc.pid}"))
        out, err = proc.communicate(timeout=30)
    finally:
        kill_group(proc)
    assert proc.returncode == 0, err
    assert victim.read_bytes() == SECRET, "the root-only file was written through the link"
    # the run is intact: the session's final file is a regular file of its own
    [final] = lapse_files(host_dir)
    assert not final.is_symlink()
    doc = lapse.report_json(attack_dir / "runs" / "shared-run")
    assert [w["final"] for w in doc["workers"]] == [True], doc["workers"]


# ---- 2. lapse record --pid, merging into the target's own file ----

def start_target(lapse, other_user, attack_dir, seconds: float, run_dir_seen=None,
                 run_dir_real=None) -> subprocess.Popen:
    """The other user's Python program with a lapse session (spans.py). Its
    environment says LAPSE_RUN_DIR=run_dir_seen; with run_dir_real, the program
    writes there instead (it changes its own environment before liblapse loads)."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"{SYSTEM_PYTHON} not found: the other user needs an interpreter "
                    "outside /root")
    env = clean_env(LAPSE_PROFILE="1", LAPSE_RUN_DIR=str(run_dir_seen or attack_dir / "runs"),
                    LAPSE_SNAPSHOT_MS="100", **asan_env(lapse))
    code = ("import os, runpy, sys\n"
            "if sys.argv[1] != '-': os.environ['LAPSE_RUN_DIR'] = sys.argv[1]\n"
            "sys.argv = sys.argv[1:]\n"
            f"runpy.run_path({str(TARGETS / 'spans.py')!r}, run_name='__main__')\n")
    return subprocess.Popen(
        [SYSTEM_PYTHON, "-c", code, str(run_dir_real) if run_dir_real else "-",
         str(lapse.build / "liblapse.so"), str(seconds)],
        env=env, cwd=attack_dir, user=other_user.pw_uid, group=other_user.pw_gid,
        extra_groups=[], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)


def start_record(lapse, pid: int, out: pathlib.Path) -> subprocess.Popen:
    return start_program([lapse.exe, "record", "--pid", pid, "-r", "200", "-o", out],
                         clean_env())


def test_record_merge_does_not_write_through_a_link_at_its_temporary(
        lapse, other_user, attack_dir, victim, tmp_path):
    target = start_target(lapse, other_user, attack_dir, 2.0)
    record = None
    try:
        [f] = wait_until(lambda: lapse_files(attack_dir / "runs"), what="the target's file")
        record = start_record(lapse, target.pid, tmp_path / "out.lapse")
        # root's lapse record merges into f through f.tmp.<its pid> (as it was named)
        plant_link(other_user, victim, f.with_name(f"{f.name}.tmp.{record.pid}"))
        out, err = record.communicate(timeout=60)
        target.communicate(timeout=30)
    finally:
        kill_group(target)
        if record:
            kill_group(record)
    assert record.returncode == 0, err
    assert victim.read_bytes() == SECRET, "the root-only file was written through the link"
    assert "added the samples to the target's own file" in err, err
    [final] = lapse_files(attack_dir / "runs")
    st = final.lstat()
    assert stat.S_ISREG(st.st_mode)
    # the target's file stays the target's: its owner, a mode that lets it read it
    assert st.st_uid == other_user.pw_uid, (st.st_uid, other_user.pw_uid)
    assert stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    doc = lapse.report_json(final)
    assert len(doc["python_samples"]) == 1 and doc["workers"][0]["pid"] == target.pid


@pytest.fixture
def root_lapse_file(lapse, tmp_path) -> pathlib.Path:
    """A .lapse file of root's, 0600, in a directory only root can enter."""
    runs = tmp_path / "root-runs"
    r = subprocess.run([lapse.program("e2e_rank"), "3", "1000"], env=profile_env(runs),
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    [f] = lapse_files(runs)
    f.chmod(0o600)
    runs.chmod(0o700)
    return f


@pytest.mark.parametrize("link", ["file", "directory", "run_dir"])
def test_record_merges_only_into_a_file_of_the_targets_user(
        lapse, other_user, attack_dir, root_lapse_file, tmp_path, link):
    """The target's environment names a run directory (LAPSE_RUN_DIR) that the other
    user filled with a link to root's files, named like the target's file (its pid),
    or that is root's own directory, holding such a file: root's lapse record must
    neither read root's file into the other user's directory nor merge into it. The
    samples stay in the -o output, and one line says why when it found a file."""
    seen = attack_dir / "seen"
    make_dirs_as(other_user, seen / "run")
    target = start_target(lapse, other_user, attack_dir, 2.0,
                          run_dir_seen=root_lapse_file.parent if link == "run_dir" else seen,
                          run_dir_real=attack_dir / "runs")
    record = None
    before = root_lapse_file.read_bytes()
    try:
        wait_until(lambda: lapse_files(attack_dir / "runs"), what="the target's file")
        if link == "file":
            plant_link(other_user, root_lapse_file, seen / "run" / f"main-{target.pid}-0000.lapse")
        else:
            # root's directory holds a file named like the target's
            twin = root_lapse_file.with_name(f"main-{target.pid}-0000.lapse")
            shutil.copy(root_lapse_file, twin)
            twin.chmod(0o600)
            if link == "directory":
                plant_link(other_user, root_lapse_file.parent, seen / "run" / "host")
        record = start_record(lapse, target.pid, tmp_path / "out.lapse")
        out, err = record.communicate(timeout=60)
        target.communicate(timeout=30)
    finally:
        kill_group(target)
        if record:
            kill_group(record)
    assert record.returncode == 0, err
    assert "added the samples" not in err, err
    # nothing of root's was copied to where the other user can read it
    leaked = [p for p in seen.rglob("*") if p.is_file() and not p.is_symlink()]
    assert leaked == [], [(p, oct(p.stat().st_mode), p.stat().st_uid) for p in leaked]
    assert root_lapse_file.read_bytes() == before
    for f in root_lapse_file.parent.glob("*.lapse"):
        assert lapse.report_json(f)["python_samples"] == [], f
    # the samples are where -o says
    assert lapse.report_json(tmp_path / "out.lapse")["python_samples"]
    if link != "directory":  # a link below the run directory is not followed: no file
        lines = [line for line in err.splitlines() if "not adding the samples" in line]
        assert len(lines) == 1, err
        assert str(tmp_path / "out.lapse") in lines[0], lines
        assert ("a link" if link == "file" else "belongs to uid 0") in lines[0], lines


# ---- 3. exports and outputs ----

def test_export_does_not_write_through_links(lapse, other_user, attack_dir, victim,
                                              workers_run, tmp_path):
    """An export to a directory the other user can write: a link planted at its
    temporary (perfetto: OUT.tmp.<pid>.1, as it was named), or at the output itself
    (a samples export wrote the path directly), is never written through; the output
    is replaced by a file of its own."""
    out = attack_dir / "trace.json"
    log = tmp_path / "log"
    pid = spawn_stopped([str(lapse.exe), "export", str(workers_run.run_dir), "--perfetto",
                         str(out)], clean_env(), log)
    plant_link(other_user, victim, attack_dir / f"trace.json.tmp.{pid}.1")
    rc = resume_and_wait(pid)
    assert rc == 0, log.read_text()
    assert victim.read_bytes() == SECRET, "the root-only file was written through the link"
    assert json.loads(out.read_text())["traceEvents"]
    assert not out.is_symlink()


@pytest.mark.parametrize("fmt", ["flamegraph", "collapsed"])
def test_samples_export_replaces_a_link_at_its_output(lapse, other_user, attack_dir, victim,
                                                      tmp_path, fmt):
    rec = tmp_path / "rec.lapse"
    r = lapse.run("record", "-r", "200", "-o", rec, "--", sys.executable,
                  TARGETS / "workload.py", "0.5", timeout=60)
    assert r.returncode == 0, r.stderr
    out = attack_dir / "flame.out"
    plant_link(other_user, victim, out)
    r = lapse.run("export", rec, f"--{fmt}", out)
    assert r.returncode == 0, r.stderr
    assert victim.read_bytes() == SECRET, "the root-only file was written through the link"
    assert not out.is_symlink() and out.stat().st_size > 0


@pytest.mark.parametrize("ext", ["lapse", "svg"])
def test_record_output_does_not_write_through_a_link_at_its_temporary(
        lapse, other_user, attack_dir, victim, ext, tmp_path):
    out = attack_dir / f"prof.{ext}"
    log = tmp_path / "log"
    pid = spawn_stopped([str(lapse.exe), "record", "-r", "200", "-o", str(out), "--",
                         sys.executable, str(TARGETS / "workload.py"), "0.5"], clean_env(), log)
    plant_link(other_user, victim, attack_dir / f"prof.{ext}.tmp.{pid}")
    rc = resume_and_wait(pid, timeout_s=60)
    assert rc == 0, log.read_text()
    assert victim.read_bytes() == SECRET, "the root-only file was written through the link"
    assert out.stat().st_size > 0 and not out.is_symlink()


# ---- 4. modes ----

def tree_modes(root: pathlib.Path) -> dict[str, int]:
    """relative path -> permission bits, for root and everything under it."""
    modes = {".": stat.S_IMODE(root.stat().st_mode)}
    for p in root.rglob("*"):
        modes[str(p.relative_to(root))] = stat.S_IMODE(p.lstat().st_mode)
    return modes


def run_with_umask(args, env, mask: int) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True,
                          timeout=60, umask=mask)


@pytest.mark.parametrize("share,mask,dirs,files", [
    (None, 0o022, 0o700, 0o600),
    ("1", 0o022, 0o750, 0o640),
    ("1", 0o077, 0o700, 0o600),  # sharing never widens the umask
])
def test_modes_of_a_run(lapse, tmp_path, share, mask, dirs, files):
    runs = tmp_path / "runs"
    extra = {"LAPSE_SHARE": share} if share else {}
    r = run_with_umask([lapse.program("e2e_rank"), 3, 1000], profile_env(runs, **extra), mask)
    assert r.returncode == 0, r.stderr
    modes = tree_modes(runs)
    assert len(modes) == 4, modes  # runs, run id, host, the file
    for rel, mode in modes.items():
        want = files if rel.endswith(".lapse") else dirs
        assert mode == want, (rel, oct(mode), oct(want), modes)


@pytest.mark.parametrize("share,files", [(None, 0o600), ("1", 0o640)])
def test_modes_of_outputs(lapse, workers_run, tmp_path, share, files):
    extra = {"LAPSE_SHARE": share} if share else {}
    rec = tmp_path / "rec.lapse"
    r = run_with_umask([lapse.exe, "record", "-r", "200", "-o", rec, "--", sys.executable,
                        TARGETS / "workload.py", "0.3"], clean_env(**extra), 0o022)
    assert r.returncode == 0, r.stderr
    outs = [rec]
    for opt, name in (("--perfetto", "trace.json"), ("--flamegraph", "flame.svg")):
        src = workers_run.run_dir if opt == "--perfetto" else rec
        r = run_with_umask([lapse.exe, "export", src, opt, tmp_path / name],
                           clean_env(**extra), 0o022)
        assert r.returncode == 0, r.stderr
        outs.append(tmp_path / name)
    for p in outs:
        assert stat.S_IMODE(p.stat().st_mode) == files, (p, oct(p.stat().st_mode))


# ---- 5. temporaries left by writers that died ----

def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_leftover_temporary_is_named_then_removed(lapse, tmp_path):
    """A writer killed between creating its temporary and renaming it leaves
    <file>.tmp.<pid>...: the report names it under CAVEATS (its writer is gone), and
    the next write of a lapse file in that directory removes it (a killed process's
    file is never written again): only a regular file of its own user whose pid is
    dead, never someone else's, a link or a file that is not a lapse file's."""
    runs = tmp_path / "runs"
    proc = start_program([lapse.program("e2e_rank"), 300, 20000],
                         profile_env(runs, snapshot_ms=1500))
    try:
        [f] = wait_until(lambda: lapse_files(runs), what="the session's first file")
        # right after a snapshot (a new inode: renamed into place), so that the next
        # comes only once the report has read the directory
        first = f.stat().st_ino
        wait_until(lambda: f.stat().st_ino != first, what="the first periodic snapshot")
        gone = dead_pid()
        left = f.with_name(f"{f.name}.tmp.{gone}")
        left.write_bytes(f.read_bytes()[:100])
        alive = f.with_name(f"{f.name}.tmp.{os.getpid()}")  # a live writer's
        alive.write_bytes(b"x")
        link = f.with_name(f"{f.name}.tmp.{gone + 1}.lnk")
        link.symlink_to(tmp_path / "elsewhere")
        # a killed process's own temporary: its file is never written again
        killed = f.with_name(f"worker-{gone}-dead.lapse")
        killed.write_bytes(f.read_bytes())
        orphan = killed.with_name(f"{killed.name}.tmp.{gone}.0badf00d")
        orphan.write_bytes(f.read_bytes()[:100])
        not_ours = f.with_name(f"notes.txt.tmp.{gone}")  # not a lapse file's
        not_ours.write_bytes(b"x")
        doc = lapse.report_json(runs)
        named = [c for c in doc["caveats"] if c["kind"] == "leftover_tmp"]
        assert sorted(c["file"] for c in named) == sorted([str(left), str(orphan)]), doc["caveats"]
        named = [c for c in named if c["file"] == str(left)]
        assert f"pid {gone}" in named[0]["message"] and f.name in named[0]["message"], named
        text = lapse.run("report", runs).stdout
        assert "leftover_tmp" in text and left.name in text, text
        # the session's next write removes it, and only it
        wait_until(lambda: not left.exists() and not orphan.exists(), timeout_s=10,
                   what="the leftovers' removal")
        assert alive.exists() and link.is_symlink() and not_ours.exists()
        out, err = proc.communicate(timeout=30)
    finally:
        kill_group(proc)
    assert proc.returncode == 0, err
    alive.unlink()
    link.unlink()
    not_ours.unlink()
    killed.unlink()
    doc = lapse.report_json(runs)
    assert [c for c in doc["caveats"] if c["kind"] == "leftover_tmp"] == []
