"""SIGKILL at random instants, many during a write: what the run's files keep.

usage: python3 bench/kill_loop.py [BUILD_DIR] [--kills N] [--snapshot-ms MS]
                                  [--tick-us US] [--paths P] [--python PY]
                                  [--slack-ms MS] [--seed S]

For each target -- BUILD_DIR/kill_target (C, liblapse) and bench/kill_target.py
(lapse.Profiler, under --python, default this interpreter; skipped when it cannot
import lapse) -- it starts the target N times (default 200) in one run directory,
each process writing its file every --snapshot-ms (default 50), and SIGKILLs each
one: a third at a random instant, a third just after its first periodic snapshot
is due, a third as soon as its temporary (NAME.tmp.*) appears in the directory,
i.e. while that write is in progress. The target keeps its own record of the work
it did in a file mapped shared (the ticks it finished and when), which a SIGKILL
cannot take back. After each kill:

- `lapse report --json RUN` must succeed (clean report) and the run must have no
  unreadable file;
- the temporaries left in the directory are counted; each of a dead writer must be
  named by a `leftover_tmp` caveat, and the next process's first write is checked
  for removing those of earlier processes;
- `lapse report --json FILE` of the killed process's file gives the ticks it holds
  (span "tick" calls, counter "work") and when it was written; the loss is the
  ticks done (side record) minus the ticks held, as time in snapshot intervals.
  "Beyond one interval": the work lost spans more than one interval plus
  --slack-ms (default 20: the write in flight and the one before it, whose time
  the writer's cadence adds to the interval), or the file misses a tick that ended
  before its own write instant (less --slack-ms: a snapshot is taken before the
  instant is read).

Prints one table row per target; exits 1 when any kill gave a failed report, an
unreadable file, an unnamed leftover or a loss beyond one interval.
"""
import argparse
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time

RING = 65536
HERE = os.path.dirname(os.path.abspath(__file__))


def read_side(path):
    with open(path, "rb") as f:
        data = f.read()
    done, start = struct.unpack_from("<QQ", data, 0)
    ends = memoryview(data)[16:].cast("Q")
    return done, start, ends


def tick_end(ends, n):
    """End time of tick n (1-based); None for 0."""
    return ends[(n - 1) % RING] if n > 0 else None


