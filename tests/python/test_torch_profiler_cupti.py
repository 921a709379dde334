"""ACTIVITY beside torch.profiler: a capture that records CUDA gets CUPTI (one
subscriber per process) and ACTIVITY takes it back after; the pauses are in the file
and the report's activity_paused caveat. Against the fake libcupti, with a stand-in
torch.autograd.profiler that subscribes as Kineto does (in a subprocess: the real torch,
where installed, stays out of it), and on 3.11 with the real CPU torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import report

STAND_IN = {
    "torch/__init__.py": "from . import autograd\n",
    "torch/autograd/__init__.py": "from . import profiler\n",
    # Kineto as far as CUPTI sees it: a capture recording CUDA subscribes (refused while
    # another subscriber holds CUPTI) and lets go at its end
    "torch/autograd/profiler.py": textwrap.dedent("""
        import ctypes, enum, os
        class ProfilerActivity(enum.Enum):
            CPU = 0
            CUDA = 1
        _cupti = ctypes.CDLL(os.environ["LAPSE_CUPTI_PATH"])
        _cupti.cuptiSubscribe.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        _cupti.cuptiUnsubscribe.argtypes = [ctypes.c_void_p]
        _handle = ctypes.c_void_p()
        subscribed = []   # each capture's cuptiSubscribe result (0: it had CUPTI)
        def _prepare_profiler(config, activities, activity_filter=None):
            if config == "refused":
                raise RuntimeError("Kineto could not prepare")
            if ProfilerActivity.CUDA in activities:
                subscribed.append(_cupti.cuptiSubscribe(ctypes.byref(_handle), None, None))
        def _enable_profiler(config, activities):
            pass
        def _disable_profiler():
            if _handle.value:
                _cupti.cuptiUnsubscribe(_handle)
                _handle.value = None
    """),
}

PROGRAM = textwrap.dedent("""
    import ctypes, json, os, sys
    import lapse
    from lapse import Feature, Profiler
    early = sys.argv[2] == "early"
    if early:
        import torch.autograd.profiler as ap  # before the session: wrapped at its start
    with Profiler(features=Feature.SPANS | Feature.ACTIVITY, run_dir=sys.argv[1]) as p:
        if not early:
            import torch.autograd.profiler as ap  # after: wrapped as it is imported
        fake = ctypes.CDLL(os.environ["LAPSE_CUPTI_PATH"], mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        launch = fake.fake_cupti_launch
        launch.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64]
        CPU, CUDA = ap.ProfilerActivity.CPU, ap.ProfilerActivity.CUDA
        def capture(name, activities, config=None):
            with lapse.phase(name):
                try:
                    ap._prepare_profiler(config, activities)
                except RuntimeError:
                    launch(name.encode(), 0, 7, 1_000_000)
                    return
                ap._enable_profiler(config, activities)
                launch(name.encode(), 0, 7, 1_000_000)
                ap._disable_profiler()
        with lapse.phase("before"):
            launch(b"before", 0, 7, 1_000_000)
        capture("cuda_capture", {CPU, CUDA})
        capture("cpu_capture", {CPU})         # Kineto without CUPTI: nothing to let go
        capture("refused_capture", {CPU, CUDA}, "refused")
        capture("second_cuda_capture", {CPU, CUDA})
        with lapse.phase("after"):
            launch(b"after", 0, 7, 1_000_000)
    print(json.dumps({"subscribed": ap.subscribed,
                      "wrapped": hasattr(ap._prepare_profiler, "__wrapped__")}))
