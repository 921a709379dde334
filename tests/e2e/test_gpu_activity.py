"""ACTIVITY (CUPTI) end to end, against the fake libcupti (tests/fakes/fake_cupti.c):
tests/e2e/e2e_gpu_activity.c launches known kernels, a copy and a set inside known
spans; the report, its JSON and the Perfetto export must attribute each to the span
that launched it, exactly."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from conftest import profile_env, role_of, run_program, worker_by_pid

FEATURES = "spans,timeline,activity"


def fake(lapse) -> str:
    path = lapse.build / "fakes" / "libcupti.so"
    if not path.exists():
        pytest.fail(f"{path} is missing: build first")
    return str(path)


def run_gpu(lapse, run_dir, *args, cupti: str | None = "fake", expect_rc: int = 0, **env):
    extra = dict(LAPSE_FEATURES=FEATURES, **env)
    if cupti is not None:
        extra["LAPSE_CUPTI_PATH"] = fake(lapse) if cupti == "fake" else cupti
    r = run_program([lapse.program("e2e_gpu_activity"), *args], profile_env(run_dir, **extra))
    assert r.returncode == expect_rc, r.stderr
    return r


def by_span(doc: dict) -> dict:
    role = role_of(doc, "main")
    assert role["gpu_activity_state"] == "measured"
    rows = {}
    for s in role["gpu_activity"]["by_span"]:
        key = s["path"] if s["launched"] == "span" else f"({s['launched']})"
        rows[key] = (s["kernels"], s["kernel_gpu_ns"], s["copies"], s["copy_bytes"], s["sets"],
                     s["set_bytes"], [(k["name"], k["count"], k["gpu_ns"]) for k in s["top_kernels"]])
    return rows


EXPECTED = {
    "train/forward": (4, 6_500_000, 0, 0, 0, 0, [("gemm", 3, 6_000_000), ("relu", 1, 500_000)]),
    "train/backward": (2, 6_000_000, 1, 1 << 20, 0, 0, [("gemm_bw", 2, 6_000_000)]),
    "worker": (2, 1_400_000, 0, 0, 0, 0, [("wk", 2, 1_400_000)]),
    "(no_span)": (1, 1_000, 0, 0, 0, 0, [("outside", 1, 1_000)]),
    "train": (0, 0, 0, 0, 1, 4096, []),
}


def test_every_kernel_copy_and_set_is_attributed_to_the_span_that_launched_it(lapse, tmp_path):
    run_gpu(lapse, tmp_path)
    doc = lapse.report_json(tmp_path)
    assert by_span(doc) == EXPECTED
    gpu = role_of(doc, "main")["gpu_activity"]
    assert (gpu["kernels"], gpu["kernel_gpu_ns"], gpu["copies"], gpu["copy_bytes"], gpu["sets"],
            gpu["set_bytes"], gpu["dropped_activities"]) == (9, 13_901_000, 1, 1 << 20, 1, 4096, 0)
    assert [(k["name"], k["count"], k["gpu_ns"]) for k in gpu["top_kernels"]] == [
        ("gemm", 3, 6_000_000), ("gemm_bw", 2, 6_000_000), ("wk", 2, 1_400_000),
        ("relu", 1, 500_000), ("outside", 1, 1_000)]
    w = doc["workers"][0]
    assert w["gpu_activity"] == {"state": "collected", "note": "", "records": 11,
                                 "dropped_activities": 0}
    assert "activity" in w["features"]
    assert doc["caveats"] == []
    text = lapse.run("report", tmp_path).stdout
    block = text[text.index("GPU ACTIVITY BY SPAN"):].splitlines()
    assert block[0] == ("GPU ACTIVITY BY SPAN  (CUPTI, 1 process: 9 kernels 13.9ms GPU time, "
                        "1 copy 1.0 MB, 1 set 4.1 kB)")
    rows = [line.split() for line in block[2:7]]
    assert [r[0] for r in rows] == ["train/forward", "train/backward", "worker", "(no", "train"]
    assert rows[0][1:5] == ["4", "6.5ms", "46.8%", "0"]
    assert rows[1][1:7] == ["2", "6.0ms", "43.2%", "1", "1.0", "MB"]


def test_only_calls_that_launch_work_pay_the_callback_and_every_form_is_attributed(lapse, tmp_path):
    # one kernel through each of the 77 runtime and 117 driver API ids lapse enables
    # (cupti_api.h, checked against CUDA 13 by tests/abi), then 5,000 calls that launch
    # nothing (cudaStreamQuery, cudaEventQuery, cudaGetDevice, cuStreamQuery,
    # cuCtxGetDevice): those get no callback at all (the fake counts the callbacks)
    r = run_gpu(lapse, tmp_path, "forms")
    assert r.stdout.split() == ["launches", "194", "callbacks", "194"]
    doc = lapse.report_json(tmp_path)
    assert by_span(doc) == {"forms": (194, 194_000, 0, 0, 0, 0, [("form", 194, 194_000)])}
    assert doc["workers"][0]["gpu_activity"]["records"] == 194
    assert doc["caveats"] == []


def test_an_older_cupti_refusing_the_ids_of_a_later_cuda_still_collects(lapse, tmp_path):
    # an older CUPTI refuses the ids of a later CUDA's calls (CUDA 12.0-12.7: the
    # BatchAsync ids of 12.8 and 13.0) with CUPTI_ERROR_INVALID_PARAMETER; the fake refuses
    # every id from 500 on (16 of ours): lapse enables the 178 others and collects
    r = run_gpu(lapse, tmp_path, "forms", FAKE_CUPTI_MAX_CBID="500")
    assert r.stdout.split() == ["launches", "194", "callbacks", "178"]
    doc = lapse.report_json(tmp_path)
    assert by_span(doc) == {"forms": (178, 178_000, 0, 0, 0, 0, [("form", 178, 178_000)]),
                            "(not_seen)": (16, 16_000, 0, 0, 0, 0, [("form", 16, 16_000)])}
    assert "activity" in doc["workers"][0]["features"]


def test_records_cupti_dropped_are_read_and_said_in_a_caveat(lapse, tmp_path):
    # CUPTI's own count (cuptiActivityGetNumDroppedRecords, per buffer's queue): records
    # CUPTI had no buffer space for, which are not the bound's dropped_activities
    run_gpu(lapse, tmp_path, FAKE_CUPTI_DROPPED="7")
    doc = lapse.report_json(tmp_path)
    assert by_span(doc) == EXPECTED  # what came is all kept
    w = doc["workers"][0]["gpu_activity"]
    assert w == {"state": "collected", "records": 11, "dropped_activities": 0,
                 "note": "CUPTI dropped 7 records for lack of buffer space "
                         "(cuptiActivityGetNumDroppedRecords)"}
    assert role_of(doc, "main")["gpu_activity"]["dropped_activities"] == 0
    (cav,) = [c for c in doc["caveats"] if c["kind"] == "activity_missing"]
    assert cav["reason"] == w["note"]
    assert "GPU activity is incomplete: CUPTI dropped 7 records for lack of buffer space" in \
        cav["message"]


def test_records_past_the_bound_are_counted_not_kept(lapse, tmp_path):
    run_gpu(lapse, tmp_path, LAPSE_MAX_ACTIVITIES="5")
    doc = lapse.report_json(tmp_path)
    gpu = role_of(doc, "main")["gpu_activity"]
    assert (gpu["kernels"], gpu["dropped_activities"]) == (5, 6)
    assert doc["workers"][0]["gpu_activity"]["records"] == 5
    (cav,) = [c for c in doc["caveats"] if c["kind"] == "dropped_activities"]
    assert cav["count"] == 6 and cav["processes"] == 1


def missing_reason(lapse, run_dir) -> str:
    """The collector did not start: the session ran without it and its file says why
    (META missing, caveat feature_missing); no section, no block."""
    doc = lapse.report_json(run_dir)
    role = role_of(doc, "main")
    assert role["gpu_activity_state"] == "not_collected" and role["gpu_activity"] is None
    w = doc["workers"][0]
    assert w["gpu_activity"] is None and "activity" not in w["features"]
    assert w["missing"].startswith("activity: ") and w["absent"] == ""
    (cav,) = [c for c in doc["caveats"] if c["kind"] == "feature_missing"]
    assert w["missing"] in cav["message"]
    assert "GPU ACTIVITY BY SPAN" not in lapse.run("report", run_dir).stdout
    return w["missing"].removeprefix("activity: ")


def test_a_missing_library_is_a_reason_and_the_program_runs(lapse, tmp_path):
    r = run_program([lapse.program("e2e_regions"), "3", "a"],
                    profile_env(tmp_path, LAPSE_FEATURES=FEATURES,
                                LAPSE_CUPTI_PATH=str(tmp_path / "nowhere" / "libcupti.so")))
    assert r.returncode == 0 and r.stderr == ""
    why = missing_reason(lapse, tmp_path)
    assert why.startswith(f"LAPSE_CUPTI_PATH={tmp_path}/nowhere/libcupti.so cannot be loaded: ")
    text = lapse.run("report", tmp_path).stdout
    assert "ran without what it was asked to collect: activity: LAPSE_CUPTI_PATH=" in text


@pytest.mark.parametrize("call", ["cuptiGetVersion", "cuptiActivityRegisterCallbacks",
                                  "cuptiSubscribe", "cuptiEnableCallback", "cuptiGetTimestamp",
                                  "cuptiActivityEnable"])
def test_a_failing_call_at_start_is_a_reason_naming_it(lapse, tmp_path, call):
    run_gpu(lapse, tmp_path, FAKE_CUPTI_FAIL=call)
    why = missing_reason(lapse, tmp_path)
    assert why.startswith(call) and why.endswith("failed: CUPTI_ERROR_UNKNOWN"), why


def test_a_failing_flush_keeps_what_came_and_says_what_was_lost(lapse, tmp_path):
    run_gpu(lapse, tmp_path, FAKE_CUPTI_FAIL="cuptiActivityFlushAll")
    doc = lapse.report_json(tmp_path)
    w = doc["workers"][0]["gpu_activity"]
    assert w["state"] == "collected" and w["records"] == 0
    assert w["note"] == ("cuptiActivityFlushAll failed: CUPTI_ERROR_UNKNOWN (records CUPTI still "
                         "held are not in the file)")
    (cav,) = [c for c in doc["caveats"] if c["kind"] == "activity_missing"]
    assert "GPU activity is incomplete: cuptiActivityFlushAll failed" in cav["message"]
    assert cav["reason"] == w["note"]


def test_a_second_subscriber_means_missing_with_the_reason(lapse, tmp_path):
    run_gpu(lapse, tmp_path, FAKE_CUPTI_OTHER_SUBSCRIBER="1")
    why = missing_reason(lapse, tmp_path)
    assert why == ("another CUPTI subscriber is active (torch.profiler, Nsight Systems, ...): "
                   "cuptiSubscribe: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")


def test_a_cupti_older_than_cuda_12_is_refused_by_version(lapse, tmp_path):
    run_gpu(lapse, tmp_path, FAKE_CUPTI_VERSION="17")
    assert missing_reason(lapse, tmp_path) == (
        "CUPTI API version 17 is older than CUDA 12's (18): its records are not read")


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="this machine has an NVIDIA GPU")
def test_a_machine_without_a_gpu_collects_nothing_and_says_so_without_a_caveat(lapse, tmp_path):
    r = run_program([lapse.program("e2e_regions"), "1", "a"], profile_env(tmp_path))
    assert r.returncode == 0
    doc = lapse.report_json(tmp_path)
    w = doc["workers"][0]
    assert "activity" not in w["features"]  # asked for (the default), did not start
    assert "activity: no NVIDIA GPU on this machine (no /dev/nvidiactl)" in w["absent"]
    assert w["gpu_activity"] is None and "activity" not in w["missing"]
    assert not [c for c in doc["caveats"] if "activity" in c["message"]]
    assert role_of(doc, "main")["gpu_activity_state"] == "not_collected"


def test_perfetto_has_a_track_per_device_and_stream_and_an_arrow_per_launch(lapse, tmp_path):
    run_gpu(lapse, tmp_path / "run")
    out = tmp_path / "trace.json"
    r = lapse.run("export", "--perfetto", out, tmp_path / "run")
    assert r.returncode == 0, r.stderr
    assert ", 11 GPU slices on 3 device/stream tracks with 11 launch arrows" in r.stderr
    doc = json.loads(out.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "thread_name"}
    gpu = [e for e in events if e.get("ph") == "X" and e.get("cat") == "gpu"]
    per_track = {}
    for e in gpu:
        per_track.setdefault(names[e["tid"]], []).append((e["name"], e["dur"]))
    assert per_track == {
        "GPU 0 stream 7": [("gemm", 2000.0)] * 3 + [("relu", 500.0), ("memset", 10.0),
                                                    ("outside", 1.0)],
        "GPU 0 stream 8": [("gemm_bw", 3000.0)] * 2 + [("memcpy HtoD", 100.0)],
        "GPU 1 stream 9": [("wk", 700.0)] * 2,
    }
    # each arrow starts on the launching thread, inside the span open there at the
    # launch, and ends at its record's start on the record's track
    spans = [e for e in events if e.get("ph") == "X" and "cat" not in e]
    starts = {e["id"]: e for e in events if e.get("ph") == "s"}
    ends = {e["id"]: e for e in events if e.get("ph") == "f"}
    assert len(starts) == len(ends) == 11
    by_start = {(e["tid"], e["ts"]): e for e in gpu}
    launched_in = []
    for i, s in starts.items():
        f = ends[i]
        rec = by_start[(f["tid"], f["ts"])]
        inner = [sp for sp in spans if sp["tid"] == s["tid"] and sp["ts"] <= s["ts"] <= sp["ts"] + sp["dur"]]
        launched_in.append((rec["name"], max(inner, key=lambda sp: sp["ts"])["name"] if inner else None))
    assert sorted(launched_in, key=str) == sorted(
        [("gemm", "forward")] * 3 + [("relu", "forward"), ("gemm_bw", "backward"),
                                     ("gemm_bw", "backward"), ("memcpy HtoD", "backward"),
                                     ("memset", "train"), ("outside", None),
                                     ("wk", "worker"), ("wk", "worker")], key=str)


def test_a_forked_child_collects_nothing_and_says_why(lapse, tmp_path):
    r = run_gpu(lapse, tmp_path, "fork")
    child = int(r.stdout.split()[-1])
    doc = lapse.report_json(tmp_path)
    parent = [w for w in doc["workers"] if w["pid"] != child]
    assert parent[0]["gpu_activity"]["state"] == "collected"
    assert parent[0]["gpu_activity"]["records"] == 11
    w = worker_by_pid(doc, child)
    assert w["gpu_activity"] == {"state": "missing", "records": 0, "dropped_activities": 0,
                                 "note": "a forked child: CUDA and CUPTI do not carry over fork"}
    (cav,) = [c for c in doc["caveats"] if c["kind"] == "activity_missing"]
    assert cav["pid"] == child and cav["reason"] == w["gpu_activity"]["note"]


def test_a_library_that_is_not_cupti_is_a_reason(lapse, tmp_path):
    # a real shared library without CUPTI's functions: libc's own
    import ctypes.util
    libc = ctypes.util.find_library("c") or "libc.so.6"
    r = run_program([lapse.program("e2e_regions"), "1", "a"],
                    profile_env(tmp_path, LAPSE_FEATURES=FEATURES, LAPSE_CUPTI_PATH=libc))
    assert r.returncode == 0
    assert missing_reason(lapse, tmp_path) == "the CUPTI library has no cuptiGetVersion"
