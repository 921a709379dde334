"""MARKERS: every span is also an NVTX range, seen by an NVTX tool (the fake injection
library tests/fakes/fake_nvtx_inject.c, loaded by NVTX from NVTX_INJECTION64_PATH as
nsys's would be): the exact ranges, names, nesting and threads; none without it."""

from __future__ import annotations

import subprocess

from conftest import phases_by_path, profile_env, role_of, run_program, stderr_lines


def read_log(path) -> list[list[str]]:
    return [line.split(" ", 4) for line in path.read_text().splitlines()] if path.exists() else []


def ranges(log: list[list[str]]) -> tuple[list[str], dict[str, str]]:
    """The events as "+name" / "-name" per thread (threads as T0, T1 in order of first
    range), and the thread each range started and ended on."""
    names, threads, out = {}, {}, []
    for ev in log:
        if ev[0] == "start":
            _, rid, tid, domain, name = ev
            assert domain == "lapse", ev
            threads.setdefault(tid, f"T{len(threads)}")
            names[rid] = (name, tid)
            out.append(f"{threads[tid]} +{name}")
        elif ev[0] == "end":
            _, rid, tid, domain = ev
            assert domain == "lapse", ev
            name, started_on = names.pop(rid)
            assert tid == started_on, f"range {name} started on {started_on}, ended on {tid}"
            out.append(f"{threads[tid]} -{name}")
        else:
            assert ev[0] in ("init", "domain"), f"lapse made a call it should not: {ev}"
    assert not names, f"ranges never ended: {names}"
    return out, threads


def said(stdout: str) -> tuple[str, dict[str, str]]:
    """e2e_markers's last line, "markers=N why=<lapse_missing()>": N, and each feature
    lapse_missing() names with why."""
    markers, why = stdout.strip().split(" ", 1)
    assert why.startswith("why="), stdout
    entries = [e.split(": ", 1) for e in why[4:].split("; ") if e]
    return markers, {name: reason for name, reason in entries}


def nvtx_env(lapse, tmp_path, **extra):
    return profile_env(tmp_path / "run", role="m",
                       NVTX_INJECTION64_PATH=str(lapse.build / "libfake_nvtx_inject.so"),
                       FAKE_NVTX_LOG=str(tmp_path / "nvtx.log"), **extra)


def test_every_span_is_an_nvtx_range(lapse, tmp_path):
    r = run_program([lapse.program("e2e_markers")], nvtx_env(lapse, tmp_path))
    assert r.returncode == 0 and stderr_lines(r.stderr) == [], r.stderr
    markers, missing = said(r.stdout)
    assert markers == "markers=1" and "markers" not in missing, r.stdout
    log = read_log(tmp_path / "nvtx.log")
    assert [ev for ev in log if ev[0] == "domain"] == [["domain", "lapse"]]
    events, threads = ranges(log)
    assert events == [
        "T0 +outer", "T0 +inner", "T0 -inner", "T0 -outer",
        "T0 +a", "T0 +b", "T0 -b", "T0 -a",          # b closed with a, innermost first
        "T0 +task.x", "T0 +task.y", "T0 -task.x", "T0 -task.y",  # overlapping: start/end
        "T1 +thread.work", "T1 +thread.step", "T1 -thread.step", "T1 -thread.work",
    ], events
    assert len(threads) == 2
    # the spans are recorded as without markers; the file says markers were collected
    doc = lapse.report_json(tmp_path / "run")
    phases = phases_by_path(role_of(doc, "m"))
    assert phases["outer/inner"]["calls"] == 1 and phases["a/b"]["calls"] == 1, sorted(phases)
    assert "markers" in doc["workers"][0]["features"], doc["workers"][0]


def test_no_markers_no_nvtx_call(lapse, tmp_path):
    """With MARKERS left out (LAPSE_FEATURES without it), lapse makes no NVTX call: the
    tool is never even loaded, and its log stays empty."""
    env = nvtx_env(lapse, tmp_path, LAPSE_FEATURES="spans,timeline,cpu,io,memory")
    r = run_program([lapse.program("e2e_markers")], env)
    assert r.returncode == 0, r.stderr
    markers, missing = said(r.stdout)
    assert markers == "markers=0" and "markers" not in missing, r.stdout  # not asked for
    assert read_log(tmp_path / "nvtx.log") == []
    doc = lapse.report_json(tmp_path / "run")
    assert "markers" not in doc["workers"][0]["features"]
    assert phases_by_path(role_of(doc, "m"))["outer/inner"]["calls"] == 1


