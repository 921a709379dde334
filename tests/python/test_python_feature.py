"""Feature.PYTHON: this process's Python stacks sampled from outside by `lapse record
--pid` while its spans are recorded inside; the samples join the final file, each with
the span path open on its thread (one process, one run, one file)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import textwrap
import time

import pytest

import lapse
from lapse import Feature, Profiler, span

from conftest import lapse_command, report


def spin(seconds: float) -> int:
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
    return n


def files_in(run: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in run.rglob("*") if p.is_file())


def test_samples_join_the_final_file_with_span_paths(tmp_path):
    with Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path, python_hz=200) as p:
        assert Feature.PYTHON not in p.missing
        with span("train"):
            spin(0.6)
        spin(0.2)
    # one file: the sampler's own output was merged into it and removed
    assert [f.name for f in files_in(tmp_path)] == [pathlib.Path(p.file).name]
    doc = report(pathlib.Path(p.file))
    [samples] = doc["python_samples"]
    assert samples["mode"] == "wall" and samples["rate_asked_hz"] == 200
    # 0.8 s at 200 Hz: about 160 passes (the sampler starts a little after the session)
    assert 60 <= samples["samples"] <= 200, samples["samples"]
    [proc] = samples["processes"]
    top = proc["top_self"][0]
    assert top["function"] == "spin" and top["file"] == __file__, proc["top_self"][:3]
    assert top["self_share"] > 0.7, top
    inside = {s["path"]: s for s in samples["spans"]}
    assert inside["train"]["top_self"][0]["function"] == "spin"
    # 0.6 s of the 0.8 s sampled were inside train
    assert 0.55 < inside["train"]["samples"] / proc["samples"] < 0.95, (inside, proc)


def test_without_the_feature_there_is_no_sampler(tmp_path):
    with Profiler(features=Feature.SPANS, run_dir=tmp_path) as p:
        with span("train"):
            spin(0.1)
    assert report(pathlib.Path(p.file)).get("python_samples", []) == []


def test_a_missing_lapse_command_leaves_python_out(tmp_path, monkeypatch):
    monkeypatch.setenv("LAPSE_COMMAND", str(tmp_path / "no-such-lapse"))
    p = Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path)
    assert Feature.PYTHON in p.missing
    with pytest.raises(RuntimeError, match="PYTHON: LAPSE_COMMAND=.*no-such-lapse is not an "
                                           "executable file, nor a command on PATH"):
        Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path, strict=True).start()
    # a command the user named that cannot run is said, not dropped in silence
    with pytest.warns(RuntimeWarning, match="no PYTHON samples: LAPSE_COMMAND="):
        with p:
            with span("train"):
                spin(0.05)
    assert report(pathlib.Path(p.file)).get("python_samples", []) == []


def test_a_lapse_command_found_on_path_keeps_python(tmp_path, monkeypatch):
    """LAPSE_COMMAND=lapse names a command on PATH, as execvp would run it: resolved
    once to that file, it samples (it was checked in the working directory, found
    missing there, and PYTHON was dropped)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lapse").symlink_to(lapse_command())
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("LAPSE_COMMAND", "lapse")
    monkeypatch.chdir(tmp_path)  # no ./lapse here: the name is PATH's
    with Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path / "runs",
                  python_hz=200, strict=True) as p:
        assert Feature.PYTHON not in p.missing
        with span("train"):
            spin(0.4)
    [samples] = report(pathlib.Path(p.file))["python_samples"]
    assert samples["samples"] > 20, samples


def test_a_sampler_that_fails_warns_and_the_program_carries_on(tmp_path, monkeypatch):
    fake = tmp_path / "lapse"
    fake.write_text("#!/bin/sh\necho 'lapse record: cannot read this process' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("LAPSE_COMMAND", str(fake))
    with pytest.warns(RuntimeWarning, match="cannot read this process"):
        with Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path / "runs") as p:
            with span("train"):
                spin(0.05)
    doc = report(pathlib.Path(p.file))
    [samples] = doc["python_samples"]
    assert samples["samples"] == 0 and samples["processes"] == []
    [caveat] = [c for c in doc["caveats"] if c["kind"] == "sampling"]
    assert "Python stack sampling was asked for (100.0 Hz) and took no pass" in caveat["message"]
    assert [ph["path"] for ph in doc["roles"][0]["phases"]] == ["train"]


@pytest.mark.parametrize("script", ["echo 'lapse record: cannot read this process' >&2\nexit 1\n",
                                    "exit 1\n"])
def test_strict_fails_before_the_body_when_the_sampler_cannot_start(tmp_path, monkeypatch, script):
    """strict=True waits for the sampler to read this process: one that ends at start
    (saying why, or not) fails the start, naming it, before the body runs."""
    fake = tmp_path / "lapse"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setenv("LAPSE_COMMAND", str(fake))
    ran = False
    with pytest.raises(RuntimeError, match="the Python sampler .* could not start: "
                       + ("lapse record: cannot read this process" if "echo" in script
                          else "the sampler ended with status 1")):
        with Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path / "runs", strict=True):
            ran = True
    assert not ran
    with Profiler(features=Feature.SPANS, run_dir=tmp_path / "again") as p:  # no session was left on
        assert p.active


def test_strict_with_a_sampler_that_starts(tmp_path):
    with Profiler(features=Feature.SPANS | Feature.PYTHON, run_dir=tmp_path, python_hz=200,
                  strict=True) as p:
        spin(0.3)
    [samples] = report(pathlib.Path(p.file))["python_samples"]
    assert samples["samples"] > 20


def test_bad_rate():
    with pytest.raises(ValueError):
        Profiler(python_hz=0)


SCRIPT = textwrap.dedent("""
    import time
    from lapse import span

    def crunch(seconds):
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    with span("step"):
        crunch(0.5)
""")


def test_lapse_run_samples_python_by_default(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    runs = tmp_path / "runs"
    r = subprocess.run([lapse_command(), "run", "-o", str(runs), str(script)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "PYTHON SAMPLES" in r.stderr and "FUNCTIONS INSIDE SPANS" in r.stderr, r.stderr
    [samples] = report(runs)["python_samples"]
    inside = {s["path"]: s for s in samples["spans"]}
    assert inside["step"]["top_self"][0]["function"] == "crunch", inside

    # lapse's own launcher (lapse/__main__.py, profiler.py, runpy) is not in the samples:
    # every stack of the main thread starts at the script
    stacks = tmp_path / "stacks.txt"
    r = subprocess.run([lapse_command(), "export", str(runs), "--collapsed", str(stacks)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    roots = set()
    for line in stacks.read_text().splitlines():
        if line.startswith("#") or "job.py" not in line:
            continue
        frames = [f for f in line.rsplit(" ", 1)[0].split(";") if re.search(r" \(.*:\d+\)$", f)]
        roots.add(frames[0])
    assert roots and all(r.startswith("<module> (") and "job.py" in r for r in roots), roots

    # the samples convert to the usual formats
    svg = tmp_path / "flame.svg"
    r = subprocess.run([lapse_command(), "export", str(runs), "--flamegraph", str(svg)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "crunch" in svg.read_text()

    quiet = tmp_path / "quiet"
    r = subprocess.run([lapse_command(), "run", "--no-python", "-o", str(quiet), str(script)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "PYTHON SAMPLES" not in r.stderr
    assert report(quiet).get("python_samples", []) == []