def report_json(lapse, path):
    p = subprocess.run([lapse, "report", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    return json.loads(p.stdout), None


def temporaries(host_dir):
    try:
        return {n for n in os.listdir(host_dir) if ".lapse.tmp." in n}
    except FileNotFoundError:
        return set()


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def run_target(name, argv, lapse, args, rng):
    top = tempfile.mkdtemp(prefix="lapse-kill-")
    run_id = "kill-" + name
    env = dict(os.environ, LAPSE_RUN_DIR=top, LAPSE_RUN_ID=run_id,
               LAPSE_SNAPSHOT_MS=str(args.snapshot_ms))
    env.pop("LAPSE_PROFILE", None)
    run = os.path.join(top, run_id)
    interval_ns = args.snapshot_ms * 1_000_000
    slack_ns = args.slack_ms * 1_000_000
    modes = ("random", "due", "tmp")
    rows = {m: 0 for m in modes}
    in_write = 0
    bad_reports = []
    unreadable_max = 0
    tmp_left = 0
    unnamed = 0
    removed_by_next = 0
    kept_by_next = 0
    ages = []
    lost = []
    beyond = []
    seen_left = set()
    for i in range(args.kills):
        mode = modes[i % 3]
        side = os.path.join(top, "side-%d" % i)
        before_start = temporaries_all(run)
        p = subprocess.Popen(argv + [side, str(args.tick_us), str(args.paths)], env=env,
                             stdout=subprocess.PIPE, text=True)
        line = p.stdout.readline().split()
        if len(line) != 3 or line[0] != "ready":
            p.kill()
            p.wait()
            sys.exit("kill_loop: %s did not start: %r" % (name, line))
        t_ready = time.monotonic_ns()
        pid, file = int(line[1]), line[2]
        host_dir = os.path.dirname(file)
        base = os.path.basename(file)
        # the new process has written its file once: did it remove earlier leftovers?
        # (each leftover counted once, at the first process started after it)
        fresh = before_start - seen_left
        seen_left |= before_start
        still = fresh & temporaries(host_dir)
        kept_by_next += len(still)
        removed_by_next += len(fresh) - len(still)
        if mode == "random":
            time.sleep(rng.uniform(0, 3 * args.snapshot_ms) / 1000)
        elif mode == "due":
            due = t_ready + interval_ns + int(rng.uniform(-0.5, 3) * 1e6)
            while time.monotonic_ns() < due:
                pass
        else:
            limit = t_ready + 4 * interval_ns
            prefix = base + ".tmp."
            while time.monotonic_ns() < limit:
                if any(n.startswith(prefix) for n in os.listdir(host_dir)):
                    break
        t_kill = time.monotonic_ns()
        os.kill(pid, signal.SIGKILL)
        p.wait()
        rows[mode] += 1
        own_tmp = {n for n in temporaries(host_dir) if n.startswith(base + ".tmp.")}
        in_write += bool(own_tmp)
        tmp_left = len(temporaries(host_dir))
        done, _, ends = read_side(side)
        os.unlink(side)

        j, err = report_json(lapse, run)
        if j is None:
            bad_reports.append("kill %d (%s): %s" % (i, mode, err[0]))
            continue
        unreadable_max = max(unreadable_max, j["run"]["unreadable_files"])
        named = {os.path.basename(c.get("file", "")) for c in j["caveats"]
                 if c["kind"] == "leftover_tmp"}
        unnamed += len(temporaries(host_dir) - named)

        f, err = report_json(lapse, file)
        if f is None:
            bad_reports.append("kill %d (%s) %s: %s" % (i, mode, base, err[0]))
            continue
        w = f["workers"][0]
        held = 0
        for role in f["roles"]:
            for ph in role["phases"]:
                if ph["path"] == "tick":
                    held = ph["calls"]
                    work = {c["name"]: c["sum"] for c in ph["counters"]}.get("work", 0)
                    if work != held:
                        bad_reports.append("kill %d: tick calls %d, work %d" % (i, held, work))
        # the file's write instant on CLOCK_MONOTONIC
        offset = time.clock_gettime_ns(time.CLOCK_REALTIME) - time.monotonic_ns()
        t_file = w["written_real_ns"] - offset
        if held > done:
            bad_reports.append("kill %d: file holds %d ticks, target did %d" % (i, held, done))
            continue
        lost.append(done - held)
        ages.append((t_kill - t_file) / interval_ns)
        # ticks not in the file that ended more than one interval (plus the slack)
        # before the kill, or before the file's own write instant (less the slack)
        old = sum(1 for n in range(held + 1, done + 1)
                  if tick_end(ends, n) < t_kill - interval_ns - slack_ns)
        missed = sum(1 for n in range(held + 1, done + 1)
                     if tick_end(ends, n) < t_file - slack_ns)
        if old or missed:
            beyond.append("kill %d (%s): %d ticks lost, %d of them ended more than an "
                          "interval before the kill, %d before the file's write instant; "
                          "the file was %.1f ms old" % (i, mode, done - held, old, missed,
                                                        (t_kill - t_file) / 1e6))
    return {
        "kills": args.kills, "modes": rows, "in_write": in_write,
        "clean": args.kills - len(bad_reports), "bad": bad_reports,
        "unreadable": unreadable_max, "tmp_left": tmp_left, "unnamed": unnamed,
        "removed_by_next": removed_by_next, "kept_by_next": kept_by_next,
        "age_p50": pct(ages, 0.5), "age_p99": pct(ages, 0.99),
        "age_max": max(ages) if ages else float("nan"), "lost_max": max(lost) if lost else 0,
        "ticks_per_interval": args.snapshot_ms * 1000 / args.tick_us, "beyond": beyond,
        "dir": top,
    }


def temporaries_all(run):
    out = set()
    if os.path.isdir(run):
        for host in os.listdir(run):
            out |= temporaries(os.path.join(run, host))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--snapshot-ms", type=int, default=50)
    ap.add_argument("--tick-us", type=int, default=500)
    ap.add_argument("--paths", type=int, default=256)
    ap.add_argument("--slack-ms", type=float, default=20)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    lapse = os.path.join(build, "lapse")
    targets = [("c", [os.path.join(build, "kill_target")])]
    for path in (lapse, targets[0][1][0]):
        if not os.access(path, os.X_OK):
            sys.exit("kill_loop: %s is missing; build first: ninja -C %s" % (path, build))
    try:
        importable = subprocess.run([args.python, "-c", "import lapse"],
                                    capture_output=True).returncode == 0
    except OSError:
        importable = False
    if importable:
        targets.append(("python", [args.python, os.path.join(HERE, "kill_target.py")]))
    else:
        print("kill_loop: %s cannot import lapse: the Python target is skipped" % args.python)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print("== kill_loop: %d SIGKILLs per target, snapshot every %d ms, ticks of %d us "
          "in %d paths, seed %d, load %s" % (args.kills, args.snapshot_ms, args.tick_us,
                                             args.paths, seed, os.getloadavg()[0]))
    results = [(name, run_target(name, argv, lapse, args, rng)) for name, argv in targets]
    cols = ("target", "kills", "random/due/tmp", "in a write", "clean reports",
            "unreadable", ".tmp left", "unnamed", "removed by next", "lost ticks max",
            "file age p50/p99/max", "beyond 1 interval")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    failed = False
    for name, r in results:
        m = r["modes"]
        print("| %s | %d | %d/%d/%d | %d | %d | %d | %d | %d | %d of %d | %d (%.0f a interval) "
              "| %.2f / %.2f / %.2f | %d |"
              % (name, r["kills"], m["random"], m["due"], m["tmp"], r["in_write"], r["clean"],
                 r["unreadable"], r["tmp_left"], r["unnamed"], r["removed_by_next"],
                 r["removed_by_next"] + r["kept_by_next"], r["lost_max"],
                 r["ticks_per_interval"], r["age_p50"], r["age_p99"], r["age_max"],
                 len(r["beyond"])))
        for line in r["bad"] + r["beyond"]:
            print("  %s: %s" % (name, line))
        failed |= bool(r["bad"] or r["beyond"] or r["unreadable"] or r["unnamed"])
    print("in a write: the killed process's temporary was in the directory after its death;"
          " .tmp left: in the directory after the last kill; removed by next: leftovers of"
          " earlier processes gone once the next process had written its first file; lost"
          " ticks: done minus held (ticks of %d us at full speed); file age: kill instant"
          " minus the file's write instant, in snapshot intervals; beyond 1 interval: kills"
          " whose file misses a tick that ended more than an interval + %g ms before the"
          " kill, or %g ms before the file's own write instant. Run directories: %s"
          % (args.tick_us, args.slack_ms, args.slack_ms,
             ", ".join(r["dir"] for _, r in results)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