def test_without_an_nvtx_tool_markers_is_left_out_with_the_reason(lapse, tmp_path):
    """MARKERS is in the default, collected only when an NVTX tool attached: without one
    the session leaves it out and says why (and spans take the fast path)."""
    env = nvtx_env(lapse, tmp_path)
    del env["NVTX_INJECTION64_PATH"]
    r = run_program([lapse.program("e2e_markers")], env)
    markers, missing = said(r.stdout)
    assert markers == "markers=0", r.stdout
    assert missing["markers"] == "no NVTX tool: NVTX_INJECTION64_PATH is not set (nsys and Kineto set it)"
    env = nvtx_env(lapse, tmp_path, FAKE_NVTX_REFUSE="1")
    r = run_program([lapse.program("e2e_markers")], env)
    markers, missing = said(r.stdout)
    assert markers == "markers=0", r.stdout
    assert missing["markers"].startswith("no NVTX tool: NVTX_INJECTION64_PATH="), r.stdout
    assert missing["markers"].endswith("did not attach"), r.stdout
    assert [ev[0] for ev in read_log(tmp_path / "nvtx.log")] == [], "a refusing tool got calls"
    doc = lapse.report_json(tmp_path / "run")
    assert all("markers" not in w["features"] for w in doc["workers"])


def test_markers_left_out_is_in_the_file_as_the_collectors_say_it(lapse, tmp_path):
    """MARKERS reports like every collector: no tool named is absent (META "absent",
    no caveat), as a machine without a GPU driver is; a tool named that does not
    attach is missing (META "missing", caveat feature_missing)."""
    env = nvtx_env(lapse, tmp_path, LAPSE_FEATURES="spans,markers")
    del env["NVTX_INJECTION64_PATH"]
    run_program([lapse.program("e2e_markers")], env)
    doc = lapse.report_json(tmp_path / "run")
    (w,) = doc["workers"]
    assert (w["missing"], w["absent"]) == (
        "", "markers: no NVTX tool: NVTX_INJECTION64_PATH is not set (nsys and Kineto set it)"), w
    assert [c for c in doc["caveats"] if c["kind"] == "feature_missing"] == []

    env = nvtx_env(lapse, tmp_path / "refused", LAPSE_FEATURES="spans,markers", FAKE_NVTX_REFUSE="1")
    run_program([lapse.program("e2e_markers")], env)
    doc = lapse.report_json(tmp_path / "refused" / "run")
    (w,) = doc["workers"]
    assert w["absent"] == "" and w["missing"].startswith("markers: no NVTX tool: NVTX_INJECTION64_PATH="), w
    assert w["missing"].endswith(" did not attach"), w
    (c,) = [c for c in doc["caveats"] if c["kind"] == "feature_missing"]
    assert w["missing"] in c["message"], c
    assert "markers: no NVTX tool" in lapse.run("report", tmp_path / "refused" / "run").stdout


def test_liblapse_needs_nothing_for_nvtx(lapse):
    """NVTX is header-only and loads its tool with dlopen: liblapse still needs libc,
    libm, pthreads and dl only, and imports no NVTX or CUDA symbol."""
    for lib in ("liblapse.so",):
        out = subprocess.run(["readelf", "-d", "--dyn-syms", "-W", str(lapse.build / lib)],
                             capture_output=True, text=True, check=True).stdout
        needed = {line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}
        # an ASan+UBSan build (build-asan) links the sanitizers' runtimes too
        needed = {n for n in needed if not n.startswith(("libasan.so", "libubsan.so"))}
        allowed = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "ld-linux-x86-64.so.2"}
        assert needed <= allowed, needed - allowed
        undefined = [line.split()[-1] for line in out.splitlines()
                     if " UND " in line and line.split()[-1] not in ("0", "UND")]
        assert not [s for s in undefined if "nvtx" in s.lower() or "cu" == s[:2].lower()], undefined
