"""The header's four numbers per role and per process: wall, CPU and cores busy
(CPU / wall), user/sys, voluntary/involuntary context switches. A figure a file
does not carry (an older writer's) is "-" in the text and null in the JSON, never 0."""

from __future__ import annotations

import pathlib
import sys

import lapse_files as lf
from conftest import clean_env, kill_group, profile_env, role_of, run_program, start_program, worker_by_pid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from test_pyread_dump import PYTHONS  # noqa: E402

S = 10**9


def usage_rows(text: str) -> dict[str, list[str]]:
    """The rows of the Usage block: label -> the columns after it."""
    lines = text.splitlines()
    at = next(i for i, l in enumerate(lines) if l.split()[:1] == ["Usage"])
    rows = {}
    for line in lines[at + 1:]:
        if not line.startswith("  ") or line.startswith("  cores ="):
            break
        label = " ".join(line[:25].split())
        rows[label] = line[25:].split()
    return rows


def test_absent_figures_are_dashes_not_zeros(lapse, tmp_path):
    run = tmp_path / "run" / "testhost"
    run.mkdir(parents=True)
    new = lf.process(11, wall_ns=2 * S, cpu_user_ns=3 * S, cpu_sys_ns=S, ctx_voluntary=1234,
                     ctx_involuntary=56)
    old = lf.process(12, wall_ns=2 * S, cpu_user_ns=S, cpu_sys_ns=0)  # no ctx_* keys
    unread = lf.process(13, role="rec", wall_ns=2 * S, cpu_unknown=1, ctx_voluntary=-1,
                        ctx_involuntary=-1)
    for f, name in ((new, "worker-11-a"), (old, "worker-12-b"), (unread, "rec-13-c")):
        (run / f"{name}.lapse").write_bytes(f.encode())
    doc = lapse.report_json(tmp_path / "run")
    u11 = worker_by_pid(doc, 11)["usage"]
    assert u11 == {"processes": 1, "wall_ns": 2 * S, "cpu_ns": 4 * S, "cpu_user_ns": 3 * S,
                   "cpu_sys_ns": S, "cores_busy": 2.0, "ctx_voluntary": 1234,
                   "ctx_involuntary": 56}
    u12 = worker_by_pid(doc, 12)["usage"]
    assert u12["cpu_ns"] == S and u12["ctx_voluntary"] is None and u12["ctx_involuntary"] is None
    u13 = worker_by_pid(doc, 13)["usage"]
    assert u13["cpu_ns"] is None and u13["cores_busy"] is None and u13["ctx_voluntary"] is None
    role = role_of(doc, "worker")["usage"]
    assert role["processes"] == 2 and role["cpu_ns"] == 5 * S and role["cores_busy"] == 2.5
    assert role["ctx_voluntary"] is None  # not known for every process of the role

    text = lapse.run("report", tmp_path / "run").stdout
    rows = usage_rows(text)
    assert rows["pid 11"] == ["2.00s", "4.00s", "2.00", "3.00s", "/", "1.00s", "1,234", "/", "56"], rows
    assert rows["pid 12"][-1] == "-" and rows["pid 12"][1] == "1.00s", rows
    assert rows["pid 13"][1:] == ["-", "-", "-", "-"], rows
    assert rows["worker x2"][1:3] == ["5.00s", "2.50"] and rows["worker x2"][-1] == "-", rows


def test_a_session_counts_its_context_switches(lapse, tmp_path):
    run_dir = tmp_path / "demo"
    r = run_program([lapse.program("example_pipeline"), 4], profile_env(run_dir, role="driver"))
    assert r.returncode == 0, r.stderr
    doc = lapse.report_json(run_dir)
    rows = usage_rows(lapse.run("report", run_dir).stdout)
    for w in doc["workers"]:
        u = w["usage"]
        # the driver waits for its workers: it gives up the CPU at least once
        assert u["ctx_voluntary"] > 0 and u["ctx_involuntary"] >= 0, u
        assert u["cpu_ns"] == w["cpu_user_ns"] + w["cpu_sys_ns"] and u["wall_ns"] == w["wall_ns"]
        assert abs(u["cores_busy"] - u["cpu_ns"] / u["wall_ns"]) < 1e-5
        row = rows[f"pid {w['pid']}"]
        assert row[-3:] == [f"{u['ctx_voluntary']:,}", "/", f"{u['ctx_involuntary']:,}"], (row, u)
    workers = [w["usage"] for w in doc["workers"] if w["role"] == "worker"]
    role = role_of(doc, "worker")["usage"]
    assert role["ctx_voluntary"] == sum(u["ctx_voluntary"] for u in workers)
    assert role["cpu_ns"] == sum(u["cpu_ns"] for u in workers)


def test_lapse_record_files_carry_the_targets_usage(lapse, tmp_path):
    """A launched target's usage comes from wait4, an attached one's from /proc at the
    end of the recording: CPU time and context switches, not zeros."""
    py = PYTHONS[0]
    out = tmp_path / "launched.lapse"
    code = "import time\nsum(range(3_000_000))\nfor _ in range(20): time.sleep(0.01)\n"
    r = lapse.run("record", "-r", "200", "-o", out, "--", py, "-c", code, timeout=60)
    assert r.returncode == 0, r.stderr
    (u,) = [w["usage"] for w in lapse.report_json(out)["workers"]]
    assert u["cpu_ns"] > 10**7 and u["cores_busy"] is not None, u
    assert u["ctx_voluntary"] >= 20, u  # 20 sleeps at least

    # attached: what it used while recorded, as the wall time is the recording's (it
    # burned CPU for 0.6 s before; counting that made "cores busy" above 1 for a
    # target that then only sleeps)
    code = ("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
            "print('ready', flush=True)\nwhile True: time.sleep(0.01)\n")
    proc = start_program([py, "-c", code], env=clean_env())
    try:
        assert proc.stdout.readline().startswith("ready")
        out = tmp_path / "attached.lapse"
        r = lapse.run("record", "--pid", proc.pid, "-r", "200", "-d", "0.5", "-o", out, timeout=60)
        assert r.returncode == 0, r.stderr
        (u,) = [w["usage"] for w in lapse.report_json(out)["workers"]]
        assert u["cpu_ns"] is not None and u["cpu_ns"] < 3 * 10**8, u
        assert u["cores_busy"] < 0.6, u
        assert 10 <= u["ctx_voluntary"] < 1000 and u["ctx_involuntary"] is not None, u
    finally:
        kill_group(proc)