""")


def run(tmp_path, fake_cupti, when):
    for name, text in STAND_IN.items():
        path = tmp_path / "standin" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "prog.py").write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    env.update(LAPSE_CUPTI_PATH=fake_cupti, PYTHONPATH=str(tmp_path / "standin"))
    r = subprocess.run([sys.executable, str(tmp_path / "prog.py"), str(tmp_path / "runs"), when],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1]), report(tmp_path / "runs")


@pytest.mark.parametrize("when", ["early", "late"])
def test_a_cuda_capture_gets_cupti_and_activity_takes_it_back(tmp_path, fake_cupti, when):
    out, doc = run(tmp_path, fake_cupti, when)
    assert out == {"subscribed": [0, 0], "wrapped": True}  # each CUDA capture had CUPTI
    (role,) = doc["roles"]
    kernels = {s["path"]: s["kernels"] for s in role["gpu_activity"]["by_span"]}
    # the two CUDA captures' kernels are Kineto's; the others lapse's, before and after
    assert kernels == {"before": 1, "cpu_capture": 1, "refused_capture": 1, "after": 1}
    (caveat,) = [c for c in doc["caveats"] if c["kind"] == "activity_paused"]
    # three pauses: the refused capture had CUPTI too, until its prepare raised
    assert caveat["count"] == 3
    assert 0 < caveat["paused_ns"] <= caveat["to_ns"] - caveat["from_ns"]
    assert "ACTIVITY was paused 3 times while torch.profiler recorded CUDA" in caveat["message"]
    assert caveat["pid"] == doc["workers"][0]["pid"]


def test_without_a_cuda_capture_nothing_is_paused(tmp_path, fake_cupti):
    # a session whose program never records CUDA with torch: no pause, no caveat
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    env.update(LAPSE_CUPTI_PATH=fake_cupti)
    prog = textwrap.dedent("""
        import ctypes, os, sys
        import lapse
        from lapse import Feature, Profiler
        with Profiler(features=Feature.SPANS | Feature.ACTIVITY, run_dir=sys.argv[1]):
            fake = ctypes.CDLL(os.environ["LAPSE_CUPTI_PATH"], mode=os.RTLD_NOLOAD | os.RTLD_NOW)
            fake.fake_cupti_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32,
                                               ctypes.c_uint64]
            with lapse.phase("step"):
                fake.fake_cupti_launch(b"k", 0, 7, 1_000_000)
        print("torch" in sys.modules)
    """)
    (tmp_path / "prog.py").write_text(prog)
    r = subprocess.run([sys.executable, str(tmp_path / "prog.py"), str(tmp_path / "runs")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "False\n"  # lapse imported no torch
    doc = report(tmp_path / "runs")
    assert not [c for c in doc["caveats"] if c["kind"] == "activity_paused"]
    (role,) = doc["roles"]
    assert [(s["path"], s["kernels"]) for s in role["gpu_activity"]["by_span"]] == [("step", 1)]


@pytest.mark.skipif(os.environ.get("LAPSE_TEST_TORCH") != "1", reason="torch is installed on 3.11 only")
def test_real_torch_profiler_is_wrapped_and_a_cpu_capture_keeps_activity(tmp_path, fake_cupti):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LAPSE_")}
    env.update(LAPSE_CUPTI_PATH=fake_cupti)
    prog = textwrap.dedent("""
        import ctypes, os, sys
        import torch
        import lapse
        from lapse import Feature, Profiler
        with Profiler(features=Feature.SPANS | Feature.ACTIVITY, run_dir=sys.argv[1]):
            import torch.autograd.profiler as ap
            assert hasattr(ap._prepare_profiler, "__wrapped__"), "not wrapped"
            assert hasattr(ap._disable_profiler, "__wrapped__"), "not wrapped"
            fake = ctypes.CDLL(os.environ["LAPSE_CUPTI_PATH"], mode=os.RTLD_NOLOAD | os.RTLD_NOW)
            fake.fake_cupti_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint32, ctypes.c_uint32,
                                               ctypes.c_uint64]
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                with lapse.phase("step"):
                    torch.ones(4).sum()
                    fake.fake_cupti_launch(b"k", 0, 7, 1_000_000)
        print(len(prof.events()) > 0)
    """)
    (tmp_path / "prog.py").write_text(prog)
    r = subprocess.run([sys.executable, str(tmp_path / "prog.py"), str(tmp_path / "runs")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "True"  # torch's capture worked through the wrapper
    doc = report(tmp_path / "runs")
    assert not [c for c in doc["caveats"] if c["kind"] == "activity_paused"]  # CPU only: kept
    (role,) = doc["roles"]
    assert [(s["path"], s["kernels"]) for s in role["gpu_activity"]["by_span"]] == [("step", 1)]
